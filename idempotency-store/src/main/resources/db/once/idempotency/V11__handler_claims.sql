-- Once 0.1: handlers' claims get a table of their own, shaped for them and partitioned by the time of their event.
-- A claim is what one handler (route <event_type>:v<version>:<handler_key>) took for one event: no HTTP columns, the
-- route as a number, tenant, actor and the payload's fingerprint hashed to 16 bytes (so the same event id under
-- another tenant or actor is a conflict, not the first one's redelivery). Each row lives in the partition of its event's day, the
-- UTC day of the time in its UUIDv7 id, so the key (event_id, route_id, day) is unique across partitions: a
-- redelivery, months later or from another relay, computes the same day and finds the claim. Whole days are dropped
-- once every claim in them is older than the claim retention (HandlerClaimStore, ClaimPartitions).
-- Day 0 is the undated partition: events whose id is not a UUIDv7, and events first claimed when already older than
-- the claim retention. Its rows carry their own kept_until and are deleted by the retention sweep.
CREATE TABLE once_handler_route (
    id    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    route text COLLATE "C" NOT NULL,
    CONSTRAINT once_handler_route_uk UNIQUE (route)
);

CREATE TABLE once_handler_claim (
    route_id     integer NOT NULL,            -- once_handler_route.id
    day          integer NOT NULL,            -- days since 1970-01-01 (UTC) of the event id's time; 0: undated
    event_id     uuid NOT NULL,
    fencing      integer NOT NULL DEFAULT 1,  -- incremented by each reclaim: transitions present it
    status       smallint NOT NULL,           -- 1 processing, 2 succeeded, 3 failed, 4 released
    tenant_id    text COLLATE "C" NOT NULL,
    actor_id     text COLLATE "C" NOT NULL,
    payload_hash bytea NOT NULL,              -- 16 bytes of SHA-256 over tenant, actor and the payload's fingerprint
    locked_until timestamptz,                 -- a LEASED handler's lease while processing
    kept_until   timestamptz,                 -- undated claims only: when the retention sweep may delete it
    failed_at    timestamptz,
    reason       text,                        -- why it failed, at most 500 characters
    -- the event id first: ids arrive in time order, so the key's index grows at its right end and stays compact
    -- (route first would split each handler's range of it in halves)
    CONSTRAINT once_handler_claim_pk PRIMARY KEY (event_id, route_id, day)
) PARTITION BY RANGE (day);

CREATE TABLE once_handler_claim_undated PARTITION OF once_handler_claim FOR VALUES FROM (0) TO (1);
CREATE INDEX once_handler_claim_undated_kept_idx ON once_handler_claim_undated (kept_until);

-- Existing claims move over: every claim still live in idempotency_record (a route with no space and a :v<n>: part,
-- a key that is a uuid), placed by the rule the store uses with each claim's own retention (expires_at - claimed_at):
-- in its event's day when that day is younger than the retention, else undated and kept until its expires_at.
CREATE TEMPORARY TABLE once_moving_claim ON COMMIT DROP AS
SELECT r.route, CAST(r.idempotency_key AS uuid) AS event_id, r.fencing_token, r.status, r.tenant_id,
       r.user_id AS actor_id, r.request_hash, r.locked_until, r.expires_at, r.updated_at, r.response_body,
       CASE WHEN substr(r.idempotency_key, 15, 1) = '7'
                 AND t.ms > EXTRACT(EPOCH FROM statement_timestamp()) * 1000
                            - EXTRACT(EPOCH FROM r.expires_at - r.claimed_at) * 1000
            THEN CAST(t.ms / 86400000 AS integer) ELSE 0 END AS day
FROM idempotency_record r
CROSS JOIN LATERAL (SELECT CAST(('x' || replace(substr(r.idempotency_key, 1, 13), '-', '')) AS bit(48))::bigint AS ms) t
WHERE r.route LIKE '%:v%:%' AND r.route NOT LIKE '% %'
  AND r.idempotency_key ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
  AND r.status <> 'expired' AND r.expires_at > statement_timestamp();

INSERT INTO once_handler_route (route) SELECT DISTINCT route FROM once_moving_claim ORDER BY route;

DO $$
DECLARE
    d integer;
BEGIN
    FOR d IN SELECT DISTINCT day FROM once_moving_claim WHERE day > 0 ORDER BY day LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF once_handler_claim FOR VALUES FROM (%s) TO (%s)',
                       'once_handler_claim_' || to_char(date '1970-01-01' + d, 'YYYYMMDD'), d, d + 1);
    END LOOP;
END
$$;

INSERT INTO once_handler_claim (route_id, day, event_id, fencing, status, tenant_id, actor_id, payload_hash,
                                locked_until, kept_until, failed_at, reason)
SELECT h.id, m.day, m.event_id, CAST(LEAST(m.fencing_token, 2147483647) AS integer),
       CASE m.status WHEN 'processing' THEN 1 WHEN 'succeeded' THEN 2 ELSE 3 END,
       m.tenant_id, m.actor_id,
       substring(sha256(sha256(convert_to(m.tenant_id, 'UTF8')) || sha256(convert_to(m.actor_id, 'UTF8'))
                        || convert_to(m.request_hash, 'UTF8')) FROM 1 FOR 16),
       m.locked_until, CASE WHEN m.day = 0 THEN m.expires_at END,
       CASE WHEN m.status = 'failed' THEN m.updated_at END,
       CASE WHEN m.status = 'failed' THEN left(convert_from(m.response_body, 'UTF8'), 500) END
FROM once_moving_claim m JOIN once_handler_route h ON h.route = m.route;

DELETE FROM idempotency_record
WHERE route LIKE '%:v%:%' AND route NOT LIKE '% %'
  AND idempotency_key ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

-- Operators list failed claims newest first (HandlerClaims.failed): a small index, of failed claims only.
CREATE INDEX once_handler_claim_failed_idx ON once_handler_claim (failed_at) WHERE status = 3;
