-- The expiry step releases the offers' capacity one offer at a time in id order, in statements of
-- their own after the expiry and in the same transaction, instead of in one UPDATE … FROM joined to
-- the batch's counts. That join locked a batch's offers in whatever order the plan produced them,
-- so two batches releasing the same offers (a sweep's two ranges, or two instances' sweeps) could
-- each hold one the other waited for. With 3,000 reservations over 12 offers and four sessions
-- sweeping (the test `racing_sweeps_over_many_offers_release_each_reservation_once`), 12 runs of
-- 25 failed with "deadlock detected"; none of 50 since. In id order every batch takes the offers'
-- locks in the same order, so no cycle can form: every other statement that changes an offer (a
-- hold, a redeem, a lazy expiry) changes only one.
-- Everything else (claim, expiry, events, counts, the ctid addressing, the generic plan) is as in
-- migration 11. The sweep's speed did not change measurably (three alternating pairs of
-- `opsd-bench sweep`: 0.64-0.69 s before, 0.65-0.68 s after).
CREATE OR REPLACE FUNCTION coupon_expire(p_now TIMESTAMPTZ, p_limit INTEGER, p_reservation UUID,
                              p_after_expires TIMESTAMPTZ, p_after_id UUID,
                              p_until_expires TIMESTAMPTZ, p_until_id UUID)
RETURNS TABLE (candidates BIGINT, expired BIGINT, accepted BIGINT, max_lag DOUBLE PRECISION,
               last_expires TIMESTAMPTZ, last_id UUID)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    released_offers UUID[];
    released_counts INTEGER[];
BEGIN
    IF p_reservation IS NULL THEN
        WITH candidates AS (SELECT r.ctid AS tid, r.id, r.expires_at FROM coupon_reservations r
                           WHERE r.state = 'active' AND r.expires_at <= p_now
                           AND (r.expires_at, r.id) > (coalesce(p_after_expires, '-infinity'),
                                                       coalesce(p_after_id, '00000000-0000-0000-0000-000000000000'))
                           AND (r.expires_at, r.id) <= (coalesce(p_until_expires, 'infinity'),
                                                        coalesce(p_until_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
                           ORDER BY r.expires_at, r.id LIMIT p_limit),
        claimed AS (
            SELECT r.ctid AS tid FROM coupon_reservations r
            WHERE r.ctid = ANY (ARRAY(SELECT c.tid FROM candidates c)) AND r.state = 'active' AND r.expires_at <= p_now
            FOR UPDATE SKIP LOCKED),
        expired AS (
            UPDATE coupon_reservations r SET state = 'expired', expired_at = p_now
            WHERE r.ctid = ANY (ARRAY(SELECT c.tid FROM claimed c)) RETURNING r.id, r.offer_id, r.expires_at),
        released AS (SELECT x.offer_id, count(*)::int AS n FROM expired x GROUP BY x.offer_id),
        events AS (
            INSERT INTO coupon_expiry_events (reservation_id, offer_id, occurred_at)
            SELECT e.id, e.offer_id, p_now FROM expired e
            ON CONFLICT (reservation_id) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM candidates), (SELECT count(*) FROM expired), (SELECT count(*) FROM events),
               (SELECT max(extract(epoch FROM (p_now - x.expires_at)))::float8 FROM expired x),
               (SELECT c.expires_at FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1),
               (SELECT c.id FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1),
               (SELECT array_agg(g.offer_id ORDER BY g.offer_id) FROM released g),
               (SELECT array_agg(g.n ORDER BY g.offer_id) FROM released g)
        INTO candidates, expired, accepted, max_lag, last_expires, last_id, released_offers, released_counts;
    ELSE
        WITH candidates AS (SELECT r.id, r.expires_at FROM coupon_reservations r WHERE r.id = p_reservation AND r.state = 'active' AND r.expires_at <= p_now),
        claimed AS (
            SELECT r.id, r.offer_id, r.expires_at FROM coupon_reservations r
            WHERE r.id IN (SELECT c.id FROM candidates c) AND r.state = 'active' AND r.expires_at <= p_now
            FOR UPDATE SKIP LOCKED),
        expired AS (
            UPDATE coupon_reservations r SET state = 'expired', expired_at = p_now FROM claimed
            WHERE r.id = claimed.id RETURNING r.id, r.offer_id, claimed.expires_at),
        released AS (SELECT x.offer_id, count(*)::int AS n FROM expired x GROUP BY x.offer_id),
        events AS (
            INSERT INTO coupon_expiry_events (reservation_id, offer_id, occurred_at)
            SELECT e.id, e.offer_id, p_now FROM expired e
            ON CONFLICT (reservation_id) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM candidates), (SELECT count(*) FROM expired), (SELECT count(*) FROM events),
               (SELECT max(extract(epoch FROM (p_now - x.expires_at)))::float8 FROM expired x),
               (SELECT c.expires_at FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1),
               (SELECT c.id FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1),
               (SELECT array_agg(g.offer_id ORDER BY g.offer_id) FROM released g),
               (SELECT array_agg(g.n ORDER BY g.offer_id) FROM released g)
        INTO candidates, expired, accepted, max_lag, last_expires, last_id, released_offers, released_counts;
    END IF;
    FOR i IN 1 .. coalesce(array_length(released_offers, 1), 0) LOOP
        UPDATE coupon_offers SET held = held - released_counts[i] WHERE id = released_offers[i];
    END LOOP;
    RETURN NEXT;
END
$$;
