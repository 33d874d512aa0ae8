ALTER TABLE guest_alerts DROP COLUMN sending_until;
