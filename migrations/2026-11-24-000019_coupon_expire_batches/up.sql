-- Runs up to p_max_batches batches of the sweep in one call, each committed on its own before the
-- next (each is still one transaction of at most p_limit claimed with SKIP LOCKED). The per-batch
-- cost of a round trip and a pool checkout was most of what the sweep spent beyond the rows' own
-- work. A batch that fails rolls back alone; the ones before it stay committed. It must be called
-- outside a transaction block, as a top-level CALL: COMMIT inside a procedure requires it.
-- The OUT values sum the batches; after_* continues where the last one stopped.
CREATE PROCEDURE coupon_expire_batches(p_now TIMESTAMPTZ, p_limit INTEGER, p_max_batches INTEGER,
    INOUT after_expires TIMESTAMPTZ, INOUT after_id UUID, p_until_expires TIMESTAMPTZ, p_until_id UUID,
    INOUT batches INTEGER, INOUT candidates BIGINT, INOUT expired BIGINT, INOUT accepted BIGINT,
    INOUT max_lag DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
    b RECORD;
BEGIN
    batches := 0; candidates := 0; expired := 0; accepted := 0; max_lag := NULL;
    LOOP
        SELECT * INTO b FROM coupon_expire(p_now, p_limit, NULL, after_expires, after_id, p_until_expires, p_until_id);
        COMMIT;
        batches := batches + 1;
        candidates := candidates + b.candidates;
        expired := expired + b.expired;
        accepted := accepted + b.accepted;
        max_lag := greatest(max_lag, b.max_lag);
        IF b.last_expires IS NOT NULL THEN
            after_expires := b.last_expires;
            after_id := b.last_id;
        END IF;
        EXIT WHEN b.candidates < p_limit OR batches >= p_max_batches;
    END LOOP;
END
$$;
