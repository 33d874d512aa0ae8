//! The database's pools and replicas, read from the pools at each scrape.

use opsd_postgres::Db;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{GaugeVec, IntCounterVec, IntGaugeVec, Opts};

pub struct DatabaseMetrics {
    db: Db,
    /// Connections by pool (`primary`, `replica0`, ...) and state: `max`, `open`, `idle`, and
    /// `waiting` (requests waiting for one).
    connections: IntGaugeVec,
    reads: IntCounterVec,
    lag: GaugeVec,
}

impl DatabaseMetrics {
    pub fn new(db: Db) -> Self {
        let connections = IntGaugeVec::new(
            Opts::new(
                "opsd_db_pool_connections",
                "A pool's connections by state: max (its size), open, idle; and waiting: requests waiting for one",
            ),
            &["pool", "state"],
        )
        .expect("a valid gauge");
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
        Self { db, connections, reads, lag }
    }
}

impl Collector for DatabaseMetrics {
    fn desc(&self) -> Vec<&Desc> {
        self.connections.desc().into_iter().chain(self.reads.desc()).chain(self.lag.desc()).collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        for pool in self.db.pool_status() {
            for (state, count) in
                [("max", pool.max), ("open", pool.open), ("idle", pool.idle), ("waiting", pool.waiting)]
            {
                self.connections.with_label_values(&[&pool.name, state]).set(i64::try_from(count).unwrap_or(i64::MAX));
            }
        }
        let mut families = self.connections.collect();
        // Without replicas, their families are not served at all.
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
            families.extend(self.reads.collect());
            families.extend(self.lag.collect());
        }
        families
    }
}
