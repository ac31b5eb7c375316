package dev.once.cli;

import dev.once.test.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/** One run of {@code core} in this JVM, as main runs it: its exit code and what it printed on stdout and stderr. */
record CoreRun(int exit, String out, String err) {

    static CoreRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Core.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CoreRun(exit, out.toString(), err.toString());
    }

    /** {@code args} followed by the flags that connect to {@code db}'s schema. */
    static String[] connectedTo(TestDatabase db, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--jdbc-url", db.jdbcUrl(), "--db-user", db.server().username(), "--db-password",
                db.server().password()));
        return all.toArray(String[]::new);
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> json() {
        return JsonMapper.builder().build().readValue(out, Map.class);
    }

    /** The lines of stderr. */
    List<String> errLines() {
        return err.lines().toList();
    }
}
