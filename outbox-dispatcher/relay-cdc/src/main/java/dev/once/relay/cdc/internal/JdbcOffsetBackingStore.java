package dev.once.relay.cdc.internal;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Debezium's offsets in PostgreSQL ({@code once_relay_offset}), so a restarted relay, or the standby that takes over,
 * resumes where the last leader stopped instead of replaying everything. Debezium creates this class by name; the
 * relay registers its DataSource under {@value #KEY_PROPERTY} first.
 */
public class JdbcOffsetBackingStore extends MemoryOffsetBackingStore {

    /** Engine property naming the registered DataSource and the offsets' key in the table. */
    public static final String KEY_PROPERTY = "offset.storage.once.key";

    static final String LOAD = "SELECT offset_key, offset_value FROM once_relay_offset WHERE store_key = ?";

    static final String SAVE = """
            INSERT INTO once_relay_offset (store_key, offset_key, offset_value, updated_at) VALUES (?, ?, ?, now())
            ON CONFLICT (store_key, offset_key) DO UPDATE SET offset_value = EXCLUDED.offset_value, updated_at = now()
            """;

    /**
     * The offsets commit waiting for the disk, whatever {@code synchronous_commit} the role, the database or the pool
     * sets: Debezium moves the replication slot past what they cover once they are saved, so they never fall behind
     * the slot after an immediate stop of PostgreSQL.
     */
    public static final String SYNCHRONOUS = "SET LOCAL synchronous_commit = on";

    private static final Map<String, DataSource> DATA_SOURCES = new ConcurrentHashMap<>();

    /** What PostgreSQL holds: {@link #data} as of the last save that committed (the store's thread only). */
    private final Map<ByteBuffer, ByteBuffer> saved = new HashMap<>();
    private String key;
    private JdbcTemplate jdbc;
    private TransactionTemplate tx;

    public static void register(String key, DataSource dataSource) {
        DATA_SOURCES.put(key, dataSource);
    }

    @Override
    public void configure(WorkerConfig config) {
        super.configure(config);
        key = config.originalsStrings().get(KEY_PROPERTY);
        DataSource dataSource = key == null ? null : DATA_SOURCES.get(key);
        if (dataSource == null) {
            throw new IllegalStateException("No DataSource registered for " + KEY_PROPERTY + "=" + key);
        }
        jdbc = new JdbcTemplate(dataSource);
        tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    @Override
    public synchronized void start() {
        super.start();
        jdbc.query(LOAD, rs -> {
            byte[] value = rs.getBytes(2);
            saved.put(ByteBuffer.wrap(rs.getBytes(1)), value == null ? null : ByteBuffer.wrap(value));
        }, key);
        data.putAll(saved);
    }

    /**
     * Saves the offsets Kafka Connect has just put in {@link #data}, in one transaction that waits for the disk
     * ({@link #SYNCHRONOUS}). If that fails, {@link #data} goes back to what PostgreSQL holds: the store never hands
     * back offsets it could not save (Debezium reads them back, and moves the slot to them).
     */
    @Override
    protected void save() {
        try {
            tx.executeWithoutResult(status -> {
                jdbc.execute(SYNCHRONOUS);
                for (Map.Entry<ByteBuffer, ByteBuffer> entry : data.entrySet()) {
                    jdbc.update(SAVE, key, Utils.toArray(entry.getKey()),
                            entry.getValue() == null ? null : Utils.toArray(entry.getValue()));
                }
            });
        } catch (RuntimeException e) {
            data.clear();
            data.putAll(saved);
            throw e;
        }
        saved.clear();
        saved.putAll(data);
    }

    @Override
    public Set<Map<String, Object>> connectorPartitions(String connectorName) {
        return Set.of();
    }
}
