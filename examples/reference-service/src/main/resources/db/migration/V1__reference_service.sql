-- The reference service's own tables. Once's tables (idempotency_record, outbox_event, ...) are migrated by Once
-- itself, with their own history table, so this history stays the application's.

CREATE TABLE account (
    id         uuid PRIMARY KEY,
    tenant_id  text        NOT NULL,
    name       text        NOT NULL,
    email      text        NOT NULL,
    created_by text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT statement_timestamp()
);
CREATE INDEX account_tenant ON account (tenant_id, created_at);

-- An uploaded file: its bytes live in the file storage under the row's id, written before the row commits.
CREATE TABLE stored_file (
    id           uuid PRIMARY KEY,
    tenant_id    text        NOT NULL,
    name         text        NOT NULL,
    size_bytes   bigint      NOT NULL,
    sha256       text        NOT NULL,
    state        text        NOT NULL CHECK (state IN ('stored', 'completed')),
    created_by   text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT statement_timestamp(),
    completed_at timestamptz
);
CREATE INDEX stored_file_tenant ON stored_file (tenant_id, created_at);

CREATE TABLE task (
    id           text PRIMARY KEY,
    tenant_id    text        NOT NULL,
    type         text        NOT NULL,
    params       jsonb       NOT NULL,
    state        text        NOT NULL CHECK (state IN ('submitted', 'done')),
    result       jsonb,
    submitted_by text        NOT NULL,
    submitted_at timestamptz NOT NULL DEFAULT statement_timestamp(),
    done_at      timestamptz
);
CREATE INDEX task_tenant ON task (tenant_id, submitted_at);

-- account-projection: accounts per tenant, kept by a TRANSACTIONAL handler.
CREATE TABLE account_count (
    tenant_id text PRIMARY KEY,
    accounts  bigint NOT NULL
);

-- welcome-email: every email "sent", with the derived key the mail service would deduplicate on. Deliberately no
-- unique constraint: a duplicate send must show up in the effects ledger, not be hidden by the table.
CREATE TABLE outbound_email (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    derived_key text        NOT NULL,
    event_id    uuid        NOT NULL,
    tenant_id   text        NOT NULL,
    to_address  text        NOT NULL,
    subject     text        NOT NULL,
    sent_at     timestamptz NOT NULL DEFAULT statement_timestamp()
);
CREATE INDEX outbound_email_event ON outbound_email (event_id);

-- The effects ledger of the TRANSACTIONAL handlers: one row per effect, written in the handler's transaction.
-- Again no unique constraint, so that a handler running twice for one event would be counted, not refused.
CREATE TABLE handler_effect (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    handler_key text        NOT NULL,
    event_id    uuid        NOT NULL,
    tenant_id   text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT statement_timestamp()
);
CREATE INDEX handler_effect_event ON handler_effect (handler_key, event_id);
