-- POST /api/incidents/{id}/comments: the incident check and the comment, on the client's own incident.
BEGIN;
SELECT id FROM incidents WHERE id = ('00000000-0000-7000-8000-' || lpad(:client_id::text, 12, '0'))::uuid AND team_id = :team::text \gset
INSERT INTO incident_comments (id, incident_id, author_id, content, created_at)
  VALUES (gen_random_uuid(), :id::uuid, :user::text, 'Manager notified', now()) RETURNING *;
COMMIT;
