DROP TABLE announcement_pushes;
UPDATE job_runs SET status = 'failed' WHERE status = 'abandoned';
ALTER TABLE job_runs DROP CONSTRAINT job_runs_status_check;
ALTER TABLE job_runs ADD CONSTRAINT job_runs_status_check
    CHECK (status IN ('running', 'ok', 'partial', 'failed', 'skipped', 'disabled'));
