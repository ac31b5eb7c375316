/**
 * {@code once-spring-boot-starter} holds no code: it brings the mutation guard ({@code once-mutation-guard}), the CDC
 * relay ({@code once-outbox-relay-cdc}) and the dispatcher ({@code once-dispatcher}) with Spring Boot's JDBC and Kafka
 * starters, whose autoconfiguration does the rest. A service that plays fewer roles depends on their modules instead
 * (the README's table of roles).
 */
package dev.once.starter;
