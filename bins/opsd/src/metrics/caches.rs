//! The report caches' hits and misses, read from the caches at each scrape.

use opsd_cache::MokaReportCache;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntCounterVec, Opts};

/// A cache of any report type, seen only through its lookup counts.
pub trait CountsLookups: Send + Sync {
    fn lookups(&self) -> (u64, u64);
}

impl<V: Send + Sync + 'static> CountsLookups for MokaReportCache<V> {
    fn lookups(&self) -> (u64, u64) {
        MokaReportCache::lookups(self)
    }
}

pub struct ReportCacheMetrics {
    caches: Vec<(&'static str, Box<dyn CountsLookups>)>,
    lookups: IntCounterVec,
}

impl ReportCacheMetrics {
    /// `caches`: each report's name and its cache.
    pub fn new(caches: Vec<(&'static str, Box<dyn CountsLookups>)>) -> Self {
        let lookups = IntCounterVec::new(
            Opts::new("opsd_report_cache_lookups_total", "Report cache lookups by report and result (hit, miss)"),
            &["report", "result"],
        )
        .expect("a valid counter");
        Self { caches, lookups }
    }
}

impl Collector for ReportCacheMetrics {
    fn desc(&self) -> Vec<&Desc> {
        self.lookups.desc()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        for (report, cache) in &self.caches {
            let (hits, misses) = cache.lookups();
            for (result, total) in [("hit", hits), ("miss", misses)] {
                let counter = self.lookups.with_label_values(&[report, result]);
                counter.inc_by(total.saturating_sub(counter.get()));
            }
        }
        self.lookups.collect()
    }
}
