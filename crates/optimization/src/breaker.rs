use std::sync::{Arc, Mutex};

use opsd_core::Clock;
use time::{Duration, OffsetDateTime};

/// Consecutive failures that open the circuit.
const FAILURE_THRESHOLD: u32 = 5;
/// How long an open circuit refuses calls before one trial may pass.
const OPEN_FOR: Duration = Duration::seconds(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitOpen {
    pub retry_after_seconds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed { failures: u32 },
    Open { until: OffsetDateTime },
    /// One trial call is in flight; its outcome closes or reopens the circuit.
    HalfOpen,
}

/// A circuit breaker around a store: after 5 consecutive failures it opens for 30 seconds, then
/// lets one trial call decide.
pub struct CircuitBreaker {
    state: Mutex<State>,
    clock: Arc<dyn Clock>,
}

impl CircuitBreaker {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self { state: Mutex::new(State::Closed { failures: 0 }), clock }
    }

    /// Whether a call may go to the store now.
    pub fn admit(&self) -> Result<(), CircuitOpen> {
        let mut state = self.state.lock().expect("breaker lock poisoned");
        match *state {
            State::Closed { .. } => Ok(()),
            State::Open { until } => {
                let now = self.clock.now();
                if now >= until {
                    *state = State::HalfOpen;
                    Ok(())
                } else {
                    let left = (until - now).whole_seconds().max(1) as u64;
                    Err(CircuitOpen { retry_after_seconds: left })
                }
            }
            State::HalfOpen => Err(CircuitOpen { retry_after_seconds: 1 }),
        }
    }

    pub fn record_success(&self) {
        *self.state.lock().expect("breaker lock poisoned") = State::Closed { failures: 0 };
    }

    pub fn record_failure(&self) {
        let mut state = self.state.lock().expect("breaker lock poisoned");
        *state = match *state {
            State::Closed { failures } if failures + 1 < FAILURE_THRESHOLD => State::Closed { failures: failures + 1 },
            _ => {
                tracing::warn!("analytics store circuit opened for {} s", OPEN_FOR.whole_seconds());
                State::Open { until: self.clock.now() + OPEN_FOR }
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
        (CircuitBreaker::new(Arc::new(clock)), now)
    }

    #[test]
    fn five_consecutive_failures_open_it_and_a_success_resets_the_count() {
        let (breaker, _) = breaker();
        for _ in 0..4 {
            breaker.record_failure();
        }
        breaker.record_success();
        for _ in 0..4 {
            assert!(breaker.admit().is_ok());
            breaker.record_failure();
        }
        assert!(breaker.admit().is_ok(), "four failures keep it closed");
        breaker.record_failure();
        assert_eq!(breaker.admit(), Err(CircuitOpen { retry_after_seconds: 30 }));
    }

    #[test]
    fn after_the_open_period_one_trial_decides() {
        let (breaker, now) = breaker();
        for _ in 0..5 {
            breaker.record_failure();
        }
        now.fetch_add(29, Ordering::SeqCst);
        assert_eq!(breaker.admit(), Err(CircuitOpen { retry_after_seconds: 1 }));
        now.fetch_add(1, Ordering::SeqCst);
        assert!(breaker.admit().is_ok(), "the trial");
        assert!(breaker.admit().is_err(), "only one trial at a time");
        breaker.record_failure();
        assert_eq!(breaker.admit(), Err(CircuitOpen { retry_after_seconds: 30 }), "a failed trial reopens it");
        now.fetch_add(30, Ordering::SeqCst);
        assert!(breaker.admit().is_ok());
        breaker.record_success();
        assert!(breaker.admit().is_ok() && breaker.admit().is_ok(), "a good trial closes it");
    }
}
