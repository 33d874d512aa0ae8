ALTER TABLE schedule_proposals DROP COLUMN changes;
