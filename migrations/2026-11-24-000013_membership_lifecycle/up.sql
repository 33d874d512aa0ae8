-- The identity provider's organization events keep memberships in step with it.

-- The provider's updated_at (ms) of the last membership event applied: an older one never wins.
ALTER TABLE memberships ADD COLUMN provider_updated_at BIGINT;

-- A removed membership, kept so that neither a late, older event nor a token issued before the
-- removal brings it back. No foreign keys: the provider may name a user or team not seen yet.
CREATE TABLE membership_removals (
    user_id             TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 200),
    team_id             TEXT NOT NULL CHECK (length(team_id) BETWEEN 1 AND 200),
    removed_at          TIMESTAMPTZ NOT NULL,
    provider_updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, team_id)
);

-- The provider deleted the organization: its memberships are gone, its data stays.
ALTER TABLE teams ADD COLUMN deleted_at TIMESTAMPTZ;
