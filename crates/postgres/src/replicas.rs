//! Reads from streaming replicas, and when a replica may answer one.
//!
//! A replica is *fresh as of* an instant `t` when it has replayed the WAL position the primary
//! had reached at `t`: it then holds every write acknowledged before `t`. A monitor samples the
//! primary's `pg_current_wal_lsn()` and then each replica's `pg_last_wal_replay_lsn()` a few times a
//! second, and moves each replica's instant forward. WAL positions are compared, never
//! `pg_last_xact_replay_timestamp()`: on an idle primary that timestamp grows old while the
//! replica is fully caught up.
//!
//! A read may go to a replica fresh as of both
//! - `now - min(DATABASE_REPLICA_MAX_LAG_MS, 1 s)`: every instance promises that a read beginning
//!   one second after a write was acknowledged reflects it, so the setting can only tighten that;
//! - the last cache invalidation this instance saw (its own write, or another instance's `NOTIFY`):
//!   a cache is never refilled from a replica behind the write that emptied it, even within that
//!   second. (This is the GitLab load balancer's sticky read, with the instant the invalidation
//!   arrived standing in for the writer's WAL position: the position is sampled after it.)
//!
//! With samples every 200 ms and streaming replication on a LAN, a healthy replica is known fresh
//! as of 200-400 ms ago, and reads stay on it.
//!
//! Otherwise, and when a replica cannot be had or fails the read (down, or a query cancelled for a
//! recovery conflict), the primary answers: a replica never turns a read into an error.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use diesel::sql_types::Text;
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use opsd_core::StoreError;

use crate::pool::pool_error;
use crate::prepared::prepared;

/// A write acknowledged this long ago is visible to every read, on every instance.
pub const VISIBILITY: Duration = Duration::from_secs(1);

/// How often the monitor samples the WAL positions.
pub const MONITOR_INTERVAL: Duration = Duration::from_millis(200);

pub(crate) struct Replicas {
    pub(crate) members: Vec<Replica>,
    max_lag: Duration,
    /// Milliseconds since `epoch` of the last cache invalidation seen here.
    invalidated_at: AtomicU64,
    epoch: Instant,
    pub(crate) reads: AtomicU64,
    pub(crate) fallbacks: AtomicU64,
}

pub(crate) struct Replica {
    pub(crate) pool: Pool<AsyncPgConnection>,
    /// Milliseconds since `epoch` as of which it is fresh, plus one (0: never).
    fresh_as_of: AtomicU64,
}

/// What `/metrics` and the logs show of the replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaStats {
    /// Reads a replica answered.
    pub reads: u64,
    /// Reads that could have gone to a replica and went to the primary.
    pub fallbacks: u64,
    /// Per replica, in `DATABASE_REPLICA_URLS` order: how far behind it is known to be (`None`:
    /// not yet known to have replayed anything).
    pub lag: Vec<Option<Duration>>,
}

#[derive(diesel::QueryableByName)]
struct Position {
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    lsn: Option<String>,
}

impl Replicas {
    pub(crate) fn new(pools: Vec<Pool<AsyncPgConnection>>, max_lag: Duration) -> Self {
        Self {
            members: pools.into_iter().map(|pool| Replica { pool, fresh_as_of: AtomicU64::new(0) }).collect(),
            max_lag: max_lag.min(VISIBILITY),
            invalidated_at: AtomicU64::new(0),
            epoch: Instant::now(),
            reads: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
        }
    }

    /// Connects to each replica once, in `DATABASE_REPLICA_URLS` order (`opsd check-config`).
    pub(crate) async fn check(&self) -> Vec<Result<(), StoreError>> {
        let mut reached = Vec::new();
        for member in &self.members {
            reached.push(member.pool.get().await.map(drop).map_err(crate::pool::pool_error));
        }
        reached
    }

    fn millis(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX)
    }

    /// A replica must then be fresh as of a later millisecond than this one (a sample begun in
    /// the same millisecond may have read the primary's position before the write's commit).
    pub(crate) fn note_invalidation(&self) {
        self.invalidated_at.fetch_max(self.millis(Instant::now()) + 2, Ordering::Relaxed);
    }

    /// A replica that may answer a read beginning now, the freshest first.
    pub(crate) fn pick(&self) -> Option<&Replica> {
        let now = self.millis(Instant::now());
        let lag_bound = now.saturating_sub(u64::try_from(self.max_lag.as_millis()).unwrap_or(u64::MAX)) + 1;
        let needed = lag_bound.max(self.invalidated_at.load(Ordering::Relaxed));
        self.members
            .iter()
            .map(|replica| (replica, replica.fresh_as_of.load(Ordering::Relaxed)))
            .filter(|(_, fresh)| *fresh >= needed)
            .max_by_key(|(_, fresh)| *fresh)
            .map(|(replica, _)| replica)
    }

    /// One round of the monitor: the primary's position, then each replica's.
    pub(crate) async fn sample(&self, primary: &Pool<AsyncPgConnection>) {
        let started = self.millis(Instant::now()) + 1;
        let Some(target) = position(primary, "SELECT pg_current_wal_lsn()::text AS lsn").await else { return };
        for replica in &self.members {
            let replayed = position(&replica.pool, "SELECT pg_last_wal_replay_lsn()::text AS lsn").await;
            if replayed.is_some_and(|replayed| replayed >= target) {
                replica.fresh_as_of.fetch_max(started, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn stats(&self) -> ReplicaStats {
        let now = self.millis(Instant::now()) + 1;
        ReplicaStats {
            reads: self.reads.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            lag: self
                .members
                .iter()
                .map(|replica| match replica.fresh_as_of.load(Ordering::Relaxed) {
                    0 => None,
                    fresh => Some(Duration::from_millis(now.saturating_sub(fresh))),
                })
                .collect(),
        }
    }
}

/// A WAL position as a number; `None` when the server cannot be asked, or (a primary asked for its
/// replay position) has none.
async fn position(pool: &Pool<AsyncPgConnection>, sql: &'static str) -> Option<u64> {
    use diesel_async::RunQueryDsl;
    let mut conn = pool.get().await.map_err(pool_error).ok()?;
    let answer = prepared(sql).get_result::<Position>(&mut conn).await.ok()?;
    parse_lsn(answer.lsn.as_deref()?)
}

/// `16/B374D848` → 0x16_B374D848.
pub(crate) fn parse_lsn(text: &str) -> Option<u64> {
    let (high, low) = text.split_once('/')?;
    Some((u64::from_str_radix(high, 16).ok()? << 32) | u64::from_str_radix(low, 16).ok()?)
}

/// Samples the positions until the process ends.
pub(crate) async fn monitor(replicas: Arc<Replicas>, primary: Pool<AsyncPgConnection>) {
    let mut ticks = tokio::time::interval(MONITOR_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        // A replica or primary that hangs must not stop the others' samples for long.
        let _ = tokio::time::timeout(Duration::from_secs(2), replicas.sample(&primary)).await;
    }
}

/// Whether a replica's failure should send the read to the primary: faults of the replica or of
/// the way to it, and queries it cancelled for a recovery conflict.
pub(crate) fn primary_may_answer(error: &StoreError) -> bool {
    matches!(error, StoreError::Unavailable(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_positions_compare_as_numbers() {
        assert_eq!(parse_lsn("0/0"), Some(0));
        assert_eq!(parse_lsn("16/B374D848"), Some(0x16_B374_D848));
        assert!(parse_lsn("1/FFFFFFFF") < parse_lsn("2/0"));
        assert!(parse_lsn("0/A") > parse_lsn("0/9"), "hex, not text order");
        assert_eq!(parse_lsn("garbage"), None);
    }
}
