package dev.once.wire.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;

/**
 * The {@link RecordSigning} of the service, from {@code once.outbox.signing.*}, for the relay (which signs) and the
 * dispatcher (which verifies). Created when one of them needs it, so a service that does neither is not asked for
 * keys; then a mode without its keys, or no choice at all, stops startup with one message naming the fix, and the
 * mode is logged once.
 */
@AutoConfiguration
@ConditionalOnClass(name = "dev.once.OnceConfigurationException")
@EnableConfigurationProperties(OnceSigningProperties.class)
public class OnceSigningAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(OnceSigningAutoConfiguration.class);

    @Bean
    @Lazy
    @ConditionalOnMissingBean
    RecordSigning onceRecordSigning(OnceSigningProperties properties) {
        RecordSigning signing = signing(properties);
        log.info("Once record signing: {}", signing.describe());
        return signing;
    }

    static RecordSigning signing(OnceSigningProperties properties) {
        RecordSigning.Mode mode = properties.getMode();
        OnceSigningProperties.Ed25519 ed25519 = properties.getEd25519();
        boolean keyed = !properties.getKeys().isEmpty() || !ed25519.getPublicKeys().isEmpty();
        if (mode == RecordSigning.Mode.OFF) {
            return RecordSigning.off();
        }
        if (!keyed) {
            throw new OnceConfigurationException(mode == null
                    ? "Once signs the records it relays and verifies them before a handler runs, and no signing key is configured"
                    : "once.outbox.signing.mode=" + mode + " needs a signing key, and none is configured",
                    "Set once.outbox.signing.keys.<id>=<secret of 32 bytes or more>, the same on every service that relays or "
                            + "consumes these topics, or Ed25519 keys (once.outbox.signing.ed25519.public-keys.<id> everywhere, "
                            + "once.outbox.signing.ed25519.private-keys.<id> on the relays), or once.outbox.signing.mode=off "
                            + "to run without signatures (then anyone who can write to the topics chooses the tenant and actor "
                            + "a handler acts for)");
        }
        unresolved("keys", properties.getKeys());
        unresolved("ed25519.public-keys", ed25519.getPublicKeys());
        unresolved("ed25519.private-keys", ed25519.getPrivateKeys());
        for (String id : ed25519.getPrivateKeys().keySet()) {
            if (!ed25519.getPublicKeys().containsKey(id)) {
                throw new OnceConfigurationException("once.outbox.signing.ed25519.private-keys." + id + " has no public "
                        + "key beside it", "Set once.outbox.signing.ed25519.public-keys." + id + " to its public key "
                        + "(openssl pkey -in private.pem -pubout)");
            }
        }
        try {
            SigningKeys.Builder ring = SigningKeys.builder();
            properties.getKeys().forEach(ring::hmac);
            ed25519.getPublicKeys().forEach((id, pub) -> ring.ed25519(id, pub, ed25519.getPrivateKeys().get(id)));
            return RecordSigning.of(mode == null ? RecordSigning.Mode.REQUIRE : mode,
                    ring.current(properties.getCurrentKey()).build());
        } catch (IllegalArgumentException e) {
            throw new OnceConfigurationException("once.outbox.signing: " + e.getMessage(),
                    "Give every key an id of letters, digits, '.', '_' or '-', an HMAC secret of at least "
                            + SigningKeys.MIN_SECRET_BYTES + " bytes or an Ed25519 key as openssl writes it, and name the "
                            + "signing one in once.outbox.signing.current-key when several can sign");
        }
    }

    /**
     * A secret that is still a {@code ${...}} placeholder: the variable it names was not set, and Spring Boot leaves
     * the text as it is. It is never a key, however long the variable's name; the message names the variable, never
     * a secret.
     */
    static void unresolved(String property, java.util.Map<String, String> keys) {
        keys.forEach((id, secret) -> {
            if (secret != null && secret.contains("${")) {
                String placeholder = secret.substring(secret.indexOf("${"));
                int end = placeholder.indexOf('}');
                String variable = end < 0 ? placeholder.substring(2) : placeholder.substring(2, end);
                throw new OnceConfigurationException("once.outbox.signing." + property + "." + id + " did not resolve: it is still "
                        + "the placeholder ${" + variable + "}, so " + variable.split(":", 2)[0] + " is not set",
                        "Set " + variable.split(":", 2)[0] + " (an environment variable or property) to a secret of at "
                                + "least " + SigningKeys.MIN_SECRET_BYTES + " bytes, the same on every service that "
                                + "relays or consumes these topics");
            }
        });
    }
}
