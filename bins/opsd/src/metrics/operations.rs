//! The scheduled jobs' runs, and the figures read afresh at each scrape: the guest-event queue
//! and the analytics store's circuit.

use std::time::Duration;

use opsd_jobs::JobStatus;
use prometheus::{Gauge, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry};

use crate::state::AppState;

/// How long a scrape waits for the queue's figures: a scrape never hangs on the database.
const QUEUE_READ_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Clone)]
pub struct OperationalMetrics {
    job_runs: IntCounterVec,
    job_duration: HistogramVec,
    queue_depth: IntGauge,
    queue_oldest: Gauge,
    circuit_open: IntGauge,
}

impl OperationalMetrics {
    pub fn new(registry: &Registry) -> prometheus::Result<Self> {
        let job_runs = IntCounterVec::new(
            Opts::new(
                "opsd_job_runs_total",
                "Calls of a scheduled job by outcome: ok, partial, failed, skipped (another run held it), disabled, error",
            ),
            // Not `job`: Prometheus gives that label to the scrape target.
            &["job_name", "outcome"],
        )?;
        let job_duration = HistogramVec::new(
            HistogramOpts::new("opsd_job_duration_seconds", "How long a scheduled job's call took")
                .buckets(vec![0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0]),
            &["job_name"],
        )?;
        let queue_depth =
            IntGauge::new("opsd_guest_event_queue_depth", "Guest events waiting: queued, or being processed")?;
        let queue_oldest = Gauge::new(
            "opsd_guest_event_queue_oldest_seconds",
            "Since the oldest waiting guest event was received (0 when none waits)",
        )?;
        let circuit_open = IntGauge::new(
            "opsd_analytics_circuit_open",
            "1 while the analytics store's circuit breaker refuses reads, else 0",
        )?;
        registry.register(Box::new(job_runs.clone()))?;
        registry.register(Box::new(job_duration.clone()))?;
        registry.register(Box::new(queue_depth.clone()))?;
        registry.register(Box::new(queue_oldest.clone()))?;
        registry.register(Box::new(circuit_open.clone()))?;
        Ok(Self { job_runs, job_duration, queue_depth, queue_oldest, circuit_open })
    }

    /// One call of `job`: its status, or `None` when the call failed before it had one.
    pub fn job_called(&self, job: &str, status: Option<JobStatus>, took: Duration) {
        let outcome = status.map_or("error", JobStatus::as_str);
        self.job_runs.with_label_values(&[job, outcome]).inc();
        self.job_duration.with_label_values(&[job]).observe(took.as_secs_f64());
    }

    /// Reads what is only known by asking: the circuit, and the queue (kept as last read when the
    /// database does not answer in time; its own alerts cover that).
    pub async fn refresh(&self, state: &AppState) {
        self.circuit_open.set(i64::from(state.optimization.store_circuit_open()));
        match tokio::time::timeout(QUEUE_READ_TIMEOUT, state.guest_event_queue.backlog()).await {
            Ok(Ok(backlog)) => {
                self.queue_depth.set(i64::try_from(backlog.depth).unwrap_or(i64::MAX));
                self.queue_oldest.set(backlog.oldest_seconds);
            }
            Ok(Err(error)) => tracing::debug!(%error, "the guest-event queue's figures could not be read"),
            Err(_) => tracing::debug!("the guest-event queue's figures were not read in time"),
        }
    }
}
