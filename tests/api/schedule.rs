use opsd_tests::seven_shifts_fake::{Fake7ShiftsServer, shift};
use opsd_tests::{API_KEY, CRON_SECRET, TestApp, problem};
use serde_json::{Value, json};

struct Setup {
    app: TestApp,
    provider: Fake7ShiftsServer,
    downtown: String,
    uptown: String,
}

async fn setup() -> Setup {
    let provider = Fake7ShiftsServer::start().await;
    let app = TestApp::spawn_with(provider.configure()).await;
    let admin = app.tokens.admin("user_1", "org_1");
    let mut ids = Vec::new();
    for (slug, provider_id) in [("downtown", "100"), ("uptown", "200")] {
        let response = app.post_json("/api/locations", &admin, &json!({ "name": slug, "slug": slug, "timezone": "America/Chicago", "schedulerLocationId": provider_id })).await;
        ids.push(response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned());
    }
    Setup { app, provider, downtown: ids[0].clone(), uptown: ids[1].clone() }
}

/// A day within the sync window, relative to today.
fn day(offset: i64) -> String {
    (time::OffsetDateTime::now_utc().date() + time::Duration::days(offset)).to_string()
}

fn at(offset: i64, time: &str) -> String {
    format!("{}T{time}Z", day(offset))
}

impl Setup {
    async fn sync(&self) -> Value {
        let response = self.app.get("/cron/sync-schedule-from-7shifts").bearer_auth(CRON_SECRET).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    async fn view(&self, slug: &str, query: &str) -> reqwest::Response {
        self.app.get(&format!("/api/schedule/{slug}?{query}")).bearer_auth(API_KEY).send().await.unwrap()
    }

    fn standard_week(&self) {
        self.provider.fake.set_shifts(
            "100",
            vec![
                shift(1, 7, 3, &at(0, "16:00:00"), &at(0, "22:00:00"), 1650, false),
                shift(2, 8, 4, &at(0, "15:00:00"), &at(0, "23:00:00"), 1900, false),
                shift(3, 7, 3, &at(1, "16:00:00"), &at(1, "22:00:00"), 1650, false),
                shift(4, 8, 4, &at(2, "02:30:00"), &at(2, "08:00:00"), 1900, true),
            ],
        );
        self.provider.fake.set_shifts("200", vec![shift(9, 7, 3, &at(0, "17:00:00"), &at(0, "21:00:00"), 1500, false)]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sync_inserts_then_changes_nothing_then_follows_edits_and_removals() {
    let setup = setup().await;
    let roles: Value = setup.app.get_json("/cron/sync-7shifts-roles", CRON_SECRET).await;
    assert_eq!(roles, json!({ "status": "ok", "inserted": 2, "updated": 0, "unchanged": 0 }));
    setup.standard_week();

    assert_eq!(
        setup.sync().await,
        json!({ "status": "ok", "inserted": 5, "updated": 0, "deleted": 0, "unchanged": 0, "failedLocations": [] })
    );
    let synced_at = sync_times(&setup).await;
    assert_eq!(
        setup.sync().await,
        json!({ "status": "ok", "inserted": 0, "updated": 0, "deleted": 0, "unchanged": 5, "failedLocations": [] })
    );
    let again = sync_times(&setup).await;
    assert_eq!(synced_at, again, "an unchanged sync writes nothing");

    setup.provider.fake.set_shifts(
        "100",
        vec![
            shift(1, 7, 3, &at(0, "16:00:00"), &at(0, "23:00:00"), 1650, false),
            shift(2, 8, 4, &at(0, "15:00:00"), &at(0, "23:00:00"), 1900, false),
            shift(4, 8, 4, &at(2, "02:30:00"), &at(2, "08:00:00"), 1900, true),
        ],
    );
    let report = setup.sync().await;
    assert_eq!(
        (report["updated"].as_u64(), report["deleted"].as_u64(), report["unchanged"].as_u64()),
        (Some(1), Some(1), Some(3))
    );

    let pg = setup.app.pg().await;
    let rows = pg.query("SELECT provider_shift_id, department, hours_worked::text, hourly_wage::text, is_draft, employee_name FROM schedule_shifts WHERE location_id = $1::text::uuid ORDER BY provider_shift_id", &[&setup.downtown]).await.unwrap();
    let summary: Vec<(String, String, String, String, bool, String)> =
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5))).collect();
    assert_eq!(summary[0], ("1".into(), "FOH".into(), "7.00".into(), "16.50".into(), false, "Ana Ruiz".into()));
    assert_eq!(summary[1].1, "BOH", "the role's department came from the roles sync");
    assert!(summary[2].4, "the draft is kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_location_is_left_untouched_and_the_run_is_partial() {
    let setup = setup().await;
    setup.standard_week();
    setup.sync().await;
    setup.provider.fake.set_shifts("200", vec![]);
    setup.provider.fake.fail_location("200", 500);
    setup.provider.fake.set_shifts("100", vec![shift(1, 7, 3, &at(0, "16:00:00"), &at(0, "22:00:00"), 1650, false)]);
    let report = setup.sync().await;
    assert_eq!(report["status"], "partial");
    assert_eq!(
        report["failedLocations"],
        json!([{ "locationId": setup.uptown, "slug": "uptown", "reason": "provider_5xx" }]),
        "which location failed and why, never the provider's text"
    );
    let uptown: i64 = setup
        .app
        .pg()
        .await
        .query_one("SELECT count(*) FROM schedule_shifts WHERE location_id = $1::text::uuid", &[&setup.uptown])
        .await
        .unwrap()
        .get(0);
    assert_eq!(uptown, 1, "the failing location kept its shift");
    let runs: Vec<String> = setup
        .app
        .pg()
        .await
        .query("SELECT status FROM job_runs WHERE job = 'sync-schedule-from-7shifts' ORDER BY started_at", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(runs, ["ok", "partial"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_throttled_provider_is_retried() {
    let setup = setup().await;
    setup.standard_week();
    setup.provider.fake.throttle(1);
    let report = setup.sync().await;
    assert_eq!((report["status"].as_str(), report["inserted"].as_u64()), (Some("ok"), Some(5)));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_jobs_need_the_cron_secret_and_do_nothing_without_it() {
    let setup = setup().await;
    setup.standard_week();
    for job in ["/cron/sync-schedule-from-7shifts", "/cron/sync-7shifts-roles"] {
        problem(setup.app.get(job).send().await.unwrap(), 401, "unauthorized").await;
    }
    assert_eq!(setup.provider.fake.requests(), 0);
    assert_eq!(setup.app.count("schedule_shifts").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_provider_credentials_the_jobs_are_disabled() {
    let app = TestApp::spawn().await;
    for job in ["/cron/sync-schedule-from-7shifts", "/cron/sync-7shifts-roles"] {
        let body: Value = app.get_json(job, CRON_SECRET).await;
        assert_eq!(body, json!({ "status": "disabled" }));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sync_drops_the_teams_optimization_cache() {
    let setup = setup().await;
    let week = opsd_optimization_week();
    let read = || {
        setup.app.get(&format!("/api/analytics/optimization?teamId=org_1&weekOf={week}")).bearer_auth(API_KEY).send()
    };
    read().await.unwrap();
    assert_eq!(read().await.unwrap().headers()["x-cache"], "hit");
    setup.standard_week();
    setup.sync().await;
    assert_eq!(read().await.unwrap().headers()["x-cache"], "miss");
}

fn opsd_optimization_week() -> String {
    let today = time::OffsetDateTime::now_utc().date();
    let back = (today.weekday().number_days_from_sunday() + 1) % 7;
    (today - time::Duration::days(i64::from(back))).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_view_defaults_filters_pages_and_hides_drafts() {
    let setup = setup().await;
    setup.app.get("/cron/sync-7shifts-roles").bearer_auth(CRON_SECRET).send().await.unwrap();
    setup.standard_week();
    setup.sync().await;

    let response = setup.view("downtown", &format!("start_date={}", day(0))).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["deprecation"], "true");
    assert_eq!(response.headers()["sunset"], "Wed, 30 Jun 2027 23:59:59 GMT");
    let link = response.headers()["link"].to_str().unwrap();
    assert_eq!(link, "</docs#tag/schedule>; rel=\"deprecation\"; type=\"text/html\"");
    let view: Value = response.json().await.unwrap();
    assert_eq!(view["location_slug"], "downtown");
    assert_eq!((view["start_date"].as_str(), view["end_date"].clone()), (Some(day(0).as_str()), json!(day(6))));
    assert_eq!((view["limit"].as_u64(), view["offset"].as_u64()), (Some(100), Some(0)));
    assert_eq!(view["total_count"], 3, "the draft is hidden");
    let first = &view["shifts"][0];
    assert_eq!(first["employee_name"], "Ben Cole", "ordered by start");
    assert_eq!((first["hours_worked"].as_str(), first["hourly_wage"].as_str()), (Some("8.00"), Some("19.00")));
    assert_eq!(first["daypart"], "Lunch");
    assert!(first["start_at"].as_str().unwrap().ends_with('Z'));

    let drafts: Value =
        setup.view("downtown", &format!("start_date={}&include_draft=true", day(0))).await.json().await.unwrap();
    assert_eq!(drafts["total_count"], 4);
    let by_employee: Value =
        setup.view("downtown", &format!("start_date={}&employee_key=7shifts:7", day(0))).await.json().await.unwrap();
    assert_eq!(by_employee["total_count"], 2);
    let boh: Value =
        setup.view("downtown", &format!("start_date={}&department=BOH", day(0))).await.json().await.unwrap();
    assert_eq!(boh["total_count"], 1);
    let dinner: Value =
        setup.view("downtown", &format!("start_date={}&daypart=Dinner", day(0))).await.json().await.unwrap();
    assert_eq!(dinner["total_count"], 0, "16:00 UTC is 10:00 in Chicago: Lunch");
    let paged: Value =
        setup.view("downtown", &format!("start_date={}&limit=2&offset=2", day(0))).await.json().await.unwrap();
    assert_eq!((paged["shifts"].as_array().unwrap().len(), paged["total_count"].as_u64()), (1, Some(3)));
    let past_end: Value =
        setup.view("downtown", &format!("start_date={}&offset=50", day(0))).await.json().await.unwrap();
    assert_eq!((past_end["shifts"].clone(), past_end["total_count"].as_u64()), (json!([]), Some(3)));

    let default: Value = setup.view("downtown", "").await.json().await.unwrap();
    let chicago_today = time_tz::OffsetDateTimeExt::to_timezone(
        &time::OffsetDateTime::now_utc(),
        time_tz::timezones::db::america::CHICAGO,
    )
    .date();
    assert_eq!(
        default["start_date"],
        (chicago_today - time::Duration::days(1)).to_string(),
        "yesterday where the location is"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_view_refuses_bad_parameters_unknown_slugs_and_missing_keys() {
    let setup = setup().await;
    for (query, field) in [
        ("start_date=2026-11-10&end_date=2026-11-09", "end_date"),
        ("start_date=2026-01-01&end_date=2026-03-05", "end_date"),
        ("start_date=soon", "start_date"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("offset=-1", "offset"),
        ("department=Kitchen", "department"),
        ("daypart=Brunch", "daypart"),
        ("include_draft=maybe", "include_draft"),
        ("page=2", "page"),
    ] {
        let body = problem(setup.view("downtown", query).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], field, "{query}");
    }
    problem(setup.view("nowhere", "").await, 404, "not_found").await;
    problem(setup.app.get("/api/schedule/downtown").send().await.unwrap(), 401, "unauthorized").await;
    assert_eq!(setup.app.count("schedule_shifts").await, 0, "the view never writes");
}

/// When each imported shift was last written, by provider id.
async fn sync_times(setup: &Setup) -> Vec<String> {
    let rows = setup
        .app
        .pg()
        .await
        .query("SELECT synced_at::text FROM schedule_shifts ORDER BY provider_shift_id", &[])
        .await
        .unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}
