use time::OffsetDateTime;

/// Time is a port so that tests can set "now".
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
pub trait Clock: Send + Sync {
    fn now(&self) -> OffsetDateTime;
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

#[cfg(any(test, feature = "mock"))]
impl MockClock {
    /// A clock that always reads `at`.
    pub fn fixed(at: OffsetDateTime) -> Self {
        let mut clock = Self::new();
        clock.expect_now().return_const(at);
        clock
    }
}
