-- Sending a proposal to 7shifts as drafts: each shift's provider id once sent, and when a create was
-- tried (a publish cut off after a create looks for it there before trying again); the proposal held
-- by one publish at a time, until `publishing_until`.
-- Locks are waited for briefly, so a migration never queues every request behind it; one that
-- times out is rolled back and tried again after a backoff (crates/postgres/src/migrations.rs).
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
ALTER TABLE schedule_proposal_shifts ADD COLUMN provider_shift_id TEXT;
ALTER TABLE schedule_proposal_shifts ADD COLUMN create_tried_at TIMESTAMPTZ;
ALTER TABLE schedule_proposals ADD COLUMN publish_lease UUID;
ALTER TABLE schedule_proposals ADD COLUMN publishing_until TIMESTAMPTZ;
ALTER TABLE schedule_proposals ADD COLUMN published_at TIMESTAMPTZ;
