//! The operator console: who may open which page, the week page's numbers against the API's, an
//! incident's status changed by its form, the jobs page, and the queue's Retry.

use reqwest::header::{CONTENT_TYPE, COOKIE, ORIGIN};
use serde_json::{Value, json};

use opsd_tests::{API_KEY, CRON_SECRET, TestApp};

fn cookie(token: String) -> String {
    format!("__session={token}")
}

async fn html(app: &TestApp, path: &str, token: String) -> (u16, String) {
    let response = app.get(path).header(COOKIE, cookie(token)).send().await.unwrap();
    let status = response.status().as_u16();
    let kind = response.headers()[CONTENT_TYPE].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/html"), "{path} answers HTML, not data: {kind}");
    (status, response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn each_page_is_refused_as_a_page_to_who_may_not_see_it() {
    let app = TestApp::spawn().await;
    let member = || app.tokens.member("user_1", "org_1");
    for page in ["/console/week", "/console/jobs", "/console/queue"] {
        let (status, body) = html(&app, page, member()).await;
        assert_eq!(status, 403, "{page}");
        assert!(body.contains("403"), "{page}: {body}");
    }
    let admin = app.tokens.admin("user_1", "org_1");
    assert_eq!(html(&app, "/console/jobs", admin).await.0, 403, "an admin is not an operator");
    let anonymous = app.get("/console/incidents").send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.text().await.unwrap().contains("Sign in"));
    assert_eq!(html(&app, "/console/incidents", member()).await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_week_page_shows_the_apis_numbers_for_the_same_week() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let rows: Vec<Value> = ["2026-11-21", "2026-11-22", "2026-11-25"]
        .iter()
        .enumerate()
        .map(|(i, date)| json!({ "locationId": location, "date": date, "block": "Dinner", "food": 1000 + 250 * i, "beverage": 120.5, "other": 0 }))
        .collect();
    let ingested = app.post_json("/api/analytics/sales", API_KEY, &json!({ "teamId": "org_1", "rows": rows })).await;
    assert_eq!(ingested.status(), 200);
    let goals = json!({ "teamId": "org_1", "goals": (0..7).map(|d| json!({ "dayOfWeek": d, "salesGoal": 1500, "laborPctTarget": 25, "splhTarget": 60 })).collect::<Vec<_>>() });
    assert_eq!(app.put("/api/analytics/goals").bearer_auth(API_KEY).json(&goals).send().await.unwrap().status(), 200);

    let api = app
        .get_json(&format!("/api/analytics/optimization?teamId=org_1&weekOf=2026-11-21&locationId={location}"), API_KEY)
        .await;
    let path = format!("/console/week?weekOf=2026-11-21&locationId={location}");
    let (status, page) = html(&app, &path, app.tokens.admin("user_1", "org_1")).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Week of 2026-11-21"));
    assert_eq!(page.matches("class=\"bar\" data-day").count(), 7, "seven days");
    assert_eq!(page.matches("class=\"goal\" data-goal").count(), 7, "a goal on each day");
    for day in api["dailySummary"].as_array().unwrap() {
        let sales = day["sales"].as_f64().unwrap();
        let shown = format!("data-sales=\"{}\"", opsd_core::Decimal::try_from(sales).unwrap().normalize());
        assert!(page.contains(&shown), "{} shows {sales}", day["day"]);
    }
    assert!(page.contains("no labor hours scheduled"), "a missing SPLH says why in words");
    assert!(page.contains("<table"), "the chart's numbers as a table");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_week_page_sets_worked_against_scheduled_hours_as_the_variance_api_does() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    // A punch as the 7shifts sync stores it: 6.5 worked hours at $15.50 on the week's Saturday.
    app.pg()
        .await
        .execute(
            "INSERT INTO time_punches (location_id, provider_punch_id, employee_key, department, business_date,
                                       clocked_in, clocked_out, approved, unpaid_break_minutes, worked_hours,
                                       hourly_wage, synced_at)
             VALUES ($1::text::uuid, '1', '7shifts:7', 'FOH', '2026-11-21', '2026-11-21T16:00:00Z',
                     '2026-11-21T23:00:00Z', true, 30, 6.50, 15.50, now())",
            &[&location],
        )
        .await
        .unwrap();
    let api = app
        .get_json(&format!("/api/analytics/variance?teamId=org_1&weekOf=2026-11-21&locationId={location}"), API_KEY)
        .await;
    assert_eq!(api["days"][0]["total"]["actualHours"], 6.5);
    let path = format!("/console/week?weekOf=2026-11-21&locationId={location}");
    let (status, page) = html(&app, &path, app.tokens.admin("user_1", "org_1")).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Scheduled against worked"));
    assert_eq!(page.matches("data-worked=\"6.5\"").count(), 2, "Saturday's row and the week's total");
    assert!(page.contains("$100.75 over"), "6.5 h at $15.50 against nothing scheduled");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_changes_an_incidents_status_with_its_form_and_only_from_this_origin() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let member = app.tokens.member("user_1", "org_1");
    let body = json!({ "locationId": location, "type": "Injury", "severity": "high", "notes": "Cut on the slicer" });
    let incident: Value = app.post_json("/api/incidents", &member, &body).await.json().await.unwrap();
    let id = incident["id"].as_str().unwrap();

    let (status, list) = html(&app, "/console/incidents", member.clone()).await;
    assert_eq!(status, 200);
    assert!(list.contains(id) && list.contains("downtown") && list.contains("high"));
    let (_, page) = html(&app, &format!("/console/incidents/{id}"), member.clone()).await;
    assert!(page.contains("Cut on the slicer") && page.contains("data-status=\"reported\""));

    let post = |origin: String| {
        app.post(&format!("/console/incidents/{id}/status"))
            .header(COOKIE, cookie(member.clone()))
            .header(ORIGIN, origin)
            .form(&[("status", "investigating")])
    };
    let foreign = post("https://evil.example".into()).send().await.unwrap();
    assert_eq!(foreign.status(), 403, "a change from another origin is refused");
    let stored = app.get_json(&format!("/api/incidents/{id}"), &member).await;
    assert_eq!(stored["status"], "reported", "nothing changed");

    let own = app.url("").trim_end_matches('/').to_owned();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let request = post(own).build().unwrap();
    let changed = client.execute(request).await.unwrap();
    assert_eq!(changed.status(), 303);
    let stored = app.get_json(&format!("/api/incidents/{id}"), &member).await;
    assert_eq!(stored["status"], "investigating");
    assert_eq!(stored["statusHistory"][0]["to"], "investigating");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_sees_every_job_and_its_last_run() {
    let app = TestApp::spawn().await;
    let ran = app.get("/cron/check-compliance").bearer_auth(CRON_SECRET).send().await.unwrap();
    assert_eq!(ran.status(), 200);
    let (status, page) = html(&app, "/console/jobs", app.tokens.member("user_operator", "org_ops")).await;
    assert_eq!(status, 200, "{page}");
    for job in ["report-reminder", "check-compliance", "expire-coupons", "sync-schedule-from-7shifts"] {
        assert!(page.contains(&format!("data-job=\"{job}\"")), "{job} is listed");
    }
    assert!(page.contains("0 21 * * *") || page.contains("* * *"), "cron expressions are shown");
    let row = page.split("data-job=\"check-compliance\"").nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(row.contains("data-status=\"ok\""), "its last run: {row}");
    let never = page.split("data-job=\"aggregate-heroes\"").nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(never.contains("has never run"), "a job that never ran is an alarm: {never}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_retries_a_failed_guest_event_and_a_member_cannot() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let pg = app.pg().await;
    pg.execute(
        "INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, payload, \
         state, attempts, available_at, received_at, last_error) \
         VALUES ('00000000-0000-7000-8000-0000000000e1', 'evt_failed', 'canonical', 'feedback.submitted', 'x', 'org_1', \
         $1::text::uuid, '{}'::jsonb, 'failed', 8, now(), now(), 'store_unavailable')",
        &[&location],
    )
    .await
    .unwrap();
    let operator = app.tokens.member("user_operator", "org_ops");
    let (status, page) = html(&app, "/console/queue", operator.clone()).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("store_unavailable") && page.contains("feedback.submitted"));

    let own = app.url("").trim_end_matches('/').to_owned();
    let retry = |token: String| {
        app.post("/console/queue/00000000-0000-7000-8000-0000000000e1/retry")
            .header(COOKIE, cookie(token))
            .header(ORIGIN, own.clone())
    };
    let refused = retry(app.tokens.admin("user_1", "org_1")).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let state: String = pg.query_one("SELECT state FROM guest_events", &[]).await.unwrap().get(0);
    assert_eq!(state, "failed", "nothing changed");

    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let retried = client.execute(retry(operator).build().unwrap()).await.unwrap();
    assert_eq!(retried.status(), 303);
    let (state, attempts): (String, i32) = {
        let row = pg.query_one("SELECT state, attempts FROM guest_events", &[]).await.unwrap();
        (row.get(0), row.get(1))
    };
    assert_ne!(state, "failed", "queued again (or already taken by the worker)");
    assert!(attempts <= 1, "with fresh attempts");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_compliance_page_counts_last_weeks_reports_for_admins_only() {
    let app = TestApp::spawn().await;
    let location = app.create_location_in("org_1", "Downtown", "UTC").await;
    let elsewhere = app.create_location_in("org_2", "Uptown", "UTC").await;
    let last_week = opsd_core::Week::containing(time::OffsetDateTime::now_utc().date()).previous().start();
    let start = last_week.with_hms(9, 0, 0).unwrap().assume_utc();
    let shift = opsd_tests::TestShift {
        id: "c1",
        start,
        end: start + time::Duration::hours(6),
        department: opsd_core::Department::Foh,
        wage_cents: 1500,
        unpaid_break_minutes: 0,
        draft: false,
    };
    app.import_shifts(&location, "UTC", &[shift]).await;
    let (status, page) = html(&app, "/console/compliance", app.tokens.admin("user_1", "org_1")).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains(&format!("week of {last_week}")), "{page}");
    let grid = page.split(&format!("data-location=\"{location}\"")).nth(1).unwrap().split("</section>").next().unwrap();
    assert!(grid.contains("Downtown"), "{grid}");
    assert!(grid.contains("0 of 1"), "one shift report and one manager report were due, none filed: {grid}");
    // The week's first day (the shift's) is each row's first cell.
    let cell = |report: &str| {
        let row = grid.split(&format!("data-report=\"{report}\"")).nth(1).unwrap().split("</tr>").next().unwrap();
        row.split("<td").nth(1).unwrap().split("</td>").next().unwrap().to_owned()
    };
    assert!(cell("morning").contains("missing") && cell("manager").contains("missing"), "what is missing");
    assert!(cell("evening").contains("nothing owed"), "no evening shift, no evening report");
    assert_eq!(grid.matches("class=\"slot ").count(), 28, "seven days by four reports");
    let (_, current) = html(&app, "/console/compliance?week=current", app.tokens.admin("user_1", "org_1")).await;
    assert!(current.contains("This week's reports so far"), "{current}");
    assert!(!page.contains(&elsewhere) && !page.contains("Uptown"), "another team's location is not shown");
    assert_eq!(html(&app, "/console/compliance", app.tokens.member("user_2", "org_1")).await.0, 403);
}
