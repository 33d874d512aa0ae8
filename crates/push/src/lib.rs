//! Web push: browser subscriptions and sending notifications to them (RFC 8030 / 8291 / 8292).

mod model;
mod ports;
mod service;

pub use model::{MAX_PAYLOAD_BYTES, Message, Notification, SafePath, SendSummary, StoredSubscription, Subscription};
#[cfg(any(test, feature = "mock"))]
pub use opsd_core::MockRateLimiter;
pub use ports::{DeliveryResult, MemberDirectory, PushSender, RateLimited, RateLimiter, SubscriptionStore};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockMemberDirectory, MockPushSender, MockSubscriptionStore};
pub use service::{PushError, PushRefusal, PushService, SEND_LIMIT, SUBSCRIBE_LIMIT};
