-- Capacity of a coupon offer: `held` always equals the number of its active reservations. It only
-- changes in the statements that move reservations in or out of `active`, and the checks below
-- refuse any release that would make it negative or any hold past capacity.
CREATE TABLE coupon_offers (
    id           UUID PRIMARY KEY,
    team_id      TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    location_id  UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    name         TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    capacity     INTEGER NOT NULL CHECK (capacity >= 0),
    held         INTEGER NOT NULL DEFAULT 0,
    created_at   TIMESTAMPTZ NOT NULL,
    CONSTRAINT coupon_offers_held_range CHECK (held >= 0 AND held <= capacity)
);
CREATE INDEX coupon_offers_team_idx ON coupon_offers (team_id);

CREATE TABLE coupon_reservations (
    id           UUID PRIMARY KEY,
    offer_id     UUID NOT NULL REFERENCES coupon_offers (id) ON DELETE CASCADE,
    guest_id     TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('active', 'redeemed', 'cancelled', 'expired')),
    expires_at   TIMESTAMPTZ NOT NULL,
    expired_at   TIMESTAMPTZ,
    redeemed_at  TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX coupon_reservations_due_idx ON coupon_reservations (expires_at, id) WHERE state = 'active';
CREATE INDEX coupon_reservations_offer_idx ON coupon_reservations (offer_id) WHERE state = 'active';

-- The durable guest-event queue: canonical producer events, legacy receipts, and the expiry
-- events of the sweep, all under one stable identity each.
CREATE TABLE guest_events (
    id              UUID PRIMARY KEY,
    identity        TEXT NOT NULL UNIQUE,
    source          TEXT NOT NULL CHECK (source IN ('canonical', 'legacy', 'expiry')),
    event_type      TEXT NOT NULL,
    payload_sha256  TEXT NOT NULL,
    team_id         TEXT NOT NULL,
    location_id     UUID NOT NULL,
    payload         JSONB NOT NULL,
    state           TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'processing', 'done', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    available_at    TIMESTAMPTZ NOT NULL,
    outcome         TEXT,
    received_at     TIMESTAMPTZ NOT NULL,
    processed_at    TIMESTAMPTZ
);
CREATE INDEX guest_events_ready_idx ON guest_events (available_at, received_at) WHERE state IN ('queued', 'processing');

-- Feedback as the producer recorded it: the durable identity an alert needs.
CREATE TABLE guest_feedback (
    id              TEXT PRIMARY KEY,
    team_id         TEXT NOT NULL,
    location_id     UUID NOT NULL REFERENCES locations (id) ON DELETE CASCADE,
    guest_id        TEXT NOT NULL,
    reservation_id  UUID,
    rating          SMALLINT NOT NULL CHECK (rating BETWEEN 1 AND 5),
    comment         TEXT,
    submitted_at    TIMESTAMPTZ NOT NULL
);

-- At most one alert per feedback; it carries no contact values, comments or tokens.
CREATE TABLE guest_alerts (
    id           UUID PRIMARY KEY,
    feedback_id  TEXT NOT NULL UNIQUE REFERENCES guest_feedback (id) ON DELETE CASCADE,
    team_id      TEXT NOT NULL,
    location_id  UUID NOT NULL,
    rating       SMALLINT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    notified_at  TIMESTAMPTZ
);
