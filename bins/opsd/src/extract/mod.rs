//! Request extractors: validated JSON bodies, queries and credentials.

mod auth;
pub(crate) mod json;
mod query;

pub(crate) use auth::idempotency_scope;
pub use auth::{AnyCaller, ApiKey, BearerCaller, CronSecret, SessionCaller};
pub use json::{JsonBody, RawBody};
pub use query::{FromQuery, Parsed, QueryParams};
