package dev.once.example.outbox;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A service that adopts the outbox alone: its own transactions, its own idempotency (or none), Once's outbox. */
@SpringBootApplication
public class OutboxOnlyApplication {

    public static void main(String[] args) {
        SpringApplication.run(OutboxOnlyApplication.class, args);
    }
}
