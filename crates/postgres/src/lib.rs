//! PostgreSQL adapters (diesel + diesel-async + deadpool) for the domain ports.

mod contacts;
mod error;
mod incidents;
mod reports;
mod jobs;
mod locations;
mod memberships;
mod pool;
pub mod schema;

pub use contacts::PgContactStore;
pub use error::store_error;
pub use incidents::PgIncidentStore;
pub use reports::PgReportStore;
pub use jobs::{PgJobLocks, PgJobRunStore};
pub use locations::{PgLocationStore, PgTeamSettingsStore};
pub use memberships::PgMembershipStore;
pub use pool::{Db, DbConfig, MIGRATIONS, run_migrations};
