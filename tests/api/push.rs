use opsd_tests::push_fake::{FakePushService, FakeSubscriber};
use opsd_tests::{APP_ORIGIN, TestApp, problem};
use serde_json::{Value, json};

fn cookie(app: &TestApp, user: &str, team: &str, role: &str) -> String {
    let claims = app.tokens.claims(user, Some((team, role)));
    format!("__session={}", app.tokens.sign(&claims))
}

async fn subscribe(app: &TestApp, cookie: &str, body: &Value) -> reqwest::Response {
    app.post("/api/push/subscribe")
        .header("cookie", cookie)
        .header("origin", APP_ORIGIN)
        .json(body)
        .send()
        .await
        .unwrap()
}

fn body_of(subscriber: &FakeSubscriber) -> Value {
    json!({ "endpoint": subscriber.endpoint, "keys": { "p256dh": subscriber.p256dh, "auth": subscriber.auth } })
}

async fn send(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    app.post_json("/api/push/send", token, body).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_send_is_encrypted_signed_and_counted_per_outcome() {
    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let me = cookie(&app, "user_1", "org_1", "member");
    let mut subscribers = Vec::new();
    for status in [201, 404, 410, 429, 500] {
        let subscriber = push.subscriber(status).await;
        assert_eq!(
            subscribe(&app, &me, &body_of(&subscriber)).await.json::<Value>().await.unwrap(),
            json!({ "success": true })
        );
        subscribers.push(subscriber);
    }
    let stale = push.subscriber(201).await;
    let mut expired = body_of(&stale);
    expired["expirationTime"] = json!(1_000_000);
    subscribe(&app, &me, &expired).await;
    assert_eq!(app.count("push_subscriptions").await, 6);

    let token = app.tokens.member("user_1", "org_1");
    let response = send(
        &app,
        &token,
        &json!({ "title": "Shift swap", "body": "Ana took your Friday close", "url": "/schedule?day=fri" }),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({ "success": true, "sent": 1, "failed": 2, "expired": 3 })
    );
    assert_eq!(push.refused(), Vec::<String>::new(), "every request was a valid VAPID push");
    let delivered = push.delivered();
    assert_eq!(delivered.len(), 5, "the expired one was deleted before sending");
    for delivery in &delivered {
        assert_eq!(
            delivery.payload,
            json!({ "title": "Shift swap", "body": "Ana took your Friday close", "url": "/schedule?day=fri" })
        );
        assert_eq!((delivery.ttl.as_str(), delivery.urgency.as_str()), ("86400", "normal"));
    }
    let left: Vec<String> = app
        .pg()
        .await
        .query("SELECT endpoint FROM push_subscriptions ORDER BY endpoint", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut kept =
        vec![subscribers[0].endpoint.clone(), subscribers[3].endpoint.clone(), subscribers[4].endpoint.clone()];
    kept.sort();
    assert_eq!(left, kept, "404, 410 and expired subscriptions are gone; 429 and 500 are kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn subscribing_needs_the_session_cookie_from_the_apps_origin() {
    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let subscriber = push.subscriber(201).await;
    let me = cookie(&app, "user_1", "org_1", "member");
    let no_origin =
        app.post("/api/push/subscribe").header("cookie", &me).json(&body_of(&subscriber)).send().await.unwrap();
    problem(no_origin, 403, "forbidden").await;
    let bearer =
        app.post_json("/api/push/subscribe", app.tokens.member("user_1", "org_1"), &body_of(&subscriber)).await;
    problem(bearer, 401, "unauthorized").await;
    assert_eq!(app.count("push_subscriptions").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_keys_and_unsafe_endpoints_are_refused_and_not_stored() {
    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let good = push.subscriber(201).await;
    let me = cookie(&app, "user_1", "org_1", "member");
    let with = |endpoint: &str, p256dh: &str, auth: &str| json!({ "endpoint": endpoint, "keys": { "p256dh": p256dh, "auth": auth } });
    for (body, field) in [
        (with(&good.endpoint, "short", &good.auth), "keys.p256dh"),
        (with(&good.endpoint, &good.p256dh, "AAAA"), "keys.auth"),
        (with(&good.endpoint, "@@@@", &good.auth), "keys.p256dh"),
        (with("https://10.0.0.1/push/x", &good.p256dh, &good.auth), "endpoint"),
        (with("https://169.254.169.254/latest", &good.p256dh, &good.auth), "endpoint"),
        (with("ftp://push.example/x", &good.p256dh, &good.auth), "endpoint"),
        (
            json!({ "endpoint": good.endpoint, "keys": { "p256dh": good.p256dh, "auth": good.auth }, "expirationTime": -5 }),
            "expirationTime",
        ),
        (json!({ "endpoint": good.endpoint, "keys": { "p256dh": good.p256dh } }), "keys.auth"),
    ] {
        let body = problem(subscribe(&app, &me, &body).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], field);
    }
    assert_eq!(app.count("push_subscriptions").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_can_unsubscribe_only_their_own_endpoint() {
    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let theirs = push.subscriber(201).await;
    let alice = cookie(&app, "user_a", "org_1", "member");
    let mallory = cookie(&app, "user_m", "org_1", "admin");
    subscribe(&app, &alice, &body_of(&theirs)).await;
    let attempt = app
        .delete("/api/push/subscribe")
        .header("cookie", &mallory)
        .header("origin", APP_ORIGIN)
        .json(&json!({ "endpoint": theirs.endpoint }))
        .send()
        .await
        .unwrap();
    assert_eq!(attempt.json::<Value>().await.unwrap(), json!({ "success": true, "deleted": false }));
    assert_eq!(app.count("push_subscriptions").await, 1);
    let own = app
        .delete("/api/push/subscribe")
        .header("cookie", &alice)
        .header("origin", APP_ORIGIN)
        .json(&json!({ "endpoint": theirs.endpoint }))
        .send()
        .await
        .unwrap();
    assert_eq!(own.json::<Value>().await.unwrap(), json!({ "success": true, "deleted": true }));
    assert_eq!(app.count("push_subscriptions").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn sending_to_someone_else_needs_admin_and_the_same_team() {
    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let colleague = push.subscriber(201).await;
    subscribe(&app, &cookie(&app, "user_c", "org_1", "member"), &body_of(&colleague)).await;
    let outsider = push.subscriber(201).await;
    subscribe(&app, &cookie(&app, "user_x", "org_2", "member"), &body_of(&outsider)).await;

    let member = app.tokens.member("user_m", "org_1");
    problem(send(&app, &member, &json!({ "targetUserId": "user_c" })).await, 403, "forbidden").await;
    let admin = app.tokens.admin("user_a", "org_1");
    problem(send(&app, &admin, &json!({ "targetUserId": "user_x" })).await, 403, "forbidden").await;
    problem(send(&app, &admin, &json!({ "targetUserId": "user_nobody" })).await, 403, "forbidden").await;
    assert!(push.delivered().is_empty());
    let sent: Value =
        send(&app, &admin, &json!({ "targetUserId": "user_c", "title": "Hi" })).await.json().await.unwrap();
    assert_eq!(sent["sent"], 1);
    assert_eq!(push.delivered()[0].endpoint, colleague.endpoint);
    assert_eq!(push.delivered()[0].payload["url"], "/", "the default deep link");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_safe_relative_urls_may_ride_a_notification() {
    let app = TestApp::spawn().await;
    let token = app.tokens.member("user_1", "org_1");
    for bad in [
        "//evil.example",
        "https://evil.example",
        "/\\evil.example",
        "javascript:alert(1)",
        "/%2F%2Fevil.example",
        "/%5Cevil",
        "/a%0d%0aSet-Cookie:x",
        "/a\u{7}b",
        "evil",
    ] {
        let body = problem(send(&app, &token, &json!({ "url": bad })).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], "url", "{bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_3_kib_limit_is_on_the_encoded_payload_not_on_one_field() {
    let app = TestApp::spawn().await;
    let push = FakePushService::start().await;
    let subscriber = push.subscriber(201).await;
    subscribe(&app, &cookie(&app, "user_1", "org_1", "member"), &body_of(&subscriber)).await;
    let token = app.tokens.member("user_1", "org_1");

    let long = "x".repeat(2500);
    let response = send(&app, &token, &json!({ "title": "Inventory", "body": long })).await;
    assert_eq!(response.status(), 200, "a 2,500-character body fits in 3 KiB");
    assert_eq!(push.delivered()[0].payload["body"], long.as_str());

    // 3 KiB of JSON in all: the title's and url's bytes count as much as the body's.
    let too_big = problem(
        send(&app, &token, &json!({ "title": "t".repeat(1000), "body": "x".repeat(2100) })).await,
        400,
        "validation_failed",
    )
    .await;
    assert_eq!(too_big["errors"][0]["field"], "body");
    let escaped =
        problem(send(&app, &token, &json!({ "body": "\"".repeat(1600) })).await, 400, "validation_failed").await;
    assert_eq!(escaped["errors"][0]["field"], "body", "quotes count as their escapes");
    assert_eq!(push.delivered().len(), 1, "nothing was sent for the refused payloads");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_send_limit_holds_across_instances() {
    let app = TestApp::spawn().await;
    let second = app.spawn_instance().await;
    let token = app.tokens.member("user_1", "org_1");
    // Every answer says where the caller stands (draft-ietf-httpapi-ratelimit-headers), a refusal
    // after the call was counted too.
    let fields = |response: &reqwest::Response| {
        let field = |name: &str| response.headers()[name].to_str().unwrap().to_owned();
        (field("ratelimit-policy"), field("ratelimit"))
    };
    for i in 0..10 {
        let instance = if i % 2 == 0 { &app } else { &second };
        let body = if i == 3 { json!({ "body": "x".repeat(5000) }) } else { json!({}) };
        let answered = send(instance, &token, &body).await;
        assert_eq!(answered.status(), if i == 3 { 400 } else { 200 }, "call {i}");
        let (policy, state) = fields(&answered);
        assert_eq!(policy, "\"push-send\";q=10;w=60");
        let (remaining, reset) = state.strip_prefix("\"push-send\";r=").unwrap().split_once(";t=").unwrap();
        assert_eq!(remaining, (9 - i).to_string(), "call {i}");
        assert!((1..=60).contains(&reset.parse::<u32>().unwrap()), "{state}");
    }
    let refused = send(&second, &token, &json!({})).await;
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after));
    let (policy, state) = fields(&refused);
    assert_eq!((policy.as_str(), state), ("\"push-send\";q=10;w=60", format!("\"push-send\";r=0;t={retry_after}")));
    problem(refused, 429, "rate_limited").await;
    let unlimited = app.get("/api/push/vapid-public-key").send().await.unwrap();
    assert!(unlimited.headers().get("ratelimit").is_none(), "only limited routes carry the fields");
    let other_user = app.tokens.member("user_2", "org_1");
    assert_eq!(send(&app, &other_user, &json!({})).await.status(), 200, "limits are per user");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_vapid_keys_the_server_runs_and_sending_is_not_configured() {
    let app = TestApp::spawn_with(|config| {
        config.push.vapid_private_key = None;
        config.push.vapid_public_key = None;
    })
    .await;
    problem(send(&app, &app.tokens.member("user_1", "org_1"), &json!({})).await, 503, "not_configured").await;
    problem(app.get("/api/push/vapid-public-key").send().await.unwrap(), 503, "not_configured").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_public_key_is_served_for_the_browser() {
    let app = TestApp::spawn().await;
    let body: Value = app.get("/api/push/vapid-public-key").send().await.unwrap().json().await.unwrap();
    assert_eq!(body["publicKey"], opsd_tests::push_fake::VAPID_PUBLIC_KEY);
}
