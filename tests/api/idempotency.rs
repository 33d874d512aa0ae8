//! `Idempotency-Key` on creating POSTs: replayed for the same caller and request, refused for
//! another request, kept per caller, pruned by a job.

use opsd_tests::{API_KEY, CRON_SECRET, TestApp, problem};
use serde_json::{Value, json};

fn incident(location: &str, notes: &str) -> Value {
    json!({ "locationId": location, "type": "Injury", "severity": "high", "notes": notes })
}

async fn create(app: &TestApp, token: &str, key: &str, body: &Value) -> reqwest::Response {
    app.post("/api/incidents").bearer_auth(token).header("idempotency-key", key).json(body).send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retry_with_the_same_key_replays_the_first_answer_and_creates_nothing_more() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    let body = incident(&location, "Cut on the slicer");

    let first = create(&app, &token, "retry-1", &body).await;
    assert_eq!(first.status(), 201);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();

    let again = create(&app, &token, "retry-1", &body).await;
    assert_eq!(again.status(), 201, "the same status");
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.headers()["content-type"], "application/json");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again, first, "the same body, the same incident");
    assert_eq!(app.count("incidents").await, 1, "one incident for two requests");

    // A new key is a new request.
    assert_eq!(create(&app, &token, "retry-2", &body).await.status(), 201);
    assert_eq!(app.count("incidents").await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_key_for_another_request_is_422_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    assert_eq!(create(&app, &token, "k", &incident(&location, "first")).await.status(), 201);

    let other_body = create(&app, &token, "k", &incident(&location, "second")).await;
    problem(other_body, 422, "idempotency_mismatch").await;
    let other_path = app
        .post("/api/contacts")
        .bearer_auth(&token)
        .header("idempotency-key", "k")
        .json(&incident(&location, "first"))
        .send()
        .await
        .unwrap();
    problem(other_path, 422, "idempotency_mismatch").await;
    assert_eq!(app.count("incidents").await, 1);
    assert_eq!(app.count("contacts").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_belong_to_their_caller() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let body = incident(&location, "same key, two users");
    let first = create(&app, &app.tokens.member("user_1", "org_1"), "shared", &body).await;
    let second = create(&app, &app.tokens.member("user_2", "org_1"), "shared", &body).await;
    assert_eq!((first.status(), second.status()), (reqwest::StatusCode::CREATED, reqwest::StatusCode::CREATED));
    assert!(second.headers().get("idempotent-replayed").is_none(), "another user's answer is never replayed");
    assert_eq!(app.count("incidents").await, 2);

    // A forged token naming user_1 gets nothing of theirs: its key is not looked up at all.
    let forged = create(&app, "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyXzEifQ.c2ln", "shared", &body).await;
    problem(forged, 401, "unauthorized").await;
    assert_eq!(app.count("incidents").await, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn api_key_callers_have_keys_too() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let sale = json!({ "teamId": "org_1", "rows": [{ "locationId": location, "date": "2026-11-02", "block": "Lunch", "food": 10.0, "beverage": 0, "other": 0, "guests": 1 }] });
    let send = |key: &'static str| {
        app.post("/api/analytics/sales").bearer_auth(API_KEY).header("idempotency-key", key).json(&sale).send()
    };
    let first = send("sales-1").await.unwrap();
    let status = first.status();
    let first = first.text().await.unwrap();
    let again = send("sales-1").await.unwrap();
    assert_eq!(again.status(), status);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.text().await.unwrap(), first);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_key_is_400_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    for key in ["has space", &"k".repeat(256)] {
        let refused = create(&app, &token, key, &incident(&location, "x")).await;
        let body = problem(refused, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], "Idempotency-Key");
    }
    assert_eq!(app.count("incidents").await, 0);
    assert_eq!(app.count("idempotency_keys").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_key_nothing_is_kept_and_the_prune_job_answers() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    assert_eq!(app.post_json("/api/incidents", &token, &incident(&location, "no key")).await.status(), 201);
    assert_eq!(app.count("idempotency_keys").await, 0);
    assert_eq!(create(&app, &token, "kept", &incident(&location, "keyed")).await.status(), 201);
    assert_eq!(app.count("idempotency_keys").await, 1);

    let pruned = app.get("/cron/prune-idempotency-keys").bearer_auth(CRON_SECRET).send().await.unwrap();
    assert_eq!(pruned.status(), 200);
    let pruned: Value = pruned.json().await.unwrap();
    assert_eq!(pruned, json!({ "status": "ok", "pruned": 0 }), "a key younger than a day is kept");
    assert_eq!(app.count("idempotency_keys").await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_whose_request_stopped_without_an_answer_never_runs_again() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let token = app.tokens.member("user_1", "org_1");
    let body = incident(&location, "Burn at the fryer");
    assert_eq!(create(&app, &token, "stopped", &body).await.status(), 201);
    // As a request leaves its key when its instance dies between its commit and keeping its
    // answer: unanswered, and its hold run out.
    app.pg()
        .await
        .execute(
            "UPDATE idempotency_keys SET status = NULL, content_type = NULL, location = NULL, body = NULL, \
             locked_until = now() - interval '1 second'",
            &[],
        )
        .await
        .unwrap();

    let retry = create(&app, &token, "stopped", &body).await;
    problem(retry, 409, "idempotency_outcome_unknown").await;
    assert_eq!(app.count("incidents").await, 1, "the retry created nothing");
    // Another request under the key is still a mismatch, and a new key runs.
    problem(create(&app, &token, "stopped", &incident(&location, "other")).await, 422, "idempotency_mismatch").await;
    assert_eq!(create(&app, &token, "fresh", &body).await.status(), 201);
    assert_eq!(app.count("incidents").await, 2);
}
