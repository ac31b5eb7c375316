-- Once 0.1: events a dispatcher's consumer group parked, so that one failing key never holds up its partition.
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
