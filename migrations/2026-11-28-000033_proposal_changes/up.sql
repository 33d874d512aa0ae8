-- Fair workweek: a proposal for a week inside the notice period lists each change to the published
-- schedule with the premium it owes: [{"employeeKey", "date", "kind", "from": [dept, block] | null,
-- "to": ..., "premium"}].
-- Locks are waited for briefly, so a migration never queues every request behind it; one that
-- times out is rolled back and tried again after a backoff (crates/postgres/src/migrations.rs).
SET LOCAL lock_timeout = '2s';
SET LOCAL statement_timeout = '60s';
ALTER TABLE schedule_proposals ADD COLUMN changes JSONB;
