use std::sync::{Arc, Mutex};

use opsd_core::Clock;
use time::{Duration, OffsetDateTime};

/// Consecutive failures that open the circuit.
const FAILURE_THRESHOLD: u32 = 5;
/// How long an open circuit refuses calls before one trial may pass, by default
/// (`OPTIMIZATION_BREAKER_OPEN_SECONDS`).
pub const DEFAULT_OPEN_FOR: Duration = Duration::seconds(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("circuit open")]
pub struct CircuitOpen {
    pub retry_after_seconds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: OffsetDateTime,
    },
    /// One trial call is in flight since `since`; its outcome closes or reopens the circuit. A
    /// trial that neither succeeds nor fails (it was cancelled, or hangs) does not hold the
    /// circuit: dropping its permit reopens it for another trial at once, and a trial older than
    /// the open period is given up.
    HalfOpen {
        since: OffsetDateTime,
    },
}

/// A circuit breaker around a store: after 5 consecutive failures it opens for the open period
/// (30 s by default), then lets one trial call decide.
pub struct CircuitBreaker {
    state: Mutex<State>,
    clock: Arc<dyn Clock>,
    open_for: Duration,
}

/// Leave to make one call. Report its outcome with `success` or `failure`; a permit dropped
/// without either (its call was cancelled) frees the trial slot it held.
#[must_use = "report the call's outcome"]
pub struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    trial: bool,
}

impl Permit<'_> {
    pub fn success(mut self) {
        self.trial = false;
        *self.breaker.lock() = State::Closed { failures: 0 };
    }

    pub fn failure(mut self) {
        self.trial = false;
        self.breaker.record_failure();
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.trial {
            tracing::info!("the circuit's trial call was cancelled; the next call may try again");
            *self.breaker.lock() = State::Open { until: self.breaker.clock.now() };
        }
    }
}

impl CircuitBreaker {
    pub fn new(clock: Arc<dyn Clock>, open_for: Duration) -> Self {
        Self { state: Mutex::new(State::Closed { failures: 0 }), clock, open_for }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a plain value: a panic elsewhere cannot leave it half-written.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Leave for a call to go to the store now, or how long to wait.
    pub fn admit(&self) -> Result<Permit<'_>, CircuitOpen> {
        let mut state = self.lock();
        let now = self.clock.now();
        match *state {
            State::Closed { .. } => Ok(Permit { breaker: self, trial: false }),
            State::Open { until } if now < until => {
                let left = (until - now).whole_seconds().max(1) as u64;
                Err(CircuitOpen { retry_after_seconds: left })
            }
            State::HalfOpen { since } if now < since + self.open_for => Err(CircuitOpen { retry_after_seconds: 1 }),
            State::Open { .. } | State::HalfOpen { .. } => {
                *state = State::HalfOpen { since: now };
                Ok(Permit { breaker: self, trial: true })
            }
        }
    }

    /// Whether calls are refused now (open, or its one trial call is out).
    pub fn is_open(&self) -> bool {
        let now = self.clock.now();
        match *self.lock() {
            State::Closed { .. } => false,
            State::Open { until } => now < until,
            State::HalfOpen { since } => now < since + self.open_for,
        }
    }

    fn record_failure(&self) {
        let mut state = self.lock();
        *state = match *state {
            State::Closed { failures } if failures + 1 < FAILURE_THRESHOLD => State::Closed { failures: failures + 1 },
            _ => {
                tracing::warn!("analytics store circuit opened for {} s", self.open_for.whole_seconds());
                State::Open { until: self.clock.now() + self.open_for }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use opsd_core::MockClock;

    use super::*;

    fn breaker() -> (CircuitBreaker, Arc<AtomicI64>) {
        let now = Arc::new(AtomicI64::new(1_000_000));
        let seen = now.clone();
        let mut clock = MockClock::new();
        clock.expect_now().returning(move || OffsetDateTime::from_unix_timestamp(seen.load(Ordering::SeqCst)).unwrap());
        (CircuitBreaker::new(Arc::new(clock), DEFAULT_OPEN_FOR), now)
    }

    fn fail(breaker: &CircuitBreaker, times: usize) {
        for _ in 0..times {
            breaker.admit().expect("admitted").failure();
        }
    }

    fn refused(breaker: &CircuitBreaker) -> Option<u64> {
        breaker.admit().err().map(|open| open.retry_after_seconds)
    }

    #[test]
    fn five_consecutive_failures_open_it_and_a_success_resets_the_count() {
        let (breaker, _) = breaker();
        fail(&breaker, 4);
        breaker.admit().unwrap().success();
        fail(&breaker, 4);
        assert!(breaker.admit().is_ok(), "four failures keep it closed");
        assert!(!breaker.is_open());
        fail(&breaker, 1);
        assert_eq!(refused(&breaker), Some(30));
        assert!(breaker.is_open());
    }

    #[test]
    fn after_the_open_period_one_trial_decides() {
        let (breaker, now) = breaker();
        fail(&breaker, 5);
        now.fetch_add(29, Ordering::SeqCst);
        assert_eq!(refused(&breaker), Some(1));
        now.fetch_add(1, Ordering::SeqCst);
        let trial = breaker.admit().expect("the trial");
        assert_eq!(refused(&breaker), Some(1), "only one trial at a time");
        assert!(breaker.is_open(), "refusing while the trial is out");
        trial.failure();
        assert_eq!(refused(&breaker), Some(30), "a failed trial reopens it");
        now.fetch_add(30, Ordering::SeqCst);
        breaker.admit().unwrap().success();
        assert!(breaker.admit().is_ok() && breaker.admit().is_ok(), "a good trial closes it");
        assert!(!breaker.is_open());
    }

    #[test]
    fn a_cancelled_trial_frees_the_circuit_for_the_next_call() {
        let (breaker, now) = breaker();
        fail(&breaker, 5);
        now.fetch_add(30, Ordering::SeqCst);
        drop(breaker.admit().expect("the trial"));
        let next = breaker.admit().expect("a new trial at once, not stuck half-open");
        next.success();
        assert!(breaker.admit().is_ok());
    }

    #[test]
    fn a_trial_that_hangs_past_the_open_period_is_given_up() {
        let (breaker, now) = breaker();
        fail(&breaker, 5);
        now.fetch_add(30, Ordering::SeqCst);
        let hung = breaker.admit().expect("the trial");
        now.fetch_add(29, Ordering::SeqCst);
        assert_eq!(refused(&breaker), Some(1));
        now.fetch_add(1, Ordering::SeqCst);
        let second = breaker.admit().expect("another trial once the first is older than the open period");
        second.success();
        std::mem::forget(hung);
        assert!(breaker.admit().is_ok());
    }

    #[test]
    fn a_closed_permit_dropped_unreported_changes_nothing() {
        let (breaker, _) = breaker();
        fail(&breaker, 4);
        drop(breaker.admit().unwrap());
        fail(&breaker, 1);
        assert_eq!(refused(&breaker), Some(30), "the count went on from four");
    }
}
