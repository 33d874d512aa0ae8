-- POST /api/push/subscribe: the user's rate-limit hit and the upsert of a new device's subscription.
\set n random(1, 2000000000)
BEGIN;
SELECT wait FROM rate_limit_take(concat_ws(chr(58), 'push', 'subscribe', 'user_push_' || :n::text), 30, interval '1 minute', now());
INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, expiration_time, created_at, updated_at)
  VALUES (gen_random_uuid(), :user::text, 'http://127.0.0.1:9/yardstick/' || :n::text,
          'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', 'tBHItJI5svbpez7KI4CCXg', NULL, now(), now())
  ON CONFLICT (endpoint) DO UPDATE SET user_id = EXCLUDED.user_id, p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth,
    expiration_time = EXCLUDED.expiration_time, updated_at = EXCLUDED.updated_at;
COMMIT;
