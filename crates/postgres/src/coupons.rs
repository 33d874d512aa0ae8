use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use opsd_core::{LocationId, StoreError, TeamId};
use opsd_coupons::{
    BatchOutcome, CouponStore, ExpiryCall, ExpiryHealth, ExpiryStore, NewOffer, Offer, OfferId, RedeemOutcome,
    Reservation, ReservationId, ReservationState, SweepKey,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::corrupt;
use crate::{Db, store_error};

/// The expiry step (`coupon_expire`, migrations 10 and 11): a batch of the sweep, or one reservation.
const EXPIRE: &str = "SELECT 1 AS batches, candidates, expired, accepted, max_lag, last_expires AS after_expires, \
                      last_id AS after_id FROM coupon_expire($1, $2, $3, $4, $5, $6, $7)";

/// Up to `$3` batches of the sweep in one round trip, each committed on its own (migration 19).
const EXPIRE_BATCHES: &str = "CALL coupon_expire_batches($1, $2, $3, $4, $5, $6, $7, NULL, NULL, NULL, NULL, NULL)";

/// Below this many due reservations one range is swept alone: splitting would cost more than it saves.
const MIN_DUE_TO_SPLIT: i64 = 1_000;

/// Keys splitting the due reservations into `$2` ranges of about equal size (one index-only pass).
const SPLIT_DUE: &str = "\
    SELECT expires_at, id FROM ( \
      SELECT expires_at, id, row_number() OVER (ORDER BY expires_at, id) AS n, count(*) OVER () AS due \
      FROM coupon_reservations WHERE state = 'active' AND expires_at <= $1) d \
    WHERE due >= $3 AND n % ceil(due::numeric / $2)::bigint = 0 AND n < due ORDER BY expires_at, id";

async fn expire_one(
    conn: &mut AsyncPgConnection,
    id: ReservationId,
    now: OffsetDateTime,
) -> Result<BatchOutcome, diesel::result::Error> {
    let counts: BatchesCounts = prepared(EXPIRE)
        .bind::<Timestamptz, _>(now)
        .bind::<Int4, _>(1)
        .bind::<Nullable<SqlUuid>, _>(Some(id.0))
        .bind::<Nullable<Timestamptz>, _>(None::<OffsetDateTime>)
        .bind::<Nullable<SqlUuid>, _>(None::<Uuid>)
        .bind::<Nullable<Timestamptz>, _>(None::<OffsetDateTime>)
        .bind::<Nullable<SqlUuid>, _>(None::<Uuid>)
        .get_result(conn)
        .await?;
    Ok(counts.into())
}

/// The summed OUT values of `coupon_expire_batches`, or one `coupon_expire` step's.
#[derive(QueryableByName)]
struct BatchesCounts {
    #[diesel(sql_type = Int4)]
    batches: i32,
    #[diesel(sql_type = BigInt)]
    candidates: i64,
    #[diesel(sql_type = BigInt)]
    expired: i64,
    #[diesel(sql_type = BigInt)]
    accepted: i64,
    #[diesel(sql_type = Nullable<Double>)]
    max_lag: Option<f64>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    after_expires: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    after_id: Option<Uuid>,
}

impl From<BatchesCounts> for BatchOutcome {
    fn from(counts: BatchesCounts) -> Self {
        BatchOutcome {
            batches: counts.batches as u32,
            candidates: counts.candidates as u64,
            expired: counts.expired as u64,
            accepted_events: counts.accepted as u64,
            duplicate_events: (counts.expired - counts.accepted) as u64,
            max_lag_seconds: counts.max_lag,
            last: counts.after_expires.zip(counts.after_id),
        }
    }
}

#[derive(QueryableByName)]
struct OfferRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = SqlUuid)]
    location_id: Uuid,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Int4)]
    capacity: i32,
    #[diesel(sql_type = Int4)]
    held: i32,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

impl From<OfferRow> for Offer {
    fn from(row: OfferRow) -> Self {
        Offer {
            id: OfferId(row.id),
            team_id: TeamId::new(row.team_id),
            location_id: LocationId(row.location_id),
            name: row.name,
            capacity: row.capacity,
            held: row.held,
            created_at: row.created_at,
        }
    }
}

#[derive(QueryableByName)]
struct ReservationRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    offer_id: Uuid,
    #[diesel(sql_type = Text)]
    guest_id: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Timestamptz)]
    expires_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    expired_at: Option<OffsetDateTime>,
}

impl TryFrom<ReservationRow> for Reservation {
    type Error = StoreError;

    fn try_from(row: ReservationRow) -> Result<Self, StoreError> {
        Ok(Reservation {
            id: ReservationId(row.id),
            offer_id: OfferId(row.offer_id),
            guest_id: row.guest_id,
            state: ReservationState::parse(&row.state).ok_or_else(|| corrupt("reservation state", &row.state))?,
            expires_at: row.expires_at,
            expired_at: row.expired_at,
        })
    }
}

const RESERVATION_OF_TEAM: &str = "SELECT r.id, r.offer_id, r.guest_id, r.state, r.expires_at, r.expired_at \
     FROM coupon_reservations r JOIN coupon_offers o ON o.id = r.offer_id WHERE r.id = $1 AND o.team_id = $2";

pub struct PgCouponStore {
    db: Db,
}

impl PgCouponStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl CouponStore for PgCouponStore {
    async fn create_offer(
        &self,
        team: &TeamId,
        offer: &NewOffer,
        at: OffsetDateTime,
    ) -> Result<Option<Offer>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<OfferRow> = prepared(
            "INSERT INTO coupon_offers (id, team_id, location_id, name, capacity, held, created_at) \
             SELECT $1, l.team_id, l.id, $4, $5, 0, $6 FROM locations l WHERE l.id = $2 AND l.team_id = $3 \
             RETURNING id, team_id, location_id, name, capacity, held, created_at",
        )
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<SqlUuid, _>(offer.location_id.0)
        .bind::<Text, _>(team.as_str())
        .bind::<Text, _>(&offer.name)
        .bind::<Int4, _>(offer.capacity)
        .bind::<Timestamptz, _>(at)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        Ok(row.map(Offer::from))
    }

    async fn offer(&self, team: &TeamId, id: OfferId) -> Result<Option<Offer>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<OfferRow> = prepared(
            "SELECT id, team_id, location_id, name, capacity, held, created_at FROM coupon_offers WHERE id = $1 AND team_id = $2",
        )
        .bind::<SqlUuid, _>(id.0)
        .bind::<Text, _>(team.as_str())
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        Ok(row.map(Offer::from))
    }

    async fn reservation(
        &self,
        team: &TeamId,
        id: ReservationId,
        now: OffsetDateTime,
    ) -> Result<Option<Reservation>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<ReservationRow> = conn
            .transaction::<_, diesel::result::Error, _>(async |conn| {
                let row: Option<ReservationRow> = prepared(RESERVATION_OF_TEAM)
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<Text, _>(team.as_str())
                    .get_result(conn)
                    .await
                    .optional()?;
                match row {
                    Some(row) if row.state == "active" && row.expires_at <= now => {
                        expire_one(conn, id, now).await?;
                        prepared(RESERVATION_OF_TEAM)
                            .bind::<SqlUuid, _>(id.0)
                            .bind::<Text, _>(team.as_str())
                            .get_result(conn)
                            .await
                            .optional()
                    }
                    other => Ok(other),
                }
            })
            .await
            .map_err(store_error)?;
        row.map(Reservation::try_from).transpose()
    }

    async fn redeem(&self, team: &TeamId, id: ReservationId, now: OffsetDateTime) -> Result<RedeemOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        let (kind, row) = conn
            .transaction::<_, diesel::result::Error, _>(async |conn| {
                let locked: Option<ReservationRow> = diesel::sql_query(format!("{RESERVATION_OF_TEAM} FOR UPDATE OF r"))
                    .bind::<SqlUuid, _>(id.0)
                    .bind::<Text, _>(team.as_str())
                    .get_result(conn)
                    .await
                    .optional()?;
                let Some(row) = locked else { return Ok(("not_found", None)) };
                if row.state != "active" {
                    let kind = if row.state == "expired" { "expired" } else { "not_active" };
                    return Ok((kind, Some(row)));
                }
                if row.expires_at <= now {
                    // Due: the same expiry step as the sweep, then refuse the redeem.
                    expire_one(conn, id, now).await?;
                    let expired = prepared(RESERVATION_OF_TEAM)
                        .bind::<SqlUuid, _>(id.0)
                        .bind::<Text, _>(team.as_str())
                        .get_result(conn)
                        .await?;
                    return Ok(("expired", Some(expired)));
                }
                let redeemed: ReservationRow = prepared(
                    "WITH r AS (UPDATE coupon_reservations SET state = 'redeemed', redeemed_at = $2 \
                                WHERE id = $1 AND state = 'active' RETURNING *), \
                          released AS (UPDATE coupon_offers o SET held = o.held - 1 FROM r WHERE o.id = r.offer_id RETURNING 1) \
                     SELECT r.id, r.offer_id, r.guest_id, r.state, r.expires_at, r.expired_at FROM r, released",
                )
                .bind::<SqlUuid, _>(id.0)
                .bind::<Timestamptz, _>(now)
                .get_result(conn)
                .await?;
                Ok(("redeemed", Some(redeemed)))
            })
            .await
            .map_err(store_error)?;
        let reservation = row.map(Reservation::try_from).transpose()?;
        Ok(match (kind, reservation) {
            ("redeemed", Some(r)) => RedeemOutcome::Redeemed(r),
            ("expired", Some(r)) => RedeemOutcome::Expired(r),
            ("not_active", Some(r)) => RedeemOutcome::NotActive(r),
            _ => RedeemOutcome::NotFound,
        })
    }
}

pub struct PgExpiryStore {
    db: Db,
}

impl PgExpiryStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// [`ExpiryStore::expire_batches`] on a given connection, outside any transaction block: one
    /// statement (a `CALL`) whatever the number of batches.
    pub async fn expire_batches_on(conn: &mut AsyncPgConnection, call: ExpiryCall) -> Result<BatchOutcome, StoreError> {
        let counts: BatchesCounts = prepared(EXPIRE_BATCHES)
            .bind::<Timestamptz, _>(call.now)
            .bind::<Int4, _>(call.limit as i32)
            .bind::<Int4, _>(call.max_batches as i32)
            .bind::<Nullable<Timestamptz>, _>(call.after.map(|(at, _)| at))
            .bind::<Nullable<SqlUuid>, _>(call.after.map(|(_, id)| id))
            .bind::<Nullable<Timestamptz>, _>(call.until.map(|(at, _)| at))
            .bind::<Nullable<SqlUuid>, _>(call.until.map(|(_, id)| id))
            .get_result(conn)
            .await
            .map_err(store_error)?;
        Ok(counts.into())
    }
}

#[async_trait]
impl ExpiryStore for PgExpiryStore {
    async fn expire_batches(&self, call: ExpiryCall) -> Result<BatchOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        Self::expire_batches_on(&mut conn, call).await
    }

    async fn split_due(&self, now: OffsetDateTime, parts: u32) -> Result<Vec<SweepKey>, StoreError> {
        #[derive(QueryableByName)]
        struct Key {
            #[diesel(sql_type = Timestamptz)]
            expires_at: OffsetDateTime,
            #[diesel(sql_type = SqlUuid)]
            id: Uuid,
        }
        if parts < 2 {
            return Ok(Vec::new());
        }
        let mut conn = self.db.conn().await?;
        let keys: Vec<Key> = prepared(SPLIT_DUE)
            .bind::<Timestamptz, _>(now)
            .bind::<Int4, _>(parts as i32)
            .bind::<BigInt, _>(MIN_DUE_TO_SPLIT)
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(keys.into_iter().map(|k| (k.expires_at, k.id)).collect())
    }

    async fn health(&self, now: OffsetDateTime) -> Result<ExpiryHealth, StoreError> {
        #[derive(QueryableByName)]
        struct Health {
            #[diesel(sql_type = BigInt)]
            delta: i64,
            #[diesel(sql_type = Nullable<Double>)]
            lag: Option<f64>,
        }
        let mut conn = self.db.conn().await?;
        // One statement, one snapshot: held and the active count are read consistently.
        let health: Health = prepared(
            "SELECT (SELECT coalesce(sum(held), 0) FROM coupon_offers)::bigint \
                  - (SELECT count(*) FROM coupon_reservations WHERE state = 'active') AS delta, \
                    (SELECT extract(epoch FROM ($1 - min(expires_at))) FROM coupon_reservations \
                      WHERE state = 'active' AND expires_at <= $1)::float8 AS lag",
        )
        .bind::<Timestamptz, _>(now)
        .get_result(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(ExpiryHealth { reconciliation_delta: health.delta, oldest_due_lag_seconds: health.lag })
    }
}

use crate::prepared::prepared;
use diesel::OptionalExtension;
