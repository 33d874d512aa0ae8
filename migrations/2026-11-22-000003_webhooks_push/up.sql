-- Durable idempotency of inbound webhooks: one row per (source, delivery id), with the body's hash.
CREATE TABLE webhook_deliveries (
    source       TEXT NOT NULL,
    delivery_id  TEXT NOT NULL CHECK (length(delivery_id) BETWEEN 1 AND 200),
    body_sha256  TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    received_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (source, delivery_id)
);

-- A browser's push subscription; it goes with its user.
CREATE TABLE push_subscriptions (
    id               UUID PRIMARY KEY,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    endpoint         TEXT NOT NULL UNIQUE,
    p256dh           TEXT NOT NULL,
    auth             TEXT NOT NULL,
    expiration_time  TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX push_subscriptions_user_idx ON push_subscriptions (user_id);
