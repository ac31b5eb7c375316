package dev.once.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@code core --version} names the build it is, not a version written into the code. */
class CoreVersionTest {

    @Test
    void the_version_is_the_one_this_build_was_made_as() throws Exception {
        Matcher parent = Pattern.compile("<parent>.*?<version>([^<]+)</version>", Pattern.DOTALL)
                .matcher(Files.readString(Path.of("pom.xml")));
        assertThat(parent.find()).as("ops-cli/pom.xml names its parent's version").isTrue();

        CoreRun run = CoreRun.of("--version");

        assertThat(run.exit()).isZero();
        assertThat(run.out().strip()).isEqualTo("core (Once) " + parent.group(1));
    }
}
