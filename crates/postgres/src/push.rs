use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use opsd_core::{
    Admission, Quota, RATE_LIMIT_WINDOW_SECONDS, RateLimited, RateLimiter, RatePolicy, StoreError, TeamId, UserId,
};
use opsd_push::{MemberDirectory, StoredSubscription, Subscription, SubscriptionStore};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::prepared::prepared;
use crate::{Db, store_error};

pub struct PgSubscriptionStore {
    db: Db,
}

impl PgSubscriptionStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct SubscriptionRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    user_id: String,
    #[diesel(sql_type = Text)]
    endpoint: String,
    #[diesel(sql_type = Text)]
    p256dh: String,
    #[diesel(sql_type = Text)]
    auth: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    expiration_time: Option<OffsetDateTime>,
}

#[async_trait]
impl SubscriptionStore for PgSubscriptionStore {
    async fn upsert(&self, user: &UserId, subscription: &Subscription, at: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, expiration_time, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7) \
             ON CONFLICT (endpoint) DO UPDATE SET user_id = EXCLUDED.user_id, p256dh = EXCLUDED.p256dh, \
               auth = EXCLUDED.auth, expiration_time = EXCLUDED.expiration_time, updated_at = EXCLUDED.updated_at",
        )
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<Text, _>(user.as_str())
        .bind::<Text, _>(&subscription.endpoint)
        .bind::<Text, _>(&subscription.p256dh)
        .bind::<Text, _>(&subscription.auth)
        .bind::<Nullable<Timestamptz>, _>(subscription.expires_at)
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn delete(&self, user: &UserId, endpoint: &str) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let deleted = prepared("DELETE FROM push_subscriptions WHERE user_id = $1 AND endpoint = $2")
            .bind::<Text, _>(user.as_str())
            .bind::<Text, _>(endpoint)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(deleted > 0)
    }

    async fn delete_expired(&self, user: &UserId, now: OffsetDateTime) -> Result<u32, StoreError> {
        let mut conn = self.db.conn().await?;
        let deleted = prepared("DELETE FROM push_subscriptions WHERE user_id = $1 AND expiration_time <= $2")
            .bind::<Text, _>(user.as_str())
            .bind::<Timestamptz, _>(now)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(deleted as u32)
    }

    async fn of_user(&self, user: &UserId) -> Result<Vec<StoredSubscription>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<SubscriptionRow> = prepared(
            "SELECT id, user_id, endpoint, p256dh, auth, expiration_time FROM push_subscriptions WHERE user_id = $1 ORDER BY id",
        )
        .bind::<Text, _>(user.as_str())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|row| StoredSubscription {
                id: row.id,
                user_id: UserId::new(row.user_id),
                subscription: Subscription {
                    endpoint: row.endpoint,
                    p256dh: row.p256dh,
                    auth: row.auth,
                    expires_at: row.expiration_time,
                },
            })
            .collect())
    }

    async fn delete_by_id(&self, id: Uuid) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared("DELETE FROM push_subscriptions WHERE id = $1")
            .bind::<SqlUuid, _>(id)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}

pub struct PgMemberDirectory {
    db: Db,
}

impl PgMemberDirectory {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl MemberDirectory for PgMemberDirectory {
    async fn is_member(&self, team: &TeamId, user: &UserId) -> Result<bool, StoreError> {
        #[derive(QueryableByName)]
        struct Found {
            #[diesel(sql_type = Bool)]
            found: bool,
        }
        let mut conn = self.db.conn().await?;
        let found: Found = prepared(
            "SELECT EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id \
                            WHERE m.team_id = $1 AND m.user_id = $2 AND u.deleted_at IS NULL) AS found",
        )
        .bind::<Text, _>(team.as_str())
        .bind::<Text, _>(user.as_str())
        .get_result(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(found.found)
    }

    async fn admins(&self, team: &TeamId) -> Result<Vec<UserId>, StoreError> {
        #[derive(QueryableByName)]
        struct Member {
            #[diesel(sql_type = Text)]
            user_id: String,
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<Member> = prepared(
            "SELECT m.user_id FROM memberships m JOIN users u ON u.id = m.user_id \
             WHERE m.team_id = $1 AND m.role = 'admin' AND u.deleted_at IS NULL ORDER BY m.user_id",
        )
        .bind::<Text, _>(team.as_str())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(|m| UserId::new(m.user_id)).collect())
    }
}

/// Sliding one-minute windows in PostgreSQL (`rate_limit_hit`, one round trip), so a limit holds
/// across every instance and across a minute's edge.
pub struct PgRateLimiter {
    db: Db,
}

impl PgRateLimiter {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl RateLimiter for PgRateLimiter {
    async fn hit(&self, policy: RatePolicy, key: &str, now: OffsetDateTime) -> Result<Admission, StoreError> {
        #[derive(QueryableByName)]
        struct Taken {
            #[diesel(sql_type = Int4)]
            wait: i32,
            #[diesel(sql_type = Int4)]
            remaining: i32,
            #[diesel(sql_type = Int4)]
            reset: i32,
        }
        let mut conn = self.db.conn().await?;
        let taken: Taken =
            prepared("SELECT wait, remaining, reset FROM rate_limit_take($1, $2, make_interval(secs => $3), $4)")
                .bind::<Text, _>(key)
                .bind::<Int4, _>(i32::try_from(policy.per_minute).unwrap_or(i32::MAX))
                .bind::<diesel::sql_types::Double, _>(f64::from(RATE_LIMIT_WINDOW_SECONDS))
                .bind::<Timestamptz, _>(now)
                .get_result(&mut conn)
                .await
                .map_err(store_error)?;
        let quota = Quota::per_minute(
            policy,
            u32::try_from(taken.remaining).unwrap_or(0),
            u64::try_from(taken.reset).unwrap_or(0),
        );
        Ok(match taken.wait {
            0 => Ok(quota),
            seconds => Err(RateLimited { retry_after_seconds: u64::try_from(seconds).unwrap_or(1), quota }),
        })
    }
}
