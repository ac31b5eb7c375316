-- Once 0.1: state of the CDC relay, kept in PostgreSQL so that any instance that becomes leader resumes it.
CREATE TABLE once_relay_offset (
    store_key    text NOT NULL,     -- one relay (slot) per key
    offset_key   bytea NOT NULL,
    offset_value bytea,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_key, offset_key)
);

-- Written by the CDC relay's heartbeat so that a quiet database still moves the replication slot forward. Each beat
-- replaces the slot's row by a DELETE and an INSERT: the relay's publication carries inserts only, so the beat reaches
-- the relay while deletes (of beats and of published outbox rows) never do. No key: the table holds a row per slot.
CREATE TABLE once_relay_heartbeat (
    slot_name text NOT NULL,
    beat_at   timestamptz NOT NULL
);
