CREATE TABLE assistant_threads (
    id          UUID PRIMARY KEY,
    user_id     TEXT NOT NULL,
    team_id     TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX assistant_threads_user_idx ON assistant_threads (user_id);

CREATE TABLE assistant_messages (
    id          UUID PRIMARY KEY,
    thread_id   UUID NOT NULL REFERENCES assistant_threads (id) ON DELETE CASCADE,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX assistant_messages_thread_idx ON assistant_messages (thread_id, created_at, id);
