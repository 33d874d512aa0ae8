-- A nudge is recorded before it is sent, once per (kind, target, period): a rerun never nudges twice.
CREATE TABLE nudges (
    kind        TEXT NOT NULL,
    target      TEXT NOT NULL,
    period      TEXT NOT NULL,
    team_id     TEXT NOT NULL,
    delivered   BOOLEAN NOT NULL DEFAULT false,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (kind, target, period)
);

-- The weekly filing compliance of each location (Saturday to Friday).
CREATE TABLE compliance_weeks (
    location_id               UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    week_start                DATE NOT NULL,
    expected_shift_reports    INTEGER NOT NULL,
    filed_shift_reports       INTEGER NOT NULL,
    expected_manager_reports  INTEGER NOT NULL,
    filed_manager_reports     INTEGER NOT NULL,
    computed_at               TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (location_id, week_start)
);

-- One Hero of the Shift message per location and week.
CREATE TABLE mvp_awards (
    location_id  UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    week_start   DATE NOT NULL,
    names        TEXT[] NOT NULL,
    mentions     INTEGER NOT NULL,
    posted       BOOLEAN NOT NULL DEFAULT false,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (location_id, week_start)
);

CREATE TABLE announcements (
    id            UUID PRIMARY KEY,
    team_id       TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    location_id   UUID REFERENCES locations (id) ON DELETE CASCADE,
    title         TEXT NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    body          TEXT NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
    publish_at    TIMESTAMPTZ NOT NULL,
    published_at  TIMESTAMPTZ,
    created_by    TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX announcements_due_idx ON announcements (publish_at) WHERE published_at IS NULL;
CREATE INDEX announcements_team_idx ON announcements (team_id, publish_at DESC);
