-- PATCH /api/incidents/{id}: the route's own statement (PgIncidentStore's CHANGE_STATUS) on the
-- client's own incident: lock it, record the change with the status it replaced, update it. The new
-- status is the other one of two, so every transaction changes the incident, as the route's load does.
WITH old AS (
    SELECT *, CASE WHEN status = 'investigating' THEN 'resolved' ELSE 'investigating' END AS target FROM incidents
    WHERE id = ('00000000-0000-7000-8000-' || lpad(:client_id::text, 12, '0'))::uuid AND team_id = :team::text FOR UPDATE
), changed AS (
    UPDATE incidents SET status = old.target, updated_at = now() FROM old
    WHERE incidents.id = old.id AND old.status <> old.target
    RETURNING incidents.*
), recorded AS (
    INSERT INTO incident_status_changes (id, incident_id, from_status, to_status, changed_by, changed_at)
    SELECT gen_random_uuid(), old.id, old.status, old.target, :user::text, now() FROM old JOIN changed ON changed.id = old.id
)
SELECT id, team_id, location_id, type AS incident_type, severity, status, notes, media_urls, contact_id,
       reported_by, created_at, updated_at FROM changed
UNION ALL
SELECT id, team_id, location_id, type AS incident_type, severity, status, notes, media_urls, contact_id,
       reported_by, created_at, updated_at FROM old WHERE old.status = old.target;
