-- Once 0.1: what operators did, append-only. Every operator action (core, the console, the Java operator API) writes
-- its row first, in the same transaction as its effect: who, through what, which action on which target or filter,
-- the reason given, and, once the effect ran in that transaction, how many rows it affected. A rolled-back action
-- leaves no row; a committed one always has its row.
CREATE TABLE once_operator_audit (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT statement_timestamp(),
    operator  text NOT NULL,          -- the authenticated principal (console), the OS user (core)
    via       text NOT NULL,          -- console | core | api
    action    text NOT NULL,          -- e.g. parked.retry, parked.abandon, outbox.redrive, record.release
    target    jsonb NOT NULL,         -- the filter or the key the action took
    reason    text NOT NULL,
    affected  bigint                  -- NULL only inside the action's own transaction
);

CREATE INDEX once_operator_audit_at ON once_operator_audit (at);

-- Append-only: the one change allowed is the action's own count, from NULL, with nothing else changed.
CREATE FUNCTION once_operator_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.affected IS NULL AND NEW.affected IS NOT NULL
       AND (NEW.id, NEW.at, NEW.operator, NEW.via, NEW.action, NEW.target, NEW.reason)
           IS NOT DISTINCT FROM (OLD.id, OLD.at, OLD.operator, OLD.via, OLD.action, OLD.target, OLD.reason) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'once_operator_audit is append-only (% refused)', TG_OP USING ERRCODE = '42501';
END
$$;

CREATE TRIGGER once_operator_audit_append_only BEFORE UPDATE OR DELETE ON once_operator_audit
    FOR EACH ROW EXECUTE FUNCTION once_operator_audit_append_only();
CREATE TRIGGER once_operator_audit_no_truncate BEFORE TRUNCATE ON once_operator_audit
    FOR EACH STATEMENT EXECUTE FUNCTION once_operator_audit_append_only();
