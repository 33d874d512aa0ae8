ALTER TABLE guest_events DROP COLUMN last_error;
