use opsd_tests::seven_shifts_fake::{Fake7ShiftsServer, punch, punch_break};
use opsd_tests::{CRON_SECRET, TestApp};
use serde_json::{Value, json};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

struct Setup {
    app: TestApp,
    provider: Fake7ShiftsServer,
    location: String,
}

async fn setup() -> Setup {
    let provider = Fake7ShiftsServer::start().await;
    let app = TestApp::spawn_with(provider.configure()).await;
    let admin = app.tokens.admin("user_1", "org_1");
    let body =
        json!({ "name": "Downtown", "slug": "downtown", "timezone": "America/Chicago", "schedulerLocationId": "100" });
    let location: Value = app.post_json("/api/locations", &admin, &body).await.json().await.unwrap();
    let roles: Value = app.get_json("/cron/sync-7shifts-roles", CRON_SECRET).await;
    assert_eq!(roles["status"], "ok");
    Setup { app, provider, location: location["id"].as_str().unwrap().to_owned() }
}

/// `days` days ago at `hh:mm:ss` UTC.
fn ago(days: i64, time: &str) -> String {
    format!("{}T{time}Z", OffsetDateTime::now_utc().date() - Duration::days(days))
}

fn now() -> String {
    OffsetDateTime::now_utc().format(&Rfc3339).unwrap()
}

impl Setup {
    async fn sync(&self) -> Value {
        let response = self.app.get("/cron/sync-7shifts-punches").bearer_auth(CRON_SECRET).send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    /// (id, business date, department, worked hours, unpaid break minutes, wage) by punch id.
    async fn stored(&self) -> Vec<(String, String, String, Option<String>, i32, String)> {
        let pg = self.app.pg().await;
        let rows = pg
            .query(
                "SELECT provider_punch_id, business_date::text, department, worked_hours::text, unpaid_break_minutes,
                        hourly_wage::text
                 FROM time_punches WHERE location_id = $1::text::uuid ORDER BY provider_punch_id",
                &[&self.location],
            )
            .await
            .unwrap();
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5))).collect()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn punches_sync_with_their_breaks_local_days_and_approval_then_follow_edits_and_deletions() {
    let setup = setup().await;
    let mut with_breaks = punch(1, 7, 3, &ago(2, "16:00:00"), Some(&ago(2, "22:00:00")), true);
    with_breaks["breaks"] = json!([
        punch_break(1, &ago(2, "18:00:00"), &ago(2, "18:30:00"), false),
        punch_break(2, &ago(2, "20:00:00"), &ago(2, "20:10:00"), true),
    ]);
    // 23:00 to 07:00 in Chicago (UTC−6): the clock-in's local day, one day before the UTC one.
    let overnight = punch(2, 8, 4, &ago(3, "05:00:00"), Some(&ago(3, "13:00:00")), true);
    let unapproved = punch(3, 7, 3, &ago(1, "16:00:00"), Some(&ago(1, "20:00:00")), false);
    // Clocked in at least two hours before any test run, so the second sync's hour of overlap never
    // lists it again (at 00:00 UTC it did, between midnight and one).
    let open = punch(4, 8, 4, &ago(1, "22:00:00"), None, true);
    let too_old = punch(5, 7, 3, &ago(70, "16:00:00"), Some(&ago(70, "20:00:00")), true);
    setup.provider.fake.set_punches("100", vec![with_breaks.clone(), overnight, unapproved.clone(), open, too_old]);

    let first = setup.sync().await;
    assert_eq!(
        first,
        json!({ "status": "ok", "inserted": 4, "updated": 0, "deleted": 0, "unchanged": 0, "failedLocations": [] }),
        "four punches over two pages of two; the one clocked in 70 days ago is outside the first sync"
    );
    let queries = setup.provider.fake.punch_queries();
    assert_eq!(queries[0].get("include_deleted").map(String::as_str), Some("true"));
    assert!(queries[0].contains_key("clocked_in[gte]") && !queries[0].contains_key("modified_since"));
    let day = |days: i64| (OffsetDateTime::now_utc().date() - Duration::days(days)).to_string();
    let wage = "15.50".to_owned();
    assert_eq!(
        setup.stored().await,
        vec![
            ("1".into(), day(2), "FOH".into(), Some("5.50".into()), 30, wage.clone()),
            ("2".into(), day(4), "BOH".into(), Some("8.00".into()), 0, wage.clone()),
            ("3".into(), day(1), "FOH".into(), None, 0, wage.clone()),
            ("4".into(), day(1), "BOH".into(), None, 0, wage.clone()),
        ],
        "unpaid breaks come off, paid ones do not; unapproved and open punches are stored but count no hours"
    );

    // Later: punch 1 deleted, punch 3 approved, and an old punch across the DST change edited now.
    let mut deleted = with_breaks;
    (deleted["deleted"], deleted["modified"]) = (json!(true), json!(now()));
    let mut approved = unapproved;
    (approved["approved"], approved["modified"]) = (json!(true), json!(now()));
    // 2026-10-31 23:00 CDT to 2026-11-01 07:00 CST: 8 hours on the wall clock, 9 worked.
    let mut across_dst = punch(6, 7, 4, "2026-11-01T04:00:00Z", Some("2026-11-01T13:00:00Z"), true);
    across_dst["modified"] = json!(now());
    let mut punches = setup.provider.fake.punches("100");
    punches[0] = deleted;
    punches[2] = approved;
    punches.push(across_dst);
    setup.provider.fake.set_punches("100", punches);

    let second = setup.sync().await;
    assert_eq!(
        second,
        json!({ "status": "ok", "inserted": 1, "updated": 1, "deleted": 1, "unchanged": 0, "failedLocations": [] }),
        "only what changed since the last sync is listed"
    );
    let query = setup.provider.fake.punch_queries()[1].clone();
    let since = OffsetDateTime::parse(&query["modified_since"], &Rfc3339).unwrap();
    let overlap = OffsetDateTime::now_utc() - since;
    assert!(overlap > Duration::minutes(59) && overlap < Duration::minutes(65), "an hour's overlap: {overlap}");
    let stored = setup.stored().await;
    assert_eq!(stored.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(), ["2", "3", "4", "6"]);
    assert_eq!(stored[1].3.as_deref(), Some("4.00"), "the approved punch counts now");
    assert_eq!((stored[3].1.as_str(), stored[3].3.as_deref()), ("2026-10-31", Some("9.00")));

    let repeat = setup.sync().await;
    assert_eq!(
        (&repeat["inserted"], &repeat["updated"], &repeat["deleted"], &repeat["unchanged"]),
        (&json!(0), &json!(0), &json!(0), &json!(2)),
        "a repeat inside the overlap lists the same punches again and changes nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_location_keeps_its_punches_and_its_place() {
    let setup = setup().await;
    setup.provider.fake.set_punches("100", vec![punch(1, 7, 3, &ago(2, "16:00:00"), Some(&ago(2, "22:00:00")), true)]);
    setup.sync().await;
    setup.provider.fake.fail_location("100", 503);
    let report = setup.sync().await;
    assert_eq!(report["status"], "failed");
    assert_eq!(report["failedLocations"][0]["reason"], "provider_5xx");
    assert_eq!(setup.stored().await.len(), 1);
    setup.provider.fake.heal_location("100");
    let queries = setup.provider.fake.punch_queries();
    let healed = setup.sync().await;
    assert_eq!(healed["status"], "ok");
    let after: Vec<_> = setup.provider.fake.punch_queries().into_iter().skip(queries.len()).collect();
    assert!(after[0].contains_key("modified_since"), "the failed run did not move the location's place");
}
