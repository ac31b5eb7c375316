CREATE TABLE IF NOT EXISTS shipped_order (
    event_id  uuid NOT NULL,
    tenant_id text NOT NULL,
    payload   text NOT NULL
);
