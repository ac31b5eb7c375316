package dev.once.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/** The secured broker asks what a real one asks: a password on its SASL listener, a trusted CA on its TLS one, ACLs. */
class SecuredKafkaIT {

    @Test
    void the_sasl_listener_lets_the_user_in_with_its_password_and_refuses_a_wrong_one() throws Exception {
        String topic = "secured-" + UUID.randomUUID();
        SecuredKafka.createTopic(topic, 1);

        assertThat(topicsSeenBy(SecuredKafka.saslClientProperties(SecuredKafka.USER, SecuredKafka.PASSWORD)))
                .contains(topic);
        assertThatThrownBy(() -> topicsSeenBy(SecuredKafka.saslClientProperties(SecuredKafka.USER, "wrong")))
                .hasCauseInstanceOf(SaslAuthenticationException.class);
    }

    @Test
    void a_user_granted_nothing_authenticates_and_is_not_authorized() {
        String topic = "secured-" + UUID.randomUUID();
        SecuredKafka.createTopic(topic, 1);

        try (Admin admin = Admin.create(SecuredKafka.saslClientProperties(SecuredKafka.STRANGER,
                SecuredKafka.STRANGER_PASSWORD))) {
            assertThatThrownBy(() -> admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(TopicAuthorizationException.class);
        }
    }

    @Test
    void the_tls_listener_is_trusted_with_the_generated_trust_store_only() throws Exception {
        String topic = "secured-" + UUID.randomUUID();
        SecuredKafka.createTopic(topic, 1);

        assertThat(topicsSeenBy(SecuredKafka.tlsClientProperties())).contains(topic);
        Map<String, Object> untrusting = new HashMap<>(SecuredKafka.tlsClientProperties());
        untrusting.remove("ssl.truststore.location");
        untrusting.remove("ssl.truststore.password");
        untrusting.remove("ssl.truststore.type");
        assertThatThrownBy(() -> topicsSeenBy(untrusting)).hasCauseInstanceOf(SslAuthenticationException.class);
    }

    private static java.util.Set<String> topicsSeenBy(Map<String, Object> client)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        try (Admin admin = Admin.create(client)) {
            return admin.listTopics().names().get(30, TimeUnit.SECONDS);
        }
    }
}
