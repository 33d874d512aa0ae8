-- Every authenticated request records the sign-in its token asserts. Done as one statement instead of
-- a transaction of six: the user exists and is not deleted; the token's membership was not removed
-- (nor its team deleted) at or after the token's iat; the team and the membership exist with the
-- token's role. In the steady state (the same user, team and role again) it only reads: the
-- membership is written, and its row locked, only when it is missing or its role changed.
-- Returns 'active', 'revoked' (the membership opens nothing) or 'deleted'.
CREATE FUNCTION record_sign_in(p_user TEXT, p_team TEXT, p_role TEXT, p_issued_at BIGINT)
RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
    v_deleted TIMESTAMPTZ;
BEGIN
    SELECT deleted_at INTO v_deleted FROM users WHERE id = p_user;
    IF NOT FOUND THEN
        INSERT INTO users (id) VALUES (p_user) ON CONFLICT DO NOTHING;
        SELECT deleted_at INTO v_deleted FROM users WHERE id = p_user;
    END IF;
    IF v_deleted IS NOT NULL THEN
        RETURN 'deleted';
    END IF;
    IF p_team IS NULL THEN
        RETURN 'active';
    END IF;
    IF EXISTS (SELECT 1 FROM membership_removals
               WHERE user_id = p_user AND team_id = p_team
                 AND (p_issued_at IS NULL OR removed_at >= to_timestamp(p_issued_at)))
       OR EXISTS (SELECT 1 FROM teams
                  WHERE id = p_team AND deleted_at IS NOT NULL
                    AND (p_issued_at IS NULL OR deleted_at >= to_timestamp(p_issued_at))) THEN
        RETURN 'revoked';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM memberships WHERE user_id = p_user AND team_id = p_team AND role = p_role) THEN
        INSERT INTO teams (id) VALUES (p_team) ON CONFLICT DO NOTHING;
        INSERT INTO memberships (user_id, team_id, role) VALUES (p_user, p_team, p_role)
            ON CONFLICT (user_id, team_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now()
            WHERE memberships.role IS DISTINCT FROM EXCLUDED.role;
    END IF;
    RETURN 'active';
END
$$;
