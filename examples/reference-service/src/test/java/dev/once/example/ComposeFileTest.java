package dev.once.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * compose.yaml can't be started here (no Docker engine), so this reads it and checks that it agrees with the
 * service: the variables it sets are the ones application.yaml reads, its servers are the ones those variables point
 * at, PostgreSQL has {@code wal_level=logical}, Kafka runs KRaft, and every service has a healthcheck and its data a
 * named volume. (.ci/run also runs {@code docker-compose config} when Debian's docker-compose is installed.)
 */
class ComposeFileTest {

    static final Path ROOT = Path.of("../..");
    static final Map<String, Object> COMPOSE = yaml(ROOT.resolve("compose.yaml"));
    static final String APPLICATION_YAML = read(Path.of("src/main/resources/application.yaml"));

    @Test
    void it_runs_postgres_with_logical_decoding_kafka_in_kraft_mode_and_the_service_on_8080() {
        assertThat(service("postgres").get("command")).asString().contains("wal_level=logical");
        Map<String, Object> kafka = environment("kafka");
        assertThat(service("kafka").get("image")).asString().startsWith("apache/kafka:");
        assertThat(kafka.get("KAFKA_PROCESS_ROLES")).isEqualTo("broker,controller");
        assertThat(kafka.get("KAFKA_CONTROLLER_QUORUM_VOTERS")).asString().startsWith(kafka.get("KAFKA_NODE_ID") + "@kafka:");
        assertThat(service("reference-service").get("ports")).asString().contains("8080:8080");
    }

    @Test
    void the_service_is_configured_through_the_variables_its_application_yaml_reads() {
        Map<String, Object> env = environment("reference-service");
        for (String variable : env.keySet()) {
            assertThat(APPLICATION_YAML).as(variable + " is read by application.yaml").contains("${" + variable + ":");
        }
        assertThat(env).containsKeys("ONCE_JDBC_URL", "ONCE_DB_USER", "ONCE_DB_PASSWORD", "ONCE_KAFKA_BOOTSTRAP");
    }

    @Test
    void the_service_points_at_the_composed_servers_with_their_credentials() {
        Map<String, Object> env = environment("reference-service");
        Map<String, Object> postgres = environment("postgres");
        assertThat(env.get("ONCE_JDBC_URL")).isEqualTo("jdbc:postgresql://postgres:5432/" + postgres.get("POSTGRES_DB"));
        assertThat(env.get("ONCE_DB_USER")).isEqualTo(postgres.get("POSTGRES_USER"));
        assertThat(env.get("ONCE_DB_PASSWORD")).isEqualTo(postgres.get("POSTGRES_PASSWORD"));
        assertThat(environment("kafka").get("KAFKA_ADVERTISED_LISTENERS")).asString()
                .contains("PLAINTEXT://" + env.get("ONCE_KAFKA_BOOTSTRAP"));
        // one broker: the service's topics must not ask for more replicas than there are brokers
        assertThat(APPLICATION_YAML).contains("topic-replicas: 1");
    }

    @Test
    void the_service_waits_for_healthy_servers_and_everything_has_a_healthcheck_and_named_volumes() {
        Map<String, Object> dependsOn = map(service("reference-service").get("depends_on"));
        assertThat(dependsOn).containsOnlyKeys("postgres", "kafka");
        dependsOn.values().forEach(d -> assertThat(map(d).get("condition")).isEqualTo("service_healthy"));
        Map<String, Object> volumes = map(COMPOSE.get("volumes"));
        for (String name : List.of("postgres", "kafka", "reference-service")) {
            assertThat(service(name)).as(name).containsKey("healthcheck");
            for (Object volume : (List<?>) service(name).get("volumes")) {
                assertThat(volumes).as(name + " uses a named volume").containsKey(volume.toString().split(":")[0]);
            }
        }
        assertThat(service("reference-service").get("healthcheck").toString()).contains("/actuator/health");
    }

    @Test
    void the_dockerfile_it_builds_exists_and_exposes_the_port() {
        Map<String, Object> build = map(service("reference-service").get("build"));
        Path dockerfile = ROOT.resolve(build.get("context").toString()).resolve(build.get("dockerfile").toString());
        assertThat(read(dockerfile)).contains("EXPOSE 8080", "once-reference-service-exec.jar");
    }

    static Map<String, Object> service(String name) {
        return map(map(COMPOSE.get("services")).get(name));
    }

    static Map<String, Object> environment(String name) {
        return map(service(name).get("environment"));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value) {
        assertThat(value).isInstanceOf(Map.class);
        return (Map<String, Object>) value;
    }

    static Map<String, Object> yaml(Path file) {
        try (Reader reader = Files.newBufferedReader(file)) {
            return new Yaml().load(reader);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
