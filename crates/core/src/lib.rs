//! Types every opsd domain shares: identifiers, the authenticated caller, the clock port, the
//! infrastructure error a port may return, and field-level validation errors.

mod caller;
mod clock;
mod ids;
mod store_error;
mod validation;

pub use caller::{Caller, Forbidden, Role, TeamMembership};
pub use clock::{Clock, SystemClock};
#[cfg(any(test, feature = "mock"))]
pub use clock::MockClock;
pub use ids::{LocationId, TeamId, UserId};
pub use store_error::StoreError;
pub use validation::{FieldError, ValidationErrors};

mod outbound;
pub use outbound::{OutboundUrlPolicy, UrlRejected};
#[cfg(any(test, feature = "mock"))]
pub use outbound::MockOutboundUrlPolicy;

mod money;
pub use money::{Money, parse_money};
pub use rust_decimal::Decimal;

mod week;
pub use week::Week;

mod dates;
pub use dates::{iso_date, parse_iso_date};

mod cache;
pub use cache::TeamCacheInvalidation;
#[cfg(any(test, feature = "mock"))]
pub use cache::MockTeamCacheInvalidation;

mod department;
pub use department::Department;

mod rate_limit;
pub use rate_limit::{RateLimited, RateLimiter};
#[cfg(any(test, feature = "mock"))]
pub use rate_limit::MockRateLimiter;

mod chat;
pub use chat::TeamChat;
#[cfg(any(test, feature = "mock"))]
pub use chat::MockTeamChat;
