-- POST /api/analytics/sales with 10,000 rows: the ownership check and one upsert of the batch.
\set day random(0, 3000)
BEGIN;
SELECT id FROM locations WHERE team_id = :team::text AND id = ANY (ARRAY[:location::uuid]::uuid[]);
INSERT INTO sales_facts (location_id, date, block, food, beverage, other, guests, updated_at)
  SELECT :location::uuid, DATE '1900-01-01' + :day::int * 4000 + n / 3, (ARRAY['Lunch', 'Dinner', 'LateNight'])[1 + n % 3], 1200.50, 310.25, 42, NULL, now()
  FROM generate_series(0, 9999) n
  ON CONFLICT (location_id, date, block) DO UPDATE SET food = EXCLUDED.food, beverage = EXCLUDED.beverage,
    other = EXCLUDED.other, guests = EXCLUDED.guests, updated_at = now();
COMMIT;
