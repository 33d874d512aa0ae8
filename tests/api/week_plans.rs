//! The week planner from outside: availability, proposals solved on the queue from the forecast,
//! staff and wages of a location's history, and every bad input refused with nothing written.

use diesel_async::{AsyncConnection, AsyncPgConnection};
use opsd_core::Department;
use opsd_tests::{API_KEY, TestApp, problem};
use serde_json::{Value, json};
use time::{Date, Duration, OffsetDateTime, Time, Weekday};

const TEAM: &str = "org_1";
const ZONE: &str = "America/Chicago";

struct Restaurant {
    app: TestApp,
    admin: String,
    location: String,
    /// The week to plan: the one holding today, so its history is all in the past.
    week: Date,
}

/// A server's or cook's shift at the location's local time.
fn shift(key: &str, department: Department, date: Date, start: u8, hours: i64) -> opsd_scheduling::ScheduledShift {
    let zone = time_tz::timezones::get_by_name(ZONE).unwrap();
    let local = date.with_time(Time::from_hms(start, 0, 0).unwrap());
    let start_at = time_tz::PrimitiveDateTimeExt::assume_timezone(&local, zone).take_first().unwrap();
    let input = opsd_scheduling::ShiftInput {
        provider_shift_id: format!("{key}-{date}-{start}"),
        employee_name: format!("Employee {key}"),
        employee_key: key.to_owned(),
        role: if department == Department::Foh { "Server" } else { "Line Cook" }.into(),
        department,
        start_at,
        end_at: start_at + Duration::hours(hours),
        unpaid_break_minutes: 0,
        hourly_wage: opsd_core::Decimal::new(if department == Department::Foh { 1500 } else { 2000 }, 2),
        is_draft: false,
    };
    opsd_scheduling::ScheduledShift::place(input, zone).unwrap()
}

async fn restaurant() -> Restaurant {
    restaurant_on(TestApp::spawn().await, None).await
}

/// A restaurant whose location is linked to 7shifts location `scheduler` when one is given.
async fn restaurant_on(app: TestApp, scheduler: Option<&str>) -> Restaurant {
    let admin = app.tokens.admin("user_admin", TEAM);
    let location = match scheduler {
        None => app.create_location_in(TEAM, "Downtown", ZONE).await,
        Some(provider) => {
            let body =
                json!({ "name": "Downtown", "slug": "downtown", "timezone": ZONE, "schedulerLocationId": provider });
            let response = app.post_json("/api/locations", &admin, &body).await;
            assert_eq!(response.status(), 201);
            response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
        }
    };
    let mut week = OffsetDateTime::now_utc().date();
    while week.weekday() != Weekday::Saturday {
        week -= Duration::days(1);
    }
    Restaurant { app, admin, location, week }
}

impl Restaurant {
    /// Eight weeks of sales, goals and shifts before the week: servers s1 to s5 at lunch (11:00, 6 h)
    /// and dinner (17:00, 6 h), cooks c1 and c2 at dinner (16:00, 7 h), busier on weekends.
    async fn with_history(self) -> Self {
        let mut rows = Vec::new();
        let mut shifts = Vec::new();
        for day in 1..=56 {
            let date = self.week - Duration::days(day);
            let weekend = matches!(date.weekday(), Weekday::Saturday | Weekday::Sunday);
            let scale = if weekend { 2.0 } else { 1.0 };
            for (block, sales) in [("Lunch", 900.0), ("Dinner", 1800.0)] {
                rows.push(json!({ "locationId": self.location, "date": date.to_string(), "block": block,
                                  "food": sales * scale, "beverage": 0, "other": 0 }));
            }
            let servers = if weekend { 3 } else { 2 };
            for n in 0..servers {
                shifts.push(shift(&format!("s{}", 1 + (day as usize + n) % 5), Department::Foh, date, 11, 6));
                shifts.push(shift(&format!("s{}", 1 + (day as usize + n + 2) % 5), Department::Foh, date, 17, 6));
            }
            shifts.push(shift(&format!("c{}", 1 + day % 2), Department::Boh, date, 16, 7));
        }
        let response =
            self.app.post_json("/api/analytics/sales", API_KEY, &json!({ "teamId": TEAM, "rows": rows })).await;
        assert_eq!(response.status(), 200);
        let goals: Vec<Value> = (0..7)
            .map(|day| json!({ "dayOfWeek": day, "salesGoal": 3000, "laborPctTarget": 25, "splhTarget": 90 }))
            .collect();
        let response = self
            .app
            .put("/api/analytics/goals")
            .bearer_auth(API_KEY)
            .json(&json!({ "teamId": TEAM, "locationId": self.location, "goals": goals }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
        let mut conn = AsyncPgConnection::establish(&self.app.db_url).await.unwrap();
        let location = opsd_core::LocationId(self.location.parse().unwrap());
        opsd_postgres::upsert_shifts(&mut conn, location, &shifts, OffsetDateTime::now_utc()).await.unwrap();
        self
    }

    async fn put_availability(&self, token: &str, body: &Value) -> reqwest::Response {
        self.app.put("/api/planning/availability").bearer_auth(token).json(body).send().await.unwrap()
    }

    async fn propose(&self, token: &str, body: &Value, wait: Option<u64>) -> reqwest::Response {
        let mut request = self.app.post("/api/planning/schedule-proposals").bearer_auth(token).json(body);
        if let Some(seconds) = wait {
            request = request.header("Prefer", format!("wait={seconds}"));
        }
        request.send().await.unwrap()
    }

    fn week_body(&self, limit: u32) -> Value {
        json!({ "locationId": self.location, "weekOf": self.week.to_string(), "timeLimitSeconds": limit })
    }
}

fn hours_of(proposal: &Value, key: &str) -> f64 {
    proposal["shifts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["employeeKey"] == key)
        .map(|s| s["hours"].as_f64().unwrap())
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proposal_covers_the_forecast_within_the_rules_and_availability() {
    let place = restaurant().await.with_history().await;
    let availability = json!({ "locationId": place.location, "employees": [
        { "employeeKey": "s1", "unavailableWeekdays": [2], "maxWeeklyHours": 18 },
        { "employeeKey": "s2", "preferredBlocks": ["Dinner"] },
    ] });
    let response = place.put_availability(&place.admin, &availability).await;
    assert_eq!(response.status(), 200);
    let saved: Value = response.json().await.unwrap();
    assert_eq!(
        saved["employees"][0],
        json!({ "employeeKey": "s1", "unavailableWeekdays": [2], "unavailableDates": [],
                                               "preferredBlocks": [], "maxWeeklyHours": 18.0 })
    );
    let read =
        place.app.get(&format!("/api/planning/availability?locationId={}", place.location)).bearer_auth(&place.admin);
    assert_eq!(read.send().await.unwrap().json::<Value>().await.unwrap(), saved);

    // Without a wait: 202, solving, with its URL.
    let response = place.propose(&place.admin, &place.week_body(3), None).await;
    assert_eq!(response.status(), 202);
    let url = response.headers()["location"].to_str().unwrap().to_owned();
    let queued: Value = response.json().await.unwrap();
    assert_eq!((queued["status"].as_str(), queued.get("shifts")), (Some("solving"), None));
    assert_eq!(url, format!("/api/planning/schedule-proposals/{}", queued["id"].as_str().unwrap()));

    // With a wait long enough: 201 and the finished proposal.
    let response = place.propose(&place.admin, &place.week_body(5), Some(60)).await;
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["preference-applied"], "wait=60");
    let proposal: Value = response.json().await.unwrap();
    assert_eq!(proposal["status"], "ready", "{proposal}");
    assert_eq!(proposal["weekOf"], place.week.to_string());
    let shifts = proposal["shifts"].as_array().unwrap();
    assert!(shifts.len() >= 14, "at least lunch and dinner every day: {proposal}");
    // The rules and the availability hold.
    let monday = (place.week + Duration::days(2)).to_string();
    assert!(!shifts.iter().any(|s| s["employeeKey"] == "s1" && s["date"] == monday.as_str()));
    assert!(hours_of(&proposal, "s1") <= 18.0);
    for key in ["s2", "s3", "s4", "s5", "c1", "c2"] {
        assert!(hours_of(&proposal, key) <= 40.0, "{key}");
    }
    for s in shifts {
        let department = s["department"].as_str().unwrap();
        assert_eq!(s["employeeKey"].as_str().unwrap().starts_with('c'), department == "BOH", "{s}");
        // The usual times at Chicago (UTC-6 in this season), as instants.
        let start = if s["block"] == "Lunch" {
            "T17:00:00Z"
        } else if department == "FOH" {
            "T23:00:00Z"
        } else {
            "T22:00:00Z"
        };
        assert!(s["start"].as_str().unwrap().ends_with(start), "{s}");
    }
    // Needed against planned, the week's figures and the solver's.
    let coverage = proposal["coverage"].as_array().unwrap();
    assert!(coverage.iter().any(|c| c["hoursPlanned"].as_f64() > Some(0.0)));
    let labor: f64 = shifts.iter().map(|s| s["cost"].as_f64().unwrap()).sum();
    assert!((proposal["week"]["laborCost"].as_f64().unwrap() - labor).abs() < 0.01);
    assert!(proposal["week"]["projectedSales"].as_f64().unwrap() > 10_000.0);
    assert_eq!(proposal["week"]["splhTarget"], 90.0);
    let solver = &proposal["solver"];
    assert!(["optimal", "feasible"].contains(&solver["status"].as_str().unwrap()));
    assert!(solver["lowerBound"].as_i64() <= solver["objective"].as_i64());

    // The queued one is solved too, and both are listed, latest first, without their shifts.
    let mut first = Value::Null;
    for _ in 0..120 {
        first = place.app.get_json(&url, &place.admin).await;
        if first["status"] != "solving" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(first["status"], "ready");
    let list = place
        .app
        .get_json(&format!("/api/planning/schedule-proposals?locationId={}", place.location), &place.admin)
        .await;
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [proposal["id"].as_str().unwrap(), first["id"].as_str().unwrap()]);
    assert!(list[0].get("shifts").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_availability_is_refused_and_nothing_is_written() {
    let place = restaurant().await.with_history().await;
    let location = place.location.clone();
    let row = |employee: Value| json!({ "locationId": location, "employees": [employee] });
    let cases = [
        (row(json!({ "employeeKey": "nobody" })), 422, "unknown_employee"),
        (
            json!({ "locationId": location, "employees": [{ "employeeKey": "s1" }, { "employeeKey": "s1" }] }),
            400,
            "validation_failed",
        ),
        (row(json!({ "employeeKey": "s1", "unavailableWeekdays": [7] })), 400, "validation_failed"),
        (row(json!({ "employeeKey": "s1", "unavailableDates": ["2020-01-04"] })), 400, "validation_failed"),
        (row(json!({ "employeeKey": "s1", "unavailableDates": ["next tuesday"] })), 400, "validation_failed"),
        (row(json!({ "employeeKey": "s1", "maxWeeklyHours": 200 })), 400, "validation_failed"),
        (row(json!({ "employeeKey": "s1", "preferredBlocks": ["Brunch"] })), 400, "validation_failed"),
        (json!({ "locationId": uuid::Uuid::nil(), "employees": [{ "employeeKey": "s1" }] }), 404, "not_found"),
    ];
    for (body, status, code) in cases {
        problem(place.put_availability(&place.admin, &body).await, status, code).await;
    }
    let member = place.app.tokens.member("user_member", TEAM);
    problem(place.put_availability(&member, &row(json!({ "employeeKey": "s1" }))).await, 403, "forbidden").await;
    let stranger = place.app.tokens.admin("user_other", "org_2");
    problem(place.put_availability(&stranger, &row(json!({ "employeeKey": "s1" }))).await, 404, "not_found").await;
    assert_eq!(place.app.count("planning_availability").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proposal_that_cannot_be_planned_is_refused_and_nothing_is_queued() {
    let empty = restaurant().await;
    let other_week = (empty.week - Duration::days(1)).to_string();
    let location = empty.location.clone();
    let cases = [
        (json!({ "locationId": location, "weekOf": other_week }), 400, "validation_failed"),
        (
            json!({ "locationId": location, "weekOf": empty.week.to_string(), "timeLimitSeconds": 0 }),
            400,
            "validation_failed",
        ),
        (
            json!({ "locationId": location, "weekOf": empty.week.to_string(), "timeLimitSeconds": 121 }),
            400,
            "validation_failed",
        ),
        (json!({ "locationId": uuid::Uuid::nil(), "weekOf": empty.week.to_string() }), 404, "not_found"),
        (empty.week_body(5), 409, "insufficient_history"),
    ];
    for (body, status, code) in cases {
        problem(empty.propose(&empty.admin, &body, None).await, status, code).await;
    }
    let member = empty.app.tokens.member("user_member", TEAM);
    problem(empty.propose(&member, &empty.week_body(5), None).await, 403, "forbidden").await;
    // Sales but nobody on the schedule.
    let rows: Vec<Value> = (1..=35)
        .map(|day| {
            json!({ "locationId": location, "date": (empty.week - Duration::days(day)).to_string(),
                           "block": "Dinner", "food": 1000, "beverage": 0, "other": 0 })
        })
        .collect();
    let response = empty.app.post_json("/api/analytics/sales", API_KEY, &json!({ "teamId": TEAM, "rows": rows })).await;
    assert_eq!(response.status(), 200);
    problem(empty.propose(&empty.admin, &empty.week_body(5), None).await, 422, "no_staff").await;
    assert_eq!(empty.app.count("schedule_proposals").await, 0);
    let unknown =
        empty.app.get(&format!("/api/planning/schedule-proposals/{}", uuid::Uuid::nil())).bearer_auth(&empty.admin);
    problem(unknown.send().await.unwrap(), 404, "not_found").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn another_teams_proposal_is_not_found() {
    let place = restaurant().await.with_history().await;
    let response = place.propose(&place.admin, &place.week_body(1), None).await;
    assert_eq!(response.status(), 202);
    let id = response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    let stranger = place.app.tokens.admin("user_other", "org_2");
    let other = place.app.get(&format!("/api/planning/schedule-proposals/{id}")).bearer_auth(&stranger);
    problem(other.send().await.unwrap(), 404, "not_found").await;
    let list = place.app.get_json("/api/planning/schedule-proposals", &stranger).await;
    assert_eq!(list, json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn inside_the_notice_period_every_change_to_the_published_week_is_listed_with_its_premium() {
    let place = restaurant().await.with_history().await;
    // This week is published as a manager would: two servers at lunch, two or three at dinner (no
    // doubles), one cook.
    let mut published = Vec::new();
    for day in 0..7 {
        let date = place.week + Duration::days(day);
        let weekend = matches!(date.weekday(), Weekday::Saturday | Weekday::Sunday);
        let server = |n: i64| format!("s{}", 1 + (day + n) % 5);
        for n in 0..2 {
            published.push(shift(&server(n), Department::Foh, date, 11, 6));
        }
        for n in 2..if weekend { 5 } else { 4 } {
            published.push(shift(&server(n), Department::Foh, date, 17, 6));
        }
        published.push(shift(&format!("c{}", 1 + day % 2), Department::Boh, date, 16, 7));
    }
    let mut conn = AsyncPgConnection::establish(&place.app.db_url).await.unwrap();
    let location = opsd_core::LocationId(place.location.parse().unwrap());
    opsd_postgres::upsert_shifts(&mut conn, location, &published, OffsetDateTime::now_utc()).await.unwrap();

    let response = place.propose(&place.admin, &place.week_body(5), Some(60)).await;
    assert_eq!(response.status(), 201);
    let proposal: Value = response.json().await.unwrap();
    assert_eq!(proposal["status"], "ready", "{proposal}");

    // The changes are exactly the days where the proposal and the published week differ.
    let day_of = |key: &str, date: &str, shifts: &[(String, String, String, String)]| {
        shifts
            .iter()
            .find(|(k, d, _, _)| k == key && d == date)
            .map(|(_, _, dept, block)| json!({ "department": dept, "block": block }))
    };
    let before: Vec<(String, String, String, String)> = published
        .iter()
        .map(|s| {
            (
                s.input.employee_key.clone(),
                s.business_date.to_string(),
                s.input.department.as_str().to_owned(),
                s.daypart.as_str().to_owned(),
            )
        })
        .collect();
    let after: Vec<(String, String, String, String)> = proposal["shifts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["employeeKey"].as_str().unwrap().into(),
                s["date"].as_str().unwrap().into(),
                s["department"].as_str().unwrap().into(),
                s["block"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut expected = Vec::new();
    for key in ["s1", "s2", "s3", "s4", "s5", "c1", "c2"] {
        for day in 0..7 {
            let date = (place.week + Duration::days(day)).to_string();
            let (from, to) = (day_of(key, &date, &before), day_of(key, &date, &after));
            if from != to {
                expected.push(json!({ "employeeKey": key, "date": date, "from": from, "to": to }));
            }
        }
    }
    let listed: Vec<Value> = proposal["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["premium"], 15.0);
            json!({ "employeeKey": c["employeeKey"], "date": c["date"], "from": c["from"], "to": c["to"] })
        })
        .collect();
    let sorted = |mut rows: Vec<Value>| {
        rows.sort_by_key(|r| r.to_string());
        rows
    };
    assert_eq!(sorted(listed), sorted(expected.clone()));
    assert_eq!(proposal["week"]["changePremiums"], 15.0 * expected.len() as f64);
    // A change is made only where it is worth its premium: most of the published week stands.
    assert!(expected.len() < before.len() / 2, "{} changes of {} published shifts", expected.len(), before.len());
}

async fn ready_proposal(place: &Restaurant, week: Date) -> String {
    let body = json!({ "locationId": place.location, "weekOf": week.to_string(), "timeLimitSeconds": 3 });
    let response = place.propose(&place.admin, &body, Some(60)).await;
    assert_eq!(response.status(), 201);
    let proposal: Value = response.json().await.unwrap();
    assert_eq!(proposal["status"], "ready");
    proposal["id"].as_str().unwrap().to_owned()
}

async fn publish(place: &Restaurant, token: &str, id: &str) -> reqwest::Response {
    let path = format!("/api/planning/schedule-proposals/{id}/publish");
    place.app.post(&path).bearer_auth(token).send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proposal_goes_to_7shifts_as_drafts_once_even_when_a_publish_is_cut_off() {
    let provider = opsd_tests::seven_shifts_fake::Fake7ShiftsServer::start().await;
    let app = TestApp::spawn_with(provider.configure()).await;
    let place = restaurant_on(app, Some("100")).await.with_history().await;
    assert_eq!(place.app.get_json("/cron/sync-7shifts-roles", opsd_tests::CRON_SECRET).await["status"], "ok");
    let id = ready_proposal(&place, place.week).await;
    let proposal = place.app.get_json(&format!("/api/planning/schedule-proposals/{id}"), &place.admin).await;
    let shifts = proposal["shifts"].as_array().unwrap().len() as u32;

    // The provider takes the first create and loses its answer: the publish stops, to be resumed.
    provider.fake.fail_creates(1);
    problem(publish(&place, &place.admin, &id).await, 502, "provider_failed").await;
    assert_eq!(provider.fake.created(), 1);
    // Resumed: the lost one is found by its note, the rest are created; again, nothing is created.
    let resumed: Value = publish(&place, &place.admin, &id).await.json().await.unwrap();
    assert_eq!(resumed, json!({ "created": shifts - 1, "alreadySent": 1 }));
    let again: Value = publish(&place, &place.admin, &id).await.json().await.unwrap();
    assert_eq!(again, json!({ "created": 0, "alreadySent": shifts }));
    assert_eq!(provider.fake.created(), shifts, "one draft per shift, however often it was published");

    // As 7shifts holds them: drafts, with the role's id at the location and the proposal's note.
    let drafts = provider.fake.shifts("100");
    assert_eq!(drafts.len() as u32, shifts);
    for draft in &drafts {
        assert_eq!(draft["draft"], true);
        let role = if draft["user_id"].as_str().unwrap().starts_with('c') { 4 } else { 3 };
        assert_eq!(draft["role_id"], role, "{draft}");
        assert!(draft["notes"].as_str().unwrap().starts_with(&format!("opsd schedule proposal {id} shift ")));
    }
    // The next sync reads them back as drafts: scheduled, never labor.
    assert_eq!(place.app.get_json("/cron/sync-schedule-from-7shifts", opsd_tests::CRON_SECRET).await["status"], "ok");
    let synced = place.app.text_pairs("SELECT is_draft::text, count(*)::text FROM schedule_shifts WHERE provider_shift_id ~ '^[0-9]+$' GROUP BY 1").await;
    assert_eq!(synced, [("true".to_owned(), shifts.to_string())]);
    let variance = place
        .app
        .get(&format!("/api/analytics/variance?teamId={TEAM}&weekOf={}&locationId={}", place.week, place.location))
        .bearer_auth(API_KEY);
    let variance: Value = variance.send().await.unwrap().json().await.unwrap();
    assert_eq!(variance["totals"]["total"]["scheduledHours"], 0.0, "drafts are not labor: {variance}");

    // The manager publishes them in 7shifts: the next sync makes them the week's scheduled labor,
    // which the variance sets against the punches as any other shift.
    let published: Vec<Value> = drafts
        .into_iter()
        .map(|mut draft| {
            draft["draft"] = json!(false);
            draft
        })
        .collect();
    provider.fake.set_shifts("100", published);
    assert_eq!(place.app.get_json("/cron/sync-schedule-from-7shifts", opsd_tests::CRON_SECRET).await["status"], "ok");
    let variance = place
        .app
        .get(&format!("/api/analytics/variance?teamId={TEAM}&weekOf={}&locationId={}", place.week, place.location))
        .bearer_auth(API_KEY);
    let variance: Value = variance.send().await.unwrap().json().await.unwrap();
    let scheduled = variance["totals"]["total"]["scheduledHours"].as_f64().unwrap();
    assert!((scheduled - proposal["week"]["hours"].as_f64().unwrap()).abs() < 0.01, "{variance}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_publish_that_cannot_go_is_refused_and_nothing_reaches_7shifts() {
    let provider = opsd_tests::seven_shifts_fake::Fake7ShiftsServer::start().await;
    let app = TestApp::spawn_with(provider.configure()).await;
    let place = restaurant_on(app, Some("100")).await.with_history().await;
    // Last week: planned after the fact (a backtest), but past sending.
    let last_week = ready_proposal(&place, place.week - Duration::days(7)).await;
    problem(publish(&place, &place.admin, &last_week).await, 409, "week_passed").await;
    let current = ready_proposal(&place, place.week).await;
    let member = place.app.tokens.member("user_member", TEAM);
    problem(publish(&place, &member, &current).await, 403, "forbidden").await;
    let stranger = place.app.tokens.admin("user_other", "org_2");
    problem(publish(&place, &stranger, &current).await, 404, "not_found").await;
    problem(publish(&place, &place.admin, &uuid::Uuid::nil().to_string()).await, 404, "not_found").await;
    assert_eq!(provider.fake.created(), 0);

    // A location not linked to a 7shifts location.
    let unlinked = restaurant().await.with_history().await;
    let id = ready_proposal(&unlinked, unlinked.week).await;
    problem(publish(&unlinked, &unlinked.admin, &id).await, 422, "not_linked").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_teams_rules_are_refused_out_of_bounds_and_plan_its_weeks_once_set() {
    let place = restaurant().await.with_history().await;
    let defaults = place.app.get_json("/api/planning/rules", &place.admin).await;
    assert_eq!(
        defaults,
        json!({ "maxWeeklyHours": 40.0, "minRestHours": 10.0, "maxDaysInARow": 6, "minShiftHours": 4.0,
                "noticeDays": 14, "changePremium": 15.0, "preferenceWeight": 5.0,
                "understaffedSalesAtRiskPct": 70, "setByTeam": false })
    );
    let rules = |changes: Value| {
        let mut body = json!({ "maxWeeklyHours": 20, "minRestHours": 11, "maxDaysInARow": 5, "minShiftHours": 4,
                               "noticeDays": 7, "changePremium": 20, "preferenceWeight": 5,
                               "understaffedSalesAtRiskPct": 70 });
        body.as_object_mut().unwrap().extend(changes.as_object().unwrap().clone());
        body
    };
    let put = |token: String, body: Value| {
        let request = place.app.put("/api/planning/rules").bearer_auth(token).json(&body);
        async move { request.send().await.unwrap() }
    };
    for (changes, field) in [
        (json!({ "maxWeeklyHours": 100 }), "maxWeeklyHours"),
        (json!({ "maxWeeklyHours": -5 }), "maxWeeklyHours"),
        (json!({ "minRestHours": 30 }), "minRestHours"),
        (json!({ "maxDaysInARow": 0 }), "maxDaysInARow"),
        (json!({ "minShiftHours": 0.5 }), "minShiftHours"),
        (json!({ "noticeDays": 60 }), "noticeDays"),
        (json!({ "changePremium": -1 }), "changePremium"),
        (json!({ "preferenceWeight": 5000 }), "preferenceWeight"),
        (json!({ "understaffedSalesAtRiskPct": 300 }), "understaffedSalesAtRiskPct"),
    ] {
        let body = problem(put(place.admin.clone(), rules(changes)).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], field, "{body}");
    }
    problem(put(place.admin.clone(), rules(json!({ "overtime": true }))).await, 400, "validation_failed").await;
    problem(put(place.admin.clone(), json!({ "maxWeeklyHours": 20 })).await, 400, "validation_failed").await;
    let member = place.app.tokens.member("user_member", TEAM);
    problem(put(member, rules(json!({}))).await, 403, "forbidden").await;
    assert_eq!(place.app.count("planning_rules").await, 0, "nothing written");

    let response = put(place.admin.clone(), rules(json!({}))).await;
    assert_eq!(response.status(), 200);
    let set: Value = response.json().await.unwrap();
    assert_eq!((set["maxWeeklyHours"].as_f64(), set["setByTeam"].as_bool()), (Some(20.0), Some(true)));
    assert_eq!(place.app.get_json("/api/planning/rules", &place.admin).await, set);
    // Another team still plans under the defaults.
    let other = place.app.tokens.admin("user_other", "org_2");
    assert_eq!(place.app.get_json("/api/planning/rules", &other).await["setByTeam"], false);

    // The team's 20 hours hold in its next proposal.
    let response = place.propose(&place.admin, &place.week_body(5), Some(60)).await;
    assert_eq!(response.status(), 201);
    let proposal: Value = response.json().await.unwrap();
    assert_eq!(proposal["status"], "ready", "{proposal}");
    for key in ["s1", "s2", "s3", "s4", "s5", "c1", "c2"] {
        assert!(hours_of(&proposal, key) <= 20.0, "{key}: {proposal}");
    }
    assert!(!proposal["shifts"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_managers_shift_times_are_refused_when_wrong_and_plan_the_week_once_set() {
    let place = restaurant().await.with_history().await;
    let path = format!("/api/planning/shift-times?locationId={}", place.location);
    let from_history = place.app.get_json(&path, &place.admin).await;
    let shifts = from_history["shifts"].as_array().unwrap();
    assert!(shifts.len() >= 3, "{from_history}");
    assert!(shifts.iter().all(|s| s["source"] == "history"));
    let dinner = shifts.iter().find(|s| s["department"] == "FOH" && s["block"] == "Dinner").unwrap();
    assert_eq!(dinner["start"], "17:00", "{from_history}");

    let put = |token: String, body: Value| {
        let request = place.app.put("/api/planning/shift-times").bearer_auth(token).json(&body);
        async move { request.send().await.unwrap() }
    };
    let location = place.location.clone();
    let times = |shifts: Value| json!({ "locationId": location, "shifts": shifts });
    let time =
        |start: &str, hours: f64| json!({ "department": "FOH", "block": "Dinner", "start": start, "hours": hours });
    for (body, field) in [
        (times(json!([time("16:30", 5.0), time("17:00", 6.0)])), "shifts[1]"),
        (times(json!([time("25:00", 5.0)])), "shifts[0].start"),
        (times(json!([time("4pm", 5.0)])), "shifts[0].start"),
        (times(json!([time("16:30", 20.0)])), "shifts[0].hours"),
        (times(json!([time("16:30", 0.5)])), "shifts[0].hours"),
    ] {
        let refused = problem(put(place.admin.clone(), body).await, 400, "validation_failed").await;
        assert_eq!(refused["errors"][0]["field"], field, "{refused}");
    }
    let brunch = times(json!([{ "department": "FOH", "block": "Brunch", "start": "10:00", "hours": 4 }]));
    problem(put(place.admin.clone(), brunch).await, 400, "validation_failed").await;
    let elsewhere = json!({ "locationId": uuid::Uuid::nil(), "shifts": [time("16:30", 5.0)] });
    problem(put(place.admin.clone(), elsewhere).await, 404, "not_found").await;
    let member = place.app.tokens.member("user_member", TEAM);
    problem(put(member, times(json!([time("16:30", 5.0)]))).await, 403, "forbidden").await;
    assert_eq!(place.app.count("planning_shift_times").await, 0, "nothing written");

    // Dinner from 16:30 for 5 hours: the week's front-of-house dinners start then.
    let response = put(place.admin.clone(), times(json!([time("16:30", 5.0)]))).await;
    assert_eq!(response.status(), 200);
    let set: Value = response.json().await.unwrap();
    let dinner = set["shifts"].as_array().unwrap().iter().find(|s| s["department"] == "FOH" && s["block"] == "Dinner");
    assert_eq!(
        dinner,
        Some(&json!({ "department": "FOH", "block": "Dinner", "start": "16:30", "hours": 5.0, "source": "set" }))
    );
    assert_eq!(place.app.get_json(&path, &place.admin).await, set);
    let response = place.propose(&place.admin, &place.week_body(5), Some(60)).await;
    assert_eq!(response.status(), 201);
    let proposal: Value = response.json().await.unwrap();
    let dinners: Vec<&Value> = proposal["shifts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["department"] == "FOH" && s["block"] == "Dinner")
        .collect();
    assert!(!dinners.is_empty(), "{proposal}");
    let zone = time_tz::timezones::get_by_name(ZONE).unwrap();
    for dinner in &dinners {
        let start =
            OffsetDateTime::parse(dinner["start"].as_str().unwrap(), &time::format_description::well_known::Rfc3339)
                .unwrap();
        let local = time_tz::OffsetDateTimeExt::to_timezone(&start, zone);
        assert_eq!((local.hour(), local.minute()), (16, 30), "{dinner}");
    }
    assert!(dinners.iter().all(|s| [4.0, 5.0].contains(&s["hours"].as_f64().unwrap())), "whole or short: {proposal}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_proposal_asked_for_again_under_its_idempotency_key_is_queued_once() {
    let place = restaurant().await.with_history().await;
    let ask = || {
        place
            .app
            .post("/api/planning/schedule-proposals")
            .bearer_auth(&place.admin)
            .header("Idempotency-Key", "plan-week-1")
            .json(&place.week_body(3))
            .send()
    };
    let first = ask().await.unwrap();
    assert_eq!(first.status(), 202);
    let first: Value = first.json().await.unwrap();
    let again = ask().await.unwrap();
    assert_eq!(again.status(), 202);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    assert_eq!(place.app.count("schedule_proposals").await, 1);
}
