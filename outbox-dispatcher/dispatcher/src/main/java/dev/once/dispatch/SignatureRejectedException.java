package dev.once.dispatch;

import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * A record whose signature is missing, made with a key the ring does not hold, or does not match: nothing of it is
 * trusted, no claim is taken and no handler runs. It is dead-lettered at once with the {@linkplain #code() code} at
 * the start of its reason, and the partition keeps flowing.
 */
public final class SignatureRejectedException extends PoisonEventException {

    private final RecordSigning.Verdict verdict;

    SignatureRejectedException(RecordSigning.Verdict verdict, ConsumerRecord<String, byte[]> record) {
        super(verdict.code() + ": " + explain(verdict, record));
        this.verdict = verdict;
    }

    /** {@code SIGNATURE_MISSING}, {@code SIGNATURE_UNKNOWN_KEY} or {@code SIGNATURE_INVALID}. */
    public String code() {
        return verdict.code();
    }

    private static String explain(RecordSigning.Verdict verdict, ConsumerRecord<String, byte[]> record) {
        String where = " (" + record.topic() + "-" + record.partition() + "@" + record.offset() + ")";
        return switch (verdict) {
            case MISSING -> "the record carries no signature, and once.outbox.signing.mode requires one" + where;
            case UNKNOWN_KEY -> "the record is signed with key '" + text(record, WireFormat.SIGNATURE_KEY)
                    + "', which the key ring does not hold" + where;
            default -> "the signature does not match the record's topic, key, envelope or payload" + where;
        };
    }

    private static String text(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        String value = header == null ? "" : new String(header.value(), StandardCharsets.UTF_8);
        return value.length() > 64 ? value.substring(0, 64) + "…" : value;
    }
}
