use std::sync::Arc;
use std::time::Instant;

use opsd_core::{Clock, StoreError};
use serde::Serialize;
use uuid::Uuid;

use crate::ports::ExpiryStore;

/// Reservations per claim.
pub const BATCH_SIZE: u32 = 100;
/// A sweep that leaves due reservations longer than this is unhealthy.
pub const EXPIRY_LAG_BOUND_SECONDS: f64 = 120.0;
/// Bounds one run (100,000 reservations); the next minute's run takes the rest.
const MAX_BATCHES: u32 = 1_000;

/// What a completed sweep records: counts only, no contact values, links, cookies or tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepReport {
    /// `ok`, or `failed` when the health gate is raised.
    pub status: &'static str,
    pub correlation_id: Uuid,
    pub duration_ms: u64,
    pub expired: u64,
    pub ignored: u64,
    pub accepted_events: u64,
    pub duplicate_events: u64,
    pub reconciliation_delta: i64,
    pub oldest_expiry_lag_seconds: f64,
}

impl SweepReport {
    pub fn healthy(&self) -> bool {
        self.status == "ok"
    }
}

pub struct ExpirySweep {
    store: Arc<dyn ExpiryStore>,
    clock: Arc<dyn Clock>,
}

impl ExpirySweep {
    pub fn new(store: Arc<dyn ExpiryStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Claims batches until none is due, then checks health: a nonzero reconciliation delta or a
    /// lag over 120 s makes the report `failed` (the caller records it before raising the gate).
    pub async fn run(&self, correlation_id: Uuid) -> Result<SweepReport, StoreError> {
        let started = Instant::now();
        let (mut expired, mut ignored, mut accepted, mut duplicates) = (0, 0, 0, 0);
        let mut max_lag: f64 = 0.0;
        let mut after = None;
        for _ in 0..MAX_BATCHES {
            let batch = self.store.expire_batch(self.clock.now(), BATCH_SIZE, after).await?;
            after = batch.last;
            expired += batch.expired;
            ignored += batch.candidates - batch.expired;
            accepted += batch.accepted_events;
            duplicates += batch.duplicate_events;
            max_lag = max_lag.max(batch.max_lag_seconds.unwrap_or(0.0));
            if batch.candidates < u64::from(BATCH_SIZE) {
                break;
            }
        }
        let health = self.store.health(self.clock.now()).await?;
        let lag = max_lag.max(health.oldest_due_lag_seconds.unwrap_or(0.0));
        let healthy = health.reconciliation_delta == 0 && lag <= EXPIRY_LAG_BOUND_SECONDS;
        let report = SweepReport {
            status: if healthy { "ok" } else { "failed" },
            correlation_id,
            duration_ms: started.elapsed().as_millis() as u64,
            expired,
            ignored,
            accepted_events: accepted,
            duplicate_events: duplicates,
            reconciliation_delta: health.reconciliation_delta,
            oldest_expiry_lag_seconds: (lag * 1000.0).round() / 1000.0,
        };
        if !healthy {
            tracing::error!(%correlation_id, delta = report.reconciliation_delta, lag = report.oldest_expiry_lag_seconds, "coupon expiry health gate raised");
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::MockClock;
    use time::OffsetDateTime;

    use super::*;
    use crate::ports::{BatchOutcome, ExpiryHealth, MockExpiryStore};

    fn clock() -> Arc<MockClock> {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap());
        Arc::new(clock)
    }

    fn batch(candidates: u64, expired: u64) -> BatchOutcome {
        BatchOutcome { candidates, expired, accepted_events: expired, duplicate_events: 0, max_lag_seconds: Some(30.0), last: None }
    }

    #[tokio::test]
    async fn full_batches_continue_and_counts_add_up() {
        let mut store = MockExpiryStore::new();
        let mut calls = 0;
        store.expect_expire_batch().times(3).returning(move |_, limit, _| {
            assert_eq!(limit, 100);
            calls += 1;
            Ok(match calls {
                1 => batch(100, 100),
                2 => batch(100, 98),
                _ => batch(7, 7),
            })
        });
        store.expect_health().returning(|_| Ok(ExpiryHealth { reconciliation_delta: 0, oldest_due_lag_seconds: None }));
        let report = ExpirySweep::new(Arc::new(store), clock()).run(Uuid::nil()).await.unwrap();
        assert_eq!((report.expired, report.ignored, report.accepted_events), (205, 2, 205));
        assert!(report.healthy());
        assert_eq!(report.oldest_expiry_lag_seconds, 30.0);
    }

    #[tokio::test]
    async fn a_delta_or_a_long_lag_fails_the_health_gate() {
        for (delta, lag) in [(1, None), (-2, None), (0, Some(120.5))] {
            let mut store = MockExpiryStore::new();
            store.expect_expire_batch().returning(|_, _, _| Ok(batch(0, 0)));
            store.expect_health().returning(move |_| Ok(ExpiryHealth { reconciliation_delta: delta, oldest_due_lag_seconds: lag }));
            let report = ExpirySweep::new(Arc::new(store), clock()).run(Uuid::nil()).await.unwrap();
            assert_eq!(report.status, "failed", "delta {delta}, lag {lag:?}");
        }
    }
}
