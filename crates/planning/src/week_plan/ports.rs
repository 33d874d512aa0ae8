//! What the week planner needs from outside: the location's history and availability, and the
//! proposals with their queue.

use async_trait::async_trait;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId, Week};
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use super::history::{PastPunch, PastShift};
use super::inputs::{Availability, ShiftTemplate};
use super::proposal::{Proposal, ProposalKey, ProposalResult};
use super::rules::PlanRules;

/// What a location's week is planned from, read in one go.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanningInputs {
    /// The location's IANA time zone.
    pub timezone: String,
    pub history: Vec<PastShift>,
    /// The location's time punches over the same days, for who worked there unscheduled.
    pub punches: Vec<PastPunch>,
    /// The published shifts of the 7 days from `until`: the schedule a fair-workweek plan keeps.
    pub published: Vec<PastShift>,
    pub availability: Vec<Availability>,
    /// The shift times the location's manager set, over the history's.
    pub shift_times: Vec<ShiftTemplate>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AvailabilityWrite {
    Saved,
    /// Keys never seen in the location's shifts or punches.
    UnknownEmployees(Vec<String>),
}

/// A proposal taken off the queue, leased to one solver until `lease` is finished or expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedProposal {
    pub id: Uuid,
    pub lease: Uuid,
    pub team: TeamId,
    pub location: LocationId,
    pub week: Week,
    pub time_limit_seconds: u32,
}

/// The rules each team plans under.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PlanRulesStore: Send + Sync {
    /// The team's rules; `None` while it has not set them (the defaults hold).
    async fn rules(&self, team: &TeamId) -> Result<Option<PlanRules>, StoreError>;
    async fn put_rules(&self, team: &TeamId, rules: &PlanRules) -> Result<(), StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait WeekPlanStore: Send + Sync {
    /// The location's published shifts from `since` to the day before `until` and of the week from
    /// `until`, at its local times, and its availability; `None` when the location is not the team's.
    async fn inputs(
        &self,
        team: &TeamId,
        location: LocationId,
        since: Date,
        until: Date,
    ) -> Result<Option<PlanningInputs>, StoreError>;
    /// Replaces the shift times the location's manager set; `None` when the location is not the team's.
    async fn put_shift_times(
        &self,
        team: &TeamId,
        location: LocationId,
        times: &[ShiftTemplate],
    ) -> Result<Option<()>, StoreError>;
    /// The location's availability, by employee key; `None` when the location is not the team's.
    async fn availability(&self, team: &TeamId, location: LocationId) -> Result<Option<Vec<Availability>>, StoreError>;
    /// Replaces the listed employees' availability at the location (others keep theirs); `None` when
    /// the location is not the team's.
    async fn put_availability(
        &self,
        team: &TeamId,
        location: LocationId,
        rows: &[Availability],
    ) -> Result<Option<AvailabilityWrite>, StoreError>;
    async fn create_proposal(
        &self,
        team: &TeamId,
        location: LocationId,
        week: Week,
        time_limit_seconds: u32,
        requested_by: &str,
    ) -> Result<Proposal, StoreError>;
    /// The oldest proposal still solving whose lease has run out (or was never taken), leased for
    /// `lease`.
    async fn claim_proposal(&self, lease: Duration) -> Result<Option<ClaimedProposal>, StoreError>;
    /// Records a solve's outcome under its lease; false when the lease was lost to another solver.
    async fn finish_proposal(
        &self,
        id: Uuid,
        lease: Uuid,
        outcome: Result<ProposalResult, String>,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError>;
    /// With its result when ready; `None` when it is not the team's.
    async fn proposal(&self, team: &TeamId, id: Uuid) -> Result<Option<Proposal>, StoreError>;
    /// The team's proposals, latest first, without their results.
    async fn proposals(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        page: &PageRequest<ProposalKey>,
    ) -> Result<Vec<Proposal>, StoreError>;
}

/// A proposal's shift as the scheduling provider takes it: a draft, which a manager publishes there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftShift {
    /// The provider's ids: the location, the user (the employee key) and the role, when it has one.
    pub location: String,
    pub user: String,
    pub role: Option<String>,
    pub start: OffsetDateTime,
    pub end: OffsetDateTime,
    /// Says which proposal and shift it came from: how a publish cut off after a create finds it.
    pub notes: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DraftError {
    #[error("the scheduling provider is not configured")]
    NotConfigured,
    #[error("the scheduling provider failed: {0}")]
    Failed(String),
}

/// The scheduling provider's side of a publish (7shifts).
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait DraftScheduler: Send + Sync {
    /// Creates the draft; answers the provider's id of it.
    async fn create_draft(&self, shift: &DraftShift) -> Result<String, DraftError>;
    /// The user's drafts at the location starting from `from` to `to`: (id, notes).
    async fn drafts(
        &self,
        location: &str,
        user: &str,
        from: OffsetDateTime,
        to: OffsetDateTime,
    ) -> Result<Vec<(String, String)>, DraftError>;
}

/// A proposal held for one publish, with what each of its shifts has been through.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishClaim {
    pub proposal: Proposal,
    /// The location's id at the provider; `None` when it is not linked.
    pub provider_location: Option<String>,
    /// Role names and their provider ids at the location.
    pub roles: Vec<(String, String)>,
    /// Per shift (in the proposal's order): its provider id once sent, and whether a create was tried.
    pub sent: Vec<(Option<String>, bool)>,
    pub lease: Uuid,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PublishStart {
    Claimed(Box<PublishClaim>),
    NotFound,
    NotReady,
    /// Another publish of it is under way.
    Busy,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PublishStore: Send + Sync {
    /// Holds the team's ready proposal for one publish until `lease` runs out.
    async fn start_publish(&self, team: &TeamId, id: Uuid, lease: Duration) -> Result<PublishStart, StoreError>;
    /// Marks a create as tried before it is sent: a publish cut off after it looks before trying again.
    async fn mark_tried(&self, id: Uuid, position: usize) -> Result<(), StoreError>;
    async fn record_sent(&self, id: Uuid, position: usize, provider_id: &str) -> Result<(), StoreError>;
    /// Releases the hold; `complete` when every shift is sent.
    async fn end_publish(&self, id: Uuid, lease: Uuid, complete: bool, at: OffsetDateTime) -> Result<(), StoreError>;
}
