-- Once 0.1: the CDC relay's heartbeat table gets a primary key (Debezium warned on every start that a table it
-- streams has none). A surrogate one: each beat deletes the slot's previous row and inserts a new one in a single
-- statement, which a key on slot_name would refuse (the insert meets the row its own statement deletes).
ALTER TABLE once_relay_heartbeat ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
