//! Outbound HTTP adapters (reqwest) for the domain ports.

mod jwks;
mod url_policy;

pub use jwks::HttpJwksFetcher;
pub use url_policy::{OutboundTargets, is_public_address};
