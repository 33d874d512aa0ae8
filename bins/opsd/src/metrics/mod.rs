//! What `/metrics` serves beyond the HTTP surface (`crate::middleware::HttpMetrics`): the process,
//! the build, the database's pools and replicas, the report caches, the scheduled jobs, the
//! guest-event queue, the analytics store's circuit and the calls to third parties. Every label is
//! from a bounded set: pool, report, job and target names, never ids or URLs.

mod caches;
mod database;
mod operations;

pub use caches::ReportCacheMetrics;
pub use database::DatabaseMetrics;
pub use operations::OperationalMetrics;

use prometheus::{IntGaugeVec, Opts, Registry};

/// The process's figures (`process_*`: CPU, memory, open files, start time), the build's
/// (`opsd_build_info`), and the outbound calls' counter.
pub fn register_standard(registry: &Registry) -> prometheus::Result<()> {
    registry.register(Box::new(prometheus::process_collector::ProcessCollector::for_self()))?;
    let build = IntGaugeVec::new(
        Opts::new("opsd_build_info", "Always 1: the running build's version and commit"),
        &["version", "commit"],
    )?;
    build.with_label_values(&[env!("CARGO_PKG_VERSION"), env!("OPSD_COMMIT")]).set(1);
    registry.register(Box::new(build))?;
    opsd_outbound::register_metrics(registry)
}
