use async_trait::async_trait;
use opsd_core::{LocationId, StoreError, TeamId};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::events::{Feedback, GuestEvent};
use crate::model::{NewOffer, Offer, OfferId, Reservation, ReservationId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedeemOutcome {
    NotFound,
    Redeemed(Reservation),
    /// It was due: it is expired now (its capacity released), so it cannot be redeemed.
    Expired(Reservation),
    /// Redeemed or cancelled before.
    NotActive(Reservation),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait CouponStore: Send + Sync {
    /// `None` when the location is not the team's.
    async fn create_offer(
        &self,
        team: &TeamId,
        offer: &NewOffer,
        at: OffsetDateTime,
    ) -> Result<Option<Offer>, StoreError>;
    async fn offer(&self, team: &TeamId, id: OfferId) -> Result<Option<Offer>, StoreError>;
    /// Runs the expiry step on the reservation when it is due, then reads it.
    async fn reservation(
        &self,
        team: &TeamId,
        id: ReservationId,
        now: OffsetDateTime,
    ) -> Result<Option<Reservation>, StoreError>;
    /// Runs the expiry step first, then redeems an active reservation and releases its capacity.
    async fn redeem(&self, team: &TeamId, id: ReservationId, now: OffsetDateTime) -> Result<RedeemOutcome, StoreError>;
}

/// Batches of the sweep run by one store call, summed; each batch was committed as its own
/// transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchOutcome {
    /// Batches run (one for a single reservation's expiry step).
    pub batches: u32,
    /// Due active reservations the batch looked at.
    pub candidates: u64,
    pub expired: u64,
    pub accepted_events: u64,
    pub duplicate_events: u64,
    /// The largest (expired time − due time) of the batch, in seconds.
    pub max_lag_seconds: Option<f64>,
    /// Where the next batch of the same run continues: the last key looked at.
    pub last: Option<SweepKey>,
}

impl BatchOutcome {
    /// Whether every batch was full, so more may be due after `last`.
    pub fn all_full(&self, limit: u32) -> bool {
        self.batches > 0 && self.candidates == u64::from(self.batches) * u64::from(limit)
    }
}

/// A due reservation's place in the sweep's order: (due time, id).
pub type SweepKey = (OffsetDateTime, Uuid);

/// One store call of the sweep: up to `max_batches` batches of at most `limit` reservations due at
/// `now`, with keys after `after` and up to `until`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpiryCall {
    pub now: OffsetDateTime,
    pub limit: u32,
    pub max_batches: u32,
    pub after: Option<SweepKey>,
    pub until: Option<SweepKey>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ExpiryHealth {
    /// Σ held − count(active), over all offers.
    pub reconciliation_delta: i64,
    /// (now − due time) of the oldest due reservation still active, in seconds.
    pub oldest_due_lag_seconds: Option<f64>,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ExpiryStore: Send + Sync {
    /// Runs up to `call.max_batches` batches, each its own transaction: a batch claims at most
    /// `call.limit` due active reservations with keys after the previous batch's (the first: after
    /// `call.after`) and up to `call.until` (oldest first, `SKIP LOCKED`), expires them, releases
    /// their capacity and queues one `reservation.expired:<id>` event each. Stops early after a
    /// batch that was not full.
    async fn expire_batches(&self, call: ExpiryCall) -> Result<BatchOutcome, StoreError>;
    /// At most `parts - 1` keys that split the reservations due at `now` into contiguous ranges of
    /// about equal size, in order; none when there are too few to be worth splitting.
    async fn split_due(&self, now: OffsetDateTime, parts: u32) -> Result<Vec<SweepKey>, StoreError>;
    async fn health(&self, now: OffsetDateTime) -> Result<ExpiryHealth, StoreError>;
}

/// An event for the durable queue, with its stable identity.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedEvent {
    pub identity: String,
    pub source: &'static str,
    pub payload_sha256: String,
    pub event: GuestEvent,
    pub payload: serde_json::Value,
    pub received_at: OffsetDateTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnqueueOutcome {
    New,
    Duplicate,
    /// The identity is known with another payload hash.
    Conflict,
    /// The location is not the team's.
    UnknownScope,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedEvent {
    pub id: Uuid,
    pub identity: String,
    pub source: String,
    pub attempts: i32,
    pub team_id: TeamId,
    pub location_id: LocationId,
    pub payload: serde_json::Value,
    /// This claim's token: completing or retrying the event takes effect only while it holds.
    pub lease: Uuid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldOutcome {
    Held,
    /// No capacity was free: recorded as rejected.
    Rejected,
    AlreadyKnown,
    /// No such offer at this team and location.
    UnknownOffer,
}

/// A low-rating alert: counts and identities only, never contact values, comments or tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestAlert {
    pub id: Uuid,
    pub team_id: TeamId,
    pub location_id: LocationId,
    pub rating: u8,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait GuestEventStore: Send + Sync {
    /// Checks the location belongs to the team and inserts the event under its identity.
    async fn enqueue(&self, event: &QueuedEvent) -> Result<EnqueueOutcome, StoreError>;
    /// Leases up to `limit` ready events (`SKIP LOCKED`) for `lease`, each under a new token. The
    /// database's clock decides what is ready and when a lease ends, never a worker's.
    async fn claim(&self, limit: u32, lease: Duration) -> Result<Vec<ClaimedEvent>, StoreError>;
    /// Marks the event done, if `lease` is still its claim's; `false` when another worker has
    /// claimed it since (this worker was paused or slow past its lease), and nothing changes.
    async fn complete(&self, event: Uuid, lease: Uuid, outcome: &str) -> Result<bool, StoreError>;
    /// Puts the event back for an attempt after `backoff`, or marks it failed after the last one,
    /// with the attempt's error classification; only while `lease` is its claim's, as `complete`.
    async fn retry_later(
        &self,
        event: Uuid,
        lease: Uuid,
        backoff: Duration,
        give_up: bool,
        error: &str,
    ) -> Result<bool, StoreError>;
    /// Holds capacity for a new reservation when some is free.
    #[allow(clippy::too_many_arguments)]
    async fn hold(
        &self,
        team: &TeamId,
        location: LocationId,
        reservation: ReservationId,
        offer: OfferId,
        guest_id: &str,
        expires_at: OffsetDateTime,
        at: OffsetDateTime,
    ) -> Result<HoldOutcome, StoreError>;
    /// Records feedback durably (once per feedback id).
    async fn record_feedback(
        &self,
        team: &TeamId,
        location: LocationId,
        feedback: &Feedback,
        at: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// The alert of a stored feedback whose stored rating is at most `max_rating`, claimed for
    /// sending: created now, or the existing one while it was never notified and its claim was
    /// given back; `None` when there is no such feedback row, its alert was notified already, or it
    /// is claimed (a claim never runs out: its worker may still be sending).
    async fn record_alert(
        &self,
        feedback_id: &str,
        max_rating: u8,
        at: OffsetDateTime,
    ) -> Result<Option<GuestAlert>, StoreError>;
    /// Gives a claimed, unnotified alert back: its push went nowhere, so another delivery of the
    /// feedback may send it.
    async fn release_alert(&self, alert: Uuid) -> Result<(), StoreError>;
    async fn alert_notified(&self, alert: Uuid, at: OffsetDateTime) -> Result<(), StoreError>;
}

/// Tells the location's admins about a low rating.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait AlertNotifier: Send + Sync {
    async fn low_rating(&self, alert: &GuestAlert) -> Result<(), String>;
}

/// A guest event that used up its attempts.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedEvent {
    pub id: Uuid,
    pub event_type: String,
    pub team_id: TeamId,
    pub attempts: i32,
    /// The last attempt's error classification.
    pub last_error: Option<String>,
    pub received_at: OffsetDateTime,
}

/// The queue as operators see it: events by state, and the failed ones.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueOverview {
    pub by_state: Vec<(String, i64)>,
    pub failed: Vec<FailedEvent>,
}

/// What waits in the queue (queued or being processed), for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Backlog {
    pub depth: u64,
    /// Since the oldest waiting event was received; zero when none waits.
    pub oldest_seconds: f64,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait GuestEventQueue: Send + Sync {
    /// How many events wait, and for how long the oldest has.
    async fn backlog(&self) -> Result<Backlog, StoreError>;
    /// Events by state, and the `failed_limit` most recent failed ones.
    async fn overview(&self, failed_limit: u32) -> Result<QueueOverview, StoreError>;
    /// Queues a failed event again, with fresh attempts; `false` when it is not failed.
    async fn retry(&self, event: Uuid, now: OffsetDateTime) -> Result<bool, StoreError>;
}
