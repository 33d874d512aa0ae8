-- An alert is claimed for sending before its push: a feedback delivered again while its alert is
-- being sent (another event id, another instance) finds it claimed and sends nothing. A claim whose
-- worker died runs out, and the next delivery of that feedback sends the alert.
ALTER TABLE guest_alerts ADD COLUMN sending_until TIMESTAMPTZ;
