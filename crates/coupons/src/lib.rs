//! Coupons: offers with capacity, guest reservations held against it, their expiry, and the
//! guest-event queue the coupon-automation producer feeds.

mod events;
mod expiry;
mod intake;
mod model;
mod ports;
mod service;
mod worker;

pub use events::{CanonicalEvent, Feedback, GuestEvent, GuestEventDecoder, LegacyRating};
pub use expiry::{EXPIRY_LAG_BOUND_SECONDS, ExpirySweep, SweepReport};
pub use intake::{GuestEventIntake, IntakeError, IntakeOutcome};
pub use model::{NewOffer, Offer, OfferId, Reservation, ReservationId, ReservationState};
pub use ports::{
    AlertNotifier, Backlog, BatchOutcome, ClaimedEvent, CouponStore, EnqueueOutcome, ExpiryCall, ExpiryHealth,
    ExpiryStore, FailedEvent, GuestAlert, GuestEventQueue, GuestEventStore, HoldOutcome, QueueOverview, QueuedEvent,
    RedeemOutcome, SweepKey,
};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockAlertNotifier, MockCouponStore, MockExpiryStore, MockGuestEventQueue, MockGuestEventStore};
pub use service::{CouponError, CouponService, NotRedeemable};
pub use worker::{DEFAULT_LEASE as DEFAULT_GUEST_EVENT_LEASE, GuestEventWorker, LOW_RATING};
