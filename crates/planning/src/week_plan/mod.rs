//! Planning a restaurant's week on the rostering engine: the location's week as an instance, the
//! roster it returns as shifts with the figures a manager reviews, and the proposals a manager asks for.

mod backtest;
mod history;
mod inputs;
mod model;
mod plan;
mod ports;
mod proposal;
mod publish;
mod rules;
mod service;
#[cfg(test)]
mod service_tests;
#[cfg(test)]
mod tests;

pub use backtest::{BacktestWeek, RULE_OF_THUMB_WEEKS, ScheduleScore};
pub use history::{
    PastPunch, PastShift, needs_from_forecast, staff_from_history, templates_from_history, with_set_times,
};
pub use inputs::{Availability, BlockNeed, ShiftTemplate, StaffMember};
pub use model::{ChangeKind, Coverage, ScheduleChange, WeekModel};
pub use plan::{PlanFailure, SolverFigures, WeekTargets, plan_week};
pub use ports::{
    AvailabilityWrite, ClaimedProposal, DraftError, DraftScheduler, DraftShift, PlanRulesStore, PlanningInputs,
    PublishClaim, PublishStart, PublishStore, WeekPlanStore,
};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockDraftScheduler, MockPublishStore};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockPlanRulesStore, MockWeekPlanStore};
pub use proposal::{
    BindingRule, DEFAULT_TIME_LIMIT_SECONDS, PlannedShift, Proposal, ProposalKey, ProposalResult, ProposalStatus,
    TIME_LIMIT_SECONDS,
};
pub use publish::{PublishService, Published};
pub use rules::PlanRules;
pub use service::{
    MAX_AVAILABILITY_ROWS, MAX_SHIFT_MINUTES, MAX_SHIFT_TIMES, PlanRefusal, STAFF_WEEKS, ShiftTime, TeamRules,
    WeekPlanError, WeekPlanService,
};
