use opsd_tests::seven_shifts_fake::{Fake7ShiftsServer, punch, shift};
use opsd_tests::{API_KEY, CRON_SECRET, TestApp};
use serde_json::{Value, json};
use time::{Date, Duration, OffsetDateTime, Weekday};

struct Team {
    app: TestApp,
    provider: Fake7ShiftsServer,
    downtown: String,
    uptown: String,
    /// The last whole week (a Saturday 7 to 13 days ago): inside both syncs' windows.
    week: Date,
}

async fn team() -> Team {
    let provider = Fake7ShiftsServer::start().await;
    let app = TestApp::spawn_with(provider.configure()).await;
    let admin = app.tokens.admin("user_1", "org_1");
    let mut ids = Vec::new();
    for (slug, provider_id) in [("downtown", "100"), ("uptown", "200")] {
        let body = json!({ "name": slug, "slug": slug, "timezone": "UTC", "schedulerLocationId": provider_id });
        let location: Value = app.post_json("/api/locations", &admin, &body).await.json().await.unwrap();
        ids.push(location["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(app.get_json("/cron/sync-7shifts-roles", CRON_SECRET).await["status"], "ok");
    let mut week = OffsetDateTime::now_utc().date() - Duration::days(7);
    while week.weekday() != Weekday::Saturday {
        week -= Duration::days(1);
    }
    Team { app, provider, downtown: ids[0].clone(), uptown: ids[1].clone(), week }
}

impl Team {
    /// `hh:mm` UTC on the week's day `day` (0 = Saturday).
    fn at(&self, day: i64, time: &str) -> String {
        format!("{}T{time}:00Z", self.week + Duration::days(day))
    }

    async fn get(&self, path: &str, query: &str) -> (u16, Value, String) {
        let response = self.app.get(&format!("{path}?{query}")).bearer_auth(API_KEY).send().await.unwrap();
        let status = response.status().as_u16();
        let cache = response.headers().get("x-cache").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        (status, response.json().await.unwrap(), cache)
    }

    async fn variance(&self, location: Option<&str>) -> (Value, String) {
        let scope = location.map(|l| format!("&locationId={l}")).unwrap_or_default();
        let (status, body, cache) =
            self.get("/api/analytics/variance", &format!("teamId=org_1&weekOf={}{scope}", self.week)).await;
        assert_eq!(status, 200, "{body}");
        (body, cache)
    }

    async fn ingest(&self, rows: Vec<Value>) {
        let response =
            self.app.post_json("/api/analytics/sales", API_KEY, &json!({ "teamId": "org_1", "rows": rows })).await;
        assert_eq!(response.status(), 200);
    }

    fn sale(&self, location: &str, date: Date, block: &str, food: f64) -> Value {
        json!({ "locationId": location, "date": date.to_string(), "block": block, "food": food, "beverage": 0, "other": 0 })
    }
}

fn department<'a>(day: &'a Value, name: &str) -> &'a Value {
    day["departments"].as_array().unwrap().iter().find(|d| d["department"] == name).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn variance_sets_punches_against_published_shifts_with_overtime_across_locations() {
    let team = team().await;
    // Scheduled at downtown: Ana (server, FOH) 6 h on Saturday; Ben (cook, BOH) 8 h on Thursday.
    team.provider.fake.set_shifts(
        "100",
        vec![
            shift(1, 7, 3, &team.at(0, "16:00"), &team.at(0, "22:00"), 1650, false),
            shift(2, 8, 4, &team.at(5, "15:00"), &team.at(5, "23:00"), 1900, false),
            shift(3, 8, 4, &team.at(6, "15:00"), &team.at(6, "23:00"), 1900, true),
        ],
    );
    let mut ana = punch(11, 7, 3, &team.at(0, "16:00"), Some(&team.at(0, "22:30")), true);
    ana["breaks"] =
        json!([opsd_tests::seven_shifts_fake::punch_break(1, &team.at(0, "19:00"), &team.at(0, "19:30"), false)]);
    team.provider.fake.set_punches(
        "100",
        vec![
            ana,
            punch(12, 8, 4, &team.at(5, "15:00"), Some(&team.at(5, "23:00")), true),
            punch(13, 7, 3, &team.at(6, "16:00"), Some(&team.at(6, "20:00")), false),
        ],
    );
    // Ben's 40 hours at uptown come first: all 8 of his downtown hours are overtime.
    team.provider.fake.set_punches(
        "200",
        (0..4).map(|day| punch(20 + day, 8, 4, &team.at(day, "08:00"), Some(&team.at(day, "18:00")), true)).collect(),
    );
    assert_eq!(team.app.get_json("/cron/sync-schedule-from-7shifts", CRON_SECRET).await["status"], "ok");
    assert_eq!(team.app.get_json("/cron/sync-7shifts-punches", CRON_SECRET).await["inserted"], 7);
    let downtown = team.downtown.clone();
    team.ingest(vec![
        team.sale(&downtown, team.week, "Lunch", 500.0),
        team.sale(&downtown, team.week, "Dinner", 1000.0),
    ])
    .await;

    let (report, cache) = team.variance(Some(&downtown)).await;
    assert_eq!(cache, "miss");
    assert_eq!(report["weekLabel"], format!("Week of {}", team.week));
    assert_eq!(report["days"].as_array().unwrap().len(), 7);
    let saturday = &report["days"][0];
    assert_eq!(
        department(saturday, "FOH"),
        &json!({ "department": "FOH", "scheduledHours": 6.0, "actualHours": 6.0, "varianceHours": 0.0,
                 "scheduledCost": 99.0, "actualCost": 93.0, "varianceCost": -6.0, "overtimeHours": 0.0 }),
        "6.5 h less a 30 min unpaid break at $15.50 against 6 h at $16.50"
    );
    assert_eq!(
        (saturday["scheduledLaborPctFraction"].as_f64(), saturday["actualLaborPctFraction"].as_f64()),
        (Some(0.066), Some(0.062))
    );
    let thursday = &report["days"][5];
    assert_eq!(thursday["departments"][1]["department"], "BOH");
    assert_eq!(
        (
            &thursday["departments"][1]["actualHours"],
            &thursday["departments"][1]["overtimeHours"],
            &thursday["departments"][1]["actualCost"]
        ),
        (&json!(8.0), &json!(8.0), &json!(186.0)),
        "8 h at $15.50 plus the overtime premium of $7.75 an hour"
    );
    assert_eq!(
        (&thursday["actualLaborPctFraction"], &thursday["actualLaborPctReason"]),
        (&Value::Null, &json!("no_sales"))
    );
    let friday = &report["days"][6];
    assert_eq!(
        (&friday["total"]["scheduledHours"], &friday["total"]["actualHours"]),
        (&json!(0.0), &json!(0.0)),
        "drafts and unapproved punches do not count"
    );
    let totals = &report["totals"];
    assert_eq!(
        (
            &totals["total"]["scheduledHours"],
            &totals["total"]["actualHours"],
            &totals["total"]["overtimeHours"],
            &totals["total"]["varianceCost"]
        ),
        (&json!(14.0), &json!(14.0), &json!(8.0), &json!(28.0))
    );
    assert_eq!(totals["sales"], 1500.0);

    let (team_wide, _) = team.variance(None).await;
    assert_eq!(
        (&team_wide["totals"]["total"]["actualHours"], &team_wide["totals"]["total"]["overtimeHours"]),
        (&json!(54.0), &json!(8.0))
    );

    assert_eq!(team.variance(Some(&downtown)).await.1, "hit");
    let mut punches = team.provider.fake.punches("100");
    (punches[2]["approved"], punches[2]["modified"]) =
        (json!(true), json!(OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap()));
    team.provider.fake.set_punches("100", punches);
    assert_eq!(team.app.get_json("/cron/sync-7shifts-punches", CRON_SECRET).await["updated"], 1);
    let (after, cache) = team.variance(Some(&downtown)).await;
    assert_eq!(cache, "miss", "a punch sync that changed something drops the team's reports");
    assert_eq!(after["days"][6]["total"]["actualHours"], 4.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn variance_and_forecast_answer_304_to_a_client_that_holds_their_etag() {
    let team = team().await;
    for path in ["/api/analytics/variance", "/api/analytics/forecast"] {
        let url = format!("{path}?teamId=org_1&weekOf={}", team.week);
        let first = team.app.get(&url).bearer_auth(API_KEY).send().await.unwrap();
        assert_eq!(first.status(), 200);
        let etag = first.headers()["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        let again = team.app.get(&url).bearer_auth(API_KEY).header("if-none-match", &etag).send().await.unwrap();
        assert_eq!(again.status(), 304, "{path}");
        assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
        assert!(again.headers().contains_key("x-cache"));
        assert!(again.bytes().await.unwrap().is_empty());
        let weak = format!("W/{etag}");
        let weakly = team.app.get(&url).bearer_auth(API_KEY).header("if-none-match", weak).send().await.unwrap();
        assert_eq!(weakly.status(), 304, "If-None-Match compares weakly");
        let other = team.app.get(&url).bearer_auth(API_KEY).header("if-none-match", "\"other\"").send().await.unwrap();
        assert_eq!(other.status(), 200);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn variance_and_forecast_refuse_what_optimization_refuses_and_write_nothing() {
    let team = team().await;
    for path in ["/api/analytics/variance", "/api/analytics/forecast"] {
        let friday = team.week + Duration::days(6);
        let (status, body, _) = team.get(path, &format!("teamId=org_1&weekOf={friday}")).await;
        assert_eq!((status, body["code"].as_str()), (400, Some("validation_failed")));
        assert_eq!(body["errors"][0]["field"], "weekOf");
        let (status, body, _) = team.get(path, "weekOf=2026-11-21").await;
        assert_eq!((status, body["errors"][0]["field"].as_str()), (400, Some("teamId")));
        let (status, body, _) =
            team.get(path, &format!("teamId=org_2&weekOf={}&locationId={}", team.week, team.downtown)).await;
        assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "another team's location");
        let (status, _, _) = team.get(path, &format!("teamId=org_1&weekOf={}&locationId=nope", team.week)).await;
        assert_eq!(status, 400);
        let anonymous = team.app.get(&format!("{path}?teamId=org_1&weekOf={}", team.week)).send().await.unwrap();
        assert_eq!(anonymous.status(), 401);
    }
    let pg = team.app.pg().await;
    let written: i64 = pg
        .query_one("SELECT (SELECT count(*) FROM time_punches) + (SELECT count(*) FROM sales_facts)", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(written, 0);
}

/// Sales that grow 2% a week with weekends twice the weekdays: a recent-weighted forecast follows
/// the growth that the 4-week mean lags.
fn growing(week: Date, back: i64, block: &str) -> f64 {
    let date = week - Duration::days(back);
    let weekend = matches!(date.weekday(), Weekday::Saturday | Weekday::Sunday);
    let base = if block == "LateNight" { 100.0 } else { 1000.0 };
    let weeks_back = ((back - 1) / 7) as i32;
    (base * 0.98f64.powi(weeks_back) * if weekend { 2.0 } else { 1.0 }).round()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_forecast_uses_only_earlier_sales_beats_the_baseline_and_recommends_hours() {
    let team = team().await;
    let (downtown, uptown) = (team.downtown.clone(), team.uptown.clone());
    let rows: Vec<Value> = (1..=14 * 7)
        .flat_map(|back| {
            ["Lunch", "Dinner", "LateNight"].map(|block| {
                team.sale(&downtown, team.week - Duration::days(back), block, growing(team.week, back, block))
            })
        })
        .collect();
    team.ingest(rows).await;
    // Three weeks only at uptown.
    team.ingest((1..=21).map(|back| team.sale(&uptown, team.week - Duration::days(back), "Dinner", 800.0)).collect())
        .await;
    let goals = json!({ "teamId": "org_1", "locationId": downtown, "goals": [{ "dayOfWeek": 0, "salesGoal": 4000, "laborPctTarget": 25, "splhTarget": 100 }] });
    assert_eq!(
        team.app.put("/api/analytics/goals").bearer_auth(API_KEY).json(&goals).send().await.unwrap().status(),
        200
    );

    let query = format!("teamId=org_1&weekOf={}&locationId={downtown}", team.week);
    let (status, forecast, cache) = team.get("/api/analytics/forecast", &query).await;
    assert_eq!((status, cache.as_str()), (200, "miss"), "{forecast}");
    assert_eq!(forecast["method"], "recent_weighted_4_weeks");
    let backtest = &forecast["backtest"];
    assert_eq!(backtest["weeks"], 8);
    assert!(backtest["wape"].as_f64().unwrap() < backtest["baselineWape"].as_f64().unwrap(), "{backtest}");
    let saturday = &forecast["days"][0];
    let weighted = |block: &str| {
        let weeks = [7, 14, 21, 28].map(|back| growing(team.week, back, block));
        (weeks[0] * 4.0 + weeks[1] * 3.0 + weeks[2] * 2.0 + weeks[3]) / 10.0
    };
    assert_eq!(saturday["blocks"][1], json!({ "block": "Dinner", "forecastSales": weighted("Dinner") }));
    let sales = saturday["forecastSales"].as_f64().unwrap();
    assert_eq!(sales, weighted("Lunch") + weighted("Dinner") + weighted("LateNight"));
    assert_eq!(saturday["hoursForSplh"].as_f64(), Some((sales / 100.0 * 100.0).round() / 100.0));
    assert_eq!((&saturday["hoursForLaborPct"], &saturday["hoursForLaborPctReason"]), (&Value::Null, &json!("no_wage")));
    assert_eq!(forecast["days"][1]["hoursForSplhReason"], "no_splh_target");

    // Sales of the forecast week itself change nothing: only what came before it is used.
    team.ingest(vec![team.sale(&downtown, team.week, "Dinner", 99_999.0)]).await;
    let (_, again, cache) = team.get("/api/analytics/forecast", &query).await;
    assert_eq!(cache, "miss", "sales ingestion drops the cached forecast");
    assert_eq!(again["days"], forecast["days"]);

    let short = format!("teamId=org_1&weekOf={}&locationId={uptown}", team.week);
    let (_, short, _) = team.get("/api/analytics/forecast", &short).await;
    assert_eq!(
        (&short["method"], &short["reason"], &short["backtest"]),
        (&Value::Null, &json!("insufficient_history"), &Value::Null)
    );
    assert!(
        short["days"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["forecastSales"].is_null() && d["hoursForSplhReason"] == "insufficient_history")
    );

    let (status, whole, _) = team.get("/api/analytics/forecast", &format!("teamId=org_1&weekOf={}", team.week)).await;
    assert_eq!(status, 200);
    assert!(whole["days"][0]["forecastSales"].as_f64().unwrap() > sales, "the team forecasts every location's sales");
}
