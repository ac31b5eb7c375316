package dev.once.guard;

import dev.once.guard.reactiveapp.ReactiveGuardTestApplication;
import dev.once.test.TestDatabase;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The HTTP contract on WebFlux, the work in the guard's JDBC transaction on a bounded scheduler. */
@SpringBootTest(classes = ReactiveGuardTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.main.web-application-type=reactive")
class WebFluxJdbcGuardHttpContractIT extends WebFluxGuardHttpContract {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(10);

    @DynamicPropertySource
    static void service(DynamicPropertyRegistry registry) {
        service(registry, db, "jdbc");
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "40");
    }

    @Override
    TestDatabase db() {
        return db;
    }
}
