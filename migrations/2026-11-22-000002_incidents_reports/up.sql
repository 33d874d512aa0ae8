CREATE TABLE contacts (
    id          UUID PRIMARY KEY,
    team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    phone       TEXT,
    email       TEXT,
    notes       TEXT CHECK (char_length(notes) <= 2000),
    created_at  TIMESTAMPTZ NOT NULL,
    deleted_at  TIMESTAMPTZ,
    CHECK (phone IS NOT NULL OR email IS NOT NULL)
);
CREATE INDEX contacts_live_idx ON contacts (team_id, name) WHERE deleted_at IS NULL;
CREATE INDEX contacts_deleted_idx ON contacts (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE incidents (
    id           UUID PRIMARY KEY,
    team_id      TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    location_id  UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    type         TEXT NOT NULL CHECK (type IN ('Injury', 'Near Miss', 'Spill / Slip Hazard', 'Complaint', 'Maintenance', 'Stockout')),
    severity     TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
    status       TEXT NOT NULL CHECK (status IN ('reported', 'investigating', 'deferred', 'resolved')),
    notes        TEXT NOT NULL CHECK (char_length(notes) BETWEEN 1 AND 5000),
    media_urls   TEXT[] NOT NULL DEFAULT '{}' CHECK (cardinality(media_urls) <= 10),
    -- A pruned contact leaves the incident in place without it.
    contact_id   UUID REFERENCES contacts (id) ON DELETE SET NULL,
    reported_by  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX incidents_team_recent_idx ON incidents (team_id, created_at DESC, id DESC);
CREATE INDEX incidents_location_recent_idx ON incidents (location_id, created_at DESC, id DESC);
CREATE INDEX incidents_contact_idx ON incidents (contact_id) WHERE contact_id IS NOT NULL;

CREATE TABLE incident_comments (
    id           UUID PRIMARY KEY,
    incident_id  UUID NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    author_id    TEXT NOT NULL,
    content      TEXT NOT NULL CHECK (char_length(content) BETWEEN 1 AND 5000),
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX incident_comments_incident_idx ON incident_comments (incident_id, created_at, id);

CREATE TABLE incident_status_changes (
    id           UUID PRIMARY KEY,
    incident_id  UUID NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    from_status  TEXT NOT NULL,
    to_status    TEXT NOT NULL,
    changed_by   TEXT NOT NULL,
    changed_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX incident_status_changes_incident_idx ON incident_status_changes (incident_id, changed_at, id);

CREATE TABLE shift_reports (
    id            UUID PRIMARY KEY,
    team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    location_id   UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    date          DATE NOT NULL,
    shift         TEXT NOT NULL CHECK (shift IN ('morning', 'afternoon', 'evening')),
    actual_sales  NUMERIC(12, 2) NOT NULL CHECK (actual_sales >= 0),
    goal_sales    NUMERIC(12, 2) NOT NULL CHECK (goal_sales >= 0),
    hero          TEXT CHECK (char_length(hero) <= 100),
    submitted_by  TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    CONSTRAINT shift_reports_slot_key UNIQUE (location_id, date, shift)
);

CREATE TABLE manager_reports (
    id                UUID PRIMARY KEY,
    team_id           TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    location_id       UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    date              DATE NOT NULL,
    total_sales       NUMERIC(12, 2) NOT NULL CHECK (total_sales >= 0),
    employee_reviews  JSONB NOT NULL DEFAULT '[]'::jsonb,
    submitted_by      TEXT NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    CONSTRAINT manager_reports_slot_key UNIQUE (location_id, date)
);
