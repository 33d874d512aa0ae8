//! Short writes whose `BEGIN` travels with their first statements (`pipelined.rs`): an identity
//! profile update costs three round trips, a guest event two and an incident with a new contact
//! three, counted on the wire by a proxy; what a transaction wrote is all there after its commit and
//! all gone after its rollback.

mod support;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use opsd_core::{LocationId, TeamId, UserId};
use opsd_coupons::{EnqueueOutcome, GuestEvent, GuestEventStore, LegacyRating, QueuedEvent};
use opsd_identity::{Delivery, DeliveryOutcome, IdentityEvent, IdentityEventStore, UserProfile};
use opsd_incidents::{
    ContactChoice, CreateIncidentError, IncidentNotes, IncidentStore, IncidentType, MediaUrls, NewContact, NewIncident,
    Severity,
};
use opsd_postgres::{PgGuestEventStore, PgIdentityEventStore, PgIncidentStore};
use opsd_test_db::{RoundTrips, TestDatabase};
use support::{on_one_thread, one_connection};
use time::OffsetDateTime;

const LOCATION: &str = "00000000-0000-7000-8000-00000000aaaa";

fn delivery(id: &str) -> Delivery {
    Delivery {
        id: id.into(),
        body_sha256: format!("sha-{id}"),
        event_type: "user.updated".into(),
        received_at: OffsetDateTime::now_utc(),
    }
}

fn updated(user: &str, at_ms: i64) -> IdentityEvent {
    IdentityEvent::UserUpdated(UserProfile {
        id: UserId::new(user),
        email: Some(format!("{user}@example.com")),
        first_name: Some("Ann".into()),
        last_name: None,
        image_url: None,
        updated_at_ms: at_ms,
    })
}

fn guest_event(identity: &str, team: &str, location: &str) -> QueuedEvent {
    QueuedEvent {
        identity: identity.into(),
        source: "legacy",
        payload_sha256: format!("sha-{identity}"),
        event: GuestEvent::Legacy {
            team_id: TeamId::new(team),
            location_id: LocationId(location.parse().unwrap()),
            rating: LegacyRating { rating: 2, guest_id: "guest-1".into() },
        },
        payload: serde_json::json!({ "rating": 2 }),
        received_at: OffsetDateTime::now_utc(),
    }
}

async fn seeded() -> TestDatabase {
    let database = TestDatabase::new().await;
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO teams (id) VALUES ('org_1'), ('org_2');
         INSERT INTO locations (id, team_id, name, slug, timezone) VALUES ('{LOCATION}', 'org_1', 'A', 'a', 'UTC');
         INSERT INTO users (id) VALUES ('user_1');
         INSERT INTO memberships (user_id, team_id, role) VALUES ('user_1', 'org_1', 'member')"
    ))
    .await
    .unwrap();
    database
}

async fn count(url: &str, sql: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        count: i64,
    }
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    diesel::sql_query(sql).get_result::<Count>(&mut conn).await.unwrap().count
}

/// Runs `body` on a current-thread runtime of its own, so a connection's driver cannot send half of
/// a pipeline before the rest is queued. The proxy keeps running on the test's runtime.

#[tokio::test(flavor = "multi_thread")]
async fn an_identity_update_takes_three_round_trips_and_is_all_written() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let (applied, round_trips, duplicate) = on_one_thread(async move || {
        let store = PgIdentityEventStore::new(one_connection(counter.url()));
        // The first delivery opens the connection and prepares its statements.
        store.record_and_apply(&delivery("msg_0"), &updated("user_1", 1_000)).await.unwrap();
        counter.reset();
        let applied = store.record_and_apply(&delivery("msg_1"), &updated("user_1", 2_000)).await;
        let round_trips = counter.count();
        let duplicate = store.record_and_apply(&delivery("msg_1"), &updated("user_1", 2_000)).await;
        (applied, round_trips, duplicate)
    })
    .await;
    assert_eq!(applied, Ok(DeliveryOutcome::Applied { teams: vec![TeamId::new("org_1")] }));
    assert_eq!(round_trips, 3, "BEGIN with the delivery's record, the profile with the teams, COMMIT");
    assert_eq!(duplicate, Ok(DeliveryOutcome::Duplicate));
    let email = count(database.url(), "SELECT count(*) AS count FROM users WHERE email = 'user_1@example.com'").await;
    let recorded = count(database.url(), "SELECT count(*) AS count FROM webhook_deliveries").await;
    assert_eq!((email, recorded), (1, 2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guest_event_takes_two_round_trips_and_a_foreign_one_writes_nothing() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let outcomes = on_one_thread(async move || {
        let store = PgGuestEventStore::new(one_connection(counter.url()));
        let warm_up = store.enqueue(&guest_event("evt_0", "org_1", LOCATION)).await;
        counter.reset();
        let new = store.enqueue(&guest_event("evt_1", "org_1", LOCATION)).await;
        let round_trips = counter.count();
        let foreign = store.enqueue(&guest_event("evt_2", "org_2", LOCATION)).await;
        let nowhere = store.enqueue(&guest_event("evt_3", "org_1", "00000000-0000-7000-8000-00000000bbbb")).await;
        // The connection is usable after the rollbacks: not left inside a transaction.
        let again = store.enqueue(&guest_event("evt_1", "org_1", LOCATION)).await;
        ([warm_up, new, foreign, nowhere, again].map(|outcome| outcome.map_err(|e| e.to_string())), round_trips)
    })
    .await;
    let (outcomes, round_trips) = outcomes;
    use EnqueueOutcome::*;
    assert_eq!(outcomes, [Ok(New), Ok(New), Ok(UnknownScope), Ok(UnknownScope), Ok(Duplicate)]);
    assert_eq!(round_trips, 2, "BEGIN with the scope check and the insert, COMMIT");
    let stored = count(database.url(), "SELECT count(*) AS count FROM guest_events").await;
    assert_eq!(stored, 2, "the rolled-back events left nothing");
}

fn new_incident(location: &str, contact: ContactChoice) -> NewIncident {
    NewIncident {
        location_id: LocationId(location.parse().unwrap()),
        incident_type: IncidentType::Injury,
        severity: Severity::High,
        notes: IncidentNotes::parse("notes", "Cut on the slicer").unwrap(),
        media_urls: MediaUrls::default(),
        contact,
    }
}

fn new_contact(name: &str) -> ContactChoice {
    ContactChoice::New(NewContact {
        name: name.into(),
        phone: Some("+1 555 010 2030".into()),
        email: None,
        notes: None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_incident_with_a_new_contact_takes_three_round_trips_and_a_refused_one_writes_nothing() {
    let database = seeded().await;
    let proxy = std::sync::Arc::new(RoundTrips::start(database.url()).await);
    let counter = proxy.clone();
    let (outcomes, round_trips) = on_one_thread(async move || {
        let store = PgIncidentStore::new(one_connection(counter.url()));
        let (team, other, reporter) = (TeamId::new("org_1"), TeamId::new("org_2"), UserId::new("user_1"));
        let at = OffsetDateTime::now_utc();
        let warm_up = store.create(&team, &reporter, &new_incident(LOCATION, new_contact("Warm")), at).await;
        counter.reset();
        let created = store.create(&team, &reporter, &new_incident(LOCATION, new_contact("Guest")), at).await;
        let round_trips = counter.count();
        let foreign = store.create(&other, &reporter, &new_incident(LOCATION, new_contact("Foreign")), at).await;
        let gone = ContactChoice::Existing(opsd_incidents::ContactId(uuid::Uuid::now_v7()));
        let unknown_contact = store.create(&team, &reporter, &new_incident(LOCATION, gone), at).await;
        let outcomes = [warm_up, created, foreign, unknown_contact].map(|outcome| match outcome {
            Ok(incident) => Ok(incident.contact_id.is_some()),
            Err(CreateIncidentError::Store(error)) => Err(error.to_string()),
            Err(refused) => Err(refused.to_string()),
        });
        (outcomes, round_trips)
    })
    .await;
    assert_eq!(
        outcomes,
        [
            Ok(true),
            Ok(true),
            Err(CreateIncidentError::LocationNotInTeam.to_string()),
            Err(CreateIncidentError::ContactUnavailable.to_string())
        ]
    );
    assert_eq!(round_trips, 3, "BEGIN with the location check and the contact, the incident, COMMIT");
    let contacts = count(database.url(), "SELECT count(*) AS count FROM contacts").await;
    let incidents = count(database.url(), "SELECT count(*) AS count FROM incidents").await;
    assert_eq!((contacts, incidents), (2, 2), "the refused incident's contact was rolled back");
}
