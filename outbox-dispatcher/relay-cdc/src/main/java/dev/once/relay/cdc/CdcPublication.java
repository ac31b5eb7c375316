package dev.once.relay.cdc;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The relay's publication: inserts into the outbox table only (deletes of published rows and the updates that park
 * rows are never streamed back), and from PostgreSQL 15 only the columns a message is made of
 * ({@link #MESSAGE_COLUMNS}). Created when missing, narrowed when found broader (other tables, other operations or
 * every column).
 */
final class CdcPublication {

    private static final Logger log = LoggerFactory.getLogger(CdcPublication.class);

    static final String EXISTS = "SELECT count(*) FROM pg_publication WHERE pubname = ?";
    static final String PUBLISHES_MORE =
            "SELECT count(*) FROM pg_publication WHERE pubname = ? AND (pubupdate OR pubdelete OR pubtruncate)";
    /**
     * The outbox columns a message is made of. From PostgreSQL 15 the publication lists exactly these, so the
     * bookkeeping columns (seq, created_at, published_at, parked_at, park_reason, xact_id) are neither sent nor
     * decoded.
     */
    static final String MESSAGE_COLUMNS = "id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, "
            + "event_version, payload, headers, content_type";
    /**
     * Whether the publication's outbox entry publishes other columns than {@link #MESSAGE_COLUMNS}: every column
     * (created before column lists), or the list of an earlier version (before content_type). Parameters: the
     * publication, the schema, and the message columns sorted.
     */
    static final String OTHER_COLUMNS = """
            SELECT count(*) FROM pg_publication_tables
            WHERE pubname = ? AND schemaname = ? AND tablename = 'outbox_event'
              AND (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(attnames) AS a)
                  IS DISTINCT FROM string_to_array(?, ',')
            """;
    /** Column lists in publications, from PostgreSQL 15 ({@code server_version_num}). */
    static final int COLUMN_LISTS_FROM = 150_000;

    private final JdbcTemplate jdbc;
    private final CdcSettings settings;
    private final boolean columnLists;

    /** @param serverVersion PostgreSQL's {@code server_version_num} */
    CdcPublication(JdbcTemplate jdbc, CdcSettings settings, int serverVersion) {
        this.jdbc = jdbc;
        this.settings = settings;
        this.columnLists = serverVersion >= COLUMN_LISTS_FROM;
    }

    /** The statement that creates the publication: what the relay runs, and what an operator runs by hand. */
    String createStatement() {
        return "CREATE PUBLICATION " + settings.publicationName() + " FOR TABLE " + tables()
                + " WITH (publish = 'insert')";
    }

    /** Creates the publication when it is missing; a refusal (e.g. SQLState 42501) is thrown as it came. */
    void ensure() {
        if (!exists()) {
            try {
                jdbc.execute(createStatement());
            } catch (DataAccessException e) {
                if (!exists()) {
                    throw e; // not a race with another instance that created it first
                }
            }
        }
        narrow();
    }

    /**
     * Narrows a publication found broader. Only its owner may; one created by hand by someone else and left broader
     * still works (the relay skips what is not an insert), so a refusal is a warning, not a reason to stop.
     */
    private void narrow() {
        try {
            if (columnLists && count(OTHER_COLUMNS, settings.publicationName(), settings.schema(), sortedColumns()) > 0) {
                log.info("Publication {} narrowed to the outbox columns a message is made of", settings.publicationName());
                jdbc.execute("ALTER PUBLICATION " + settings.publicationName() + " SET TABLE " + tables());
            }
            if (count(PUBLISHES_MORE, settings.publicationName()) > 0) {
                log.warn("Publication {} also publishes updates or deletes; narrowing it to inserts",
                        settings.publicationName());
                jdbc.execute("ALTER PUBLICATION " + settings.publicationName() + " SET (publish = 'insert')");
            }
        } catch (DataAccessException e) {
            log.warn("Publication {} is broader than the relay needs and {} may not narrow it (not its owner): {}",
                    settings.publicationName(), settings.user(), e.getMostSpecificCause().getMessage());
        }
    }

    private static String sortedColumns() {
        return java.util.Arrays.stream(MESSAGE_COLUMNS.split(",")).map(String::strip).sorted()
                .collect(java.util.stream.Collectors.joining(","));
    }

    private boolean exists() {
        return count(EXISTS, settings.publicationName()) > 0;
    }

    private long count(String sql, Object... arguments) {
        Long n = jdbc.queryForObject(sql, Long.class, arguments);
        return n == null ? 0 : n;
    }

    String tables() {
        String outbox = settings.schema() + ".outbox_event";
        return columnLists ? outbox + " (" + MESSAGE_COLUMNS + ")" : outbox;
    }
}
