use std::collections::HashMap;

use async_trait::async_trait;
use opsd_core::{Department, LocationId, StoreError, TeamId};
use time::OffsetDateTime;

use opsd_planning::Break;

use crate::punches::StoredPunch;
use crate::shift::ScheduledShift;
use crate::view::{ScheduleView, ViewFilter};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("rate limited after retries")]
    RateLimited,
    #[error("answered {0} after retries")]
    ServerError(u16),
    #[error("answered {0}")]
    ClientError(u16),
    #[error("timed out after retries")]
    Timeout,
    #[error("could not connect after retries")]
    Network,
    #[error("the answer was not understood: {0}")]
    Malformed(String),
    #[error("the token was refused")]
    Unauthorized,
}

impl ProviderError {
    /// A short classification for operators, never the provider's own text.
    pub fn reason(&self) -> &'static str {
        match self {
            ProviderError::RateLimited => "provider_rate_limit",
            ProviderError::ServerError(_) => "provider_5xx",
            ProviderError::ClientError(_) => "provider_4xx",
            ProviderError::Timeout => "timeout",
            ProviderError::Network => "network",
            ProviderError::Malformed(_) => "provider_malformed",
            ProviderError::Unauthorized => "provider_auth",
        }
    }
}

/// A shift as the provider lists it (7shifts v2 field names, mapped by the adapter).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderShift {
    pub id: String,
    pub user_id: Option<String>,
    pub role_id: Option<String>,
    pub start: OffsetDateTime,
    pub end: OffsetDateTime,
    /// Cents per hour.
    pub hourly_wage_cents: Option<i64>,
    pub draft: bool,
    pub deleted: bool,
    /// Minutes of unpaid breaks.
    pub unpaid_break_minutes: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderUser {
    pub id: String,
    pub first_name: String,
    pub last_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRole {
    pub id: String,
    pub location_id: Option<String>,
    pub department_id: Option<String>,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderDepartment {
    pub id: String,
    pub name: String,
}

/// A time punch as the provider lists it (7shifts v2 `time_punches`, mapped by the adapter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderPunch {
    pub id: String,
    pub user_id: Option<String>,
    pub role_id: Option<String>,
    pub clocked_in: OffsetDateTime,
    /// None while the employee is on the clock.
    pub clocked_out: Option<OffsetDateTime>,
    pub approved: bool,
    pub deleted: bool,
    /// Cents per hour (the REST listing's unit).
    pub hourly_wage_cents: Option<i64>,
    pub breaks: Vec<Break>,
}

/// Which punches to list: those modified since a time (deleted ones included), or, on a location's
/// first sync, those clocked in since a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PunchWindow {
    ModifiedSince(OffsetDateTime),
    ClockedInSince(OffsetDateTime),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait SchedulingProvider: Send + Sync {
    /// Every time punch of the location in the window (all pages).
    async fn punches(&self, location: &str, window: PunchWindow) -> Result<Vec<ProviderPunch>, ProviderError>;
    /// Every shift of the location starting between `from` and `to` (all pages), drafts included.
    async fn shifts(
        &self,
        location: &str,
        from: OffsetDateTime,
        to: OffsetDateTime,
    ) -> Result<Vec<ProviderShift>, ProviderError>;
    async fn users(&self) -> Result<Vec<ProviderUser>, ProviderError>;
    async fn roles(&self) -> Result<Vec<ProviderRole>, ProviderError>;
    async fn departments(&self) -> Result<Vec<ProviderDepartment>, ProviderError>;
}

/// Provider role id to (role name, department).
pub type RoleMap = HashMap<String, (String, Department)>;

/// A location that syncs, with what placing its shifts needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncLocation {
    pub id: LocationId,
    pub slug: String,
    pub team_id: TeamId,
    pub provider_location_id: String,
    pub timezone: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncCounts {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    pub unchanged: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleCounts {
    pub inserted: u64,
    pub updated: u64,
    pub unchanged: u64,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ScheduleStore: Send + Sync {
    async fn locations_to_sync(&self) -> Result<Vec<SyncLocation>, StoreError>;
    async fn role_map(&self) -> Result<RoleMap, StoreError>;
    /// Makes the location's shifts starting in `[from, to)` exactly `shifts`, in one transaction:
    /// new ones inserted, changed ones updated, vanished ones deleted, the rest untouched.
    async fn replace_window(
        &self,
        location: LocationId,
        from: OffsetDateTime,
        to: OffsetDateTime,
        shifts: Vec<ScheduledShift>,
        at: OffsetDateTime,
    ) -> Result<SyncCounts, StoreError>;
    async fn upsert_roles(
        &self,
        roles: Vec<(ProviderRole, Department)>,
        at: OffsetDateTime,
    ) -> Result<RoleCounts, StoreError>;
    /// The legacy view's page, or `None` for an unknown slug.
    async fn view(&self, slug: &str, filter: ViewFilter) -> Result<Option<ScheduleView>, StoreError>;
    /// The time zone of the location with this slug, or `None`.
    async fn timezone_of(&self, slug: &str) -> Result<Option<String>, StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PunchStore: Send + Sync {
    /// Each location's last successful punch sync; a location never synced is absent.
    async fn synced_through(&self) -> Result<HashMap<LocationId, OffsetDateTime>, StoreError>;
    /// In one transaction: upserts `punches` by provider id, deletes `deleted`, and records the
    /// location as synced through `through`.
    async fn apply_punches(
        &self,
        location: LocationId,
        punches: Vec<StoredPunch>,
        deleted: Vec<String>,
        through: OffsetDateTime,
    ) -> Result<SyncCounts, StoreError>;
}
