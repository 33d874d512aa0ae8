//! Types every opsd domain shares: identifiers, the authenticated caller, the clock port, the
//! infrastructure error a port may return, and field-level validation errors.

mod caller;
mod clock;
mod ids;
mod paging;
mod rules;
mod service_error;
mod store_error;
mod validation;

pub use caller::{Caller, Forbidden, Role, TeamMembership};
#[cfg(any(test, feature = "mock"))]
pub use clock::MockClock;
pub use clock::{Clock, SystemClock};
pub use ids::{LocationId, TeamId, UserId};
pub use paging::{DEFAULT_LIMIT, MAX_LIMIT, Page, PageRequest};
pub use rules::TextLength;
pub use service_error::ServiceError;
pub use store_error::StoreError;
pub use validation::{FieldError, ValidationErrors};

mod outbound;
#[cfg(any(test, feature = "mock"))]
pub use outbound::MockOutboundUrlPolicy;
pub use outbound::{OutboundUrlPolicy, UrlRejected};

mod money;
pub use money::{MONEY_MAX, Money, parse_money};
pub use rust_decimal::Decimal;

mod week;
pub use week::Week;

mod dates;
pub use dates::{iso_date, parse_iso_date};

pub mod json_number;

mod cache;
#[cfg(any(test, feature = "mock"))]
pub use cache::MockTeamCacheInvalidation;
pub use cache::TeamCacheInvalidation;

#[doc(hidden)]
pub mod wire_name;

mod department;
pub use department::Department;

mod rate_limit;
#[cfg(any(test, feature = "mock"))]
pub use rate_limit::MockRateLimiter;
pub use rate_limit::{Admission, Limited, Quota, RATE_LIMIT_WINDOW_SECONDS, RateLimited, RateLimiter, RatePolicy};

mod chat;
#[cfg(any(test, feature = "mock"))]
pub use chat::MockTeamChat;
pub use chat::TeamChat;
