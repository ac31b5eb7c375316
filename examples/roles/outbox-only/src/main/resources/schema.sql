CREATE TABLE IF NOT EXISTS orders (
    id           uuid PRIMARY KEY,
    tenant_id    text NOT NULL,
    customer     text NOT NULL,
    amount_cents bigint NOT NULL CHECK (amount_cents > 0)
);
