-- POST /api/webhooks/identity, user.updated: record the delivery, upsert the profile, read the user's teams.
\set n random(1, 2000000000)
BEGIN;
INSERT INTO webhook_deliveries (source, delivery_id, body_sha256, event_type, received_at)
  VALUES ('identity', 'msg_yardstick_' || :n::text, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'user.updated', now())
  ON CONFLICT DO NOTHING;
INSERT INTO users (id, email, first_name, last_name, image_url, provider_updated_at)
  VALUES ('user_yardstick_' || :client_id::text, 'a@example.com', 'Ann', 'Doe', 'https://img.example/u.png', :n::bigint)
  ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.email, first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name,
    image_url = EXCLUDED.image_url, provider_updated_at = EXCLUDED.provider_updated_at;
SELECT team_id FROM memberships WHERE user_id = 'user_yardstick_' || :client_id::text ORDER BY team_id;
COMMIT;
