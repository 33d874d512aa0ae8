//! Labor planning, pure: worked hours from time punches, scheduled-vs-actual variance, sales forecasts with their backtest, and the labor hours a forecast calls for.
//! The punches themselves are synced by `opsd-scheduling`; this crate reads them through
//! `PlanningStore` and builds the variance and forecast reports.

mod forecast;
mod forecast_report;
mod ports;
mod punch;
mod recommend;
mod service;
mod variance;
mod variance_report;
pub mod week_plan;

pub use forecast::{BLOCKS, Backtest, Method, SalesHistory, backtest, choose_method, forecast, wape};
pub use forecast_report::{ForecastDay, ForecastReport, HISTORY_WEEKS, INSUFFICIENT_HISTORY, build_forecast};
#[cfg(any(test, feature = "mock"))]
pub use ports::MockPlanningStore;
pub use ports::{ForecastData, PlanningStore, ScheduledLabor, VarianceData, WorkedLabor};
pub use punch::{Break, Punch, unpaid_break_seconds, worked_hours};
pub use recommend::{HoursRecommendation, recommended_hours};
pub use service::{PlanningError, PlanningService};
pub use variance::{DepartmentDay, LaborLine, VarianceLine, variance};
pub use variance_report::{DEPARTMENTS, VarianceDay, VarianceReport, VarianceSpan, build_variance};
