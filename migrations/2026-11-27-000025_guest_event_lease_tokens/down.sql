ALTER TABLE guest_events DROP COLUMN lease_token;
