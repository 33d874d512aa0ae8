use std::collections::HashMap;

use async_trait::async_trait;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId, UserId};
use opsd_reports::ReportShift;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::announcements::{Announcement, AnnouncementKey, NewAnnouncement};
use crate::jobs::WeekCompliance;

/// A location and the dates to look at, from its own time zone's calendar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilingScope {
    pub location: LocationId,
    /// Where the location's shifts' local start hours are read.
    pub timezone: String,
    pub from: Date,
    pub to: Date,
}

/// What identifies a nudge: it is sent at most once per kind, target and period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NudgeKey {
    pub kind: &'static str,
    pub target: String,
    pub period: String,
}

/// A location's most valuable people of a week: the most mentioned heroes of its shift reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mvp {
    pub location: LocationId,
    pub week_start: Date,
    pub names: Vec<String>,
    pub mentions: u32,
}

/// What a location was scheduled for and filed on the dates of its scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filings {
    /// (business date, local start hour) of its non-draft shifts.
    pub shift_starts: Vec<(Date, u8)>,
    pub shift_reports: Vec<(Date, ReportShift)>,
    pub manager_reports: Vec<Date>,
}

/// A location with what its nudges need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NudgeLocation {
    pub id: LocationId,
    pub team_id: TeamId,
    pub name: String,
    pub timezone: String,
    pub chat_webhook_url: Option<String>,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait NudgeStore: Send + Sync {
    /// The locations of `team`, or of every team.
    async fn locations<'a>(&self, team: Option<&'a TeamId>) -> Result<Vec<NudgeLocation>, StoreError>;
    /// What each scope's location was scheduled for and filed on its dates, in one round trip
    /// whatever the number of locations; a location with nothing on its dates has no entry.
    async fn filings(&self, scopes: &[FilingScope]) -> Result<HashMap<LocationId, Filings>, StoreError>;
    /// Whether each nudge was recorded before, in the order asked, in one round trip.
    async fn nudged_before(&self, nudges: &[NudgeKey]) -> Result<Vec<bool>, StoreError>;
    /// Records a nudge; `false` when this (kind, target, period) was nudged before.
    async fn record_nudge(&self, nudge: &NudgeKey, team: &TeamId, at: OffsetDateTime) -> Result<bool, StoreError>;
    async fn nudge_delivered(&self, nudge: &NudgeKey) -> Result<(), StoreError>;
    /// Stores each location's week of filing (one row per location and week, replaced when computed
    /// again), in one statement.
    async fn save_compliance(&self, weeks: &[WeekCompliance], at: OffsetDateTime) -> Result<(), StoreError>;
    /// The hero names of each scope's shift reports on its dates, oldest first, in one round trip
    /// whatever the number of locations; a location with none has no entry.
    async fn hero_mentions(&self, scopes: &[FilingScope]) -> Result<HashMap<LocationId, Vec<String>>, StoreError>;
    /// Records the week's MVP message; `false` when it exists already.
    async fn record_mvp(&self, mvp: &Mvp, at: OffsetDateTime) -> Result<bool, StoreError>;
    async fn mvp_posted(&self, location: LocationId, week_start: Date) -> Result<(), StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait AnnouncementStore: Send + Sync {
    /// `None` when the location is not the team's.
    async fn create(
        &self,
        announcement: &NewAnnouncement,
        at: OffsetDateTime,
    ) -> Result<Option<Announcement>, StoreError>;
    /// Latest first, by (publish_at, id) descending: `page.rows_to_read()` of them after `page.after`.
    async fn list(&self, team: &TeamId, page: &PageRequest<AnnouncementKey>) -> Result<Vec<Announcement>, StoreError>;
    /// Marks due, unpublished announcements published (each exactly once, `SKIP LOCKED`) and, in
    /// the same transaction, queues one push per member of the team (the outbox); returns them.
    async fn publish_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Announcement>, StoreError>;
    /// Claims up to `limit` queued pushes that are due, each leased for `lease` (a dead instance's
    /// claim is taken again after it) and counted as an attempt. Due and leased by the database's
    /// clock: an instance whose clock runs ahead must not take a push another is still sending.
    async fn claim_pushes(&self, lease: std::time::Duration, limit: u32) -> Result<Vec<PendingPush>, StoreError>;
    /// The push reached the member's devices (`devices` accepted it): it is never sent again.
    async fn push_delivered(&self, push: &PendingPush, devices: u32) -> Result<(), StoreError>;
    /// The push failed: it is tried again at `retry_at`, or given up (`None`).
    async fn push_failed(
        &self,
        push: &PendingPush,
        retry_at: Option<OffsetDateTime>,
        error: &str,
    ) -> Result<(), StoreError>;
}

/// One member's push of a published announcement, waiting in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingPush {
    pub announcement_id: Uuid,
    pub user_id: UserId,
    pub title: String,
    pub body: String,
    /// Attempts so far, this one included.
    pub attempts: u32,
}

/// Pushes a payload to one user's devices (their push subscriptions).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait UserPush: Send + Sync {
    /// Returns how many devices accepted it.
    async fn push(&self, user: &UserId, title: &str, body: &str, url: &str) -> Result<u32, StoreError>;
}
