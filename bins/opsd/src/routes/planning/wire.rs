//! The variance and forecast reports as clients receive them, built from the domain's.

use opsd_core::Department;
use opsd_optimization::Block;
use opsd_planning as domain;
use rust_decimal::Decimal;
use serde::Serialize;
use time::Date;
use utoipa::ToSchema;

use crate::wire;

/// Scheduled against actual labor, and the variance (actual − scheduled).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VarianceLine {
    /// Hours of published shifts.
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    scheduled_hours: Decimal,
    /// Hours of closed, approved punches (clocked out − clocked in − unpaid breaks).
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    actual_hours: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    variance_hours: Decimal,
    /// Published shifts' hours × their wage (USD).
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    scheduled_cost: Decimal,
    /// Worked hours × wage, plus half the wage on overtime hours (USD).
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    actual_cost: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    variance_cost: Decimal,
    /// Worked hours past 40 in the week (FLSA; the week is the report's, Saturday to Friday; state
    /// daily rules are not applied).
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    overtime_hours: Decimal,
}

impl From<&domain::VarianceLine> for VarianceLine {
    fn from(line: &domain::VarianceLine) -> Self {
        Self {
            scheduled_hours: line.scheduled_hours,
            actual_hours: line.actual_hours,
            variance_hours: line.variance_hours,
            scheduled_cost: line.scheduled_cost,
            actual_cost: line.actual_cost,
            variance_cost: line.variance_cost,
            overtime_hours: line.overtime_hours,
        }
    }
}

/// One department's line.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DepartmentVariance {
    #[schema(value_type = wire::Department)]
    department: Department,
    #[serde(flatten)]
    line: VarianceLine,
}

/// A day's or the week's lines, with the labor % of the scheduled and of the actual cost.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VarianceSpan {
    /// `FOH`, `BOH` and `Other`, always all three.
    departments: Vec<DepartmentVariance>,
    /// The sum of the departments.
    total: VarianceLine,
    /// Sales in the scope (USD).
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    sales: Decimal,
    /// Scheduled cost ÷ sales, 4 decimals; null with reason `no_sales`.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    scheduled_labor_pct_fraction: Option<Decimal>,
    scheduled_labor_pct_reason: Option<&'static str>,
    /// Actual cost ÷ sales, 4 decimals; null with reason `no_sales`.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    actual_labor_pct_fraction: Option<Decimal>,
    actual_labor_pct_reason: Option<&'static str>,
}

impl From<&domain::VarianceSpan> for VarianceSpan {
    fn from(span: &domain::VarianceSpan) -> Self {
        Self {
            departments: span
                .departments
                .iter()
                .map(|(department, line)| DepartmentVariance { department: *department, line: line.into() })
                .collect(),
            total: (&span.total).into(),
            sales: span.sales,
            scheduled_labor_pct_fraction: span.scheduled_labor_pct_fraction,
            scheduled_labor_pct_reason: span.scheduled_labor_pct_reason,
            actual_labor_pct_fraction: span.actual_labor_pct_fraction,
            actual_labor_pct_reason: span.actual_labor_pct_reason,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VarianceDay {
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    day: Date,
    #[serde(flatten)]
    span: VarianceSpan,
}

/// The week's scheduled-vs-actual labor, Saturday to Friday.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VarianceReport {
    /// `Week of YYYY-MM-DD`.
    week_label: String,
    days: Vec<VarianceDay>,
    totals: VarianceSpan,
}

impl From<&domain::VarianceReport> for VarianceReport {
    fn from(report: &domain::VarianceReport) -> Self {
        Self {
            week_label: report.week_label.clone(),
            days: report.days.iter().map(|d| VarianceDay { day: d.day, span: (&d.span).into() }).collect(),
            totals: (&report.totals).into(),
        }
    }
}

/// How the forecast method scored against the baseline on the last 8 weeks, each held out in turn.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Backtest {
    weeks: i64,
    /// Σ|forecast − actual| ÷ Σ|actual| of the method, 4 decimals.
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    wape: Decimal,
    /// The same for the baseline: the mean of the same weekday and block over the previous 4 weeks.
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    baseline_wape: Decimal,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockForecast {
    #[schema(value_type = wire::Block)]
    block: Block,
    /// Forecast sales (USD); null with the report's `reason`.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    forecast_sales: Option<Decimal>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForecastDay {
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    day: Date,
    /// `Lunch`, `Dinner` and `LateNight`.
    blocks: Vec<BlockForecast>,
    /// The day's forecast sales, the sum of its blocks; null with `insufficient_history`.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    forecast_sales: Option<Decimal>,
    /// Forecast sales ÷ the day's `splhTarget`, 2 decimals.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    hours_for_splh: Option<Decimal>,
    /// `no_splh_target` or `insufficient_history` when null.
    hours_for_splh_reason: Option<&'static str>,
    /// Forecast sales × `laborPctTarget` ÷ 100 ÷ the blended hourly wage, 2 decimals.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    hours_for_labor_pct: Option<Decimal>,
    /// `no_labor_pct_target`, `no_wage` or `insufficient_history` when null.
    hours_for_labor_pct_reason: Option<&'static str>,
}

/// The week's sales forecast per day and block, from the sales before the week only, with the
/// labor hours each day's forecast calls for.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ForecastReport {
    week_label: String,
    /// `same_weekday_mean_4_weeks` (the baseline), `recent_weighted_4_weeks` or
    /// `recent_and_last_year_blend`: the one with the lowest backtest WAPE, the baseline on a tie or
    /// when the history is too short to backtest. Null with `reason`.
    method: Option<&'static str>,
    /// `insufficient_history` (under 4 weeks of sales before the week).
    reason: Option<&'static str>,
    /// Null when the history is shorter than the 12 weeks a backtest needs.
    backtest: Option<Backtest>,
    /// Labor cost ÷ hours over the 4 weeks before the week (USD/hour).
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    blended_hourly_wage: Option<Decimal>,
    /// `punches` (worked), or `schedule` when nothing was punched; null with no wage.
    wage_source: Option<&'static str>,
    days: Vec<ForecastDay>,
}

impl From<&domain::ForecastReport> for ForecastReport {
    fn from(report: &domain::ForecastReport) -> Self {
        Self {
            week_label: report.week_label.clone(),
            method: report.method.map(domain::Method::as_str),
            reason: report.reason,
            backtest: report.backtest.map(|b| Backtest {
                weeks: b.weeks,
                wape: b.wape.round_dp(4),
                baseline_wape: b.baseline_wape.round_dp(4),
            }),
            blended_hourly_wage: report.blended_hourly_wage,
            wage_source: report.wage_source,
            days: report
                .days
                .iter()
                .map(|day| ForecastDay {
                    day: day.day,
                    blocks: day
                        .blocks
                        .iter()
                        .map(|(block, sales)| BlockForecast { block: *block, forecast_sales: *sales })
                        .collect(),
                    forecast_sales: day.forecast_sales,
                    hours_for_splh: day.hours.hours_for_splh,
                    hours_for_splh_reason: day.hours.hours_for_splh_reason,
                    hours_for_labor_pct: day.hours.hours_for_labor_pct,
                    hours_for_labor_pct_reason: day.hours.hours_for_labor_pct_reason,
                })
                .collect(),
        }
    }
}
