CREATE TABLE IF NOT EXISTS transfer (
    id           uuid PRIMARY KEY,
    amount_cents bigint NOT NULL
);
