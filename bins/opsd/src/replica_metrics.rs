//! The replicas' figures on `/metrics`, read from the pool at each scrape.

use opsd_postgres::Db;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{GaugeVec, IntCounterVec, Opts};

pub struct ReplicaMetrics {
    db: Db,
    reads: IntCounterVec,
    lag: GaugeVec,
}

impl ReplicaMetrics {
    /// `None` when no replica is configured.
    pub fn new(db: Db) -> Option<Self> {
        db.replica_stats()?;
        let reads = IntCounterVec::new(
            Opts::new("opsd_db_replica_reads_total", "Report reads by where they ran: replica, or primary (fallback)"),
            &["served_by"],
        )
        .expect("a valid counter");
        let lag = GaugeVec::new(
            Opts::new(
                "opsd_db_replica_lag_seconds",
                "How long ago the primary's WAL position that each replica is known to have replayed was current (+Inf: not known to have replayed anything, as when it cannot be reached)",
            ),
            &["replica"],
        )
        .expect("a valid gauge");
        Some(Self { db, reads, lag })
    }
}

impl Collector for ReplicaMetrics {
    fn desc(&self) -> Vec<&Desc> {
        self.reads.desc().into_iter().chain(self.lag.desc()).collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        if let Some(stats) = self.db.replica_stats() {
            for (label, total) in [("replica", stats.reads), ("primary", stats.fallbacks)] {
                let counter = self.reads.with_label_values(&[label]);
                counter.inc_by(total.saturating_sub(counter.get()));
            }
            self.lag.reset();
            for (index, lag) in stats.lag.iter().enumerate() {
                let seconds = lag.map_or(f64::INFINITY, |lag| lag.as_secs_f64());
                self.lag.with_label_values(&[&index.to_string()]).set(seconds);
            }
        }
        self.reads.collect().into_iter().chain(self.lag.collect()).collect()
    }
}
