ALTER TABLE schedule_proposals DROP COLUMN published_at;
ALTER TABLE schedule_proposals DROP COLUMN publishing_until;
ALTER TABLE schedule_proposals DROP COLUMN publish_lease;
ALTER TABLE schedule_proposal_shifts DROP COLUMN create_tried_at;
ALTER TABLE schedule_proposal_shifts DROP COLUMN provider_shift_id;
