use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use opsd_core::{StoreError, TeamId, UserId};
use opsd_identity::{Delivery, DeliveryOutcome, IdentityEvent, IdentityEventStore, UserProfile};

use crate::deliveries::{Recorded, record_delivery};
use crate::schema::{memberships, push_subscriptions};
use crate::{Db, store_error};

const SOURCE: &str = "identity";

pub struct PgIdentityEventStore {
    db: Db,
}

impl PgIdentityEventStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl IdentityEventStore for PgIdentityEventStore {
    async fn record_and_apply(&self, delivery: &Delivery, event: &IdentityEvent) -> Result<DeliveryOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            let recorded = record_delivery(
                conn,
                SOURCE,
                &delivery.id,
                &delivery.body_sha256,
                &delivery.event_type,
                delivery.received_at,
            )
            .await?;
            match recorded {
                Recorded::SameBody => return Ok(DeliveryOutcome::Duplicate),
                Recorded::OtherBody => return Ok(DeliveryOutcome::Conflict),
                Recorded::New => {}
            }
            let teams = match event {
                IdentityEvent::UserCreated(profile) | IdentityEvent::UserUpdated(profile) => {
                    upsert_profile(conn, profile).await?;
                    teams_of(conn, &profile.id).await?
                }
                IdentityEvent::UserDeleted(user) => delete_user(conn, user).await?,
                IdentityEvent::Unknown(_) => Vec::new(),
            };
            Ok(DeliveryOutcome::Applied { teams })
        })
        .await
        .map_err(store_error)
    }
}

async fn teams_of(conn: &mut AsyncPgConnection, user: &UserId) -> Result<Vec<TeamId>, diesel::result::Error> {
    let teams: Vec<String> = memberships::table
        .filter(memberships::user_id.eq(user.as_str()))
        .select(memberships::team_id)
        .order(memberships::team_id)
        .load(conn)
        .await?;
    Ok(teams.into_iter().map(TeamId::new).collect())
}

/// An older `updated_at` never overwrites a newer one, and a deleted user stays deleted.
async fn upsert_profile(conn: &mut AsyncPgConnection, profile: &UserProfile) -> Result<(), diesel::result::Error> {
    diesel::sql_query(
        "INSERT INTO users (id, email, first_name, last_name, image_url, provider_updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.email, first_name = EXCLUDED.first_name, \
           last_name = EXCLUDED.last_name, image_url = EXCLUDED.image_url, \
           provider_updated_at = EXCLUDED.provider_updated_at \
         WHERE users.deleted_at IS NULL \
           AND (users.provider_updated_at IS NULL OR users.provider_updated_at <= EXCLUDED.provider_updated_at)",
    )
    .bind::<Text, _>(profile.id.as_str())
    .bind::<Nullable<Text>, _>(profile.email.as_deref())
    .bind::<Nullable<Text>, _>(profile.first_name.as_deref())
    .bind::<Nullable<Text>, _>(profile.last_name.as_deref())
    .bind::<Nullable<Text>, _>(profile.image_url.as_deref())
    .bind::<BigInt, _>(profile.updated_at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks the user deleted (a tombstone even if it was never seen), erases its profile, and removes
/// its memberships and push subscriptions. Returns the teams it belonged to.
async fn delete_user(conn: &mut AsyncPgConnection, user: &UserId) -> Result<Vec<TeamId>, diesel::result::Error> {
    let teams = teams_of(conn, user).await?;
    diesel::sql_query(
        "INSERT INTO users (id, deleted_at) VALUES ($1, now()) \
         ON CONFLICT (id) DO UPDATE SET deleted_at = COALESCE(users.deleted_at, now()), \
           email = NULL, first_name = NULL, last_name = NULL, image_url = NULL",
    )
    .bind::<Text, _>(user.as_str())
    .execute(conn)
    .await?;
    diesel::delete(memberships::table.filter(memberships::user_id.eq(user.as_str()))).execute(conn).await?;
    diesel::delete(push_subscriptions::table.filter(push_subscriptions::user_id.eq(user.as_str())))
        .execute(conn)
        .await?;
    Ok(teams)
}
