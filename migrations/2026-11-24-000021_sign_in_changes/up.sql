-- Every instance remembers sign-in outcomes (record_sign_in) between requests. Each change to what
-- decides one is announced on the channel `opsd_sign_in`, whoever makes it (a webhook, a sign-in with
-- another role, an operator's own SQL), and delivered when its transaction commits: the payload is
-- the user's id, or '*' for a team's deletion. The steady state writes none of these columns, so it
-- announces nothing.
CREATE FUNCTION announce_sign_in_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_NARGS = 0 THEN
        PERFORM pg_notify('opsd_sign_in', '*');
    ELSE
        PERFORM pg_notify('opsd_sign_in', to_jsonb(COALESCE(NEW, OLD)) ->> TG_ARGV[0]);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER users_deleted_changed AFTER UPDATE OF deleted_at ON users
    FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at) EXECUTE FUNCTION announce_sign_in_change('id');
CREATE TRIGGER users_inserted_deleted AFTER INSERT ON users
    FOR EACH ROW WHEN (NEW.deleted_at IS NOT NULL) EXECUTE FUNCTION announce_sign_in_change('id');
CREATE TRIGGER users_removed AFTER DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION announce_sign_in_change('id');

-- A new membership needs no announcement: an outcome remembered for it implies the row existed.
CREATE TRIGGER memberships_role_changed AFTER UPDATE OF role ON memberships
    FOR EACH ROW WHEN (OLD.role IS DISTINCT FROM NEW.role) EXECUTE FUNCTION announce_sign_in_change('user_id');
CREATE TRIGGER memberships_removed AFTER DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION announce_sign_in_change('user_id');

CREATE TRIGGER membership_removals_changed AFTER INSERT OR UPDATE OR DELETE ON membership_removals
    FOR EACH ROW EXECUTE FUNCTION announce_sign_in_change('user_id');

CREATE TRIGGER teams_deleted_changed AFTER UPDATE OF deleted_at ON teams
    FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at) EXECUTE FUNCTION announce_sign_in_change();
CREATE TRIGGER teams_inserted_deleted AFTER INSERT ON teams
    FOR EACH ROW WHEN (NEW.deleted_at IS NOT NULL) EXECUTE FUNCTION announce_sign_in_change();
CREATE TRIGGER teams_removed AFTER DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION announce_sign_in_change();
