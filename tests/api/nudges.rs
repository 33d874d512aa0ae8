use std::time::Duration;

use opsd_core::Department;
use opsd_tests::push_fake::FakePushService;
use opsd_tests::{APP_ORIGIN, CRON_SECRET, TestApp, TestShift, problem};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

struct Setup {
    app: TestApp,
    chat: MockServer,
    location: String,
    admin: String,
}

/// A team with one UTC location (so its today is UTC's) and a chat answering `status` after `delay`.
async fn setup(status: u16, delay: Duration) -> Setup {
    let app = TestApp::spawn().await;
    let chat = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(status).set_delay(delay)).mount(&chat).await;
    let admin = app.tokens.admin("user_admin", "org_1");
    let location = app.create_location_in("org_1", "Downtown", "UTC").await;
    app.put("/api/team/settings")
        .bearer_auth(&admin)
        .json(&json!({ "chatWebhookUrl": format!("{}/hook", chat.uri()) }))
        .send()
        .await
        .unwrap();
    Setup { app, chat, location, admin }
}

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

fn last_saturday_week() -> time::Date {
    let back = (today().weekday().number_days_from_sunday() + 1) % 7;
    today() - time::Duration::days(i64::from(back) + 7)
}

fn shift_at(id: &'static str, date: time::Date, hour: u8) -> TestShift {
    let start = date.with_hms(hour, 0, 0).unwrap().assume_utc();
    TestShift {
        id,
        start,
        end: start + time::Duration::hours(5),
        department: Department::Foh,
        wage_cents: 1500,
        unpaid_break_minutes: 0,
        draft: false,
    }
}

impl Setup {
    async fn run(&self, job: &str) -> String {
        let response = self.app.get(job).bearer_auth(CRON_SECRET).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
        response.text().await.unwrap()
    }

    async fn chat_texts(&self) -> Vec<String> {
        self.chat
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["text"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn shift_report(&self, date: time::Date, shift: &str, hero: &str) {
        let response = self.app.post_json("/api/reports/shift", self.app.tokens.member("user_staff", "org_1"), &json!({ "locationId": self.location, "date": date.to_string(), "shift": shift, "actualSales": 100, "goalSales": 100, "hero": hero })).await;
        assert_eq!(response.status(), 201);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reminder_nudges_each_missing_report_once() {
    let setup = setup(200, Duration::ZERO).await;
    setup
        .app
        .import_shifts(
            &setup.location,
            "UTC",
            &[shift_at("a", today(), 9), shift_at("b", today(), 17), shift_at("c", today(), 18)],
        )
        .await;
    setup.shift_report(today(), "morning", "").await;
    assert_eq!(setup.run("/cron/report-reminder").await, "ok: 2 reminders sent, 0 already nudged, 0 failed");
    assert_eq!(setup.run("/cron/report-reminder").await, "ok: 0 reminders sent, 2 already nudged, 0 failed");
    let texts = setup.chat_texts().await;
    assert_eq!(texts.len(), 2);
    assert!(texts.iter().any(|t| t.contains("evening shift report for Downtown")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("manager report")), "{texts:?}");
    let runs: i64 = setup
        .app
        .pg()
        .await
        .query_one("SELECT count(*) FROM job_runs WHERE job = 'report-reminder'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(runs, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_or_hanging_chat_is_counted_and_the_job_finishes() {
    for (status, delay) in [(500, Duration::ZERO), (200, Duration::from_secs(3))] {
        let setup = setup(status, delay).await;
        setup.app.import_shifts(&setup.location, "UTC", &[shift_at("a", today(), 9)]).await;
        let started = std::time::Instant::now();
        assert_eq!(setup.run("/cron/report-reminder").await, "ok: 0 reminders sent, 0 already nudged, 2 failed");
        assert!(started.elapsed() < Duration::from_secs(3), "the chat timeout bounds the job");
        assert_eq!(
            setup.run("/cron/report-reminder").await,
            "ok: 0 reminders sent, 2 already nudged, 0 failed",
            "never twice"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn compliance_stores_last_weeks_filing_and_nudges_staff_and_managers() {
    let setup = setup(200, Duration::ZERO).await;
    let saturday = last_saturday_week();
    setup
        .app
        .import_shifts(
            &setup.location,
            "UTC",
            &[
                shift_at("a", saturday, 9),
                shift_at("b", saturday, 17),
                shift_at("c", saturday + time::Duration::days(6), 12),
            ],
        )
        .await;
    setup.shift_report(saturday, "morning", "").await;
    assert_eq!(setup.run("/cron/check-compliance").await, "ok: 2 nudges sent, 0 already nudged, 0 failed");
    let row = setup
        .app
        .pg()
        .await
        .query_one("SELECT week_start::text, expected_shift_reports, filed_shift_reports, expected_manager_reports, filed_manager_reports FROM compliance_weeks", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), saturday.to_string());
    assert_eq!((row.get::<_, i32>(1), row.get::<_, i32>(2), row.get::<_, i32>(3), row.get::<_, i32>(4)), (3, 1, 2, 0));
    assert_eq!(setup.run("/cron/check-compliance").await, "ok: 0 nudges sent, 2 already nudged, 0 failed");
    let texts = setup.chat_texts().await;
    assert!(texts.iter().any(|t| t.contains("1 of 3 shift reports")), "{texts:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn last_weeks_heroes_get_one_mvp_message_with_ties_named_together() {
    let setup = setup(200, Duration::ZERO).await;
    let saturday = last_saturday_week();
    setup.shift_report(saturday, "morning", "Maria").await;
    setup.shift_report(saturday, "evening", " maria ").await;
    setup.shift_report(saturday + time::Duration::days(1), "morning", "Ben").await;
    setup.shift_report(saturday + time::Duration::days(1), "evening", "ben").await;
    setup.shift_report(saturday + time::Duration::days(7), "morning", "Maria").await;
    assert_eq!(setup.run("/cron/aggregate-heroes").await, "ok: 1 MVP messages sent, 0 already nudged, 0 failed");
    assert_eq!(setup.run("/cron/aggregate-heroes").await, "ok: 0 MVP messages sent, 1 already nudged, 0 failed");
    let texts = setup.chat_texts().await;
    assert_eq!(texts.len(), 1);
    assert!(texts[0].contains("Maria and Ben (2 mentions)"), "{}", texts[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn overlapping_runs_skip_and_the_jobs_need_the_secret() {
    let setup = setup(200, Duration::ZERO).await;
    for job in [
        "/cron/report-reminder",
        "/cron/check-compliance",
        "/cron/aggregate-heroes",
        "/cron/publish-scheduled-announcements",
    ] {
        problem(setup.app.get(job).send().await.unwrap(), 401, "unauthorized").await;
    }
    let pg = setup.app.pg().await;
    pg.execute("SELECT pg_advisory_lock(hashtextextended('report-reminder', 0))", &[]).await.unwrap();
    let (a, b) = futures::join!(setup.run("/cron/report-reminder"), setup.run("/cron/check-compliance"));
    assert_eq!(a, "skipped: already running");
    assert!(b.starts_with("ok:"), "another job is not blocked: {b}");
    assert_eq!(setup.app.count("nudges").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn due_announcements_are_published_once_and_pushed_to_the_team() {
    let setup = setup(200, Duration::ZERO).await;
    let push = FakePushService::start().await;
    let device = push.subscriber(201).await;
    let member_cookie = format!("__session={}", setup.app.tokens.member("user_staff", "org_1"));
    setup
        .app
        .post("/api/push/subscribe")
        .header("cookie", member_cookie)
        .header("origin", APP_ORIGIN)
        .json(&json!({ "endpoint": device.endpoint, "keys": { "p256dh": device.p256dh, "auth": device.auth } }))
        .send()
        .await
        .unwrap();
    let rfc = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let create = |title: &str, at: time::OffsetDateTime, token: &str| {
        setup
            .app
            .post("/api/announcements")
            .bearer_auth(token)
            .json(&json!({ "title": title, "body": "New menu Friday", "publishAt": rfc(at) }))
            .send()
    };
    let due = create("Menu", time::OffsetDateTime::now_utc() - time::Duration::minutes(1), &setup.admin).await.unwrap();
    assert_eq!(due.status(), 201);
    assert_eq!(due.json::<Value>().await.unwrap()["publishedAt"], Value::Null);
    create("Later", time::OffsetDateTime::now_utc() + time::Duration::hours(1), &setup.admin).await.unwrap();
    problem(
        create("x", time::OffsetDateTime::now_utc(), &setup.app.tokens.member("user_staff", "org_1")).await.unwrap(),
        403,
        "forbidden",
    )
    .await;
    let bad = setup
        .app
        .post_json("/api/announcements", &setup.admin, &json!({ "title": "x", "body": "y", "publishAt": "tomorrow" }))
        .await;
    assert_eq!(problem(bad, 400, "validation_failed").await["errors"][0]["field"], "publishAt");

    let run: Value = setup.app.get_json("/cron/publish-scheduled-announcements", CRON_SECRET).await;
    assert_eq!(run, json!({ "status": "ok", "published": 1, "pushed": 1 }));
    let again: Value = setup.app.get_json("/cron/publish-scheduled-announcements", CRON_SECRET).await;
    assert_eq!(again["published"], 0);
    assert_eq!(push.delivered().len(), 1);
    assert_eq!(push.delivered()[0].payload["title"], "Menu");
    let listed: Value = setup.app.get_json("/api/announcements", &setup.admin).await;
    let published: Vec<bool> = listed.as_array().unwrap().iter().map(|a| !a["publishedAt"].is_null()).collect();
    assert_eq!(published, [false, true], "latest first: the later one is not published yet");
}

#[tokio::test(flavor = "multi_thread")]
async fn announcement_pushes_leave_through_an_outbox_once_each_and_outlive_a_dead_instance() {
    let setup = setup(200, Duration::ZERO).await;
    let push = FakePushService::start().await;
    for user in ["user_a", "user_b"] {
        let device = push.subscriber(201).await;
        let response = setup
            .app
            .post("/api/push/subscribe")
            .header("cookie", format!("__session={}", setup.app.tokens.member(user, "org_1")))
            .header("origin", APP_ORIGIN)
            .json(&json!({ "endpoint": device.endpoint, "keys": { "p256dh": device.p256dh, "auth": device.auth } }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    let rfc = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap();
    let due = rfc(time::OffsetDateTime::now_utc() - time::Duration::minutes(1));
    let create = |title: &'static str| {
        setup
            .app
            .post("/api/announcements")
            .bearer_auth(&setup.admin)
            .json(&json!({ "title": title, "body": "Body", "publishAt": due }))
            .send()
    };
    let run = || async { setup.app.get_json("/cron/publish-scheduled-announcements", CRON_SECRET).await };
    create("First").await.unwrap();
    assert_eq!(run().await, json!({ "status": "ok", "published": 1, "pushed": 2 }));
    let pg = setup.app.pg().await;
    let outbox: Vec<(String, String)> =
        setup.app.text_pairs("SELECT user_id, state FROM announcement_pushes ORDER BY user_id").await;
    assert_eq!(
        outbox,
        [("user_a".into(), "done".into()), ("user_admin".into(), "done".into()), ("user_b".into(), "done".into())],
        "one row per member, written with the publish"
    );
    assert_eq!(run().await["pushed"], 0, "a rerun pushes nothing again");
    assert_eq!(push.delivered().len(), 2);

    // An instance that published and claimed the pushes, then died: after the lease they go out.
    let second: Value = create("Second").await.unwrap().json().await.unwrap();
    let third: Value = create("Third").await.unwrap().json().await.unwrap();
    for (announcement, available) in [(&second, "now() - interval '1 second'"), (&third, "now() + interval '1 minute'")]
    {
        pg.batch_execute(&format!(
            "UPDATE announcements SET published_at = now() WHERE id = '{id}';
             INSERT INTO announcement_pushes (announcement_id, user_id, attempts, available_at, created_at)
               SELECT '{id}', user_id, 1, {available}, now() FROM memberships WHERE team_id = 'org_1'",
            id = announcement["id"].as_str().unwrap()
        ))
        .await
        .unwrap();
    }
    assert_eq!(run().await, json!({ "status": "ok", "published": 0, "pushed": 2 }));
    let titles: Vec<String> =
        push.delivered().iter().map(|d| d.payload["title"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        titles,
        ["First", "First", "Second", "Second"],
        "the dead instance's pushes, once; a live lease is left alone"
    );
}
