//! The optimization response, as the interface specification names its fields.

use opsd_core::Money;
use rust_decimal::Decimal;
use serde::Serialize;
use time::Date;

use crate::goals::DayGoal;
use crate::model::Block;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OptimizationReport {
    /// `Week of YYYY-MM-DD`.
    pub week_label: String,
    pub summary: Summary,
    pub sales_by_category: Vec<SalesRow>,
    pub labor_by_category: Vec<LaborRow>,
    pub daily_summary: Vec<DailyRow>,
    pub weekly_summary: WeeklySummary,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total_sales: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total_labor_cost: Money,
    /// Labor cost / sales of the week, 4 decimals; null with reason `no_sales`.
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub labor_pct_fraction: Option<Decimal>,
    pub labor_pct_reason: Option<&'static str>,
    /// Mean of the week's goals' labor percentage targets (0-100); absent without goals.
    #[serde(with = "rust_decimal::serde::float_option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub target_labor_pct: Option<Decimal>,
    /// Sales per labor hour of the week (USD/hour), 2 decimals; null with reason `no_labor_hours`.
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub splh: Option<Decimal>,
    pub splh_reason: Option<&'static str>,
    #[serde(with = "rust_decimal::serde::float_option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub target_splh: Option<Decimal>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SalesRow {
    #[serde(with = "opsd_core::iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub day: Date,
    pub block: Block,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub food: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub beverage: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub other: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total: Money,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LaborRow {
    #[serde(with = "opsd_core::iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub day: Date,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub foh_hours: Decimal,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub boh_hours: Decimal,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub na_hours: Decimal,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total_hours: Decimal,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub cost: Money,
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub labor_pct_fraction: Option<Decimal>,
    pub labor_pct_reason: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DailyRow {
    #[serde(with = "opsd_core::iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub day: Date,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub sales: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub labor_cost: Money,
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub labor_pct_fraction: Option<Decimal>,
    pub labor_pct_reason: Option<&'static str>,
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub splh: Option<Decimal>,
    pub splh_reason: Option<&'static str>,
    /// Present when the day's sales carried guest counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_guests: Option<i64>,
    /// Present only for a day with a goal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goals_met: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WeeklySummary {
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total_sales: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total_labor_cost: Money,
    /// Plain mean of the non-null daily fractions (diagnostic only).
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub avg_labor_pct_fraction: Option<Decimal>,
    pub avg_labor_pct_reason: Option<&'static str>,
    /// Plain mean of the non-null daily SPLH values (diagnostic only, not the weekly KPI).
    #[serde(with = "rust_decimal::serde::float_option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub avg_splh: Option<Decimal>,
    #[serde(with = "rust_decimal::serde::float_option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub goals_met_percent: Option<Decimal>,
    #[serde(with = "opsd_core::iso_date::option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub top_day: Option<Date>,
    #[serde(with = "opsd_core::iso_date::option", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub worst_day: Option<Date>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GoalsResponse {
    pub goals: Vec<DayGoal>,
}

/// A report with its JSON, rendered once when it is built: a cache hit then costs no
/// serialization.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedReport {
    pub report: OptimizationReport,
    pub json: std::sync::Arc<str>,
}

impl RenderedReport {
    pub fn new(report: OptimizationReport) -> Self {
        let json = serde_json::to_string(&report).expect("a report serializes");
        Self { report, json: json.into() }
    }
}
