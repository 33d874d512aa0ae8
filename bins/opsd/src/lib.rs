//! The opsd HTTP service: configuration, wiring, and the thin actix-web handlers over the domain
//! services.

mod assistant_tools;
mod broadcast;
pub mod cli;
pub mod config;
mod console;
pub mod dev_identity;
mod errors;
pub(crate) mod extract;
pub mod floor;
mod idempotency;
pub mod jobs;
mod metrics;
mod middleware;
mod openapi;
pub mod operations;
pub mod plan_backtest;
mod rate_limit_fields;
mod request_rules;
pub mod roster;
mod routes;
pub mod seed;
mod startup;
mod state;
mod supervisor;
pub mod telemetry;
mod wire;

pub use console::issue_dev_sign_in_link;
pub use errors::ApiError;
pub use openapi::{ApiDoc, document_json as openapi_document};
pub use startup::{Application, connect_database as startup_database};
