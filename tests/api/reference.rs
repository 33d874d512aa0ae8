//! The API document tells the truth about requests: every request example is accepted, and the
//! documented bounds are where validation draws its lines.

use opsd::seed::{DemoSize, seed_demo};
use opsd_postgres::{Db, DbConfig};
use opsd_tests::{API_KEY, TestApp};
use serde_json::{Value, json};

async fn seeded() -> (TestApp, Value) {
    let app = TestApp::spawn().await;
    let db = Db::connect(&DbConfig {
        url: app.db_url.clone().into(),
        max_connections: 2,
        acquire_timeout: std::time::Duration::from_secs(5),
        statement_timeout: std::time::Duration::from_secs(30),
    })
    .unwrap();
    // A year of history: the schedule proposal's example week needs 4 weeks of sales before it.
    seed_demo(&db, DemoSize { locations: 1, weeks: 52 }).await.unwrap();
    // The examples file reports for recent days, whose slots the demo has filed: they start empty.
    app.pg().await.batch_execute("DELETE FROM shift_reports; DELETE FROM manager_reports").await.unwrap();
    let document: Value = app.get("/openapi.json").send().await.unwrap().json().await.unwrap();
    (app, document)
}

fn schema<'a>(document: &'a Value, name: &str) -> &'a Value {
    &document["components"]["schemas"][name]
}

#[tokio::test(flavor = "multi_thread")]
async fn every_request_example_of_the_document_is_accepted() {
    let (app, document) = seeded().await;
    let admin = app.tokens.admin("user_reference", "org_demo");
    let mut sent = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(reference) = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str()
            else {
                continue;
            };
            let name = reference.rsplit('/').next().unwrap();
            let example = &schema(&document, name)["example"];
            // Path parameters need a record made first; the push service's host needs DNS.
            if example.is_null() || path.contains('{') || path == "/api/push/subscribe" || path == "/api/push/send" {
                continue;
            }
            let security = operation["security"][0].as_object().and_then(|s| s.keys().next().cloned());
            let token = if security.as_deref() == Some("apiKey") { API_KEY.to_owned() } else { admin.clone() };
            let request = match method.as_str() {
                "post" => app.post(path),
                "put" => app.put(path),
                "delete" => app.delete(path),
                other => panic!("an example for {other} {path}"),
            };
            let response = request.bearer_auth(&token).json(example).send().await.unwrap();
            let status = response.status();
            assert!(
                status.is_success(),
                "{method} {path} refused its own example ({status}): {}",
                response.text().await.unwrap()
            );
            sent.push(format!("{method} {path}"));
        }
    }
    assert!(sent.len() >= 10, "the examples reached most operations: {sent:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn documented_bounds_are_where_validation_draws_its_lines() {
    let (app, document) = seeded().await;
    let admin = app.tokens.admin("user_reference", "org_demo");
    let contact_name =
        schema(&document, "ContactRequest")["properties"]["name"]["maxLength"].as_u64().unwrap() as usize;
    let capacity = schema(&document, "OfferRequest")["properties"]["capacity"]["maximum"].as_i64().unwrap();
    let slug = schema(&document, "NewLocationRequest")["properties"]["slug"]["pattern"].as_str().unwrap().to_owned();
    assert_eq!(slug, "^[a-z0-9-]{1,64}$");
    let location = opsd::seed::DEMO_LOCATION.to_string();

    let contact = |name: String| json!({ "name": name, "email": "dana@example.com" });
    let post = |path: &'static str, body: Value| app.post(path).bearer_auth(&admin).json(&body).send();
    assert_eq!(post("/api/contacts", contact("é".repeat(contact_name))).await.unwrap().status(), 201);
    let over = post("/api/contacts", contact("é".repeat(contact_name + 1))).await.unwrap();
    assert_eq!(over.status(), 400);
    assert_eq!(over.json::<Value>().await.unwrap()["errors"][0]["field"], "name");

    let offer = |capacity: i64| json!({ "locationId": location, "name": "Free dessert", "capacity": capacity });
    assert_eq!(post("/api/coupons/offers", offer(capacity)).await.unwrap().status(), 201);
    assert_eq!(post("/api/coupons/offers", offer(capacity + 1)).await.unwrap().status(), 400);

    let timezones = schema(&document, "NewLocationRequest")["properties"]["timezone"]["enum"].as_array().unwrap().len();
    assert!(timezones > 300, "every IANA zone the server knows: {timezones}");
    let rating = &schema(&document, "EmployeeReviewRequest")["properties"]["rating"];
    assert_eq!((rating["minimum"].as_i64(), rating["maximum"].as_i64()), (Some(1), Some(5)));
}
