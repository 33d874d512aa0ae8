//! Black-box tests: each starts the real server on a random port against its own database.

mod analytics;
mod api_contract;
mod assistant;
mod auth;
mod browser;
mod client_contract;
mod console;
mod cors;
mod coupons;
mod database_tls;
mod dev_sign_in;
mod errors;
mod idempotency;
mod incidents;
mod maintenance;
mod nudges;
mod operations;
mod paging;
mod planning;
mod punches;
mod push;
mod reference;
mod reports;
mod schedule;
mod setup;
mod webhooks_identity;
