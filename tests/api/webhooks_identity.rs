use std::time::Duration;

use futures::StreamExt;
use opsd_tests::{IDENTITY_WEBHOOK_SECRET, TestApp, problem, sign_webhook};
use serde_json::{Value, json};

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn user_event(kind: &str, id: &str, first_name: &str, updated_at: i64) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "data": {
            "id": id, "object": "user", "first_name": first_name, "last_name": "Doe",
            "email_addresses": [{ "id": "idn_1", "email_address": format!("{id}@example.com"), "object": "email_address" }],
            "primary_email_address_id": "idn_1", "image_url": "https://img.example/u.png",
            "created_at": 1_700_000_000_000i64, "updated_at": updated_at, "public_metadata": {},
        },
        "instance_id": "ins_test", "object": "event", "timestamp": updated_at, "type": kind,
        "event_attributes": { "http_request": { "client_ip": "0.0.0.0", "user_agent": "test" } },
    }))
    .unwrap()
}

fn deleted_event(id: &str) -> Vec<u8> {
    serde_json::to_vec(
        &json!({ "data": { "deleted": true, "id": id, "object": "user" }, "object": "event", "type": "user.deleted" }),
    )
    .unwrap()
}

/// Posts a delivery signed with the svix- headers, as the identity provider's delivery service sends it.
async fn deliver(app: &TestApp, id: &str, body: &[u8]) -> reqwest::Response {
    deliver_with(app, "svix-", id, now(), IDENTITY_WEBHOOK_SECRET, body).await
}

async fn deliver_with(app: &TestApp, prefix: &str, id: &str, ts: i64, secret: &str, body: &[u8]) -> reqwest::Response {
    app.post("/api/webhooks/identity")
        .header("content-type", "application/json")
        .header(format!("{prefix}id"), id)
        .header(format!("{prefix}timestamp"), ts.to_string())
        .header(format!("{prefix}signature"), sign_webhook(secret, id, ts, body))
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
}

async fn first_name(app: &TestApp, id: &str) -> Option<String> {
    app.pg().await.query_one("SELECT first_name FROM users WHERE id = $1", &[&id]).await.unwrap().get(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_user_created_is_applied_under_every_header_prefix() {
    let app = TestApp::spawn().await;
    for (prefix, user) in [("svix-", "user_a"), ("webhook-", "user_b"), ("hook-", "user_c")] {
        let response = deliver_with(
            &app,
            prefix,
            &format!("msg_{user}"),
            now(),
            IDENTITY_WEBHOOK_SECRET,
            &user_event("user.created", user, "Ann", 1),
        )
        .await;
        assert_eq!(response.status(), 200, "{prefix}");
        assert_eq!(response.json::<Value>().await.unwrap(), json!({ "received": true }));
    }
    let pg = app.pg().await;
    let row = pg
        .query_one("SELECT email, first_name, provider_updated_at FROM users WHERE id = 'user_a'", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, Option<String>>(0).as_deref(), Some("user_a@example.com"));
    assert_eq!(row.get::<_, Option<String>>(1).as_deref(), Some("Ann"));
    assert_eq!(row.get::<_, Option<i64>>(2), Some(1));
    assert_eq!(app.count("webhook_deliveries").await, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_verification_failure_is_401_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let body = user_event("user.created", "user_a", "Ann", 1);
    let other_secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    let cases: Vec<(&str, reqwest::Response)> = vec![
        ("wrong secret", deliver_with(&app, "svix-", "msg_1", now(), other_secret, &body).await),
        ("stale timestamp", deliver_with(&app, "svix-", "msg_1", now() - 301, IDENTITY_WEBHOOK_SECRET, &body).await),
        ("future timestamp", deliver_with(&app, "svix-", "msg_1", now() + 301, IDENTITY_WEBHOOK_SECRET, &body).await),
        ("tampered body", {
            let ts = now();
            app.post("/api/webhooks/identity")
                .header("svix-id", "msg_1")
                .header("svix-timestamp", ts.to_string())
                .header("svix-signature", sign_webhook(IDENTITY_WEBHOOK_SECRET, "msg_1", ts, &body))
                .body(user_event("user.created", "user_a", "Mallory", 1))
                .send()
                .await
                .unwrap()
        }),
        (
            "missing signature",
            app.post("/api/webhooks/identity")
                .header("svix-id", "msg_1")
                .header("svix-timestamp", now().to_string())
                .body(body.clone())
                .send()
                .await
                .unwrap(),
        ),
        ("no headers", app.post("/api/webhooks/identity").body(body.clone()).send().await.unwrap()),
        (
            "malformed list",
            app.post("/api/webhooks/identity")
                .header("svix-id", "msg_1")
                .header("svix-timestamp", now().to_string())
                .header("svix-signature", "v1 ,,, v1,@@")
                .body(body.clone())
                .send()
                .await
                .unwrap(),
        ),
        (
            "garbage timestamp",
            app.post("/api/webhooks/identity")
                .header("svix-id", "msg_1")
                .header("svix-timestamp", "yesterday")
                .header("svix-signature", sign_webhook(IDENTITY_WEBHOOK_SECRET, "msg_1", now(), &body))
                .body(body.clone())
                .send()
                .await
                .unwrap(),
        ),
    ];
    for (what, response) in cases {
        assert_eq!(response.status(), 401, "{what}");
        problem(response, 401, "unauthorized").await;
    }
    assert_eq!(app.count("webhook_deliveries").await, 0);
    assert_eq!(app.count("users").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotation_list_with_one_valid_signature_passes() {
    let app = TestApp::spawn().await;
    let body = user_event("user.created", "user_a", "Ann", 1);
    let ts = now();
    let valid = sign_webhook(IDENTITY_WEBHOOK_SECRET, "msg_1", ts, &body);
    let old = sign_webhook("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD", "msg_1", ts, &body);
    let response = app
        .post("/api/webhooks/identity")
        .header("webhook-id", "msg_1")
        .header("webhook-timestamp", ts.to_string())
        .header("webhook-signature", format!("{old} {valid}"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redelivery_answers_200_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let body = user_event("user.created", "user_a", "Ann", 10);
    assert_eq!(deliver(&app, "msg_1", &body).await.status(), 200);
    app.pg().await.execute("UPDATE users SET first_name = 'Edited' WHERE id = 'user_a'", &[]).await.unwrap();
    let again = deliver(&app, "msg_1", &body).await;
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap(), json!({ "received": true }));
    assert_eq!(first_name(&app, "user_a").await.as_deref(), Some("Edited"), "no second effect");
    assert_eq!(app.count("webhook_deliveries").await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_id_with_another_body_is_409() {
    let app = TestApp::spawn().await;
    assert_eq!(deliver(&app, "msg_1", &user_event("user.created", "user_a", "Ann", 10)).await.status(), 200);
    let conflict = deliver(&app, "msg_1", &user_event("user.updated", "user_a", "Bob", 20)).await;
    problem(conflict, 409, "delivery_conflict").await;
    assert_eq!(first_name(&app, "user_a").await.as_deref(), Some("Ann"));
}

#[tokio::test(flavor = "multi_thread")]
async fn identical_deliveries_racing_apply_once() {
    let app = TestApp::spawn().await;
    let body = user_event("user.created", "user_a", "Ann", 10);
    let responses = futures::future::join_all((0..12).map(|_| deliver(&app, "msg_race", &body))).await;
    for response in responses {
        assert_eq!(response.status(), 200);
    }
    assert_eq!(app.count("webhook_deliveries").await, 1);
    assert_eq!(app.count("users").await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_while_applying_rolls_back_and_answers_500_so_the_provider_retries() {
    let app = TestApp::spawn().await;
    let pg = app.pg().await;
    pg.batch_execute(
        "CREATE FUNCTION refuse_user() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$;
         CREATE TRIGGER refuse_user BEFORE INSERT ON users FOR EACH ROW WHEN (NEW.id = 'user_boom') EXECUTE FUNCTION refuse_user();",
    )
    .await
    .unwrap();
    let body = user_event("user.created", "user_boom", "Ann", 10);
    let failed = deliver(&app, "msg_boom", &body).await;
    let problem = problem(failed, 500, "internal").await;
    assert!(!problem.to_string().contains("disk full"), "the database's text stays in the log");
    assert_eq!(app.count("webhook_deliveries").await, 0, "the delivery record rolled back with the event");

    pg.batch_execute("DROP TRIGGER refuse_user ON users").await.unwrap();
    assert_eq!(deliver(&app, "msg_boom", &body).await.status(), 200, "the retry applies");
    assert_eq!(first_name(&app, "user_boom").await.as_deref(), Some("Ann"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_older_update_never_overwrites_a_newer_one() {
    let app = TestApp::spawn().await;
    deliver(&app, "msg_1", &user_event("user.created", "user_a", "Ann", 100)).await;
    deliver(&app, "msg_2", &user_event("user.updated", "user_a", "Newer", 300)).await;
    let stale = deliver(&app, "msg_3", &user_event("user.updated", "user_a", "Older", 200)).await;
    assert_eq!(stale.status(), 200);
    assert_eq!(first_name(&app, "user_a").await.as_deref(), Some("Newer"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deletion_is_final_and_takes_memberships_and_push_subscriptions_with_it() {
    let app = TestApp::spawn().await;
    let token = app.tokens.member("user_a", "org_1");
    assert_eq!(app.get("/api/locations").bearer_auth(&token).send().await.unwrap().status(), 200);
    deliver(&app, "msg_1", &user_event("user.created", "user_a", "Ann", 100)).await;
    let pg = app.pg().await;
    pg.execute(
        "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at, updated_at) \
         VALUES (gen_random_uuid(), 'user_a', 'https://push.example/1', 'k', 'a', now(), now())",
        &[],
    )
    .await
    .unwrap();

    assert_eq!(deliver(&app, "msg_2", &deleted_event("user_a")).await.status(), 200);
    let row = pg.query_one("SELECT deleted_at IS NOT NULL, email FROM users WHERE id = 'user_a'", &[]).await.unwrap();
    assert!(row.get::<_, bool>(0));
    assert_eq!(row.get::<_, Option<String>>(1), None, "the profile is erased");
    assert_eq!(app.count("memberships").await, 0);
    assert_eq!(app.count("push_subscriptions").await, 0);

    deliver(&app, "msg_3", &user_event("user.updated", "user_a", "Back", 999)).await;
    assert_eq!(first_name(&app, "user_a").await, None, "a later update changes nothing");
    problem(app.get("/api/locations").bearer_auth(&token).send().await.unwrap(), 401, "unauthorized").await;
    assert_eq!(app.count("memberships").await, 0, "the token does not bring the membership back");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deletion_before_creation_leaves_a_tombstone() {
    let app = TestApp::spawn().await;
    deliver(&app, "msg_1", &deleted_event("user_z")).await;
    deliver(&app, "msg_2", &user_event("user.created", "user_z", "Late", 5)).await;
    let deleted: bool = app
        .pg()
        .await
        .query_one("SELECT deleted_at IS NOT NULL FROM users WHERE id = 'user_z'", &[])
        .await
        .unwrap()
        .get(0);
    assert!(deleted);
    assert_eq!(first_name(&app, "user_z").await, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_event_types_are_recorded_without_effect() {
    let app = TestApp::spawn().await;
    let body = br#"{"data":{"id":"sess_1","object":"session"},"object":"event","type":"session.created"}"#;
    assert_eq!(deliver(&app, "msg_1", body).await.status(), 200);
    let kind: String = app.pg().await.query_one("SELECT event_type FROM webhook_deliveries", &[]).await.unwrap().get(0);
    assert_eq!(kind, "session.created");
    assert_eq!(app.count("users").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_event_missing_its_data_is_400_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let body = br#"{"type":"user.updated","data":{"first_name":"NoId"}}"#;
    problem(deliver(&app, "msg_1", body).await, 400, "validation_failed").await;
    assert_eq!(app.count("webhook_deliveries").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signed_body_that_is_not_json_is_malformed_json_and_stores_nothing() {
    let app = TestApp::spawn().await;
    for body in [&b"{not json"[..], b"", b"\xff\xfe", br#"{"type":"user.deleted""#] {
        problem(deliver(&app, &format!("msg_{}", body.len()), body).await, 400, "malformed_json").await;
    }
    // Unsigned garbage is still refused by its signature first.
    let forged =
        deliver_with(&app, "svix-", "msg_x", now(), "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", b"{not json").await;
    problem(forged, 401, "unauthorized").await;
    assert_eq!(app.count("webhook_deliveries").await, 0);
}

fn membership_event(kind: &str, team: &str, user: &str, role: &str, updated_at: i64) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "data": {
            "created_at": 1_654_013_202_977i64, "id": format!("orgmem_{user}_{team}"), "object": "organization_membership",
            "organization": { "id": team, "name": "Acme", "object": "organization", "slug": "acme", "created_at": 1, "updated_at": 1, "public_metadata": {} },
            "public_user_data": { "user_id": user, "identifier": format!("{user}@example.com"), "first_name": null, "last_name": null, "image_url": "" },
            "role": role, "updated_at": updated_at, "public_metadata": {}, "private_metadata": {},
        },
        "event_attributes": { "http_request": { "client_ip": "", "user_agent": "" } },
        "instance_id": "ins_test", "object": "event", "timestamp": updated_at, "type": kind,
    }))
    .unwrap()
}

async fn role_of(app: &TestApp, user: &str, team: &str) -> Option<String> {
    app.pg()
        .await
        .query_opt("SELECT role FROM memberships WHERE user_id = $1 AND team_id = $2", &[&user, &team])
        .await
        .unwrap()
        .map(|row| row.get(0))
}

#[tokio::test(flavor = "multi_thread")]
async fn organization_membership_events_keep_memberships_in_step() {
    let app = TestApp::spawn().await;
    let ms = now() * 1000;
    let created = membership_event("organizationMembership.created", "org_1", "user_a", "org:admin", ms);
    assert_eq!(deliver(&app, "msg_1", &created).await.status(), 200);
    assert_eq!(role_of(&app, "user_a", "org_1").await.as_deref(), Some("admin"));
    assert_eq!(deliver(&app, "msg_1", &created).await.status(), 200, "a redelivery is 200");

    let demoted = membership_event("organizationMembership.updated", "org_1", "user_a", "org:member", ms + 10);
    deliver(&app, "msg_2", &demoted).await;
    assert_eq!(role_of(&app, "user_a", "org_1").await.as_deref(), Some("member"));
    let stale = membership_event("organizationMembership.updated", "org_1", "user_a", "org:admin", ms + 5);
    deliver(&app, "msg_3", &stale).await;
    assert_eq!(role_of(&app, "user_a", "org_1").await.as_deref(), Some("member"), "an older event does not win");

    deliver(
        &app,
        "msg_4",
        &membership_event("organizationMembership.deleted", "org_1", "user_a", "org:member", ms + 20),
    )
    .await;
    assert_eq!(role_of(&app, "user_a", "org_1").await, None);
    deliver(
        &app,
        "msg_5",
        &membership_event("organizationMembership.created", "org_1", "user_a", "org:member", ms + 15),
    )
    .await;
    assert_eq!(role_of(&app, "user_a", "org_1").await, None, "a late, older grant does not undo the removal");
    deliver(
        &app,
        "msg_6",
        &membership_event("organizationMembership.created", "org_1", "user_a", "org:member", ms + 30),
    )
    .await;
    assert_eq!(role_of(&app, "user_a", "org_1").await.as_deref(), Some("member"), "invited back later");

    // The organization goes: its memberships go, its data stays.
    let location = app.create_location("org_1", "downtown").await;
    let admin = app.tokens.admin("user_b", "org_1");
    assert_eq!(app.get("/api/locations").bearer_auth(&admin).send().await.unwrap().status(), 200);
    let org_deleted = br#"{"data":{"deleted":true,"id":"org_1","object":"organization"},"object":"event","type":"organization.deleted"}"#;
    assert_eq!(deliver(&app, "msg_7", org_deleted).await.status(), 200);
    assert_eq!(app.count("memberships").await, 0);
    let kept: i64 = app
        .pg()
        .await
        .query_one("SELECT count(*) FROM locations WHERE id = $1::text::uuid", &[&location])
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 1, "the team's data stays");
    problem(app.get("/api/locations").bearer_auth(&admin).send().await.unwrap(), 403, "forbidden").await;
    assert_eq!(app.count("memberships").await, 0, "the old token did not re-create the membership");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removed_member_gets_no_announcement_cannot_be_targeted_and_their_old_token_is_403() {
    use opsd_tests::push_fake::FakePushService;
    use opsd_tests::{APP_ORIGIN, CRON_SECRET};

    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let admin = app.tokens.admin("user_admin", "org_1");
    let member = app.tokens.member("user_m", "org_1");
    assert_eq!(app.get("/api/locations").bearer_auth(&member).send().await.unwrap().status(), 200);
    let device = push.subscriber(201).await;
    let subscribed = app
        .post("/api/push/subscribe")
        .header("cookie", format!("__session={member}"))
        .header("origin", APP_ORIGIN)
        .json(&json!({ "endpoint": device.endpoint, "keys": { "p256dh": device.p256dh, "auth": device.auth } }))
        .send()
        .await
        .unwrap();
    assert_eq!(subscribed.status(), 200);
    let targeted = |token: String| {
        app.post("/api/push/send").bearer_auth(token).json(&json!({ "title": "Hi", "targetUserId": "user_m" })).send()
    };
    assert_eq!(targeted(admin.clone()).await.unwrap().status(), 200, "a member can be targeted");
    assert_eq!(push.delivered().len(), 1);

    let removed = membership_event("organizationMembership.deleted", "org_1", "user_m", "org:member", now() * 1000);
    assert_eq!(deliver(&app, "msg_1", &removed).await.status(), 200);

    problem(app.get("/api/locations").bearer_auth(&member).send().await.unwrap(), 403, "forbidden").await;
    assert_eq!(role_of(&app, "user_m", "org_1").await, None, "a token issued before the removal does not restore it");
    problem(targeted(admin.clone()).await.unwrap(), 403, "forbidden").await;
    let at = (time::OffsetDateTime::now_utc() - time::Duration::minutes(1))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let announced = app
        .post_json("/api/announcements", &admin, &json!({ "title": "Menu", "body": "New menu", "publishAt": at }))
        .await;
    assert_eq!(announced.status(), 201);
    let run: Value = app.get_json("/cron/publish-scheduled-announcements", CRON_SECRET).await;
    assert_eq!(run, json!({ "status": "ok", "published": 1, "pushed": 0 }));
    assert_eq!(push.delivered().len(), 1, "the removed member's device got nothing more");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_secret_the_receiver_is_503_not_configured() {
    let app = TestApp::spawn_with(|config| config.identity.webhook_secret = None).await;
    let response = deliver(&app, "msg_1", &user_event("user.created", "user_a", "Ann", 1)).await;
    problem(response, 503, "not_configured").await;
    assert_eq!(app.count("webhook_deliveries").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_applied_event_broadcasts_the_invalidation_of_the_users_teams() {
    let app = TestApp::spawn().await;
    app.get("/api/locations").bearer_auth(app.tokens.member("user_a", "org_1")).send().await.unwrap();
    let (listener, mut connection) = tokio_postgres::connect(&app.db_url, tokio_postgres::NoTls).await.unwrap();
    let (tx, mut notes) = futures::channel::mpsc::unbounded();
    tokio::spawn(async move {
        let mut stream = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = stream.next().await {
            if let tokio_postgres::AsyncMessage::Notification(note) = message {
                let _ = tx.unbounded_send((note.channel().to_owned(), note.payload().to_owned()));
            }
        }
    });
    listener.batch_execute("LISTEN opsd_cache_invalidation").await.unwrap();
    deliver(&app, "msg_1", &user_event("user.updated", "user_a", "Ann", 1)).await;
    let note = tokio::time::timeout(Duration::from_secs(5), notes.next()).await.expect("a notification").unwrap();
    assert_eq!(note.0, "opsd_cache_invalidation");
    assert!(note.1.ends_with(":org_1"), "the payload names the team after the instance: {}", note.1);
}

/// Asks `/api/locations` with `token` on `app` every 10 ms until it answers `status`, for at most 2 s: the
/// time a change takes to reach another instance's remembered sign-ins.
async fn answers_within(app: &TestApp, token: &str, status: u16) -> bool {
    for _ in 0..200 {
        if app.get("/api/locations").bearer_auth(token).send().await.unwrap().status() == status {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removal_applied_by_one_instance_reaches_the_sign_ins_another_remembers() {
    let first = TestApp::spawn().await;
    let second = first.spawn_instance().await;
    let member = first.tokens.member("user_m", "org_1");
    for _ in 0..3 {
        assert_eq!(first.get("/api/locations").bearer_auth(&member).send().await.unwrap().status(), 200);
    }
    let removed = membership_event("organizationMembership.deleted", "org_1", "user_m", "org:member", now() * 1000);
    assert_eq!(deliver(&second, "msg_1", &removed).await.status(), 200);
    assert!(answers_within(&first, &member, 403).await, "the first instance still lets the removed member in");
    assert_eq!(role_of(&first, "user_m", "org_1").await, None, "the old token did not restore the membership");
}
