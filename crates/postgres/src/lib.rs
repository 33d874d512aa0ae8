//! PostgreSQL adapters (diesel + diesel-async + deadpool) for the domain ports.

mod analytics;
mod assistant;
mod cache_bus;
mod contacts;
mod coupons;
mod deliveries;
mod dev_sign_in;
mod error;
mod guest_events;
mod idempotency;
mod identity_events;
mod incidents;
mod jobs;
mod locations;
mod memberships;
mod migrations;
mod nudges;
mod numeric;
mod paging;
mod pipelined;
mod planning;
mod planning_rules;
mod pool;
mod prepared;
mod proposal_publish;
mod punches;
mod push;
mod replicas;
mod reports;
mod schedule;
pub mod schema;
mod shift_times;
mod shifts;
mod statement_spans;
mod tls;
mod week_plans;

pub use analytics::PgAnalyticsStore;
pub use assistant::{PgThreadStore, PgUsageStore};
pub use cache_bus::{
    CACHE_CHANNEL, InvalidationHandler, InvalidationListener, PgTeamCacheInvalidation, SIGN_IN_CHANNEL,
    connect_invalidation_listener,
};
pub use contacts::PgContactStore;
pub use coupons::{PgCouponStore, PgExpiryStore};
pub use dev_sign_in::PgDevSignInStore;
pub use error::store_error;
pub use guest_events::PgGuestEventStore;
pub use idempotency::PgIdempotencyStore;
pub use identity_events::PgIdentityEventStore;
pub use incidents::PgIncidentStore;
pub use jobs::{PgJobLocks, PgJobRunStore};
pub use locations::{PgLocationStore, PgTeamSettingsStore};
pub use memberships::PgMembershipStore;
pub use migrations::{
    MIGRATIONS, MigrationPolicy, MigrationState, MigrationStep, migration_status, revert_migrations, run_migrations,
    run_migrations_with,
};
pub use nudges::{PgAnnouncementStore, PgNudgeStore};
pub use planning::PgPlanningStore;
pub use planning_rules::PgPlanRulesStore;
pub use pool::{Db, DbConfig, PoolMode, PoolStatus, Topology};
pub use punches::{PgPunchStore, upsert_punches};
pub use push::{PgMemberDirectory, PgRateLimiter, PgSubscriptionStore};
pub use replicas::ReplicaStats;
pub use reports::PgReportStore;
pub use schedule::PgScheduleStore;
pub use shifts::upsert_shifts;
pub use statement_spans::trace_statements;
pub use week_plans::PgWeekPlanStore;
