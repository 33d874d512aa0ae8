-- POST /api/automation/coupons: the scope check and the queued event.
\set n random(1, 2000000000)
BEGIN;
SELECT EXISTS (SELECT 1 FROM locations WHERE id = :location::uuid AND team_id = :team::text) AS flag;
INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, payload, available_at, received_at)
  VALUES (gen_random_uuid(), 'yardstick-' || :n::text, 'canonical', 'feedback.submitted',
          'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', :team::text, :location::uuid,
          '{"type":"feedback.submitted","eventId":"evt","teamId":"org_bench","data":{"feedbackId":"f","guestId":"guest-555-0101","rating":4,"comment":"the fries were cold"}}',
          now(), now())
  ON CONFLICT (identity) DO NOTHING;
COMMIT;
