//! Every change to what decides a sign-in is announced on `opsd_sign_in` when it commits, whoever
//! makes it; the steady state and profile updates announce nothing.

mod support;
use support::pool;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use opsd_core::{Role, TeamId, TeamMembership, UserId};
use opsd_identity::{Delivery, IdentityEvent, IdentityEventStore, MembershipChange, UserProfile};
use opsd_postgres::{PgIdentityEventStore, PgMembershipStore, SIGN_IN_CHANNEL};
use opsd_test_db::TestDatabase;
use tokio_postgres::AsyncMessage;

/// Payloads on the channel, in commit order.
async fn listen(url: &str) -> (tokio_postgres::Client, UnboundedReceiver<String>) {
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let (sender, payloads) = futures::channel::mpsc::unbounded();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(note) = message {
                let _ = sender.unbounded_send(note.payload().to_owned());
            }
        }
    });
    client.batch_execute(&format!("LISTEN {SIGN_IN_CHANNEL}")).await.unwrap();
    (client, payloads)
}

/// What was announced since the last call: everything before a marker sent now.
async fn announced(admin: &mut AsyncPgConnection, payloads: &mut UnboundedReceiver<String>) -> Vec<String> {
    admin.batch_execute(&format!("NOTIFY {SIGN_IN_CHANNEL}, 'marker'")).await.unwrap();
    let mut seen = Vec::new();
    while let Some(payload) = payloads.next().await {
        if payload == "marker" {
            return seen;
        }
        seen.push(payload);
    }
    panic!("the listening connection ended")
}

fn member(role: Role) -> Option<TeamMembership> {
    Some(TeamMembership { team_id: TeamId::new("org_1"), role })
}

fn delivery(id: &str) -> Delivery {
    Delivery {
        id: id.to_owned(),
        body_sha256: "0".repeat(64),
        event_type: "test".to_owned(),
        received_at: time::OffsetDateTime::now_utc(),
    }
}

fn change(updated_at_ms: i64) -> MembershipChange {
    MembershipChange {
        team_id: TeamId::new("org_1"),
        user_id: UserId::new("user_1"),
        role: Role::Member,
        updated_at_ms,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_change_to_a_sign_in_is_announced_and_nothing_else() {
    let database = TestDatabase::new().await;
    let db = pool(database.url(), 2);
    let mut admin = AsyncPgConnection::establish(database.url()).await.unwrap();
    let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
    let (_listening, mut payloads) = listen(database.url()).await;
    let events = PgIdentityEventStore::new(db);
    let user = UserId::new("user_1");
    let mut sign_in = async |membership: Option<TeamMembership>| {
        PgMembershipStore::record_sign_in_on(&mut conn, &user, membership.as_ref(), Some(1_000)).await.unwrap();
    };

    sign_in(member(Role::Member)).await;
    assert_eq!(announced(&mut admin, &mut payloads).await, Vec::<String>::new(), "a first sign-in");
    sign_in(member(Role::Member)).await;
    assert_eq!(announced(&mut admin, &mut payloads).await, Vec::<String>::new(), "the steady state");
    sign_in(member(Role::Admin)).await;
    assert_eq!(announced(&mut admin, &mut payloads).await, ["user_1"], "a role change by another token");

    let profile = UserProfile {
        id: user.clone(),
        email: Some("ann@example.com".into()),
        first_name: Some("Ann".into()),
        last_name: None,
        image_url: None,
        updated_at_ms: 5_000,
    };
    events.record_and_apply(&delivery("msg_1"), &IdentityEvent::UserUpdated(profile)).await.unwrap();
    assert_eq!(announced(&mut admin, &mut payloads).await, Vec::<String>::new(), "a profile update");

    events.record_and_apply(&delivery("msg_2"), &IdentityEvent::MembershipRemoved(change(6_000))).await.unwrap();
    assert_eq!(announced(&mut admin, &mut payloads).await, ["user_1"], "a removal");
    events.record_and_apply(&delivery("msg_3"), &IdentityEvent::MembershipSet(change(7_000))).await.unwrap();
    assert_eq!(announced(&mut admin, &mut payloads).await, ["user_1"], "a grant after a removal");
    events
        .record_and_apply(&delivery("msg_4"), &IdentityEvent::OrganizationDeleted(TeamId::new("org_1")))
        .await
        .unwrap();
    assert!(announced(&mut admin, &mut payloads).await.contains(&"*".to_owned()), "a team's deletion");
    events.record_and_apply(&delivery("msg_5"), &IdentityEvent::UserDeleted(user.clone())).await.unwrap();
    assert_eq!(announced(&mut admin, &mut payloads).await, ["user_1"], "a user's deletion");

    admin.batch_execute("UPDATE users SET deleted_at = NULL WHERE id = 'user_1'").await.unwrap();
    assert_eq!(announced(&mut admin, &mut payloads).await, ["user_1"], "an operator's own SQL");
    admin.batch_execute("BEGIN; UPDATE users SET deleted_at = now(); ROLLBACK").await.unwrap();
    assert_eq!(announced(&mut admin, &mut payloads).await, Vec::<String>::new(), "a change rolled back");
}
