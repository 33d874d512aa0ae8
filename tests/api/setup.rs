use opsd_tests::{TestApp, problem};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn an_admin_creates_a_location_and_sees_it_listed() {
    let app = TestApp::spawn().await;
    let token = app.tokens.admin("user_1", "org_1");
    let response = app.post_json("/api/locations", &token, &json!({ "name": "Downtown", "slug": "downtown", "timezone": "America/Chicago", "schedulerLocationId": "7001" })).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let created: Value = response.json().await.unwrap();
    assert_eq!(location, format!("/api/locations/{}", created["id"].as_str().unwrap()));
    assert_eq!(created["teamId"], "org_1");
    assert_eq!(created["timezone"], "America/Chicago");
    assert_eq!(created["schedulerLocationId"], "7001");
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));

    let listed: Value = app.get_json("/api/locations", &token).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["slug"], "downtown");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_cannot_create_a_location() {
    let app = TestApp::spawn().await;
    let response = app
        .post_json(
            "/api/locations",
            app.tokens.member("user_1", "org_1"),
            &json!({ "name": "Downtown", "slug": "downtown", "timezone": "UTC" }),
        )
        .await;
    problem(response, 403, "forbidden").await;
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_location_fields_are_named_and_nothing_is_written() {
    let app = TestApp::spawn().await;
    let response = app
        .post_json(
            "/api/locations",
            app.tokens.admin("user_1", "org_1"),
            &json!({ "name": "", "slug": "Down Town", "timezone": "Mars/Base" }),
        )
        .await;
    let body = problem(response, 400, "validation_failed").await;
    let fields: Vec<&str> = body["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
    assert_eq!(fields, ["name", "slug", "timezone"]);
    assert_eq!(app.count("locations").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn slugs_are_unique_across_teams() {
    let app = TestApp::spawn().await;
    app.create_location("org_1", "downtown").await;
    let response = app
        .post_json(
            "/api/locations",
            app.tokens.admin("user_2", "org_2"),
            &json!({ "name": "Other", "slug": "downtown", "timezone": "UTC" }),
        )
        .await;
    problem(response, 409, "conflict").await;
    assert_eq!(app.count("locations").await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_team_sees_only_its_own_locations() {
    let app = TestApp::spawn().await;
    app.create_location("org_1", "one").await;
    app.create_location("org_2", "two").await;
    let listed: Value = app.get_json("/api/locations", app.tokens.member("user_3", "org_2")).await;
    let slugs: Vec<&str> = listed.as_array().unwrap().iter().map(|l| l["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["two"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_chat_webhook_must_be_a_public_https_url() {
    let app = TestApp::spawn().await;
    let token = app.tokens.admin("user_1", "org_1");
    for bad in ["https://10.0.0.1/hook", "https://169.254.169.254/", "ftp://example.com/", "not a url"] {
        let response = app
            .put("/api/team/settings")
            .bearer_auth(&token)
            .json(&json!({ "chatWebhookUrl": bad }))
            .send()
            .await
            .unwrap();
        let body = problem(response, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], "chatWebhookUrl", "{bad}");
    }
    let pg = app.pg().await;
    let stored: i64 =
        pg.query_one("SELECT count(*) FROM teams WHERE chat_webhook_url IS NOT NULL", &[]).await.unwrap().get(0);
    assert_eq!(stored, 0);

    // The test configuration allows loopback, as a local fake of the chat provider needs.
    let ok = app
        .put("/api/team/settings")
        .bearer_auth(&token)
        .json(&json!({ "chatWebhookUrl": "http://127.0.0.1:9/hook" }))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let read: Value = app.get_json("/api/team/settings", &token).await;
    assert_eq!(read["chatWebhookConfigured"], true);

    let member = app
        .put("/api/team/settings")
        .bearer_auth(app.tokens.member("user_2", "org_1"))
        .json(&json!({ "chatWebhookUrl": null }))
        .send()
        .await
        .unwrap();
    problem(member, 403, "forbidden").await;
}
