//! Schedule-proposal leases: a solver whose instance died leaves its proposal to be claimed again,
//! never `solving` for good, and only the current claim may finish it.

mod support;
use support::pool;

use std::time::Duration as StdDuration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::{LocationId, TeamId, Week};
use opsd_planning::week_plan::{ProposalStatus, WeekPlanStore};
use opsd_postgres::PgWeekPlanStore;
use opsd_test_db::TestDatabase;
use time::macros::date;
use time::{Duration, OffsetDateTime};

const LOCATION: &str = "00000000-0000-7000-8000-0000000000a1";

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_solvers_proposal_is_solved_by_the_next_and_the_dead_one_cannot_finish_it() {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1');
         INSERT INTO locations (id, team_id, name, slug, timezone) VALUES ('{LOCATION}', 'org_1', 'A', 'a', 'UTC');"
    ))
    .await
    .unwrap();
    let db = pool(database.url(), 2);
    let store = PgWeekPlanStore::new(db);
    let team = TeamId::new("org_1");
    let week = Week::containing(date!(2026 - 12 - 05));
    let location = LocationId(LOCATION.parse().unwrap());
    let queued = store.create_proposal(&team, location, week, 5, "user_1").await.unwrap();
    assert_eq!(queued.status, ProposalStatus::Solving);

    // Solver A claims it and dies (its lease ends at once); solver B takes it over.
    let a = store.claim_proposal(Duration::ZERO).await.unwrap().expect("a proposal waits");
    tokio::time::sleep(StdDuration::from_millis(20)).await;
    let b = store.claim_proposal(Duration::minutes(3)).await.unwrap().expect("an expired lease is claimed again");
    assert_eq!((a.id, b.id), (queued.id, queued.id));
    assert_ne!(a.lease, b.lease);
    assert!(store.claim_proposal(Duration::minutes(3)).await.unwrap().is_none(), "B's lease holds");

    // A wakes up: its outcome is not recorded; B's is.
    let now = OffsetDateTime::now_utc();
    assert!(!store.finish_proposal(a.id, a.lease, Err("late".into()), now).await.unwrap());
    assert!(store.finish_proposal(b.id, b.lease, Err("no roster was found".into()), now).await.unwrap());
    let finished = store.proposal(&team, queued.id).await.unwrap().unwrap();
    assert_eq!((finished.status, finished.reason.as_deref()), (ProposalStatus::Failed, Some("no roster was found")));
    assert!(store.proposal(&TeamId::new("org_2"), queued.id).await.unwrap().is_none(), "another team's");
    assert!(store.claim_proposal(Duration::minutes(3)).await.unwrap().is_none(), "a finished proposal stays finished");
}
