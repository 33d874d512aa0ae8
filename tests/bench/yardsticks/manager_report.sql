-- POST /api/reports/manager: the location check and the report, on a date not used before.
\set n random(1, 300000)
BEGIN;
SELECT id FROM locations WHERE id = :location::uuid AND team_id = :team::text;
INSERT INTO manager_reports (id, team_id, location_id, date, total_sales, employee_reviews, submitted_by, created_at)
  VALUES (gen_random_uuid(), :team::text, :location::uuid, DATE '1200-01-01' + :n::int, 8120.75,
          '[{"employeeName":"Maria","employeeKey":"7s-1","rating":5,"notes":"great close"}]', :user::text, now())
  ON CONFLICT DO NOTHING RETURNING *;
COMMIT;
