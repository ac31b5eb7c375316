-- Once 0.1: the transactional outbox. Rows are written in the business transaction and relayed to Kafka.
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
    payload        jsonb NOT NULL,
    headers        jsonb NOT NULL DEFAULT '{}'::jsonb,   -- e.g. a W3C traceparent
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- Relay bookkeeping: published rows wait for retention cleanup; parked rows wait for an operator.
    published_at   timestamptz,
    parked_at      timestamptz,
    park_reason    text,
    CONSTRAINT outbox_event_version_ck CHECK (event_version >= 1),
    CONSTRAINT outbox_event_fields_ck CHECK (tenant_id <> '' AND actor_id <> '' AND aggregate_type <> ''
                                             AND aggregate_id <> '' AND event_type <> '')
);

-- The polling relay claims pending rows in seq order.
CREATE INDEX outbox_event_pending_idx ON outbox_event (seq) WHERE published_at IS NULL AND parked_at IS NULL;
-- A parked aggregate's later events wait behind it: the relay looks parked aggregates up.
CREATE INDEX outbox_event_parked_idx ON outbox_event (aggregate_type, aggregate_id) WHERE parked_at IS NOT NULL;
-- Retention cleanup deletes published rows by age, in batches.
CREATE INDEX outbox_event_published_idx ON outbox_event (published_at) WHERE published_at IS NOT NULL;
