package dev.once.guard;

import dev.once.guard.reactiveapp.ReactiveGuardTestApplication;
import java.sql.SQLException;
import net.jqwik.api.PropertyDefaults;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** The fuzzing of {@link GuardFuzz} on WebFlux, the work in the guard's JDBC transaction. */
@PropertyDefaults(tries = 500)
class WebFluxJdbcGuardFuzzIT extends GuardFuzz {

    @BeforeContainer
    static void startService() throws SQLException {
        start("WebFluxJdbcGuardFuzzIT", ReactiveGuardTestApplication.class, "spring.main.web-application-type=reactive",
                "once.idempotency.reactive.transactions=jdbc");
    }

    @AfterContainer
    static void stopService() throws SQLException {
        stop();
    }
}
