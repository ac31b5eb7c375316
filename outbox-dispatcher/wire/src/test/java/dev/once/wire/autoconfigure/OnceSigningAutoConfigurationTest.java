package dev.once.wire.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.OnceConfigurationException;
import dev.once.wire.RecordSigning;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** once.outbox.signing.*: require once a key is set, off only when chosen, one message for each mistake. */
class OnceSigningAutoConfigurationTest {

    static final String SECRET = "0123456789abcdef0123456789abcdef";

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(OnceSigningAutoConfiguration.class));

    @Test
    void a_configured_key_means_require() {
        runner.withPropertyValues("once.outbox.signing.keys.k1=" + SECRET).run(context -> {
            RecordSigning signing = context.getBean(RecordSigning.class);
            assertThat(signing.mode()).isEqualTo(RecordSigning.Mode.REQUIRE);
            assertThat(signing.keys().current()).isEqualTo("k1");
        });
    }

    @Test
    void several_keys_sign_with_the_current_one_and_verify_if_present_is_chosen_by_name() {
        runner.withPropertyValues("once.outbox.signing.keys.old=" + SECRET, "once.outbox.signing.keys.new=" + SECRET + "x",
                "once.outbox.signing.current-key=new", "once.outbox.signing.mode=verify-if-present").run(context -> {
                    RecordSigning signing = context.getBean(RecordSigning.class);
                    assertThat(signing.mode()).isEqualTo(RecordSigning.Mode.VERIFY_IF_PRESENT);
                    assertThat(signing.keys().ids()).containsExactlyInAnyOrder("old", "new");
                    assertThat(signing.keys().current()).isEqualTo("new");
                });
    }

    @Test
    void without_keys_signing_must_be_switched_off_explicitly() {
        runner.run(context -> assertThatThrownBy(() -> context.getBean(RecordSigning.class)).rootCause()
                .isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("once.outbox.signing.keys.<id>").hasMessageContaining("once.outbox.signing.mode=off"));
        runner.withPropertyValues("once.outbox.signing.mode=require").run(context -> assertThatThrownBy(
                () -> context.getBean(RecordSigning.class)).rootCause()
                .hasMessageContaining("once.outbox.signing.mode=REQUIRE needs a signing key"));
        runner.withPropertyValues("once.outbox.signing.mode=off")
                .run(context -> assertThat(context.getBean(RecordSigning.class).mode()).isEqualTo(RecordSigning.Mode.OFF));
    }

    @Test
    void a_short_secret_is_refused_naming_the_key_and_never_showing_the_secret() {
        runner.withPropertyValues("once.outbox.signing.keys.k1=short-secret").run(context -> assertThatThrownBy(
                () -> context.getBean(RecordSigning.class)).rootCause().isInstanceOf(OnceConfigurationException.class).hasMessageContaining("'k1' has 12 bytes")
                .hasMessageNotContaining("short-secret"));
    }

    @Test
    void an_unset_variable_is_named_and_its_placeholder_never_becomes_a_key_however_long() {
        // 41 characters of placeholder: long enough to pass as a secret if it were taken for one
        runner.withPropertyValues("once.outbox.signing.keys.main=${ONCE_SIGNING_KEY_FOR_THE_ORDER_TOPICS}")
                .run(context -> assertThatThrownBy(() -> context.getBean(RecordSigning.class)).rootCause()
                        .isInstanceOf(OnceConfigurationException.class)
                        .hasMessageContaining("once.outbox.signing.keys.main did not resolve")
                        .hasMessageContaining("ONCE_SIGNING_KEY_FOR_THE_ORDER_TOPICS is not set"));
        runner.withPropertyValues("once.outbox.signing.keys.main=${ONCE_SIGNING_KEY}").run(context -> assertThatThrownBy(
                () -> context.getBean(RecordSigning.class)).rootCause().hasMessageContaining("ONCE_SIGNING_KEY is not set")
                .hasMessageNotContaining("bytes;"));
    }

    @Test
    void a_service_that_neither_relays_nor_consumes_is_not_asked_for_keys() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeanFactory().containsBeanDefinition("onceRecordSigning")).as("defined, not created").isTrue();
        });
    }

    static final String PUBLIC = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAWFOmeoBU5Tr+CvKnP07xMYTZMlZLLgz8uuUnDqnciuo=\n-----END PUBLIC KEY-----";
    static final String PRIVATE = "MC4CAQAwBQYDK2VwBCIEIBjwToKIFzW9lBZtElKxp8rlTtwkn5yRRnrY1mEsOqh6";

    @Test
    void ed25519_a_consumer_holds_public_keys_only_and_a_relay_its_private_key() {
        runner.withPropertyValues("once.outbox.signing.ed25519.public-keys.e1=" + PUBLIC).run(context -> {
            RecordSigning consumer = context.getBean(RecordSigning.class);
            assertThat(consumer.mode()).isEqualTo(RecordSigning.Mode.REQUIRE);
            assertThat(consumer.keys().current()).as("cannot sign").isNull();
            assertThat(consumer.describe()).contains("not signing (public keys only)").doesNotContain(PRIVATE);
        });
        runner.withPropertyValues("once.outbox.signing.ed25519.public-keys.e1=" + PUBLIC,
                "once.outbox.signing.ed25519.private-keys.e1=" + PRIVATE).run(context -> {
                    RecordSigning relay = context.getBean(RecordSigning.class);
                    assertThat(relay.keys().current()).isEqualTo("e1");
                    assertThat(relay.toString()).doesNotContain(PRIVATE);
                });
    }

    @Test
    void ed25519_a_private_key_without_its_public_key_or_a_malformed_key_is_refused_without_showing_it() {
        runner.withPropertyValues("once.outbox.signing.ed25519.public-keys.e0=" + PUBLIC,
                "once.outbox.signing.ed25519.private-keys.e1=" + PRIVATE).run(context -> assertThatThrownBy(
                () -> context.getBean(RecordSigning.class)).rootCause().isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("private-keys.e1 has no public key").hasMessageNotContaining(PRIVATE));
        runner.withPropertyValues("once.outbox.signing.ed25519.public-keys.e1=" + PUBLIC,
                "once.outbox.signing.ed25519.private-keys.e1=not-a-key").run(context -> assertThatThrownBy(
                () -> context.getBean(RecordSigning.class)).rootCause().isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("Ed25519 key 'e1' is not a PEM or base64 DER").hasMessageNotContaining("not-a-key"));
    }
}
