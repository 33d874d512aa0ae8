//! Recording a sign-in is one statement whatever the case: a new user, the steady state, a role
//! change, a removed membership, a deleted user.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use opsd_core::{Role, TeamId, TeamMembership, UserId};
use opsd_identity::SignInOutcome;
use opsd_postgres::PgMembershipStore;
use opsd_test_db::{CountQueries, TestDatabase};

fn member(role: Role) -> TeamMembership {
    TeamMembership { team_id: TeamId::new("org_1"), role }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_sign_in_is_one_statement_and_keeps_the_rules() {
    let database = TestDatabase::new().await;
    let mut admin = AsyncPgConnection::establish(database.url()).await.unwrap();
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    let queries = Arc::new(AtomicUsize::new(0));
    conn.set_instrumentation(CountQueries(queries.clone()));
    let user = UserId::new("user_1");
    let mut sign_in = async |membership: Option<TeamMembership>, issued_at: Option<i64>| {
        queries.store(0, Ordering::SeqCst);
        let outcome =
            PgMembershipStore::record_sign_in_on(&mut conn, &user, membership.as_ref(), issued_at).await.unwrap();
        assert_eq!(queries.load(Ordering::SeqCst), 1, "one statement");
        outcome
    };

    assert_eq!(sign_in(Some(member(Role::Member)), Some(1_000)).await, SignInOutcome::Active, "a new user and team");
    assert_eq!(sign_in(Some(member(Role::Member)), Some(1_000)).await, SignInOutcome::Active, "the steady state");
    assert_eq!(sign_in(Some(member(Role::Admin)), Some(1_000)).await, SignInOutcome::Active, "a role change");
    assert_eq!(sign_in(None, None).await, SignInOutcome::Active, "no team");
    let role: Vec<(String,)> = {
        use diesel_async::RunQueryDsl;
        #[derive(diesel::QueryableByName)]
        struct Row {
            #[diesel(sql_type = diesel::sql_types::Text)]
            role: String,
        }
        diesel::sql_query("SELECT role FROM memberships WHERE user_id = 'user_1' AND team_id = 'org_1'")
            .load::<Row>(&mut admin)
            .await
            .unwrap()
            .into_iter()
            .map(|r| (r.role,))
            .collect()
    };
    assert_eq!(role, vec![("admin".to_owned(),)]);

    // Removed at 2,000 s: an older token opens nothing of the team, a newer one brings it back.
    admin
        .batch_execute(
            "DELETE FROM memberships; INSERT INTO membership_removals (user_id, team_id, removed_at, provider_updated_at) \
             VALUES ('user_1', 'org_1', to_timestamp(2000), 2000)",
        )
        .await
        .unwrap();
    assert_eq!(sign_in(Some(member(Role::Admin)), Some(1_000)).await, SignInOutcome::MembershipRevoked);
    assert_eq!(sign_in(Some(member(Role::Admin)), None).await, SignInOutcome::MembershipRevoked, "no iat");
    assert_eq!(sign_in(Some(member(Role::Admin)), Some(3_000)).await, SignInOutcome::Active);

    admin.batch_execute("UPDATE users SET deleted_at = now() WHERE id = 'user_1'").await.unwrap();
    assert_eq!(sign_in(Some(member(Role::Admin)), Some(3_000)).await, SignInOutcome::Deleted);
    assert_eq!(sign_in(None, None).await, SignInOutcome::Deleted);
}
