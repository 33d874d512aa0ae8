//! The idempotency-key store: claims, answers, leases on the database's clock, pruning.

mod support;
use support::pool;

use std::time::Duration;

use opsd_idempotency::{Claim, Fingerprint, IdempotencyKey, IdempotencyStore, KeyScope, StoredAnswer};
use opsd_postgres::PgIdempotencyStore;
use opsd_test_db::TestDatabase;

const LEASE: Duration = Duration::from_secs(60);

fn store(database: &TestDatabase) -> PgIdempotencyStore {
    PgIdempotencyStore::new(pool(database.url(), 2))
}

fn answer() -> StoredAnswer {
    StoredAnswer {
        status: 201,
        content_type: Some("application/json".into()),
        location: Some("/api/incidents/1".into()),
        body: b"{\"id\":1}".to_vec(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_runs_once_then_replays_and_refuses_another_request() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let (scope, key) = (KeyScope::user("u1"), IdempotencyKey::parse("k1").unwrap());
    let request = Fingerprint::of("POST", "/api/incidents", b"a");
    let other = Fingerprint::of("POST", "/api/incidents", b"b");

    assert_eq!(store.claim(&scope, &key, &request, LEASE).await.unwrap(), Claim::Run);
    assert_eq!(store.claim(&scope, &key, &request, LEASE).await.unwrap(), Claim::InProgress);
    assert_eq!(store.claim(&scope, &key, &other, LEASE).await.unwrap(), Claim::Mismatch);
    store.complete(&scope, &key, &answer()).await.unwrap();
    assert_eq!(store.claim(&scope, &key, &request, LEASE).await.unwrap(), Claim::Replay(answer()));
    assert_eq!(store.claim(&scope, &key, &other, LEASE).await.unwrap(), Claim::Mismatch);
    // Another caller's same key is its own.
    assert_eq!(store.claim(&KeyScope::user("u2"), &key, &request, LEASE).await.unwrap(), Claim::Run);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_released_key_runs_again_an_abandoned_one_never_and_answers_are_pruned_by_age() {
    let database = TestDatabase::new().await;
    let store = store(&database);
    let scope = KeyScope::api_key("secret");
    let request = Fingerprint::of("POST", "/x", b"");
    let released = IdempotencyKey::parse("released").unwrap();
    assert_eq!(store.claim(&scope, &released, &request, LEASE).await.unwrap(), Claim::Run);
    store.release(&scope, &released).await.unwrap();
    assert_eq!(store.claim(&scope, &released, &request, LEASE).await.unwrap(), Claim::Run);

    // A holder that died: once its lease (on the database's clock) has run out, whether it took
    // effect is unknown, and the key never runs again.
    let abandoned = IdempotencyKey::parse("abandoned").unwrap();
    assert_eq!(store.claim(&scope, &abandoned, &request, Duration::ZERO).await.unwrap(), Claim::Run);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(store.claim(&scope, &abandoned, &request, LEASE).await.unwrap(), Claim::OutcomeUnknown);
    assert_eq!(store.claim(&scope, &abandoned, &request, LEASE).await.unwrap(), Claim::OutcomeUnknown);
    assert_eq!(
        store.claim(&scope, &abandoned, &Fingerprint::of("POST", "/y", b""), LEASE).await.unwrap(),
        Claim::Mismatch
    );
    // Its holder's answer, kept late (the database came back), is what a retry gets.
    store.complete(&scope, &abandoned, &answer()).await.unwrap();
    assert_eq!(store.claim(&scope, &abandoned, &request, LEASE).await.unwrap(), Claim::Replay(answer()));

    assert_eq!(store.prune(Duration::from_secs(3600)).await.unwrap(), 0, "younger than an hour");
    tokio::time::sleep(Duration::from_millis(20)).await;
    // The answered one goes; the one still held (its lease runs) stays.
    assert_eq!(store.prune(Duration::ZERO).await.unwrap(), 1);
    assert_eq!(store.claim(&scope, &released, &request, LEASE).await.unwrap(), Claim::InProgress);
}
