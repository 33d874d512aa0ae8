use opsd_tests::{TestApp, problem};
use serde_json::{Value, json};

struct Team {
    app: TestApp,
    member: String,
    admin: String,
    location: String,
}

async fn team() -> Team {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    Team { member: app.tokens.member("user_1", "org_1"), admin: app.tokens.admin("user_2", "org_1"), app, location }
}

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

fn shift(location: &str, extra: Value) -> Value {
    let mut body = json!({
        "locationId": location, "date": today().to_string(), "shift": "evening",
        "actualSales": 2450.5, "goalSales": 2300, "hero": "  Maria  ",
    });
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    body
}

impl Team {
    async fn post(&self, path: &str, token: &str, body: &Value) -> reqwest::Response {
        self.app.post_json(path, token, body).await
    }

    async fn rejected(&self, path: &str, token: &str, body: Value, field: &str) {
        let table = if path.ends_with("shift") { "shift_reports" } else { "manager_reports" };
        let before = self.app.count(table).await;
        let problem = problem(self.post(path, token, &body).await, 400, "validation_failed").await;
        let fields: Vec<&str> =
            problem["errors"].as_array().unwrap().iter().map(|e| e["field"].as_str().unwrap()).collect();
        assert!(fields.contains(&field), "{field} not in {fields:?} for {body}");
        assert_eq!(self.app.count(table).await, before, "nothing written for {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shift_report_is_201_with_a_trimmed_hero_and_exact_amounts() {
    let team = team().await;
    let response = team.post("/api/reports/shift", &team.member, &shift(&team.location, json!({}))).await;
    assert_eq!(response.status(), 201);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["hero"], "Maria");
    assert_eq!(body["actualSales"], 2450.5);
    assert_eq!(body["goalSales"], 2300.0);
    assert_eq!(body["submittedBy"], "user_1");
    assert_eq!(body["date"], today().to_string());
    let stored: String =
        team.app.pg().await.query_one("SELECT actual_sales::text FROM shift_reports", &[]).await.unwrap().get(0);
    assert_eq!(stored, "2450.50", "money is NUMERIC(12,2)");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_report_for_the_same_slot_is_409_naming_the_first() {
    let team = team().await;
    let first: Value =
        team.post("/api/reports/shift", &team.member, &shift(&team.location, json!({}))).await.json().await.unwrap();
    let second =
        team.post("/api/reports/shift", &team.admin, &shift(&team.location, json!({ "actualSales": 1 }))).await;
    let problem = problem(second, 409, "conflict").await;
    assert_eq!(problem["existingId"], first["id"]);
    assert_eq!(team.app.count("shift_reports").await, 1);
    let other_shift =
        team.post("/api/reports/shift", &team.member, &shift(&team.location, json!({ "shift": "morning" }))).await;
    assert_eq!(other_shift.status(), 201);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_shift_reports_name_their_field_and_write_nothing() {
    let team = team().await;
    let (loc, path, token) = (team.location.as_str(), "/api/reports/shift", team.member.as_str());
    let tomorrow = today() + time::Duration::days(1);
    let day_after = today() + time::Duration::days(2);
    team.rejected(path, token, shift(loc, json!({ "actualSales": -0.01 })), "actualSales").await;
    team.rejected(path, token, shift(loc, json!({ "goalSales": -100 })), "goalSales").await;
    team.rejected(path, token, shift(loc, json!({ "actualSales": 10.123 })), "actualSales").await;
    team.rejected(path, token, shift(loc, json!({ "actualSales": "NaN" })), "actualSales").await;
    team.rejected(path, token, shift(loc, json!({ "actualSales": "Infinity" })), "actualSales").await;
    team.rejected(path, token, shift(loc, json!({ "actualSales": null })), "actualSales").await;
    team.rejected(path, token, shift(loc, json!({ "date": day_after.to_string() })), "date").await;
    team.rejected(path, token, shift(loc, json!({ "date": "2026-02-30" })), "date").await;
    team.rejected(path, token, shift(loc, json!({ "shift": "night" })), "shift").await;
    team.rejected(path, token, shift(loc, json!({ "shift": ["evening"] })), "shift").await;
    team.rejected(path, token, shift(loc, json!({ "shift": null })), "shift").await;
    team.rejected(path, token, shift(loc, json!({ "hero": "x".repeat(101) })), "hero").await;
    let foreign = team.app.create_location("org_2", "uptown").await;
    team.rejected(path, token, shift(&foreign, json!({})), "locationId").await;
    let ok = team.post(path, token, &shift(loc, json!({ "date": tomorrow.to_string() }))).await;
    assert_eq!(ok.status(), 201, "tomorrow is allowed");
}

fn manager(location: &str, extra: Value) -> Value {
    let mut body = json!({
        "locationId": location, "date": today().to_string(), "totalSales": 8120.75,
        "employeeReviews": [{ "employeeName": "Maria", "employeeKey": "7s-1", "rating": 5, "notes": "great close" }],
    });
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn manager_reports_are_for_admins_once_a_day() {
    let team = team().await;
    let as_member = team.post("/api/reports/manager", &team.member, &manager(&team.location, json!({}))).await;
    problem(as_member, 403, "forbidden").await;
    assert_eq!(team.app.count("manager_reports").await, 0);

    let created = team.post("/api/reports/manager", &team.admin, &manager(&team.location, json!({}))).await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    assert_eq!(created["employeeReviews"][0]["rating"], 5);
    assert_eq!(created["totalSales"], 8120.75);
    let again = team.post("/api/reports/manager", &team.admin, &manager(&team.location, json!({}))).await;
    assert_eq!(problem(again, 409, "conflict").await["existingId"], created["id"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_manager_reports_name_their_field_and_write_nothing() {
    let team = team().await;
    let (loc, path, token) = (team.location.as_str(), "/api/reports/manager", team.admin.as_str());
    let review = |r: Value| manager(loc, json!({ "employeeReviews": [r] }));
    team.rejected(path, token, review(json!({ "employeeName": "A", "rating": 6 })), "employeeReviews[0].rating").await;
    team.rejected(path, token, review(json!({ "employeeName": "A", "rating": 4.5 })), "employeeReviews[0].rating")
        .await;
    team.rejected(path, token, review(json!({ "employeeName": "", "rating": 3 })), "employeeReviews[0].employeeName")
        .await;
    team.rejected(
        path,
        token,
        review(json!({ "employeeName": "A", "rating": 3, "mood": "ok" })),
        "employeeReviews[0].mood",
    )
    .await;
    let too_many: Vec<Value> = (0..101).map(|i| json!({ "employeeName": format!("E{i}"), "rating": 3 })).collect();
    team.rejected(path, token, manager(loc, json!({ "employeeReviews": too_many })), "employeeReviews").await;
    team.rejected(path, token, manager(loc, json!({ "totalSales": -1 })), "totalSales").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reports_are_listed_by_location_and_date_range() {
    let team = team().await;
    let yesterday = today() - time::Duration::days(1);
    for (date, shift_name) in [(today(), "evening"), (yesterday, "morning"), (yesterday, "evening")] {
        let body = shift(&team.location, json!({ "date": date.to_string(), "shift": shift_name }));
        assert_eq!(team.post("/api/reports/shift", &team.member, &body).await.status(), 201);
    }
    let path = format!("/api/reports/shift?locationId={}&from={yesterday}&to={yesterday}", team.location);
    let listed: Value = team.app.get_json(&path, &team.member).await;
    let shifts: Vec<&str> = listed.as_array().unwrap().iter().map(|r| r["shift"].as_str().unwrap()).collect();
    assert_eq!(shifts, ["morning", "evening"]);
    let all: Value = team.app.get_json(&format!("/api/reports/shift?locationId={}", team.location), &team.member).await;
    assert_eq!(all.as_array().unwrap().len(), 3);

    let outsider = team.app.tokens.admin("user_9", "org_2");
    let foreign = team.app.get(&format!("/api/reports/shift?locationId={}", team.location)).bearer_auth(&outsider);
    problem(foreign.send().await.unwrap(), 404, "not_found").await;
    let reversed = format!("/api/reports/manager?locationId={}&from={}&to={yesterday}", team.location, today());
    problem(team.app.get(&reversed).bearer_auth(&team.member).send().await.unwrap(), 400, "validation_failed").await;
}
