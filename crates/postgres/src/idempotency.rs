//! Idempotency keys in PostgreSQL: one row per caller and key, claimed in one statement.

use std::time::Duration;

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Binary, Bool, Nullable, SmallInt, Text};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use opsd_core::StoreError;
use opsd_idempotency::{Claim, Fingerprint, IdempotencyKey, IdempotencyStore, KeyScope, StoredAnswer};

use crate::prepared::prepared;
use crate::{Db, store_error};

pub struct PgIdempotencyStore {
    db: Db,
}

impl PgIdempotencyStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Existing {
    #[diesel(sql_type = Bool)]
    claimed: bool,
    #[diesel(sql_type = Nullable<Bool>)]
    expired: Option<bool>,
    #[diesel(sql_type = Binary)]
    request_hash: Vec<u8>,
    #[diesel(sql_type = Nullable<SmallInt>)]
    status: Option<i16>,
    #[diesel(sql_type = Nullable<Text>)]
    content_type: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    location: Option<String>,
    #[diesel(sql_type = Nullable<Binary>)]
    body: Option<Vec<u8>>,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

#[async_trait]
impl IdempotencyStore for PgIdempotencyStore {
    async fn claim(
        &self,
        scope: &KeyScope,
        key: &IdempotencyKey,
        fingerprint: &Fingerprint,
        lease: Duration,
    ) -> Result<Claim, StoreError> {
        let mut conn = self.db.conn().await?;
        // Takes a new key, or reads the one there. The lease is the database's clock, not this
        // instance's: `expired` says its holder stopped without an answer.
        let row = prepared(
            "WITH taken AS (
                 INSERT INTO idempotency_keys (scope, key, request_hash, locked_until)
                 VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
                 ON CONFLICT (scope, key) DO NOTHING
                 RETURNING true AS claimed, false AS expired, request_hash, status, content_type, location, body
             )
             SELECT claimed, expired, request_hash, status, content_type, location, body FROM taken
             UNION ALL
             SELECT false, locked_until < now(), request_hash, status, content_type, location, body
             FROM idempotency_keys
             WHERE scope = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM taken)",
        )
        .bind::<Text, _>(scope.as_str())
        .bind::<Text, _>(key.as_str())
        .bind::<Binary, _>(fingerprint.0.as_slice())
        .bind::<BigInt, _>(millis(lease))
        .get_result::<Existing>(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        // No row: another request inserted the key after this statement's snapshot was taken
        // (the conflict was seen, the row is not visible to the read), or released it in between.
        // Either way this request must not run now; the client's retry finds out which.
        let Some(row) = row else { return Ok(Claim::InProgress) };
        Ok(if row.claimed {
            Claim::Run
        } else if row.request_hash != fingerprint.0 {
            Claim::Mismatch
        } else {
            match row.status {
                None if row.expired == Some(true) => Claim::OutcomeUnknown,
                None => Claim::InProgress,
                Some(status) => Claim::Replay(StoredAnswer {
                    status: u16::try_from(status).map_err(|_| crate::error::corrupt("status", &status.to_string()))?,
                    content_type: row.content_type,
                    location: row.location,
                    body: row.body.unwrap_or_default(),
                }),
            }
        })
    }

    async fn complete(&self, scope: &KeyScope, key: &IdempotencyKey, answer: &StoredAnswer) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "UPDATE idempotency_keys SET status = $3, content_type = $4, location = $5, body = $6, locked_until = NULL
             WHERE scope = $1 AND key = $2 AND status IS NULL",
        )
        .bind::<Text, _>(scope.as_str())
        .bind::<Text, _>(key.as_str())
        .bind::<SmallInt, _>(i16::try_from(answer.status).unwrap_or(i16::MAX))
        .bind::<Nullable<Text>, _>(answer.content_type.as_deref())
        .bind::<Nullable<Text>, _>(answer.location.as_deref())
        .bind::<Binary, _>(answer.body.as_slice())
        .execute(&mut conn)
        .await
        .map(drop)
        .map_err(store_error)
    }

    async fn release(&self, scope: &KeyScope, key: &IdempotencyKey) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared("DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status IS NULL")
            .bind::<Text, _>(scope.as_str())
            .bind::<Text, _>(key.as_str())
            .execute(&mut conn)
            .await
            .map(drop)
            .map_err(store_error)
    }

    async fn prune(&self, age: Duration) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        let pruned = prepared(
            "WITH gone AS (
                 DELETE FROM idempotency_keys
                 WHERE created_at < now() - $1 * interval '1 millisecond'
                   AND (status IS NOT NULL OR locked_until < now())
                 RETURNING 1
             )
             SELECT count(*) AS count FROM gone",
        )
        .bind::<BigInt, _>(millis(age))
        .get_result::<Count>(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(u64::try_from(pruned.count).unwrap_or_default())
    }
}
