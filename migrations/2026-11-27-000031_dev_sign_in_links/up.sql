-- One-time links into the console for the local dev identity (`just run`, `opsd dev-sign-in-link`).
-- Only the SHA-256 of a link's ticket is kept; redeeming a link deletes it.
CREATE TABLE dev_sign_in_links (
    ticket_sha256 text PRIMARY KEY,
    user_id text NOT NULL,
    team_id text NOT NULL,
    role text NOT NULL CHECK (role IN ('admin', 'member')),
    expires_at timestamptz NOT NULL
);
