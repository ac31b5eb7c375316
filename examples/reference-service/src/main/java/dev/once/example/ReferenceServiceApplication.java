package dev.once.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * Once's reference service: creating accounts, storing and confirming file uploads and submitting tasks, the
 * high-risk writes of the design document, each guarded by {@code @Idempotent}; their events reach three
 * exactly-once handlers through the outbox and Kafka.
 *
 * <p>With no servers configured it starts an embedded PostgreSQL and an in-process Kafka broker first
 * ({@link EmbeddedServers}); {@code --once.demo=run} then drives it with {@link dev.once.example.demo.Demo} and exits
 * with the demo's verdict.
 */
@SpringBootApplication
@EnableConfigurationProperties(ReferenceProperties.class)
public class ReferenceServiceApplication {

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(ReferenceServiceApplication.class);
        app.addListeners(new EmbeddedServers());
        app.run(args);
    }
}
