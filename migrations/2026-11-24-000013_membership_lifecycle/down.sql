ALTER TABLE teams DROP COLUMN deleted_at;
DROP TABLE membership_removals;
ALTER TABLE memberships DROP COLUMN provider_updated_at;
