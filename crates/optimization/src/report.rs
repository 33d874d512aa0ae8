//! The optimization report: the week's sales, labor and KPIs with the reason for each missing one.

use opsd_core::Money;
use rust_decimal::Decimal;
use time::Date;

use crate::model::Block;

#[derive(Debug, Clone, PartialEq)]
pub struct OptimizationReport {
    /// `Week of YYYY-MM-DD`.
    pub week_label: String,
    pub summary: Summary,
    pub sales_by_category: Vec<SalesRow>,
    pub labor_by_category: Vec<LaborRow>,
    pub daily_summary: Vec<DailyRow>,
    pub weekly_summary: WeeklySummary,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub total_sales: Money,
    pub total_labor_cost: Money,
    /// Labor cost / sales of the week, 4 decimals; null with reason `no_sales`.
    pub labor_pct_fraction: Option<Decimal>,
    pub labor_pct_reason: Option<&'static str>,
    /// Mean of the week's goals' labor percentage targets (0-100); absent without goals.
    pub target_labor_pct: Option<Decimal>,
    /// Sales per labor hour of the week (USD/hour), 2 decimals; null with reason `no_labor_hours`.
    pub splh: Option<Decimal>,
    pub splh_reason: Option<&'static str>,
    pub target_splh: Option<Decimal>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SalesRow {
    pub day: Date,
    pub block: Block,
    pub food: Money,
    pub beverage: Money,
    pub other: Money,
    pub total: Money,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LaborRow {
    pub day: Date,
    pub foh_hours: Decimal,
    pub boh_hours: Decimal,
    pub na_hours: Decimal,
    pub total_hours: Decimal,
    pub cost: Money,
    pub labor_pct_fraction: Option<Decimal>,
    pub labor_pct_reason: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DailyRow {
    pub day: Date,
    pub sales: Money,
    pub labor_cost: Money,
    pub labor_pct_fraction: Option<Decimal>,
    pub labor_pct_reason: Option<&'static str>,
    pub splh: Option<Decimal>,
    pub splh_reason: Option<&'static str>,
    /// Present when the day's sales carried guest counts.
    pub served_guests: Option<i64>,
    /// Present only for a day with a goal.
    pub goals_met: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WeeklySummary {
    pub total_sales: Money,
    pub total_labor_cost: Money,
    /// Plain mean of the non-null daily fractions (diagnostic only).
    pub avg_labor_pct_fraction: Option<Decimal>,
    pub avg_labor_pct_reason: Option<&'static str>,
    /// Plain mean of the non-null daily SPLH values (diagnostic only, not the weekly KPI).
    pub avg_splh: Option<Decimal>,
    pub goals_met_percent: Option<Decimal>,
    pub top_day: Option<Date>,
    pub worst_day: Option<Date>,
}

/// Turns a report into the body the edge answers with; called once per cache entry, so cached
/// answers are written without serializing again.
pub trait ReportRenderer: Send + Sync {
    fn render(&self, report: &OptimizationReport) -> String;
}

impl<F: Fn(&OptimizationReport) -> String + Send + Sync> ReportRenderer for F {
    fn render(&self, report: &OptimizationReport) -> String {
        self(report)
    }
}

/// A report with its rendered body and the body's fingerprint (so a client that polls can be told
/// nothing changed).
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedReport {
    pub report: OptimizationReport,
    pub json: std::sync::Arc<str>,
    /// The answer's strong entity tag, quoted as the `ETag` header writes it: the first 16 hex
    /// digits of the body's SHA-256.
    pub etag: String,
}

impl RenderedReport {
    pub fn new(report: OptimizationReport, renderer: &dyn ReportRenderer) -> Self {
        use sha2::Digest;
        let json = renderer.render(&report);
        let etag = format!("\"{}\"", hex::encode(&sha2::Sha256::digest(json.as_bytes())[..8]));
        Self { report, json: json.into(), etag }
    }
}
