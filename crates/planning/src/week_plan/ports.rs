//! What the week planner needs from outside: the location's history and availability, and the
//! proposals with their queue.

use async_trait::async_trait;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId, Week};
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use super::history::PastShift;
use super::inputs::Availability;
use super::proposal::{Proposal, ProposalKey, ProposalResult};

/// What a location's week is planned from, read in one go.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanningInputs {
    /// The location's IANA time zone.
    pub timezone: String,
    pub history: Vec<PastShift>,
    /// The published shifts of the 7 days from `until`: the schedule a fair-workweek plan keeps.
    pub published: Vec<PastShift>,
    pub availability: Vec<Availability>,
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
