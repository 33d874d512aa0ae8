-- A team is an organization of the identity provider; its id is the provider's.
CREATE TABLE teams (
    id               TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 200),
    chat_webhook_url TEXT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id               TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 200),
    email            TEXT,
    first_name       TEXT,
    last_name        TEXT,
    image_url        TEXT,
    -- The provider's updated_at (ms) of the last applied profile event: an older one never wins.
    provider_updated_at BIGINT,
    deleted_at       TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, team_id)
);
CREATE INDEX memberships_team_idx ON memberships (team_id);

CREATE TABLE locations (
    id                     UUID PRIMARY KEY,
    team_id                TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name                   TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- The legacy schedule view addresses a location by slug alone, so it is unique across teams.
    slug                   TEXT NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9-]{1,64}$'),
    timezone               TEXT NOT NULL,
    scheduler_location_id  TEXT,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX locations_team_idx ON locations (team_id, name);

CREATE TABLE job_runs (
    id             UUID PRIMARY KEY,
    job            TEXT NOT NULL,
    correlation_id UUID NOT NULL,
    started_at     TIMESTAMPTZ NOT NULL,
    finished_at    TIMESTAMPTZ,
    status         TEXT NOT NULL CHECK (status IN ('running', 'ok', 'partial', 'failed', 'skipped', 'disabled')),
    summary        JSONB NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX job_runs_job_started_idx ON job_runs (job, started_at DESC);
