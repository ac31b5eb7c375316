package dev.once.relay;

/**
 * Kafka answered and refused what the relay asked: its credentials (an authentication failure: a wrong SASL password,
 * a trust store without the broker's CA), its principal's rights (an authorization failure), or a topic that does not
 * exist on a broker that does not create topics. A configuration error, not an outage: it lasts until someone changes
 * the settings, the ACLs or the topics, so the relay says so and retries rarely.
 */
public class KafkaRefusedException extends TransportUnavailableException {

    public KafkaRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
