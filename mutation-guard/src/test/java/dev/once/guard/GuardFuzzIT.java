package dev.once.guard;

import dev.once.guard.app.GuardTestApplication;
import java.sql.SQLException;
import net.jqwik.api.PropertyDefaults;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** The fuzzing of {@link GuardFuzz} on Spring MVC. */
@PropertyDefaults(tries = 2000)
class GuardFuzzIT extends GuardFuzz {

    @BeforeContainer
    static void startService() throws SQLException {
        start("GuardFuzzIT", GuardTestApplication.class);
    }

    @AfterContainer
    static void stopService() throws SQLException {
        stop();
    }
}
