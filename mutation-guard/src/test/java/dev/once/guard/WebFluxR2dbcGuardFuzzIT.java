package dev.once.guard;

import dev.once.guard.reactiveapp.ReactiveGuardTestApplication;
import java.sql.SQLException;
import net.jqwik.api.PropertyDefaults;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** The fuzzing of {@link GuardFuzz} on WebFlux, the work in an R2DBC transaction. */
@PropertyDefaults(tries = 500)
class WebFluxR2dbcGuardFuzzIT extends GuardFuzz {

    @BeforeContainer
    static void startService() throws SQLException {
        start("WebFluxR2dbcGuardFuzzIT", ReactiveGuardTestApplication.class, "spring.main.web-application-type=reactive",
                "once.idempotency.reactive.transactions=r2dbc");
    }

    @AfterContainer
    static void stopService() throws SQLException {
        stop();
    }
}
