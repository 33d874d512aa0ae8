-- Answers kept for Idempotency-Key retries (crates/idempotency). A row with no status is a request
-- still running under its key, held until locked_until.
CREATE TABLE idempotency_keys (
    scope text NOT NULL,
    key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash bytea NOT NULL CHECK (length(request_hash) = 32),
    status smallint CHECK (status BETWEEN 100 AND 599),
    content_type text,
    location text,
    body bytea,
    created_at timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
