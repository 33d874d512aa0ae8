use async_trait::async_trait;
use opsd_core::{Department, LocationId, StoreError, TeamId, Week};
use opsd_optimization::{Block, StoredGoal};
use rust_decimal::Decimal;
use time::Date;

use crate::variance::LaborLine;

/// Scheduled labor of one (date, department): published shifts' hours and cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledLabor {
    pub date: Date,
    pub department: Department,
    pub hours: Decimal,
    pub cost: Decimal,
}

/// Worked labor of one (date, department): the counted punches' hours, their overtime (FLSA: an
/// employee's hours past 40 in the workweek, across every location of the team, so a location's
/// overtime can come from punches elsewhere) and their cost with the overtime premium. The store
/// applies the overtime rule, which the team's totals are kept by (migration 000029).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkedLabor {
    pub date: Date,
    pub department: Department,
    pub hours: Decimal,
    pub overtime_hours: Decimal,
    pub cost: Decimal,
}

/// What the variance of one week and scope is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VarianceData {
    pub scheduled: Vec<ScheduledLabor>,
    pub worked: Vec<WorkedLabor>,
    /// Each day's sales in the scope.
    pub sales: Vec<(Date, Decimal)>,
}

/// What a forecast of one week and scope is made of: the sales before the week, the goals, and
/// the labor of the 4 weeks before it (worked, and scheduled for when nothing was punched).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForecastData {
    pub sales: Vec<(Date, Block, Decimal)>,
    pub goals: Vec<StoredGoal>,
    pub worked: LaborLine,
    pub scheduled: LaborLine,
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait PlanningStore: Send + Sync {
    /// The week's scheduled and worked labor and sales, for the team or one location of it; `None`
    /// when the team is unknown or the location is not the team's.
    async fn variance_week(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
    ) -> Result<Option<VarianceData>, StoreError>;
    /// The scope's sales from `since` to the day before `week`, its goals and its labor of the 4
    /// weeks before `week`; `None` as above.
    async fn forecast_data(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
        since: Date,
    ) -> Result<Option<ForecastData>, StoreError>;
}
