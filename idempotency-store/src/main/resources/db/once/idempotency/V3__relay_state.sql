-- Once 0.1: state of the CDC relay, kept in PostgreSQL so that any instance that becomes leader resumes it.
CREATE TABLE once_relay_offset (
    store_key    text NOT NULL,     -- one relay (slot) per key
    offset_key   bytea NOT NULL,
    offset_value bytea,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_key, offset_key)
);

-- Written by the CDC relay's heartbeat so that a quiet database still moves the replication slot forward.
CREATE TABLE once_relay_heartbeat (
    slot_name text PRIMARY KEY,
    beat_at   timestamptz NOT NULL
);
