-- PATCH /api/incidents/{id}: lock the client's own incident, record the change, update it.
BEGIN;
SELECT id, status AS from_status FROM incidents WHERE id = ('00000000-0000-7000-8000-' || lpad(:client_id::text, 12, '0'))::uuid
  AND team_id = :team::text FOR UPDATE \gset
INSERT INTO incident_status_changes (id, incident_id, from_status, to_status, changed_by, changed_at)
  VALUES (gen_random_uuid(), :id::uuid, :from_status::text, CASE WHEN :from_status::text = 'investigating' THEN 'resolved' ELSE 'investigating' END, :user::text, now());
UPDATE incidents SET status = CASE WHEN status = 'investigating' THEN 'resolved' ELSE 'investigating' END, updated_at = now()
  WHERE id = :id::uuid RETURNING *;
COMMIT;
