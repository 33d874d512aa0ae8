-- POST /api/incidents with a new contact: the location check, the contact and the incident.
BEGIN;
SELECT id FROM locations WHERE id = :location::uuid AND team_id = :team::text;
INSERT INTO contacts (id, team_id, name, phone, created_at) VALUES (gen_random_uuid(), :team::text, 'Guest', '+1 555 010 2030', now())
  RETURNING id AS contact \gset
INSERT INTO incidents (id, team_id, location_id, type, severity, status, notes, media_urls, contact_id, reported_by, created_at, updated_at)
  VALUES (gen_random_uuid(), :team::text, :location::uuid, 'Injury', 'high', 'reported', 'Cut on the slicer', '{}', :contact::uuid, :user::text, now(), now())
  RETURNING *;
COMMIT;
