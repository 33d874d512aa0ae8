use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::{StoreError, TeamId, UserId};
use opsd_identity::{Delivery, DeliveryOutcome, IdentityEvent, IdentityEventStore, MembershipChange, UserProfile};

use crate::deliveries::{Recorded, record_delivery};
use crate::pipelined::begin_with;
use crate::prepared::prepared;
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
    async fn record_and_apply(
        &self,
        delivery: &Delivery,
        event: &IdentityEvent,
    ) -> Result<DeliveryOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        // BEGIN travels with the delivery's record: three round trips for an update, not four.
        let (mut tx, recorded) = begin_with(&mut conn, async |conn| {
            record_delivery(
                conn,
                SOURCE,
                &delivery.id,
                &delivery.body_sha256,
                &delivery.event_type,
                delivery.received_at,
            )
            .await
        })
        .await
        .map_err(store_error)?;
        let applied = match recorded {
            Recorded::SameBody => Ok(DeliveryOutcome::Duplicate),
            Recorded::OtherBody => Ok(DeliveryOutcome::Conflict),
            Recorded::New => apply(tx.conn(), event).await.map(|teams| DeliveryOutcome::Applied { teams }),
        };
        tx.finish(applied).await.map_err(store_error)
    }
}

/// Applies a new delivery's event inside its transaction; answers the teams whose caches it touched.
async fn apply(conn: &mut AsyncPgConnection, event: &IdentityEvent) -> Result<Vec<TeamId>, diesel::result::Error> {
    match event {
        IdentityEvent::UserCreated(profile) | IdentityEvent::UserUpdated(profile) => {
            // Pipelined on the connection, one round trip for both: they touch different tables
            // (users, memberships), so their order does not matter.
            let ((), teams) = futures::try_join!(upsert_profile(conn, profile), teams_of(conn, &profile.id))?;
            Ok(teams)
        }
        IdentityEvent::UserDeleted(user) => delete_user(conn, user).await,
        IdentityEvent::MembershipSet(change) => set_membership(conn, change).await,
        IdentityEvent::MembershipRemoved(change) => remove_membership(conn, change).await,
        IdentityEvent::OrganizationDeleted(team) => delete_organization(conn, team).await,
        IdentityEvent::Unknown(_) => Ok(Vec::new()),
    }
}

async fn teams_of(mut conn: &AsyncPgConnection, user: &UserId) -> Result<Vec<TeamId>, diesel::result::Error> {
    let teams: Vec<String> = memberships::table
        .filter(memberships::user_id.eq(user.as_str()))
        .select(memberships::team_id)
        .order(memberships::team_id)
        .load(&mut conn)
        .await?;
    Ok(teams.into_iter().map(TeamId::new).collect())
}

/// An older `updated_at` never overwrites a newer one, and a deleted user stays deleted.
async fn upsert_profile(mut conn: &AsyncPgConnection, profile: &UserProfile) -> Result<(), diesel::result::Error> {
    prepared(
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
    .execute(&mut conn)
    .await?;
    Ok(())
}

/// Marks the user deleted (a tombstone even if it was never seen), erases its profile, and removes
/// its memberships and push subscriptions. Returns the teams it belonged to.
async fn delete_user(conn: &mut AsyncPgConnection, user: &UserId) -> Result<Vec<TeamId>, diesel::result::Error> {
    let teams = teams_of(conn, user).await?;
    prepared(
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

/// Grants or changes a membership, unless the user or team is deleted or a newer event (a later
/// removal or change) was applied already. Returns the team when the membership changed.
async fn set_membership(
    conn: &mut AsyncPgConnection,
    change: &MembershipChange,
) -> Result<Vec<TeamId>, diesel::result::Error> {
    let (user, team) = (change.user_id.as_str(), change.team_id.as_str());
    prepared("INSERT INTO users (id) VALUES ($1) ON CONFLICT DO NOTHING").bind::<Text, _>(user).execute(conn).await?;
    prepared("INSERT INTO teams (id) VALUES ($1) ON CONFLICT DO NOTHING").bind::<Text, _>(team).execute(conn).await?;
    let written = prepared(
        "INSERT INTO memberships (user_id, team_id, role, provider_updated_at) \
         SELECT $1, $2, $3, $4 \
         WHERE NOT EXISTS (SELECT 1 FROM users WHERE id = $1 AND deleted_at IS NOT NULL) \
           AND NOT EXISTS (SELECT 1 FROM teams WHERE id = $2 AND deleted_at IS NOT NULL) \
           AND NOT EXISTS (SELECT 1 FROM membership_removals \
                           WHERE user_id = $1 AND team_id = $2 AND provider_updated_at >= $4) \
         ON CONFLICT (user_id, team_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now(), \
           provider_updated_at = EXCLUDED.provider_updated_at \
         WHERE memberships.provider_updated_at IS NULL OR memberships.provider_updated_at <= EXCLUDED.provider_updated_at",
    )
    .bind::<Text, _>(user)
    .bind::<Text, _>(team)
    .bind::<Text, _>(change.role.as_str())
    .bind::<BigInt, _>(change.updated_at_ms)
    .execute(conn)
    .await?;
    if written == 0 {
        return Ok(Vec::new());
    }
    prepared("DELETE FROM membership_removals WHERE user_id = $1 AND team_id = $2")
        .bind::<Text, _>(user)
        .bind::<Text, _>(team)
        .execute(conn)
        .await?;
    Ok(vec![change.team_id.clone()])
}

/// Removes a membership (unless a newer event granted it since) and keeps a tombstone, so a token
/// issued before now cannot restore it. Returns the team.
async fn remove_membership(
    conn: &mut AsyncPgConnection,
    change: &MembershipChange,
) -> Result<Vec<TeamId>, diesel::result::Error> {
    let (user, team) = (change.user_id.as_str(), change.team_id.as_str());
    let newer: i64 = prepared(
        "SELECT count(*) AS count FROM memberships \
         WHERE user_id = $1 AND team_id = $2 AND provider_updated_at > $3",
    )
    .bind::<Text, _>(user)
    .bind::<Text, _>(team)
    .bind::<BigInt, _>(change.updated_at_ms)
    .get_result::<Count>(conn)
    .await?
    .count;
    if newer > 0 {
        return Ok(Vec::new());
    }
    prepared("DELETE FROM memberships WHERE user_id = $1 AND team_id = $2")
        .bind::<Text, _>(user)
        .bind::<Text, _>(team)
        .execute(conn)
        .await?;
    prepared(
        "INSERT INTO membership_removals (user_id, team_id, removed_at, provider_updated_at) VALUES ($1, $2, now(), $3) \
         ON CONFLICT (user_id, team_id) DO UPDATE SET removed_at = now(), \
           provider_updated_at = GREATEST(membership_removals.provider_updated_at, EXCLUDED.provider_updated_at)",
    )
    .bind::<Text, _>(user)
    .bind::<Text, _>(team)
    .bind::<BigInt, _>(change.updated_at_ms)
    .execute(conn)
    .await?;
    Ok(vec![change.team_id.clone()])
}

/// Marks the team deleted and removes its memberships; its locations, incidents and reports stay.
async fn delete_organization(
    conn: &mut AsyncPgConnection,
    team: &TeamId,
) -> Result<Vec<TeamId>, diesel::result::Error> {
    prepared(
        "INSERT INTO teams (id, deleted_at) VALUES ($1, now()) \
         ON CONFLICT (id) DO UPDATE SET deleted_at = COALESCE(teams.deleted_at, now())",
    )
    .bind::<Text, _>(team.as_str())
    .execute(conn)
    .await?;
    diesel::delete(memberships::table.filter(memberships::team_id.eq(team.as_str()))).execute(conn).await?;
    Ok(vec![team.clone()])
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}
