package dev.once.reliability;

import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One deployment of the reference service for a scenario: its instances are separate JVMs sharing the scenario's
 * database schema, the Kafka broker, one topic prefix, one consumer group and one CDC slot. Leases are short (3 s for
 * requests, 5 s for LEASED handlers) so that retries after a crash finish within the test's time.
 */
final class Deployment implements AutoCloseable {

    /** Where the instances' data lives: a JDBC URL for them, and a pool for the test's own checks and cleanup. */
    record Database(String name, String jdbcUrl, String username, String password, javax.sql.DataSource admin) {
        static Database of(TestDatabase db) {
            return of(db, "");
        }

        /** The same schema under another name: a second deployment in one test class gets its own slot and topics. */
        static Database of(TestDatabase db, String suffix) {
            return new Database(db.schema() + suffix, db.jdbcUrl(), db.server().username(), db.server().password(),
                    db.dataSource());
        }
    }

    private final Database db;
    private final String name;
    private final Map<String, String> properties = new LinkedHashMap<>();
    private final Path logs;
    private final List<ServiceProcess> instances = new ArrayList<>();

    Deployment(TestDatabase db, Path dataDir, String relayMode) {
        this(Database.of(db), dataDir, relayMode, TestKafka.bootstrapServers(), 1);
    }

    Deployment(Database db, Path dataDir, String relayMode, String bootstrapServers) {
        this(db, dataDir, relayMode, bootstrapServers, 1);
    }

    Deployment(Database db, Path dataDir, String relayMode, String bootstrapServers, int topicReplicas) {
        this.db = db;
        this.name = ("rel_" + db.name() + "_" + relayMode).toLowerCase();
        this.logs = Path.of("target", "reliability", "logs", name);
        properties.put("spring.datasource.url", db.jdbcUrl());
        properties.put("spring.datasource.username", db.username());
        properties.put("spring.datasource.password", db.password());
        properties.put("spring.kafka.bootstrap-servers", bootstrapServers);
        properties.put("once.reference.data-dir", dataDir.toString());
        properties.put("once.reference.topic-partitions", "3");
        properties.put("once.reference.topic-replicas", Integer.toString(topicReplicas));
        properties.put("once.outbox.relay.mode", relayMode);
        properties.put("once.outbox.relay.topic-prefix", name);
        properties.put("once.outbox.relay.cdc.slot-name", name);
        properties.put("once.outbox.relay.cdc.publication-name", name);
        properties.put("once.outbox.relay.cdc.leader-poll", "500ms");
        properties.put("once.dispatcher.group-id", name);
        properties.put("once.idempotency.lease", "3s");
        properties.put("once.dispatcher.lease", "5s");
        properties.put("spring.datasource.hikari.maximum-pool-size", "10");
        properties.put("spring.datasource.hikari.data-source-properties.ApplicationName", name);
        properties.put("logging.level.root", "WARN");
        properties.put("logging.level.dev.once", "INFO");
    }

    /** Sets {@code name} for every instance started after this; an empty value leaves it unset (the default). */
    Deployment property(String name, String value) {
        properties.put(name, value);
        return this;
    }

    String topicPrefix() {
        return name;
    }

    /** The {@code application_name} of the instances' database sessions, as {@code pg_stat_activity} shows them. */
    String applicationName() {
        return name;
    }

    ServiceProcess instance(String instanceName) {
        ServiceProcess instance = new ServiceProcess(name + "-" + instanceName, properties, logs);
        instances.add(instance);
        return instance;
    }

    @Override
    public void close() {
        instances.forEach(ServiceProcess::close);
        ReplicationCleanup.drop(db.admin(), name, name);
    }
}
