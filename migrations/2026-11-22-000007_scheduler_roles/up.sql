-- The provider's roles and the department each counts under, refreshed by the roles sync.
CREATE TABLE scheduler_roles (
    provider_role_id      TEXT PRIMARY KEY,
    provider_location_id  TEXT,
    name                  TEXT NOT NULL,
    department            TEXT NOT NULL CHECK (department IN ('FOH', 'BOH', 'Other')),
    synced_at             TIMESTAMPTZ NOT NULL
);
