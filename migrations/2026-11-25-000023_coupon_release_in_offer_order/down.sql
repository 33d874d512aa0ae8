-- Restores migration 11's coupon_expire, which released a batch's offers in one UPDATE … FROM.
CREATE OR REPLACE FUNCTION coupon_expire(p_now TIMESTAMPTZ, p_limit INTEGER, p_reservation UUID,
                              p_after_expires TIMESTAMPTZ, p_after_id UUID,
                              p_until_expires TIMESTAMPTZ, p_until_id UUID)
RETURNS TABLE (candidates BIGINT, expired BIGINT, accepted BIGINT, max_lag DOUBLE PRECISION,
               last_expires TIMESTAMPTZ, last_id UUID)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    IF p_reservation IS NULL THEN
        RETURN QUERY
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
        released AS (
            UPDATE coupon_offers o SET held = o.held - c.n
            FROM (SELECT x.offer_id, count(*)::int AS n FROM expired x GROUP BY x.offer_id) c
            WHERE o.id = c.offer_id RETURNING o.id),
        events AS (
            INSERT INTO coupon_expiry_events (reservation_id, offer_id, occurred_at)
            SELECT e.id, e.offer_id, p_now FROM expired e
            ON CONFLICT (reservation_id) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM candidates), (SELECT count(*) FROM expired), (SELECT count(*) FROM events),
               (SELECT max(extract(epoch FROM (p_now - x.expires_at)))::float8 FROM expired x),
               (SELECT c.expires_at FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1),
               (SELECT c.id FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1);
    ELSE
        RETURN QUERY
        WITH candidates AS (SELECT r.id, r.expires_at FROM coupon_reservations r WHERE r.id = p_reservation AND r.state = 'active' AND r.expires_at <= p_now),
        claimed AS (
            SELECT r.id, r.offer_id, r.expires_at FROM coupon_reservations r
            WHERE r.id IN (SELECT c.id FROM candidates c) AND r.state = 'active' AND r.expires_at <= p_now
            FOR UPDATE SKIP LOCKED),
        expired AS (
            UPDATE coupon_reservations r SET state = 'expired', expired_at = p_now FROM claimed
            WHERE r.id = claimed.id RETURNING r.id, r.offer_id, claimed.expires_at),
        released AS (
            UPDATE coupon_offers o SET held = o.held - c.n
            FROM (SELECT x.offer_id, count(*)::int AS n FROM expired x GROUP BY x.offer_id) c
            WHERE o.id = c.offer_id RETURNING o.id),
        events AS (
            INSERT INTO coupon_expiry_events (reservation_id, offer_id, occurred_at)
            SELECT e.id, e.offer_id, p_now FROM expired e
            ON CONFLICT (reservation_id) DO NOTHING RETURNING 1)
        SELECT (SELECT count(*) FROM candidates), (SELECT count(*) FROM expired), (SELECT count(*) FROM events),
               (SELECT max(extract(epoch FROM (p_now - x.expires_at)))::float8 FROM expired x),
               (SELECT c.expires_at FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1),
               (SELECT c.id FROM candidates c ORDER BY c.expires_at DESC, c.id DESC LIMIT 1);
    END IF;
END
$$;
