-- POST /api/reports/shift: the location check and the report, on a (date, shift) not used before.
\set n random(1, 300000)
BEGIN;
SELECT id FROM locations WHERE id = :location::uuid AND team_id = :team::text;
INSERT INTO shift_reports (id, team_id, location_id, date, shift, actual_sales, goal_sales, hero, submitted_by, created_at)
  VALUES (gen_random_uuid(), :team::text, :location::uuid, DATE '1200-01-01' + :n::int / 3, (ARRAY['morning', 'afternoon', 'evening'])[1 + :n::int % 3],
          2450.5, 2300, 'Maria', :user::text, now())
  ON CONFLICT DO NOTHING RETURNING *;
COMMIT;
