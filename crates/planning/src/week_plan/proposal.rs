//! A schedule proposal: a week a manager asked opsd to plan, solving on the queue, then ready with
//! its shifts and figures (or failed, with the reason).

use opsd_core::{Department, LocationId, Week};
use opsd_optimization::Block;
use rust_decimal::Decimal;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::model::{Coverage, ScheduleChange};
use super::plan::SolverFigures;

opsd_core::wire_enum! {
    #[strum(serialize_all = "lowercase")]
    pub enum ProposalStatus {
        Solving,
        Ready,
        Failed,
    }
}

/// Where a proposal stands in the list, latest first: when it was asked for, then its id.
pub type ProposalKey = (OffsetDateTime, Uuid);

/// The least and most a proposal may be solved for, in seconds, and the default.
pub const TIME_LIMIT_SECONDS: std::ops::RangeInclusive<u32> = 1..=120;
pub const DEFAULT_TIME_LIMIT_SECONDS: u32 = 20;

#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub id: Uuid,
    pub location: LocationId,
    pub week: Week,
    pub status: ProposalStatus,
    pub reason: Option<String>,
    pub time_limit_seconds: u32,
    pub created_at: OffsetDateTime,
    pub completed_at: Option<OffsetDateTime>,
    /// Read for one proposal when it is ready; lists leave it out.
    pub result: Option<ProposalResult>,
}

impl Proposal {
    pub fn key(&self) -> ProposalKey {
        (self.created_at, self.id)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProposalResult {
    pub shifts: Vec<PlannedShift>,
    pub coverage: Vec<Coverage>,
    pub projected_sales: Decimal,
    pub hours: Decimal,
    pub labor_cost: Decimal,
    pub labor_pct: Option<Decimal>,
    pub splh: Option<Decimal>,
    /// The week's goals: the mean of its days' targets.
    pub splh_target: Option<Decimal>,
    pub labor_pct_target: Option<Decimal>,
    pub solver: SolverFigures,
    pub binding_rules: Vec<BindingRule>,
    /// Fair workweek: each change to the week's published schedule with the premium it owes.
    pub changes: Vec<ScheduleChange>,
}

impl ProposalResult {
    pub fn change_premiums(&self) -> Decimal {
        self.changes.iter().map(|change| change.premium).sum()
    }
}

/// One shift of a proposal, its times as instants (the location's local times with their offset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedShift {
    pub employee_key: String,
    pub employee_name: String,
    pub role: String,
    pub department: Department,
    pub date: Date,
    pub block: Block,
    pub start: OffsetDateTime,
    pub end: OffsetDateTime,
    pub hours: Decimal,
    pub cost: Decimal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingRule {
    pub rule: String,
    pub employees: Vec<String>,
}
