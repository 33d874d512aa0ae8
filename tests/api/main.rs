//! Black-box tests: each starts the real server on a random port against its own database.

mod auth;
mod errors;
mod operations;
mod setup;
