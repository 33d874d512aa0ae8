//! Planning a restaurant's week on the rostering engine: the location's week as an instance, and the
//! roster it returns as shifts with the figures a manager reviews.

mod history;
mod inputs;
mod model;
mod plan;
mod rules;
#[cfg(test)]
mod tests;

pub use history::{PastShift, needs_from_forecast, staff_from_history, templates_from_history};
pub use inputs::{Availability, BlockNeed, ShiftTemplate, StaffMember};
pub use model::{Coverage, ProposedShift, WeekModel};
pub use plan::{PlanFailure, PlannedWeek, SolverFigures, plan_week};
pub use rules::PlanRules;
