use std::time::Duration;

use opsd_tests::push_fake::FakePushService;
use opsd_tests::{APP_ORIGIN, COUPON_WEBHOOK_SECRET, CRON_SECRET, TestApp, problem, sign_webhook};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

struct Team {
    app: TestApp,
    admin: String,
    location: String,
}

async fn team_with(app: TestApp) -> Team {
    let location = app.create_location("org_1", "downtown").await;
    Team { admin: app.tokens.admin("user_1", "org_1"), app, location }
}

async fn team() -> Team {
    team_with(TestApp::spawn().await).await
}

fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

fn rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339).unwrap()
}

impl Team {
    async fn offer(&self, capacity: i64) -> String {
        let response = self
            .app
            .post_json(
                "/api/coupons/offers",
                &self.admin,
                &json!({ "locationId": self.location, "name": "Free fries", "capacity": capacity }),
            )
            .await;
        assert_eq!(response.status(), 201);
        response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
    }

    async fn deliver(&self, body: &Value) -> reqwest::Response {
        let bytes = serde_json::to_vec(body).unwrap();
        let (id, ts) = (format!("msg_{}", uuid::Uuid::new_v4()), now().unix_timestamp());
        self.app
            .post("/api/automation/coupons")
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", ts.to_string())
            .header("webhook-signature", sign_webhook(COUPON_WEBHOOK_SECRET, &id, ts, &bytes))
            .body(bytes)
            .send()
            .await
            .unwrap()
    }

    fn event(&self, event_id: &str, kind: &str, data: Value) -> Value {
        json!({ "type": kind, "eventId": event_id, "occurredAt": rfc3339(now()), "teamId": "org_1", "locationId": self.location, "data": data })
    }

    async fn reserve(&self, offer: &str, expires_in: time::Duration) -> String {
        let reservation = uuid::Uuid::now_v7().to_string();
        let event = self.event(
            &format!("evt_{reservation}"),
            "reservation.created",
            json!({ "reservationId": reservation, "offerId": offer, "guestId": "guest-1", "expiresAt": rfc3339(now() + expires_in) }),
        );
        assert_eq!(self.deliver(&event).await.status(), 202);
        self.processed(&format!("evt_{reservation}")).await;
        reservation
    }

    /// Waits until the worker has processed the event, and returns its outcome.
    async fn processed(&self, identity: &str) -> String {
        let pg = self.app.pg().await;
        for _ in 0..200 {
            let row = pg
                .query_opt("SELECT outcome FROM guest_events WHERE identity = $1 AND state = 'done'", &[&identity])
                .await
                .unwrap();
            if let Some(row) = row {
                return row.get::<_, Option<String>>(0).unwrap_or_default();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("event {identity} was not processed");
    }

    async fn redeem(&self, reservation: &str) -> reqwest::Response {
        self.app
            .post(&format!("/api/coupons/reservations/{reservation}/redeem"))
            .bearer_auth(&self.admin)
            .send()
            .await
            .unwrap()
    }

    async fn held(&self, offer: &str) -> i64 {
        let body: Value = self.app.get_json(&format!("/api/coupons/offers/{offer}"), &self.admin).await;
        body["held"].as_i64().unwrap()
    }

    async fn sweep(&self) -> reqwest::Response {
        self.app.get("/cron/expire-coupons").bearer_auth(CRON_SECRET).send().await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn offers_are_created_by_admins_at_their_own_locations() {
    let team = team().await;
    let member = team.app.tokens.member("user_2", "org_1");
    let body = json!({ "locationId": team.location, "name": "Free fries", "capacity": 3 });
    problem(team.app.post_json("/api/coupons/offers", &member, &body).await, 403, "forbidden").await;
    let foreign = team.app.create_location("org_2", "uptown").await;
    let bad = [
        (json!({ "locationId": foreign, "name": "X", "capacity": 3 }), "locationId"),
        (json!({ "locationId": team.location, "name": "", "capacity": 3 }), "name"),
        (json!({ "locationId": team.location, "name": "X", "capacity": -1 }), "capacity"),
    ];
    for (body, field) in bad {
        let response = team.app.post_json("/api/coupons/offers", &team.admin, &body).await;
        assert_eq!(problem(response, 400, "validation_failed").await["errors"][0]["field"], field);
    }
    assert_eq!(team.app.count("coupon_offers").await, 0);
    let offer = team.offer(3).await;
    assert_eq!(team.held(&offer).await, 0);
    let outsider = team.app.tokens.admin("user_9", "org_2");
    let foreign_read =
        team.app.get(&format!("/api/coupons/offers/{offer}")).bearer_auth(outsider).send().await.unwrap();
    problem(foreign_read, 404, "not_found").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reservations_hold_capacity_until_it_is_full() {
    let team = team().await;
    let offer = team.offer(2).await;
    team.reserve(&offer, time::Duration::hours(1)).await;
    team.reserve(&offer, time::Duration::hours(1)).await;
    assert_eq!(team.held(&offer).await, 2);
    let rejected = uuid::Uuid::now_v7().to_string();
    let event = team.event(
        "evt_full",
        "reservation.created",
        json!({ "reservationId": rejected, "offerId": offer, "guestId": "g", "expiresAt": rfc3339(now()) }),
    );
    team.deliver(&event).await;
    assert_eq!(team.processed("evt_full").await, "rejected_no_capacity");
    assert_eq!(team.held(&offer).await, 2);
    let missing =
        team.app.get(&format!("/api/coupons/reservations/{rejected}")).bearer_auth(&team.admin).send().await.unwrap();
    problem(missing, 404, "not_found").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reading_or_redeeming_a_due_reservation_expires_it_first() {
    let team = team().await;
    let offer = team.offer(5).await;
    let due = team.reserve(&offer, time::Duration::seconds(-5)).await;
    let redeemable = team.reserve(&offer, time::Duration::hours(1)).await;
    let due_too = team.reserve(&offer, time::Duration::seconds(-5)).await;
    assert_eq!(team.held(&offer).await, 3, "reading an offer expires nothing");

    let read: Value = team.app.get_json(&format!("/api/coupons/reservations/{due}"), &team.admin).await;
    assert_eq!(read["state"], "expired");
    assert!(read["expiredAt"].is_string());
    assert_eq!(team.held(&offer).await, 2);

    let refused = team.redeem(&due_too).await;
    problem(refused, 409, "conflict").await;
    assert_eq!(team.held(&offer).await, 1, "the refused redeem still released the capacity");

    let redeemed = team.redeem(&redeemable).await;
    assert_eq!(redeemed.status(), 200);
    assert_eq!(redeemed.json::<Value>().await.unwrap()["state"], "redeemed");
    assert_eq!(team.held(&offer).await, 0);
    let again = team.redeem(&redeemable).await;
    problem(again, 409, "conflict").await;
    let events: i64 =
        team.app.pg().await.query_one("SELECT count(*) FROM coupon_expiry_events", &[]).await.unwrap().get(0);
    assert_eq!(events, 2, "lazy expiry queues the same stable events as the sweep");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sweep_expires_due_reservations_and_records_its_run() {
    let team = team().await;
    let offer = team.offer(10).await;
    for _ in 0..3 {
        team.reserve(&offer, time::Duration::seconds(-10)).await;
    }
    team.reserve(&offer, time::Duration::hours(1)).await;
    problem(team.app.get("/cron/expire-coupons").send().await.unwrap(), 401, "unauthorized").await;
    assert_eq!(team.held(&offer).await, 4);

    let run = team.sweep().await;
    assert_eq!(run.status(), 200);
    let report: Value = run.json().await.unwrap();
    assert_eq!(report["status"], "ok");
    assert_eq!((report["expired"].as_u64(), report["ignored"].as_u64()), (Some(3), Some(0)));
    assert_eq!((report["acceptedEvents"].as_u64(), report["duplicateEvents"].as_u64()), (Some(3), Some(0)));
    assert_eq!(report["reconciliationDelta"], 0);
    assert!(report["oldestExpiryLagSeconds"].as_f64().unwrap() >= 10.0);
    assert!(uuid::Uuid::parse_str(report["correlationId"].as_str().unwrap()).is_ok());
    assert_eq!(team.held(&offer).await, 1);

    let second: Value = team.sweep().await.json().await.unwrap();
    assert_eq!(second["expired"], 0);
    let pg = team.app.pg().await;
    let recorded: Vec<(String, Value)> = pg
        .query("SELECT status, summary FROM job_runs WHERE job = 'expire-coupons' ORDER BY started_at", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].0, "ok");
    assert_eq!(recorded[0].1["expired"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn while_disabled_the_sweep_touches_nothing() {
    let app = TestApp::spawn_with(|config| config.coupons.expiry_enabled = false).await;
    let team = team_with(app).await;
    let offer = team.offer(5).await;
    let due = team.reserve(&offer, time::Duration::seconds(-10)).await;
    let response = team.sweep().await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap(), json!({ "status": "disabled" }));
    let state: String = team
        .app
        .pg()
        .await
        .query_one("SELECT state FROM coupon_reservations WHERE id = $1::text::uuid", &[&due])
        .await
        .unwrap()
        .get(0);
    assert_eq!(state, "active");
    assert_eq!(team.app.count("job_runs").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_held_raises_the_gate_after_recording_the_diagnostics() {
    let team = team().await;
    let offer = team.offer(10).await;
    team.reserve(&offer, time::Duration::hours(1)).await;
    team.app.pg().await.execute("UPDATE coupon_offers SET held = held + 1", &[]).await.unwrap();
    let response = team.sweep().await;
    assert_eq!(response.status(), 500);
    let report: Value = response.json().await.unwrap();
    assert_eq!((report["status"].as_str(), report["reconciliationDelta"].as_i64()), (Some("failed"), Some(1)));
    let (status, summary): (String, Value) = {
        let row = team
            .app
            .pg()
            .await
            .query_one("SELECT status, summary FROM job_runs WHERE job = 'expire-coupons'", &[])
            .await
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(status, "failed");
    assert_eq!(summary["reconciliationDelta"], 1);
    let text = summary.to_string();
    assert!(!text.contains("guest-1") && !text.contains("Free fries"), "diagnostics carry counts only: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_instances_sweeping_at_once_run_one_sweep() {
    let team = team().await;
    let second = team.app.spawn_instance().await;
    let offer = team.offer(200).await;
    team.app
        .pg()
        .await
        .batch_execute(&format!(
            "UPDATE coupon_offers SET held = 150 WHERE id = '{offer}';
             INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
               SELECT gen_random_uuid(), '{offer}', 'g' || n, 'active', now() - interval '1 minute', now() FROM generate_series(1, 150) n;"
        ))
        .await
        .unwrap();
    let (a, b) = futures::join!(
        team.app.get("/cron/expire-coupons").bearer_auth(CRON_SECRET).send(),
        second.get("/cron/expire-coupons").bearer_auth(CRON_SECRET).send()
    );
    let (a, b): (Value, Value) = (a.unwrap().json().await.unwrap(), b.unwrap().json().await.unwrap());
    let expired = a["expired"].as_u64().unwrap_or(0) + b["expired"].as_u64().unwrap_or(0);
    assert_eq!(expired, 150, "{a} {b}");
    assert_eq!(team.held(&offer).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_receiver_keeps_stable_identities() {
    let team = team().await;
    let offer = team.offer(5).await;
    let event = team.event(
        "evt_1",
        "reservation.created",
        json!({ "reservationId": uuid::Uuid::now_v7(), "offerId": offer, "guestId": "g", "expiresAt": rfc3339(now()) }),
    );
    let first = team.deliver(&event).await;
    assert_eq!(first.status(), 202);
    assert_eq!(
        first.json::<Value>().await.unwrap(),
        json!({ "accepted": true, "duplicate": false, "eventId": "evt_1" })
    );
    let repeat = team.deliver(&event).await;
    assert_eq!(repeat.status(), 200);
    assert_eq!(repeat.json::<Value>().await.unwrap()["duplicate"], true);
    let mut changed = event.clone();
    changed["data"]["guestId"] = json!("someone-else");
    problem(team.deliver(&changed).await, 409, "delivery_conflict").await;

    let legacy =
        json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": team.location, "guestId": "g" });
    let accepted: Value = team.deliver(&legacy).await.json().await.unwrap();
    assert!(accepted["eventId"].as_str().unwrap().starts_with("legacy:"));
    let again = team.deliver(&legacy).await;
    assert_eq!(
        (again.status().as_u16(), again.json::<Value>().await.unwrap()["duplicate"].clone()),
        (200, json!(true))
    );
    assert_eq!(team.app.count("guest_events").await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_receiver_refuses_bad_signatures_and_bad_events_and_stores_nothing() {
    let team = team().await;
    let legacy =
        json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": team.location, "guestId": "g" });
    let bytes = serde_json::to_vec(&legacy).unwrap();
    let ts = now().unix_timestamp();
    let wrong = sign_webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", ts, &bytes);
    let unsigned = team.app.post("/api/automation/coupons").body(bytes.clone()).send().await.unwrap();
    problem(unsigned, 401, "unauthorized").await;
    let forged = team
        .app
        .post("/api/automation/coupons")
        .header("webhook-id", "msg_1")
        .header("webhook-timestamp", ts.to_string())
        .header("webhook-signature", wrong)
        .body(bytes)
        .send()
        .await
        .unwrap();
    problem(forged, 401, "unauthorized").await;
    let foreign = team.app.create_location("org_2", "uptown").await;
    for (body, field) in [
        (
            json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": foreign, "guestId": "g" }),
            "locationId",
        ),
        (
            json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": "00000000-0000-7000-8000-00000000dead", "guestId": "g" }),
            "locationId",
        ),
        (
            json!({ "type": "rating", "rating": 7, "teamId": "org_1", "locationId": team.location, "guestId": "g" }),
            "rating",
        ),
        (team.event("evt_x", "reservation.created", json!({ "offerId": "x" })), "data"),
    ] {
        assert_eq!(problem(team.deliver(&body).await, 400, "validation_failed").await["errors"][0]["field"], field);
    }
    assert_eq!(team.app.count("guest_events").await, 0);
}

/// Subscribes a device of `user` (with `role` in `team`) at the fake push service.
async fn device(app: &TestApp, push: &FakePushService, user: &str, team: &str, role: &str, status: u16) -> String {
    let subscriber = push.subscriber(status).await;
    let cookie = format!("__session={}", app.tokens.sign(&app.tokens.claims(user, Some((team, role)))));
    let body =
        json!({ "endpoint": subscriber.endpoint, "keys": { "p256dh": subscriber.p256dh, "auth": subscriber.auth } });
    let response = app
        .post("/api/push/subscribe")
        .header("cookie", cookie)
        .header("origin", APP_ORIGIN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    subscriber.endpoint
}

#[tokio::test(flavor = "multi_thread")]
async fn only_low_feedback_with_a_durable_row_alerts_the_teams_admins_by_push_and_privately() {
    let chat = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200)).mount(&chat).await;
    let push = FakePushService::start().await;
    let team = team().await;
    let settings = json!({ "chatWebhookUrl": format!("{}/hook", chat.uri()) });
    team.app.put("/api/team/settings").bearer_auth(&team.admin).json(&settings).send().await.unwrap();
    let admin_device = device(&team.app, &push, "user_1", "org_1", "admin", 201).await;
    device(&team.app, &push, "user_2", "org_1", "member", 201).await;
    device(&team.app, &push, "user_3", "org_2", "admin", 201).await;

    let feedback = |id: &str, rating: i64| {
        team.event(&format!("evt_{id}"), "feedback.submitted", json!({ "feedbackId": id, "guestId": "guest-555-0101", "rating": rating, "comment": "the fries were cold" }))
    };
    team.deliver(&feedback("fb_low", 1)).await;
    assert_eq!(team.processed("evt_fb_low").await, "alerted");
    team.deliver(&feedback("fb_ok", 4)).await;
    assert_eq!(team.processed("evt_fb_ok").await, "feedback_recorded");
    let legacy = json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": team.location, "guestId": "g", "comment": "awful" });
    let identity = team.deliver(&legacy).await.json::<Value>().await.unwrap()["eventId"].as_str().unwrap().to_owned();
    assert_eq!(team.processed(&identity).await, "receipt_only");
    // A redelivered feedback event (a new delivery of the same message) alerts nothing again.
    let mut redelivered = feedback("fb_low", 1);
    redelivered["eventId"] = json!("evt_fb_low_again");
    team.deliver(&redelivered).await;
    assert_eq!(team.processed("evt_fb_low_again").await, "feedback_recorded");

    assert_eq!(push.refused(), Vec::<String>::new());
    let delivered = push.delivered();
    assert_eq!(delivered.len(), 1, "one alert, to the admin's device only: not members, not other teams");
    assert_eq!(delivered[0].endpoint, admin_device);
    let text = delivered[0].payload.to_string();
    assert!(text.contains("1/5") && text.contains("downtown"), "{text}");
    for secret in ["cold", "guest-555-0101", "awful", "fb_low"] {
        assert!(!text.contains(secret), "the alert leaks {secret}: {text}");
    }
    assert!(chat.received_requests().await.unwrap().is_empty(), "guest feedback stays out of the team chat");
    assert_eq!(team.app.count("guest_alerts").await, 1);
    let notified: bool =
        team.app.pg().await.query_one("SELECT notified_at IS NOT NULL FROM guest_alerts", &[]).await.unwrap().get(0);
    assert!(notified);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_push_service_undoes_nothing() {
    let push = FakePushService::start().await;
    let team = team().await;
    device(&team.app, &push, "user_1", "org_1", "admin", 503).await;
    let event =
        team.event("evt_fb", "feedback.submitted", json!({ "feedbackId": "fb_1", "guestId": "g", "rating": 2 }));
    team.deliver(&event).await;
    assert_eq!(team.processed("evt_fb").await, "alerted");
    let pg = team.app.pg().await;
    let row = pg.query_one("SELECT count(*), bool_and(notified_at IS NULL) FROM guest_alerts", &[]).await.unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, bool>(1)), (1, true), "recorded, not marked notified");
    assert_eq!(team.app.count("guest_feedback").await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_secret_the_receiver_is_503() {
    let app = TestApp::spawn_with(|config| config.coupons.webhook_secret = None).await;
    let team = team_with(app).await;
    let legacy =
        json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": team.location, "guestId": "g" });
    problem(team.deliver(&legacy).await, 503, "not_configured").await;
}
