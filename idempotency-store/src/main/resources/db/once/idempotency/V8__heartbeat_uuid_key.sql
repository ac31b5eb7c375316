-- Once 0.1: the heartbeat table's key becomes a uuid, of the same type as outbox_event's. Debezium builds the key of
-- every change event it decodes with the same compiled code; a bigint key among uuid keys, once per heartbeat, failed
-- the JIT's type check there and threw that code away every 10 s, and on a loaded machine the CDC relay then decoded
-- at a fifth of its speed for seconds (docs/BENCHMARKS.md, "Bursts"). The table holds one row per slot.
ALTER TABLE once_relay_heartbeat DROP COLUMN id;
ALTER TABLE once_relay_heartbeat ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY;
