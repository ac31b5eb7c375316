package dev.once.example.relay;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A service that appends to its outbox in its own transactions and relays it to Kafka by polling: the role of
 * {@code once-outbox-relay} with {@code spring-boot-starter-jdbc} and nothing else (no Debezium, no Micrometer, no JPA).
 */
@SpringBootApplication
public class PollingRelayApplication {

    public static void main(String[] args) {
        SpringApplication.run(PollingRelayApplication.class, args);
    }
}
