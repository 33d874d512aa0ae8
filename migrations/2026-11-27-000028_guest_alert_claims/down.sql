ALTER TABLE guest_alerts RENAME COLUMN claimed_at TO sending_until;
