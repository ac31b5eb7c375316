-- Once 0.1: idempotency records. Never edit a released migration; add V2, V3 ... and a line in UPGRADING.md.
CREATE TABLE idempotency_record (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id             text COLLATE "C" NOT NULL,
    user_id               text COLLATE "C" NOT NULL,
    route                 text COLLATE "C" NOT NULL,
    idempotency_key       text COLLATE "C" NOT NULL,
    request_hash          text NOT NULL,
    status                text NOT NULL,
    -- Incremented by every claim: the fencing token that transitions must present, and the attempt count.
    fencing_token         bigint NOT NULL DEFAULT 1,
    response_code         integer,
    response_content_type text,
    -- Replayable response headers such as Location, as a JSON object of strings.
    response_headers      jsonb,
    response_body         bytea,
    response_body_omitted boolean NOT NULL DEFAULT false,
    task_id               text,
    outbox_event_id       uuid,
    locked_until          timestamptz,
    expires_at            timestamptz NOT NULL,
    claimed_at            timestamptz NOT NULL DEFAULT now(),
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_record_scope_uk UNIQUE (tenant_id, user_id, route, idempotency_key),
    CONSTRAINT idempotency_record_status_ck CHECK (status IN ('processing', 'succeeded', 'failed', 'expired')),
    CONSTRAINT idempotency_record_key_ck CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
    CONSTRAINT idempotency_record_scope_ck CHECK (tenant_id <> '' AND user_id <> '' AND route <> ''),
    CONSTRAINT idempotency_record_lease_ck CHECK (status <> 'processing' OR locked_until IS NOT NULL)
);

-- The expiry sweep: records past their TTL that are not yet marked expired.
CREATE INDEX idempotency_record_expiry_idx ON idempotency_record (expires_at) WHERE status <> 'expired';
-- The purge: expired records by age.
CREATE INDEX idempotency_record_purge_idx ON idempotency_record (expires_at) WHERE status = 'expired';
-- Stuck-processing queries: the (normally small) set of processing records, oldest claim first.
CREATE INDEX idempotency_record_processing_idx ON idempotency_record (claimed_at) WHERE status = 'processing';
-- Operators and the mutation guard look records up by their bound outbox event.
CREATE INDEX idempotency_record_outbox_event_idx ON idempotency_record (outbox_event_id) WHERE outbox_event_id IS NOT NULL;
