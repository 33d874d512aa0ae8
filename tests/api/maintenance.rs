//! What an operator does to the database: migrations reverted and applied again (`opsd migrate
//! --revert N`), and a backup restored into a new database (docs/operations.md, "Backups").

use opsd::seed::{DemoSize, seed_demo};
use opsd_postgres::{Db, MigrationStep, migration_status, revert_migrations, run_migrations};
use opsd_tests::{API_KEY, TestApp, TestDatabase};
use serde_json::{Value, json};

/// A server that computes every report afresh, on a database holding the demo and an incident.
async fn seeded() -> (TestApp, Db, String) {
    let app = TestApp::spawn_with(|config| config.optimization_cache_capacity = 0).await;
    let db = app.db();
    let demo = seed_demo(&db, DemoSize { locations: 2, weeks: 3 }).await.unwrap();
    let admin = app.tokens.admin("user_ops", "org_demo");
    let incident =
        json!({ "locationId": demo.location_id, "type": "Maintenance", "severity": "low", "notes": "fryer" });
    assert_eq!(app.post_json("/api/incidents", &admin, &incident).await.status(), 201);
    (app, db, demo.week_of.to_string())
}

/// What the server answers from the data: a report and the incidents.
async fn answers(app: &TestApp, week: &str) -> (Value, Value) {
    let report = app.get_json(&format!("/api/analytics/optimization?teamId=org_demo&weekOf={week}"), API_KEY).await;
    let incidents = app.get_json("/api/incidents", app.tokens.admin("user_ops", "org_demo")).await;
    assert!(report["summary"]["totalSales"].as_f64().unwrap() > 0.0, "{report}");
    let items = incidents["items"].as_array().unwrap();
    assert!(items.iter().any(|incident| incident["notes"] == "fryer"), "{incidents}");
    (report, incidents)
}

async fn pending(db: &Db) -> usize {
    migration_status(db).await.unwrap().iter().filter(|m| !m.applied).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_migration_reverts_and_applies_again_under_the_demo_data() {
    let (app, db, week) = seeded().await;
    let (report, _) = answers(&app, &week).await;
    let total = migration_status(&db).await.unwrap().len();
    assert_eq!(pending(&db).await, 0);
    // The newest 1, then 2, ... then all but the first: each down.sql runs on tables holding data,
    // and each up.sql applies again on what the older ones left (their rollups backfilled from it).
    for count in 1..total {
        assert_eq!(revert_migrations(&db, count).await.unwrap().len(), count);
        assert_eq!(pending(&db).await, count, "after reverting {count}");
        run_migrations(&db, MigrationStep::PostDeploy).await.unwrap();
        assert_eq!(pending(&db).await, 0);
    }
    // Reverting a table's migration drops its rows: the demo, seeded again, reads as before.
    let demo = seed_demo(&db, DemoSize { locations: 2, weeks: 3 }).await.unwrap();
    let incident =
        json!({ "locationId": demo.location_id, "type": "Maintenance", "severity": "low", "notes": "fryer" });
    let admin = app.tokens.admin("user_ops", "org_demo");
    assert_eq!(app.post_json("/api/incidents", &admin, &incident).await.status(), 201);
    assert_eq!(answers(&app, &week).await.0, report, "the same report from the same data");

    // All of them: nothing of the schema is left, and it applies again on the empty database.
    assert_eq!(revert_migrations(&db, total + 5).await.unwrap().len(), total);
    let pg = app.pg().await;
    let left: Vec<String> = pg
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' AND tablename <> '__diesel_schema_migrations' \
             UNION ALL SELECT proname::text FROM pg_proc WHERE pronamespace = 'public'::regnamespace",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "every table and function is dropped");
    run_migrations(&db, MigrationStep::PostDeploy).await.unwrap();
    assert_eq!(pending(&db).await, 0);
    seed_demo(&db, DemoSize { locations: 1, weeks: 1 }).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backup_restored_into_a_new_database_serves_the_same_answers() {
    let (app, _db, week) = seeded().await;
    let before = answers(&app, &week).await;
    let dump = std::env::temp_dir().join(format!("opsd-backup-{}.dump", uuid::Uuid::new_v4().simple()));
    let status = std::process::Command::new("pg_dump")
        .args(["--format=custom", "--no-owner", "--file"])
        .arg(&dump)
        .arg(&app.db_url)
        .status()
        .expect("pg_dump runs");
    assert!(status.success(), "pg_dump: {status}");
    let restored = TestDatabase::empty().await;
    let status = std::process::Command::new("pg_restore")
        .args(["--no-owner", "--exit-on-error", "--dbname", restored.url()])
        .arg(&dump)
        .status()
        .expect("pg_restore runs");
    std::fs::remove_file(&dump).ok();
    assert!(status.success(), "pg_restore: {status}");
    let restored = TestApp::spawn_on(restored, |config| config.optimization_cache_capacity = 0).await;
    assert_eq!(pending(&restored.db()).await, 0, "the restore carries the migrations' record");
    assert_eq!(answers(&restored, &week).await, before);
}
