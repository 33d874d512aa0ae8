use std::time::Duration;

use opsd_core::Department;
use opsd_tests::{API_KEY, ROTATED_API_KEY, TestApp, TestShift, problem};
use serde_json::{Value, json};
use time::macros::datetime;

const WEEK: &str = "2026-11-14";

struct Team {
    app: TestApp,
    location: String,
}

/// A team with one location in Chicago (UTC-6 in November).
async fn team() -> Team {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    Team { app, location }
}

impl Team {
    async fn optimization(&self, query: &str) -> reqwest::Response {
        self.app.get(&format!("/api/analytics/optimization?{query}")).bearer_auth(API_KEY).send().await.unwrap()
    }

    async fn week(&self) -> (Value, String) {
        let response = self.optimization(&format!("teamId=org_1&weekOf={WEEK}")).await;
        assert_eq!(response.status(), 200);
        let cache = response.headers()["x-cache"].to_str().unwrap().to_owned();
        (response.json().await.unwrap(), cache)
    }

    async fn ingest(&self, rows: Value) -> reqwest::Response {
        self.app.post_json("/api/analytics/sales", API_KEY, &json!({ "teamId": "org_1", "rows": rows })).await
    }

    fn sale(&self, date: &str, block: &str, food: f64) -> Value {
        json!({ "locationId": self.location, "date": date, "block": block, "food": food, "beverage": 0, "other": 0, "guests": 10 })
    }
}

fn shift(
    id: &'static str,
    start: time::OffsetDateTime,
    hours: i64,
    department: Department,
    wage_cents: i64,
) -> TestShift {
    TestShift {
        id,
        start,
        end: start + time::Duration::hours(hours),
        department,
        wage_cents,
        unpaid_break_minutes: 0,
        draft: false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_report_follows_sales_shifts_and_goals_exactly() {
    let team = team().await;
    let ingested = team
        .ingest(json!([
            team.sale("2026-11-14", "Dinner", 1500.0),
            team.sale("2026-11-14", "Lunch", 500.0),
            team.sale("2026-11-15", "Lunch", 1000.0),
            team.sale("2026-11-21", "Lunch", 9999.0),
        ]))
        .await;
    assert_eq!(ingested.status(), 200);
    assert_eq!(ingested.json::<Value>().await.unwrap()["written"], 4);
    team.app
        .import_shifts(
            &team.location,
            "America/Chicago",
            &[
                // Saturday 10:00 local: 8 h FOH at $15.
                shift("a", datetime!(2026-11-14 16:00 UTC), 8, Department::Foh, 1500),
                // Saturday 22:30 local (Sunday 04:30 UTC): belongs to Saturday; 4 h BOH at $20.
                shift("b", datetime!(2026-11-15 04:30 UTC), 4, Department::Boh, 2000),
                // Sunday: 10 h Other at $10.
                shift("c", datetime!(2026-11-15 16:00 UTC), 10, Department::Other, 1000),
                // A draft never counts.
                TestShift { draft: true, ..shift("d", datetime!(2026-11-15 16:00 UTC), 10, Department::Foh, 5000) },
            ],
        )
        .await;
    let goals = team
        .app
        .put("/api/analytics/goals")
        .bearer_auth(API_KEY)
        .json(&json!({ "teamId": "org_1", "goals": [
            { "dayOfWeek": 0, "salesGoal": 1800, "laborPctTarget": 15, "splhTarget": 100 },
            { "dayOfWeek": 1, "salesGoal": 900, "laborPctTarget": 20, "splhTarget": 120 },
        ] }))
        .send()
        .await
        .unwrap();
    assert_eq!(goals.status(), 200);

    let (report, cache) = team.week().await;
    assert_eq!(cache, "miss");
    assert_eq!(report["weekLabel"], "Week of 2026-11-14");
    let summary = &report["summary"];
    assert_eq!(summary["totalSales"], 3000.0);
    assert_eq!(summary["totalLaborCost"], 300.0);
    assert_eq!(summary["laborPctFraction"], 0.1);
    assert_eq!(summary["laborPctReason"], Value::Null);
    assert_eq!(summary["splh"], 136.36);
    assert_eq!(summary["targetLaborPct"], 17.5);
    assert_eq!(summary["targetSplh"], 110.0);

    let days = report["dailySummary"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    assert_eq!(days[0]["day"], "2026-11-14");
    assert_eq!(days[0]["sales"], 2000.0);
    assert_eq!(days[0]["laborCost"], 200.0);
    assert_eq!(days[0]["laborPctFraction"], 0.1);
    assert_eq!(days[0]["splh"], 166.67);
    assert_eq!(days[0]["servedGuests"], 20);
    assert_eq!(days[0]["goalsMet"], true);
    assert_eq!(days[1]["splh"], 100.0);
    assert_eq!(days[1]["goalsMet"], false, "sales and labor % meet Sunday's goals, SPLH 100 misses 120");
    assert_eq!(report["weeklySummary"]["goalsMetPercent"], 50.0);
    assert_eq!(days[2]["laborPctFraction"], Value::Null);
    assert_eq!(days[2]["laborPctReason"], "no_sales");
    assert_eq!(days[2]["splhReason"], "no_labor_hours");
    assert!(days[2].get("goalsMet").is_none(), "no goal on Monday");

    let labor = &report["laborByCategory"][0];
    assert_eq!(
        (labor["fohHours"].clone(), labor["bohHours"].clone(), labor["naHours"].clone()),
        (json!(8.0), json!(4.0), json!(0.0))
    );
    assert_eq!(labor["totalHours"], 12.0);
    let blocks: Vec<(&str, &str)> = report["salesByCategory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["day"].as_str().unwrap(), r["block"].as_str().unwrap()))
        .collect();
    assert_eq!(blocks, [("2026-11-14", "Lunch"), ("2026-11-14", "Dinner"), ("2026-11-15", "Lunch")]);
    let weekly = &report["weeklySummary"];
    assert_eq!(weekly["topDay"], "2026-11-14");
    assert_eq!(weekly["worstDay"], "2026-11-15");
    assert_eq!(weekly["avgSplh"], 133.34);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_location_filter_and_location_goals_override_the_team() {
    let team = team().await;
    let other = team.app.create_location("org_1", "uptown").await;
    team.ingest(json!([team.sale("2026-11-14", "Lunch", 100.0)])).await;
    let other_sale =
        json!({ "locationId": other, "date": "2026-11-14", "block": "Lunch", "food": 50, "beverage": 0, "other": 0 });
    team.ingest(json!([other_sale])).await;
    let put = |location: Option<&str>, sales: i64| {
        let mut body = json!({ "teamId": "org_1", "goals": [{ "dayOfWeek": 0, "salesGoal": sales, "laborPctTarget": 30, "splhTarget": 40 }] });
        if let Some(location) = location {
            body["locationId"] = json!(location);
        }
        team.app.put("/api/analytics/goals").bearer_auth(API_KEY).json(&body).send()
    };
    assert_eq!(put(None, 1000).await.unwrap().status(), 200);
    assert_eq!(put(Some(&team.location), 2000).await.unwrap().status(), 200);

    let all: Value = team.optimization(&format!("teamId=org_1&weekOf={WEEK}")).await.json().await.unwrap();
    assert_eq!(all["summary"]["totalSales"], 150.0);
    let one: Value = team
        .optimization(&format!("teamId=org_1&weekOf={WEEK}&locationId={}", team.location))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(one["summary"]["totalSales"], 100.0);

    let goals = |query: String| team.app.get(&format!("/api/analytics/goals?{query}")).bearer_auth(API_KEY).send();
    let location_goals: Value =
        goals(format!("teamId=org_1&locationId={}", team.location)).await.unwrap().json().await.unwrap();
    assert_eq!(location_goals["goals"][0]["salesGoal"], 2000.0);
    let other_goals: Value =
        goals(format!("teamId=org_1&locationId={other}&weekOf={WEEK}")).await.unwrap().json().await.unwrap();
    assert_eq!(other_goals["goals"][0]["salesGoal"], 1000.0, "the team default fills in");
    assert_eq!(other_goals["goals"].as_array().unwrap().len(), 1);
    problem(goals("teamId=org_1&weekOf=2026-11-15".into()).await.unwrap(), 400, "validation_failed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_queries_and_keys_are_refused() {
    let team = team().await;
    let foreign = team.app.create_location("org_2", "uptown").await;
    for (query, field) in [
        ("weekOf=2026-11-14", "teamId"),
        ("teamId=org_1", "weekOf"),
        ("teamId=org_1&weekOf=2026-11-15", "weekOf"),
        ("teamId=org_1&weekOf=soon", "weekOf"),
        ("teamId=org_1&weekOf=2026-02-30", "weekOf"),
        ("teamId=org_1&weekOf=2026-11-14&locationId=abc", "locationId"),
        ("teamId=org_1&weekOf=2026-11-14&week=1", "week"),
    ] {
        let body = problem(team.optimization(query).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], field, "{query}");
    }
    problem(team.optimization(&format!("teamId=org_1&weekOf={WEEK}&locationId={foreign}")).await, 404, "not_found")
        .await;
    problem(team.optimization(&format!("teamId=org_nobody&weekOf={WEEK}")).await, 404, "not_found").await;

    let path = format!("/api/analytics/optimization?teamId=org_1&weekOf={WEEK}");
    problem(team.app.get(&path).send().await.unwrap(), 401, "unauthorized").await;
    problem(team.app.get(&path).bearer_auth("wrong").send().await.unwrap(), 401, "unauthorized").await;
    problem(team.app.get(&path).bearer_auth(format!("{API_KEY}x")).send().await.unwrap(), 401, "unauthorized").await;
    let user_token = team.app.tokens.admin("user_1", "org_1");
    problem(team.app.get(&path).bearer_auth(user_token).send().await.unwrap(), 401, "unauthorized").await;
    assert_eq!(
        team.app.get(&path).bearer_auth(ROTATED_API_KEY).send().await.unwrap().status(),
        200,
        "either rotation key works"
    );
    // A query string the workers remember (extract::Parsed) is still refused without a key, and a
    // remembered key of an unknown team is still not found.
    for _ in 0..4 {
        assert_eq!(team.app.get(&path).bearer_auth(API_KEY).send().await.unwrap().status(), 200);
    }
    problem(team.app.get(&path).send().await.unwrap(), 401, "unauthorized").await;
    problem(team.app.get(&path).bearer_auth("wrong").send().await.unwrap(), 401, "unauthorized").await;
    for _ in 0..3 {
        problem(team.optimization(&format!("teamId=org_nobody&weekOf={WEEK}")).await, 404, "not_found").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_sales_batches_are_refused_whole_and_write_nothing() {
    let team = team().await;
    let foreign = team.app.create_location("org_2", "uptown").await;
    let good = team.sale("2026-11-14", "Lunch", 10.0);
    let cases = [
        (json!([good, team.sale("2026-11-15", "Lunch", -1.0)]), "rows[1].food"),
        (
            json!([good, { "locationId": team.location, "date": "2026-11-15", "block": "Lunch", "food": "NaN", "beverage": 0, "other": 0 }]),
            "rows[1].food",
        ),
        (
            json!([good, { "locationId": team.location, "date": "2026-11-15", "block": "Brunch", "food": 1, "beverage": 0, "other": 0 }]),
            "rows[1].block",
        ),
        (
            json!([good, { "locationId": foreign, "date": "2026-11-15", "block": "Lunch", "food": 1, "beverage": 0, "other": 0 }]),
            "rows[1].locationId",
        ),
        (json!([good, team.sale("2026-11-15", "Lunch", 1.005)]), "rows[1].food"),
        (json!([good, good]), "rows[1]"),
    ];
    for (rows, field) in cases {
        let body = problem(team.ingest(rows).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], field);
    }
    let too_many: Vec<Value> = (0..10_001)
        .map(|i| json!({ "locationId": team.location, "date": "2026-11-14", "block": "Lunch", "food": i, "beverage": 0, "other": 0 }))
        .collect();
    let body = problem(team.ingest(json!(too_many)).await, 400, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "rows");
    assert_eq!(team.app.count("sales_facts").await, 0);

    let most: Vec<Value> = (0..10_000)
        .map(|i| {
            let date = time::Date::from_ordinal_date(2024, 1).unwrap() + time::Duration::days(i / 3);
            let block = ["Lunch", "Dinner", "LateNight"][(i % 3) as usize];
            json!({ "locationId": team.location, "date": date.to_string(), "block": block, "food": 1, "beverage": 0, "other": 0 })
        })
        .collect();
    assert_eq!(team.ingest(json!(most)).await.status(), 200, "10,000 rows fit the sales body limit");
    assert_eq!(team.app.count("sales_facts").await, 10_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cache_answers_until_a_write_drops_it() {
    let team = team().await;
    team.ingest(json!([team.sale("2026-11-14", "Lunch", 100.0)])).await;
    assert_eq!(team.week().await.1, "miss");
    let (report, cache) = team.week().await;
    assert_eq!((cache.as_str(), report["summary"]["totalSales"].clone()), ("hit", json!(100.0)));

    team.ingest(json!([team.sale("2026-11-14", "Lunch", 250.0)])).await;
    let (report, cache) = team.week().await;
    assert_eq!(
        (cache.as_str(), report["summary"]["totalSales"].clone()),
        ("miss", json!(250.0)),
        "a write is visible at once"
    );

    let goals = json!({ "teamId": "org_1", "goals": [{ "dayOfWeek": 3, "salesGoal": 1, "laborPctTarget": 1, "splhTarget": 1 }] });
    team.app.put("/api/analytics/goals").bearer_auth(API_KEY).json(&goals).send().await.unwrap();
    assert_eq!(team.week().await.1, "miss", "a goal change drops it too");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_through_one_instance_is_visible_on_another_within_a_second() {
    let team = team().await;
    let second = team.app.spawn_instance().await;
    team.ingest(json!([team.sale("2026-11-14", "Lunch", 100.0)])).await;
    let read_second = || async {
        let response = second
            .get(&format!("/api/analytics/optimization?teamId=org_1&weekOf={WEEK}"))
            .bearer_auth(API_KEY)
            .send()
            .await
            .unwrap();
        let cache = response.headers()["x-cache"].to_str().unwrap().to_owned();
        (response.json::<Value>().await.unwrap()["summary"]["totalSales"].clone(), cache)
    };
    assert_eq!(read_second().await, (json!(100.0), "miss".to_owned()));
    // The first write's notification may still be on its way to the second instance (and drop
    // what it just cached); it settles into hits.
    let mut settled = false;
    for _ in 0..50 {
        if read_second().await.1 == "hit" {
            settled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(settled, "the second instance serves from its cache");

    team.ingest(json!([team.sale("2026-11-14", "Lunch", 300.0)])).await;
    let started = std::time::Instant::now();
    loop {
        let (total, _) = read_second().await;
        if total == json!(300.0) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(1), "the second instance still serves {total} after a second");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outage_opens_the_circuit_while_cached_answers_are_still_served() {
    let team = team().await;
    team.ingest(json!([team.sale("2026-11-14", "Lunch", 100.0)])).await;
    assert_eq!(team.week().await.1, "miss");
    assert_eq!(team.week().await.1, "hit");

    let name = team.app.db_url.rsplit('/').next().unwrap().to_owned();
    let admin_url = format!("{}/postgres", team.app.db_url.rsplit_once('/').unwrap().0);
    let (admin, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    admin.batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)")).await.unwrap();

    let other_week = "teamId=org_1&weekOf=2026-11-07";
    for _ in 0..5 {
        let response = team.optimization(other_week).await;
        assert!(response.status().is_server_error(), "{}", response.status());
    }
    let open = team.optimization(other_week).await;
    let retry_after: u64 = open.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry_after));
    problem(open, 503, "circuit_open").await;
    let (cached, cache) = team.week().await;
    assert_eq!((cache.as_str(), cached["summary"]["totalSales"].clone()), ("hit", json!(100.0)));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_polls_gets_304_until_the_numbers_change() {
    let team = team().await;
    team.ingest(json!([team.sale("2026-11-14", "Lunch", 100.0)])).await;
    let path = format!("/api/analytics/optimization?teamId=org_1&weekOf={WEEK}");
    let first = team.app.get(&path).bearer_auth(API_KEY).send().await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() == 18, "a strong tag: {etag}");
    let poll = |tag: String| team.app.get(&path).bearer_auth(API_KEY).header("if-none-match", tag).send();
    let unchanged = poll(etag.clone()).await.unwrap();
    assert_eq!(unchanged.status(), 304);
    assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), etag);
    assert!(unchanged.bytes().await.unwrap().is_empty(), "no body");
    assert_eq!(poll(format!("\"other\", {etag}")).await.unwrap().status(), 304, "any of a list matches");

    team.ingest(json!([team.sale("2026-11-14", "Dinner", 50.0)])).await;
    let changed = poll(etag.clone()).await.unwrap();
    assert_eq!(changed.status(), 200, "new numbers, a full answer");
    assert_ne!(changed.headers()["etag"].to_str().unwrap(), etag);
    assert_eq!(changed.json::<Value>().await.unwrap()["summary"]["totalSales"], json!(150.0));
}
