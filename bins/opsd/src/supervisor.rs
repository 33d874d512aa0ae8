//! Background tasks that must not die silently: each is restarted with backoff when it ends or
//! panics, and its state is shown in `/health/ready` and `/metrics`.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};
use serde::Serialize;
use tokio::task::JoinHandle;
use utoipa::ToSchema;

/// The first wait before a restart; it doubles with each quick failure, up to the cap.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// A task that ran this long before it ended restarts after the first backoff again.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// What a run of a task returns when it ends: why, for the log and the health details.
pub type TaskRun = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// One background task's state, as `/health/ready` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskState {
    /// `running`, or `restarting` while it waits for its next start.
    pub state: &'static str,
    pub restarts: u64,
    /// Why its last run ended, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The states of every supervised task, and their metrics.
#[derive(Clone)]
pub struct Supervisor {
    tasks: Arc<Mutex<BTreeMap<&'static str, TaskState>>>,
    up: IntGaugeVec,
    restarts: IntCounterVec,
}

impl Supervisor {
    pub fn new(registry: &Registry) -> Self {
        let up = IntGaugeVec::new(
            Opts::new("opsd_background_task_up", "1 while a background task runs, 0 while it restarts"),
            &["task"],
        )
        .expect("a valid gauge");
        let restarts = IntCounterVec::new(
            Opts::new("opsd_background_task_restarts_total", "Restarts of a background task"),
            &["task"],
        )
        .expect("a valid counter");
        registry.register(Box::new(up.clone())).expect("registered once");
        registry.register(Box::new(restarts.clone())).expect("registered once");
        Self { tasks: Arc::default(), up, restarts }
    }

    /// Every supervised task by name.
    pub fn states(&self) -> BTreeMap<&'static str, TaskState> {
        self.tasks.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn set(&self, name: &'static str, update: impl FnOnce(&mut TaskState)) {
        let mut tasks = self.tasks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let state = tasks.entry(name).or_insert(TaskState { state: "running", restarts: 0, last_error: None });
        update(state);
        self.up.with_label_values(&[name]).set(i64::from(state.state == "running"));
    }

    /// Runs `start()` as a task, and again whenever a run ends or panics, waiting 250 ms before
    /// the first restart and doubling the wait after each quick failure (at most 10 s).
    pub fn spawn(&self, name: &'static str, mut start: impl FnMut() -> TaskRun + Send + 'static) -> JoinHandle<()> {
        let supervisor = self.clone();
        supervisor.set(name, |_| {});
        self.restarts.with_label_values(&[name]).inc_by(0);
        tokio::spawn(async move {
            let mut backoff = FIRST_BACKOFF;
            loop {
                let started = Instant::now();
                supervisor.set(name, |state| state.state = "running");
                let run = tokio::spawn(start());
                // Stopping the supervisor (the server stops) stops the run too.
                let _stop_with_supervisor = AbortOnDrop(run.abort_handle());
                let why = match run.await {
                    Ok(Ok(())) => "it ended".to_owned(),
                    Ok(Err(error)) => error,
                    Err(join) if join.is_panic() => "it panicked".to_owned(),
                    Err(_) => return, // aborted: the server is stopping
                };
                if started.elapsed() >= HEALTHY_RUN {
                    backoff = FIRST_BACKOFF;
                }
                tracing::error!(task = name, reason = %why, retry_in_ms = backoff.as_millis() as u64, "a background task stopped; restarting it");
                supervisor.restarts.with_label_values(&[name]).inc();
                supervisor.set(name, |state| {
                    state.state = "restarting";
                    state.restarts += 1;
                    state.last_error = Some(why);
                });
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        })
    }
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    // The clock is paused and advances only when every task waits, so the backoffs (250 ms, then
    // 500 ms) have passed by the 1.2 s mark however loaded the machine is.
    #[tokio::test(start_paused = true)]
    async fn a_task_that_panics_or_ends_is_restarted_and_its_restarts_are_shown() {
        let registry = Registry::new();
        let supervisor = Supervisor::new(&registry);
        let runs = Arc::new(AtomicU32::new(0));
        let seen = runs.clone();
        let handle = supervisor.spawn("flaky", move || {
            let run = seen.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                match run {
                    0 => panic!("the first run panics"),
                    1 => Err("the second run loses its connection".to_owned()),
                    _ => std::future::pending().await,
                }
            })
        });
        tokio::time::sleep(Duration::from_millis(1_200)).await;
        assert_eq!(runs.load(Ordering::SeqCst), 3, "restarted after a panic and after an error");
        let state = supervisor.states()["flaky"].clone();
        assert_eq!(
            state,
            TaskState { state: "running", restarts: 2, last_error: Some("the second run loses its connection".into()) }
        );
        assert_eq!(supervisor.up.with_label_values(&["flaky"]).get(), 1);
        assert_eq!(supervisor.restarts.with_label_values(&["flaky"]).get(), 2);
        handle.abort();
    }
}
