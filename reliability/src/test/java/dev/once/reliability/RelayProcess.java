package dev.once.reliability;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.spi.SlotWatermarks;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.wire.OutboxMessage;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.cdc.CdcRelay;
import dev.once.relay.cdc.CdcSettings;
import dev.once.test.TestSigning;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * A CDC relay alone in a JVM of its own, for {@link RelayCrashIT} to kill with {@code kill -9}. It says on its standard
 * output when a batch reaches a step ({@code STEP received}: handed to the transport; {@code STEP published}: Kafka
 * acknowledged it), and with {@code block=<step>} it stops there for good, at its first batch of events, so that the
 * kill lands exactly there. Arguments: {@code name=value} pairs (url, user, password, schema, slot, bootstrap, prefix,
 * block, max-request-size).
 */
public final class RelayProcess {

    private RelayProcess() {
    }

    public static void main(String[] args) {
        Map<String, String> a = ChildJvm.arguments(args);
        HikariDataSource dataSource = ChildJvm.pool(a, 4);
        Map<String, Object> producer = new HashMap<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"),
                ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.parseInt(a.getOrDefault("max-request-size", "1048576"))));
        EventTransport kafka = new KafkaTransport(producer, TopicRouter.byAggregateType(a.get("prefix")),
                Duration.ofSeconds(10), RecordSigning.require(SigningKeys.of(Map.of(TestSigning.KEY_ID,
                TestSigning.SECRET), null)));
        String block = a.getOrDefault("block", "");
        EventTransport steps = new EventTransport() {
            @Override
            public Delivery send(List<OutboxMessage> messages) {
                step("received", block);
                Delivery delivery = kafka.send(messages);
                step("published", block);
                return delivery;
            }

            @Override
            public void close() {
                kafka.close();
            }
        };
        CdcSettings settings = CdcSettings.of(a.get("url"), a.get("user"), a.get("password"), a.get("schema"))
                .withSlot(a.get("slot"), a.get("slot")).withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
        CdcRelay relay = new CdcRelay("crash", dataSource, settings, steps, RelayOptions.ofDefaults(), RelayListener.NONE,
                new SlotWatermarks(dataSource, a.get("slot"), SlotWatermarks.Options.ofDefaults()
                        .withInterval(Duration.ofMillis(200))));
        relay.start();
        System.out.println("STEP leading " + relay.state().status());
        LockSupport.park(); // until killed
    }

    private static void step(String step, String block) {
        System.out.println("STEP " + step);
        System.out.flush();
        if (step.equals(block)) {
            while (true) {
                LockSupport.park(); // the kill comes here
            }
        }
    }
}
