use async_trait::async_trait;
use diesel::OptionalExtension;
use diesel::QueryableByName;
use diesel::sql_types::{Bool, Int2, Int4, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};
use opsd_core::{LocationId, StoreError, TeamId};
use opsd_coupons::{
    Backlog, ClaimedEvent, EnqueueOutcome, FailedEvent, Feedback, GuestAlert, GuestEventQueue, GuestEventStore,
    HoldOutcome, OfferId, QueueOverview, QueuedEvent, ReservationId,
};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::error::TxError;
use crate::pipelined::begin_with;
use crate::prepared::prepared;
use crate::{Db, store_error};

pub struct PgGuestEventStore {
    db: Db,
}

impl PgGuestEventStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    flag: bool,
}

#[derive(QueryableByName)]
struct Hash {
    #[diesel(sql_type = Text)]
    payload_sha256: String,
}

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    identity: String,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Int4)]
    attempts: i32,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = SqlUuid)]
    location_id: Uuid,
    #[diesel(sql_type = Jsonb)]
    payload: serde_json::Value,
    #[diesel(sql_type = SqlUuid)]
    lease_token: Uuid,
}

/// A span as whole milliseconds, for `interval` arithmetic on the database's clock.
fn millis(span: Duration) -> i64 {
    i64::try_from(span.whole_milliseconds()).unwrap_or(i64::MAX)
}

#[derive(QueryableByName)]
struct AlertRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = SqlUuid)]
    location_id: Uuid,
    #[diesel(sql_type = Int2)]
    rating: i16,
}

#[async_trait]
impl GuestEventStore for PgGuestEventStore {
    async fn enqueue(&self, event: &QueuedEvent) -> Result<EnqueueOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        // BEGIN, the scope check and the insert travel together: one round trip, then the commit.
        // An event whose location is not the team's is rolled back (a location that does not exist
        // fails the insert's foreign key, and is rolled back the same way).
        let (mut tx, (in_team, inserted)) = begin_with(&mut conn, async |mut shared| {
            Ok(futures::join!(
                prepared("SELECT EXISTS (SELECT 1 FROM locations WHERE id = $1 AND team_id = $2) AS flag")
                    .bind::<SqlUuid, _>(event.event.location_id().0)
                    .bind::<Text, _>(event.event.team_id().as_str())
                    .get_result::<Flag>(&mut shared),
                prepared(
                    "INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, \
                                               payload, available_at, received_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT (identity) DO NOTHING",
                )
                .bind::<SqlUuid, _>(Uuid::now_v7())
                .bind::<Text, _>(&event.identity)
                .bind::<Text, _>(event.source)
                .bind::<Text, _>(event.event.event_type())
                .bind::<Text, _>(&event.payload_sha256)
                .bind::<Text, _>(event.event.team_id().as_str())
                .bind::<SqlUuid, _>(event.event.location_id().0)
                .bind::<Jsonb, _>(&event.payload)
                .bind::<Timestamptz, _>(event.received_at)
                .execute(&mut shared),
            ))
        })
        .await
        .map_err(store_error)?;
        let outcome = match (in_team, inserted) {
            (Ok(Flag { flag: false }), _) => Err(TxError::Domain(EnqueueOutcome::UnknownScope)),
            (Err(error), _) | (_, Err(error)) => Err(TxError::Db(error)),
            (Ok(_), Ok(1)) => Ok(EnqueueOutcome::New),
            (Ok(_), Ok(_)) => prepared("SELECT payload_sha256 FROM guest_events WHERE identity = $1")
                .bind::<Text, _>(&event.identity)
                .get_result::<Hash>(tx.conn())
                .await
                .map(|stored| {
                    if stored.payload_sha256 == event.payload_sha256 {
                        EnqueueOutcome::Duplicate
                    } else {
                        EnqueueOutcome::Conflict
                    }
                })
                .map_err(TxError::Db),
        };
        match tx.finish(outcome).await {
            Ok(outcome) | Err(TxError::Domain(outcome)) => Ok(outcome),
            Err(TxError::Db(error)) => Err(store_error(error)),
        }
    }

    async fn claim(&self, limit: u32, lease: Duration) -> Result<Vec<ClaimedEvent>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<ClaimedRow> = prepared(
            "UPDATE guest_events SET state = 'processing', available_at = now() + $2 * interval '1 millisecond', \
                 lease_token = gen_random_uuid() \
             WHERE id IN (SELECT id FROM guest_events WHERE state IN ('queued', 'processing') AND available_at <= now() \
                          ORDER BY received_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) \
             RETURNING id, identity, source, attempts, team_id, location_id, payload, lease_token",
        )
        .bind::<diesel::sql_types::BigInt, _>(i64::from(limit))
        .bind::<diesel::sql_types::BigInt, _>(millis(lease))
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|row| ClaimedEvent {
                id: row.id,
                identity: row.identity,
                source: row.source,
                attempts: row.attempts,
                team_id: TeamId::new(row.team_id),
                location_id: LocationId(row.location_id),
                payload: row.payload,
                lease: row.lease_token,
            })
            .collect())
    }

    async fn complete(&self, event: Uuid, lease: Uuid, outcome: &str) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let updated = prepared(
            "UPDATE guest_events SET state = 'done', outcome = $3, processed_at = now(), lease_token = NULL \
             WHERE id = $1 AND state = 'processing' AND lease_token = $2",
        )
        .bind::<SqlUuid, _>(event)
        .bind::<SqlUuid, _>(lease)
        .bind::<Text, _>(outcome)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(updated == 1)
    }

    async fn retry_later(
        &self,
        event: Uuid,
        lease: Uuid,
        backoff: Duration,
        give_up: bool,
        error: &str,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let updated = prepared(
            "UPDATE guest_events SET state = CASE WHEN $4 THEN 'failed' ELSE 'queued' END, attempts = attempts + 1, \
             available_at = now() + $3 * interval '1 millisecond', last_error = $5, lease_token = NULL \
             WHERE id = $1 AND state = 'processing' AND lease_token = $2",
        )
        .bind::<SqlUuid, _>(event)
        .bind::<SqlUuid, _>(lease)
        .bind::<diesel::sql_types::BigInt, _>(millis(backoff))
        .bind::<Bool, _>(give_up)
        .bind::<Text, _>(error)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(updated == 1)
    }

    async fn hold(
        &self,
        team: &TeamId,
        location: LocationId,
        reservation: ReservationId,
        offer: OfferId,
        guest_id: &str,
        expires_at: OffsetDateTime,
        at: OffsetDateTime,
    ) -> Result<HoldOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            let known: Flag = prepared("SELECT EXISTS (SELECT 1 FROM coupon_reservations WHERE id = $1) AS flag")
                .bind::<SqlUuid, _>(reservation.0)
                .get_result(conn)
                .await?;
            if known.flag {
                return Ok(HoldOutcome::AlreadyKnown);
            }
            let offer_known: Flag = prepared(
                "SELECT EXISTS (SELECT 1 FROM coupon_offers WHERE id = $1 AND team_id = $2 AND location_id = $3) AS flag",
            )
            .bind::<SqlUuid, _>(offer.0)
            .bind::<Text, _>(team.as_str())
            .bind::<SqlUuid, _>(location.0)
            .get_result(conn)
            .await?;
            if !offer_known.flag {
                return Ok(HoldOutcome::UnknownOffer);
            }
            // The row lock of this update serializes holds on the offer; `held < capacity` decides.
            let took = prepared("UPDATE coupon_offers SET held = held + 1 WHERE id = $1 AND held < capacity")
                .bind::<SqlUuid, _>(offer.0)
                .execute(conn)
                .await?;
            if took == 0 {
                return Ok(HoldOutcome::Rejected);
            }
            prepared(
                "INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at) \
                 VALUES ($1, $2, $3, 'active', $4, $5)",
            )
            .bind::<SqlUuid, _>(reservation.0)
            .bind::<SqlUuid, _>(offer.0)
            .bind::<Text, _>(guest_id)
            .bind::<Timestamptz, _>(expires_at)
            .bind::<Timestamptz, _>(at)
            .execute(conn)
            .await?;
            Ok(HoldOutcome::Held)
        })
        .await
        .map_err(store_error)
    }

    async fn record_feedback(
        &self,
        team: &TeamId,
        location: LocationId,
        feedback: &Feedback,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "INSERT INTO guest_feedback (id, team_id, location_id, guest_id, reservation_id, rating, comment, submitted_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
        )
        .bind::<Text, _>(&feedback.feedback_id)
        .bind::<Text, _>(team.as_str())
        .bind::<SqlUuid, _>(location.0)
        .bind::<Text, _>(&feedback.guest_id)
        .bind::<Nullable<SqlUuid>, _>(feedback.reservation_id.map(|r| r.0))
        .bind::<Int2, _>(i16::from(feedback.rating))
        .bind::<Nullable<Text>, _>(feedback.comment.as_deref())
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn record_alert(
        &self,
        feedback_id: &str,
        max_rating: u8,
        at: OffsetDateTime,
    ) -> Result<Option<GuestAlert>, StoreError> {
        let mut conn = self.db.conn().await?;
        // Created and claimed at once, or an unsent one whose claim was given back claimed again.
        let row: Option<AlertRow> = prepared(
            "WITH created AS ( \
               INSERT INTO guest_alerts (id, feedback_id, team_id, location_id, rating, created_at, claimed_at) \
               SELECT $1, f.id, f.team_id, f.location_id, f.rating, $3, now() \
               FROM guest_feedback f WHERE f.id = $2 AND f.rating <= $4 \
               ON CONFLICT (feedback_id) DO NOTHING RETURNING id, team_id, location_id, rating), \
             reclaimed AS ( \
               UPDATE guest_alerts SET claimed_at = now() \
               WHERE feedback_id = $2 AND notified_at IS NULL AND claimed_at IS NULL \
                 AND NOT EXISTS (SELECT 1 FROM created) \
               RETURNING id, team_id, location_id, rating) \
             SELECT id, team_id, location_id, rating FROM created \
             UNION ALL \
             SELECT id, team_id, location_id, rating FROM reclaimed",
        )
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<Text, _>(feedback_id)
        .bind::<Timestamptz, _>(at)
        .bind::<Int2, _>(i16::from(max_rating))
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        Ok(row.map(|row| GuestAlert {
            id: row.id,
            team_id: TeamId::new(row.team_id),
            location_id: LocationId(row.location_id),
            rating: row.rating as u8,
        }))
    }

    async fn release_alert(&self, alert: Uuid) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared("UPDATE guest_alerts SET claimed_at = NULL WHERE id = $1 AND notified_at IS NULL")
            .bind::<SqlUuid, _>(alert)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn alert_notified(&self, alert: Uuid, at: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared("UPDATE guest_alerts SET notified_at = $2 WHERE id = $1")
            .bind::<SqlUuid, _>(alert)
            .bind::<Timestamptz, _>(at)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}

#[derive(QueryableByName)]
struct BacklogRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    depth: i64,
    #[diesel(sql_type = diesel::sql_types::Double)]
    oldest_seconds: f64,
}

#[derive(QueryableByName)]
struct StateCount {
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    count: i64,
}

#[derive(QueryableByName)]
struct FailedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    attempts: i32,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    received_at: OffsetDateTime,
}

#[async_trait]
impl GuestEventQueue for PgGuestEventStore {
    async fn backlog(&self) -> Result<Backlog, StoreError> {
        let mut conn = self.db.conn().await?;
        // The ready index holds exactly the waiting events.
        let row: BacklogRow = prepared(
            "SELECT count(*) AS depth, \
                    COALESCE(EXTRACT(EPOCH FROM now() - min(received_at)), 0)::float8 AS oldest_seconds \
             FROM guest_events WHERE state IN ('queued', 'processing')",
        )
        .get_result(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(Backlog { depth: u64::try_from(row.depth).unwrap_or_default(), oldest_seconds: row.oldest_seconds })
    }

    async fn overview(&self, failed_limit: u32) -> Result<QueueOverview, StoreError> {
        let mut conn = self.db.conn().await?;
        let by_state: Vec<StateCount> =
            prepared("SELECT state, count(*) AS count FROM guest_events GROUP BY state ORDER BY state")
                .load(&mut conn)
                .await
                .map_err(store_error)?;
        let failed: Vec<FailedRow> = prepared(
            "SELECT id, event_type, team_id, attempts, last_error, received_at FROM guest_events \
             WHERE state = 'failed' ORDER BY received_at DESC LIMIT $1",
        )
        .bind::<diesel::sql_types::BigInt, _>(i64::from(failed_limit))
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(QueueOverview {
            by_state: by_state.into_iter().map(|row| (row.state, row.count)).collect(),
            failed: failed
                .into_iter()
                .map(|row| FailedEvent {
                    id: row.id,
                    event_type: row.event_type,
                    team_id: TeamId::new(row.team_id),
                    attempts: row.attempts,
                    last_error: row.last_error,
                    received_at: row.received_at,
                })
                .collect(),
        })
    }

    async fn retry(&self, event: Uuid, now: OffsetDateTime) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let queued = prepared(
            "UPDATE guest_events SET state = 'queued', attempts = 0, available_at = $2 WHERE id = $1 AND state = 'failed'",
        )
        .bind::<SqlUuid, _>(event)
        .bind::<Timestamptz, _>(now)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(queued == 1)
    }
}
