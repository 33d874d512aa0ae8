-- The classification of a guest event's last failed attempt (`store_unavailable`, `store_error`),
-- for the operators' queue page. Never an error's text: payloads may hold guest data.
ALTER TABLE guest_events ADD COLUMN last_error TEXT;
