use opsd_tests::{TestApp, problem};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_route_is_a_404_problem() {
    let app = TestApp::spawn().await;
    let body = problem(app.get("/api/nothing-here").send().await.unwrap(), 404, "not_found").await;
    assert_eq!(body["type"], "about:blank");
    assert_eq!(body["title"], "Not Found");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_method_is_a_405_problem_with_allow() {
    let app = TestApp::spawn().await;
    let response = app.delete("/api/locations").send().await.unwrap();
    assert_eq!(response.headers()["allow"], "GET, POST");
    problem(response, 405, "method_not_allowed").await;
    let response = app.post("/health/live").send().await.unwrap();
    assert_eq!(response.headers()["allow"], "GET");
}

async fn post_location_raw(app: &TestApp, content_type: &str, body: Vec<u8>) -> reqwest::Response {
    app.post("/api/locations")
        .bearer_auth(app.tokens.admin("user_1", "org_1"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_is_400_malformed_json_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let response = post_location_raw(&app, "application/json", br#"{"name": "A", "slug":"#.to_vec()).await;
    problem(response, 400, "malformed_json").await;
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_field_is_400_naming_it_not_silently_dropped() {
    let app = TestApp::spawn().await;
    let body = json!({ "name": "A", "slug": "a", "timezone": "UTC", "tiemzone": "UTC" });
    let response = post_location_raw(&app, "application/json", serde_json::to_vec(&body).unwrap()).await;
    let problem = problem(response, 400, "validation_failed").await;
    assert_eq!(problem["errors"][0]["field"], "tiemzone");
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_type_is_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let body = json!({ "name": 5, "slug": "a", "timezone": "UTC" });
    let response = post_location_raw(&app, "application/json", serde_json::to_vec(&body).unwrap()).await;
    let problem = problem(response, 400, "validation_failed").await;
    assert_eq!(problem["errors"][0]["field"], "name");
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_over_256_kib_is_413() {
    let app = TestApp::spawn().await;
    let name = "x".repeat(300 * 1024);
    let body = serde_json::to_vec(&json!({ "name": name, "slug": "a", "timezone": "UTC" })).unwrap();
    problem(post_location_raw(&app, "application/json", body).await, 413, "payload_too_large").await;
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_json_content_type_is_415() {
    let app = TestApp::spawn().await;
    let body = serde_json::to_vec(&json!({ "name": "A", "slug": "a", "timezone": "UTC" })).unwrap();
    problem(post_location_raw(&app, "text/plain", body.clone()).await, 415, "unsupported_media_type").await;
    let response =
        app.post("/api/locations").bearer_auth(app.tokens.admin("user_1", "org_1")).body(body).send().await.unwrap();
    problem(response, 415, "unsupported_media_type").await;
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nul_character_anywhere_is_a_400_not_a_500() {
    let app = TestApp::spawn().await;
    let body = br#"{"name": "A\u0000B", "slug": "a", "timezone": "UTC"}"#.to_vec();
    let problem_body = problem(post_location_raw(&app, "application/json", body).await, 400, "validation_failed").await;
    assert_eq!(problem_body["errors"][0]["field"], "body");
    let cookie = format!("__session={}", app.tokens.member("user_1", "org_1"));
    let unsubscribe = app
        .delete("/api/push/subscribe")
        .header("cookie", cookie)
        .header("origin", opsd_tests::APP_ORIGIN)
        .header("content-type", "application/json")
        .body(br#"{"endpoint": "https://push.example/\u0000x"}"#.to_vec())
        .send()
        .await
        .unwrap();
    problem(unsubscribe, 400, "validation_failed").await;
    let query =
        app.get("/api/incidents?cursor=a%00b").bearer_auth(app.tokens.member("user_1", "org_1")).send().await.unwrap();
    problem(query, 400, "validation_failed").await;
    let slug = app.get("/api/schedule/down%00town").bearer_auth(opsd_tests::API_KEY).send().await.unwrap();
    problem(slug, 404, "not_found").await;
    assert_eq!(app.count("locations").await, 0);
}
