-- Once 0.1.0: the baseline. Every table, index and function Once needs, as 0.1.0 ships them. It is the one migration
-- a new database runs; the steps of 0.1.0's development were squashed into it before anything was released.
-- Never edit it: every later change is a new migration that follows UPGRADING.md's rule (expand, then contract; a
-- lock_timeout; no rewrite of a hot table; no type change of a column a publication lists), and a line there.

-- ---------------------------------------------------------------------------------------------------------------
-- Requests: one record per (tenant, user, route, key). Written by the guard and the store; no CHECK constraints, since
-- PostgreSQL rebuilds each CHECK expression for every INSERT or UPDATE that touches the table (13 % of the server's
-- CPU on a guarded request, docs/BENCHMARKS.md). The store validates keys (1-255 visible ASCII characters), scopes
-- (not empty) and statuses ('processing', 'succeeded', 'failed', 'expired') before it writes.
CREATE TABLE idempotency_record (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id             text COLLATE "C" NOT NULL,
    user_id               text COLLATE "C" NOT NULL,
    route                 text COLLATE "C" NOT NULL,
    idempotency_key       text COLLATE "C" NOT NULL,
    request_hash          text NOT NULL,
    status                text NOT NULL,
    -- Incremented by every claim: the fencing token that transitions must present, and the attempt count.
    fencing_token         bigint NOT NULL DEFAULT 1,
    response_code         integer,
    response_content_type text,
    -- Replayable response headers such as Location, as a JSON object of strings.
    response_headers      jsonb,
    response_body         bytea,
    response_body_omitted boolean NOT NULL DEFAULT false,
    task_id               text,
    outbox_event_id       uuid,
    locked_until          timestamptz,
    expires_at            timestamptz NOT NULL,
    claimed_at            timestamptz NOT NULL DEFAULT now(),
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_record_scope_uk UNIQUE (tenant_id, user_id, route, idempotency_key)
);

-- The expiry sweep: records past their TTL that are not yet marked expired.
CREATE INDEX idempotency_record_expiry_idx ON idempotency_record (expires_at) WHERE status <> 'expired';
-- The purge: expired records by age.
CREATE INDEX idempotency_record_purge_idx ON idempotency_record (expires_at) WHERE status = 'expired';
-- Stuck-processing queries: the (normally small) set of processing records, oldest claim first.
CREATE INDEX idempotency_record_processing_idx ON idempotency_record (claimed_at) WHERE status = 'processing';
-- Operators and the mutation guard look records up by their bound outbox event.
CREATE INDEX idempotency_record_outbox_event_idx ON idempotency_record (outbox_event_id) WHERE outbox_event_id IS NOT NULL;

-- A record's completion can travel with the COMMIT of the work it completes (OnceDataSource). It is then sent before
-- its outcome is known, so a completion whose claim no longer holds the record must fail the commit instead of
-- matching nothing: it raises SQLState OC001, recognised by StaleClaimException.isCause.
CREATE FUNCTION once_claim_held(completed bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF completed = 0 THEN
        RAISE EXCEPTION 'the claim no longer holds its idempotency record (its lease lapsed and another request reclaimed it, or it was completed): nothing of this transaction commits'
            USING ERRCODE = 'OC001';
    END IF;
    RETURN completed;
END
$$;

-- ---------------------------------------------------------------------------------------------------------------
-- The transactional outbox. Rows are written in the business transaction and relayed to Kafka. The payload is kept
-- byte for byte, as the application appended it, with its media type: the value on Kafka is exactly those bytes.
CREATE TABLE outbox_event (
    id             uuid PRIMARY KEY,           -- UUIDv7: time-ordered, assigned by the writer
    -- Relay order, assigned by the database: an aggregate's events are written by transactions that follow each
    -- other, so seq orders them as they committed even when application clocks disagree.
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    tenant_id      text NOT NULL,
    actor_id       text NOT NULL,
    aggregate_type text NOT NULL,
    aggregate_id   text NOT NULL,
    event_type     text NOT NULL,
    event_version  integer NOT NULL,
    payload        bytea NOT NULL,
    headers        jsonb NOT NULL DEFAULT '{}'::jsonb,   -- e.g. a W3C traceparent
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- Relay bookkeeping: published rows wait for retention cleanup; parked rows wait for an operator.
    published_at   timestamptz,
    parked_at      timestamptz,
    park_reason    text,
    content_type   text NOT NULL DEFAULT 'application/json',
    -- The transaction that appended the row: with the CDC relay or Kafka Connect, the row leaves the outbox only once
    -- the replication slot confirmed a watermark whose snapshot sees this transaction ended (once_relay_watermark).
    xact_id        xid8 NOT NULL DEFAULT pg_current_xact_id()
);

-- The polling relay claims pending rows in seq order.
CREATE INDEX outbox_event_pending_idx ON outbox_event (seq) WHERE published_at IS NULL AND parked_at IS NULL;
-- A parked aggregate's later events wait behind it: the relay looks parked aggregates up.
CREATE INDEX outbox_event_parked_idx ON outbox_event (aggregate_type, aggregate_id) WHERE parked_at IS NOT NULL;
-- Retention cleanup deletes published rows by age, in batches.
CREATE INDEX outbox_event_published_idx ON outbox_event (published_at) WHERE published_at IS NOT NULL;

-- The CDC relay's Debezium offsets, kept in PostgreSQL so that any instance that becomes leader resumes them.
CREATE TABLE once_relay_offset (
    store_key    text NOT NULL,     -- one relay (slot) per key
    offset_key   bytea NOT NULL,
    offset_value bytea,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_key, offset_key)
);

-- The replication slot decides what is published (the CDC relay, and Kafka Connect in mode external):
--  * a watermark pairs a snapshot (the transactions that had ended when it was taken) with the WAL insert position
--    read right after (so their commit records lie below it), taken while a walsender streams the slot;
--  * once that same walsender's slot has confirmed a position past the watermark's, the rows of the transactions its
--    snapshot sees are published. (A long transaction holds back only its own rows.)
CREATE TABLE once_relay_watermark (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slot_name      text NOT NULL,
    snapshot       pg_snapshot NOT NULL, -- pg_current_snapshot(): the transactions it sees had committed or aborted
    lsn            pg_lsn NOT NULL,      -- pg_current_wal_insert_lsn() right after: their commit records lie below
    seq_bound      bigint NOT NULL,      -- the highest seq of a row pending then: every row the snapshot sees, at most
    server_started timestamptz NOT NULL, -- the walsender that streamed the slot: the server's start ...
    walsender_pid  integer NOT NULL,     -- ... and its process; only that session's confirmation counts
    taken_at       timestamptz NOT NULL DEFAULT now(),
    confirmed_at   timestamptz           -- when that session's slot was seen to have confirmed lsn
);
CREATE INDEX once_relay_watermark_slot_idx ON once_relay_watermark (slot_name, lsn);

-- ---------------------------------------------------------------------------------------------------------------
-- Handlers' claims. A claim is what one handler (route <event_type>:v<version>:<handler_key>) took for one event: no
-- HTTP columns, the route as a number, tenant, actor and the payload's fingerprint hashed to 16 bytes (so the same
-- event id under another tenant or actor is a conflict, not the first one's redelivery). Each row lives in the
-- partition of its event's day, the UTC day of the time in its UUIDv7 id, so the key (event_id, route_id, day) is
-- unique across partitions: a redelivery, months later or from another relay, computes the same day and finds the
-- claim. Whole days are dropped once every claim in them is older than the claim retention (ClaimPartitions).
-- Day 0 is the undated partition: events whose id is not a UUIDv7, and events first claimed when already older than
-- the claim retention. Its rows carry their own kept_until and are deleted by the retention sweep.
CREATE TABLE once_handler_route (
    id    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    route text COLLATE "C" NOT NULL,
    CONSTRAINT once_handler_route_uk UNIQUE (route)
);

CREATE TABLE once_handler_claim (
    route_id     integer NOT NULL,            -- once_handler_route.id
    day          integer NOT NULL,            -- days since 1970-01-01 (UTC) of the event id's time; 0: undated
    event_id     uuid NOT NULL,
    fencing      integer NOT NULL DEFAULT 1,  -- incremented by each reclaim: transitions present it
    status       smallint NOT NULL,           -- 1 processing, 2 succeeded, 3 failed, 4 released
    tenant_id    text COLLATE "C" NOT NULL,
    actor_id     text COLLATE "C" NOT NULL,
    payload_hash bytea NOT NULL,              -- 16 bytes of SHA-256 over tenant, actor and the payload's fingerprint
    locked_until timestamptz,                 -- a LEASED handler's lease while processing
    kept_until   timestamptz,                 -- undated claims only: when the retention sweep may delete it
    failed_at    timestamptz,
    reason       text,                        -- why it failed, at most 500 characters
    -- the event id first: ids arrive in time order, so the key's index grows at its right end and stays compact
    -- (route first would split each handler's range of it in halves)
    CONSTRAINT once_handler_claim_pk PRIMARY KEY (event_id, route_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE once_handler_claim_undated PARTITION OF once_handler_claim FOR VALUES FROM (0) TO (1);
CREATE INDEX once_handler_claim_undated_kept_idx ON once_handler_claim_undated (kept_until);
-- Operators list failed claims newest first (HandlerClaims.failed): a small index, of failed claims only.
CREATE INDEX once_handler_claim_failed_idx ON once_handler_claim (failed_at) WHERE status = 3;

-- Events a dispatcher's consumer group parked, so that one failing key never holds up its partition.
-- An event is parked when a handler kept failing for it (reason 'failing') or when no handler of its version exists
-- yet (reason 'held': a newer version of a handled type, waiting for the deploy that brings its handler). Every later
-- event of the same key on that partition parks behind it (reason 'behind'), in offset order, so the key keeps its
-- order while the partition's offsets move on: parked events live here, not in Kafka.
-- A key's first row that is not abandoned is its head; only a head is retried, and when it succeeds its row is deleted
-- and the next row becomes the head. 'failed': the retry window passed (the event was dead-lettered); the key stays
-- parked behind it until an operator retries or abandons it. 'abandoned' is terminal and no longer holds the key.
CREATE TABLE once_parked_event (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    group_id         text COLLATE "C" NOT NULL,
    topic            text COLLATE "C" NOT NULL,
    kafka_partition  integer NOT NULL,
    kafka_offset     bigint NOT NULL,
    record_key       text COLLATE "C",          -- NULL: a record without a key holds nothing behind it
    record_timestamp bigint NOT NULL,
    header_names     text[] NOT NULL,
    header_values    bytea[] NOT NULL,
    payload          bytea,
    event_id         text,                      -- read from the headers, for operators' filters; NULL when unreadable
    event_type       text,
    event_version    integer,
    tenant_id        text,
    status           text NOT NULL,             -- parked | failed | abandoned
    reason           text NOT NULL,             -- failing | held | behind
    handler_keys     text[] NOT NULL DEFAULT '{}', -- the handlers that failed
    attempts         integer NOT NULL DEFAULT 0,
    first_failed_at  timestamptz,
    last_failed_at   timestamptz,
    exception_class  text,
    message          text,                      -- at most 500 characters of the exception's message
    fingerprint      text,                      -- the exception class and the handler's frame, hashed: groups causes
    next_attempt_at  timestamptz NOT NULL,
    retry_until      timestamptz,               -- the end of the retry window, set by the first failure
    locked_until     timestamptz,               -- a retrier's lease on the head while it runs it
    parked_at        timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT once_parked_event_record_uk UNIQUE (group_id, topic, kafka_partition, kafka_offset)
);
-- Is a key of this poll parked? And which row is a key's head? Both read the keys that still hold.
CREATE INDEX once_parked_event_key_idx ON once_parked_event (group_id, topic, kafka_partition, record_key, kafka_offset)
    WHERE status <> 'abandoned';
-- The retrier: heads that are due.
CREATE INDEX once_parked_event_due_idx ON once_parked_event (group_id, next_attempt_at) WHERE status = 'parked';
-- Abandoned rows are kept for the claim retention, then purged.
CREATE INDEX once_parked_event_abandoned_idx ON once_parked_event (updated_at) WHERE status = 'abandoned';

-- ---------------------------------------------------------------------------------------------------------------
-- What operators did, append-only. Every operator action (core, the console, the Java operator API) writes its row
-- first, in the same transaction as its effect: who, through what, which action on which target or filter, the
-- reason given, and, once the effect ran in that transaction, how many rows it affected. A rolled-back action leaves
-- no row; a committed one always has its row.
CREATE TABLE once_operator_audit (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT statement_timestamp(),
    operator  text NOT NULL,          -- the authenticated principal (console), the OS user (core)
    via       text NOT NULL,          -- console | core | api
    action    text NOT NULL,          -- e.g. parked.retry, parked.abandon, outbox.redrive, record.release
    target    jsonb NOT NULL,         -- the filter or the key the action took
    reason    text NOT NULL,
    affected  bigint                  -- NULL only inside the action's own transaction
);

CREATE INDEX once_operator_audit_at ON once_operator_audit (at);

-- Append-only: the one change allowed is the action's own count, from NULL, with nothing else changed.
CREATE FUNCTION once_operator_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.affected IS NULL AND NEW.affected IS NOT NULL
       AND (NEW.id, NEW.at, NEW.operator, NEW.via, NEW.action, NEW.target, NEW.reason)
           IS NOT DISTINCT FROM (OLD.id, OLD.at, OLD.operator, OLD.via, OLD.action, OLD.target, OLD.reason) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'once_operator_audit is append-only (% refused)', TG_OP USING ERRCODE = '42501';
END
$$;

CREATE TRIGGER once_operator_audit_append_only BEFORE UPDATE OR DELETE ON once_operator_audit
    FOR EACH ROW EXECUTE FUNCTION once_operator_audit_append_only();
CREATE TRIGGER once_operator_audit_no_truncate BEFORE TRUNCATE ON once_operator_audit
    FOR EACH STATEMENT EXECUTE FUNCTION once_operator_audit_append_only();
