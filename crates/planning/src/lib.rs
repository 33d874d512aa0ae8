//! Labor planning, pure: worked hours and overtime from time punches, scheduled-vs-actual
//! variance, sales forecasts with their backtest, and the labor hours a forecast calls for.
//! No ports yet: the punch sync and the endpoints that read these are still to come.

mod forecast;
mod overtime;
mod punch;
mod recommend;
mod variance;

pub use forecast::{Backtest, Method, SalesHistory, backtest, choose_method, forecast, wape};
pub use overtime::weekly_overtime;
pub use punch::{Break, Punch, worked_hours};
pub use recommend::{HoursRecommendation, recommended_hours};
pub use variance::{DepartmentDay, LaborLine, VarianceLine, variance};
