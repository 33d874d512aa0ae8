//! PostgreSQL adapters (diesel + diesel-async + deadpool) for the domain ports.

mod contacts;
mod coupons;
mod guest_events;
mod analytics;
mod cache_bus;
mod deliveries;
mod error;
mod identity_events;
mod incidents;
mod reports;
mod schedule;
mod shifts;
mod jobs;
mod locations;
mod memberships;
mod nudges;
mod pool;
mod push;
pub mod schema;

pub use contacts::PgContactStore;
pub use coupons::{PgCouponStore, PgExpiryStore};
pub use guest_events::PgGuestEventStore;
pub use analytics::PgAnalyticsStore;
pub use cache_bus::{CACHE_CHANNEL, InvalidationHandler, PgTeamCacheInvalidation, listen_for_invalidations};
pub use error::store_error;
pub use identity_events::PgIdentityEventStore;
pub use incidents::PgIncidentStore;
pub use reports::PgReportStore;
pub use schedule::PgScheduleStore;
pub use shifts::upsert_shifts;
pub use jobs::{PgJobLocks, PgJobRunStore};
pub use locations::{PgLocationStore, PgTeamSettingsStore};
pub use memberships::PgMembershipStore;
pub use nudges::{PgAnnouncementStore, PgNudgeStore};
pub use push::{PgMemberDirectory, PgRateLimiter, PgSubscriptionStore};
pub use pool::{Db, DbConfig, MIGRATIONS, run_migrations};
