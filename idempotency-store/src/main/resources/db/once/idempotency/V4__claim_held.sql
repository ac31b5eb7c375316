-- Once 0.1: a record's completion can travel with the COMMIT of the work it completes (OnceDataSource). It is then
-- sent before its outcome is known, so a completion whose claim no longer holds the record must fail the commit
-- instead of matching nothing: it raises SQLState OC001, recognised by StaleClaimException.isCause.
CREATE FUNCTION once_claim_held(completed bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF completed = 0 THEN
        RAISE EXCEPTION 'the claim no longer holds its idempotency record (its lease lapsed and another request reclaimed it, or it was completed): nothing of this transaction commits'
            USING ERRCODE = 'OC001';
    END IF;
    RETURN completed;
END
$$;
