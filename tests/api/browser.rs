//! The console in a real browser: Debian's chromium driven by the pinned playwright-core
//! (`tests/browser`), JavaScript off, against a seeded team. Screenshots go to
//! `target/screenshots/`.

use serde_json::json;

use opsd_core::Department;
use opsd_tests::{API_KEY, CRON_SECRET, TestApp, TestShift};

#[tokio::test(flavor = "multi_thread")]
async fn the_console_works_in_chromium_and_never_leaves_its_origin() {
    let app = TestApp::spawn().await;
    let location = app.create_location("org_1", "downtown").await;
    let rows: Vec<_> = (0..7)
        .map(|day| json!({ "locationId": location, "date": format!("2026-11-{}", 21 + day), "block": "Dinner", "food": 900 + 150 * day, "beverage": 80, "other": 0 }))
        .collect();
    assert_eq!(
        app.post_json("/api/analytics/sales", API_KEY, &json!({ "teamId": "org_1", "rows": rows })).await.status(),
        200
    );
    let goals: Vec<_> =
        (0..7).map(|d| json!({ "dayOfWeek": d, "salesGoal": 1400, "laborPctTarget": 28, "splhTarget": 55 })).collect();
    let goals = json!({ "teamId": "org_1", "goals": goals });
    assert_eq!(app.put("/api/analytics/goals").bearer_auth(API_KEY).json(&goals).send().await.unwrap().status(), 200);
    // Two shifts a day (FOH and BOH), so labor %, SPLH and the goals have numbers.
    const IDS: [&str; 14] = ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13"];
    let shifts: Vec<TestShift> = IDS
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let day = time::macros::datetime!(2026-11-21 16:00 UTC) + time::Duration::days(i as i64 / 2);
            let (department, hours, wage_cents) =
                if i % 2 == 0 { (Department::Foh, 6, 1500) } else { (Department::Boh, 7, 1800) };
            TestShift {
                id,
                start: day,
                end: day + time::Duration::hours(hours),
                department,
                wage_cents,
                unpaid_break_minutes: 30,
                draft: false,
            }
        })
        .collect();
    app.import_shifts(&location, "America/Chicago", &shifts).await;
    let member = app.tokens.member("user_1", "org_1");
    let report = json!({ "locationId": location, "type": "Spill / Slip Hazard", "severity": "medium", "notes": "Wet floor by the walk-in" });
    let incident: serde_json::Value = app.post_json("/api/incidents", &member, &report).await.json().await.unwrap();
    assert_eq!(app.get("/cron/check-compliance").bearer_auth(CRON_SECRET).send().await.unwrap().status(), 200);
    let failed = "00000000-0000-7000-8000-0000000000f1";
    app.pg()
        .await
        .execute(
            "INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, payload, \
             state, attempts, available_at, received_at, last_error) VALUES ($1::text::uuid, 'evt_browser', 'canonical', \
             'feedback.submitted', 'x', 'org_1', $2::text::uuid, '{}'::jsonb, 'failed', 8, now(), now(), 'store_unavailable')",
            &[&failed, &location],
        )
        .await
        .unwrap();

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let browser = root.join("browser");
    assert!(browser.join("node_modules/playwright-core").exists(), "run `npm ci` in tests/browser (just test does)");
    let scenario = tempfile_path("console-scenario.json");
    let values = json!({
        "adminToken": app.tokens.admin("user_admin", "org_1"),
        "memberToken": member,
        "operatorToken": app.tokens.member("user_operator", "org_ops"),
        "locationId": location,
        "weekOf": "2026-11-21",
        "incidentId": incident["id"],
        "failedEventId": failed,
    });
    std::fs::write(&scenario, values.to_string()).unwrap();
    let shots = root.join("../target/screenshots");
    let output = tokio::process::Command::new("node")
        .arg(browser.join("console.mjs"))
        .arg(app.url(""))
        .arg(&scenario)
        .arg(&shots)
        .output()
        .await
        .expect("node runs");
    let _ = std::fs::remove_file(&scenario);
    assert!(
        output.status.success(),
        "the browser run failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for shot in
        ["console-week.png", "console-compliance.png", "console-incident.png", "console-jobs.png", "console-queue.png"]
    {
        assert!(shots.join(shot).exists(), "{shot} was taken");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_fills_every_console_page_and_each_passes_axe() {
    let app = TestApp::spawn_with(|config| config.operator_user_ids = vec!["user_demo".into()]).await;
    // Five weeks: the proposal planned from the console needs four weeks of sales before its week.
    let size = opsd::seed::DemoSize { locations: 1, weeks: 5 };
    let demo = opsd::seed::seed_demo(&app.db(), size).await.expect("the demo seeds");
    let statuses = app.text_pairs("SELECT status, count(*)::text FROM incidents GROUP BY 1 ORDER BY 1").await;
    let statuses: Vec<&str> = statuses.iter().map(|(status, _)| status.as_str()).collect();
    assert_eq!(statuses, ["deferred", "investigating", "reported", "resolved"], "incidents in every status");
    assert!(app.count("incident_comments").await >= 5, "with comments");
    // The jobs run once each, as `just run` does, so the jobs page has a history.
    for job in opsd::jobs::listing().all() {
        app.get(&format!("/cron/{}", job.name())).bearer_auth(CRON_SECRET).send().await.unwrap();
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let browser = root.join("browser");
    assert!(browser.join("node_modules/axe-core").exists(), "run `npm ci` in tests/browser (just test does)");
    let shots = root.join("../target/screenshots");
    let output = tokio::process::Command::new("node")
        .arg(browser.join("demo.mjs"))
        .arg(app.url(""))
        .arg(app.tokens.admin("user_demo", &demo.team_id))
        .arg(&shots)
        .output()
        .await
        .expect("node runs");
    let axe = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "the demo's pages:\n{axe}\n{}", String::from_utf8_lossy(&output.stderr));
    let results: serde_json::Value = serde_json::from_str(axe.trim()).expect("axe's results");
    assert_eq!(results.as_object().unwrap().len(), 9, "every page was audited: {results}");
    for page in ["week", "plans", "plan", "compliance", "compliance-current", "incidents", "incident", "jobs", "queue"]
    {
        assert!(shots.join(format!("demo-{page}.png")).exists(), "demo-{page}.png was taken");
    }
}

fn tempfile_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("{}-{name}", uuid::Uuid::new_v4()))
}
