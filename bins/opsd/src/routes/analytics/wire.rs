//! The analytics queries and bodies as clients send and receive them. Queries and requests parse
//! into domain values, naming each bad field; the report's wire form is built from the domain's.

use opsd_core::{LocationId, Money, TeamId, TextLength, ValidationErrors, parse_iso_date, parse_money};
use opsd_optimization::{self as domain, DayGoal, ReportKey, SalesRow, Week};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use time::Date;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::errors::ApiError;
use crate::extract::FromQuery;
use crate::wire;

pub const MAX_SALES_ROWS: usize = 10_000;
pub const TEAM_ID: TextLength = TextLength::new(1, 200);
/// 0 (Saturday) to 6 (Friday).
pub const DAYS_OF_WEEK: std::ops::RangeInclusive<i64> = 0..=6;
pub const MAX_LABOR_PCT: Decimal = Decimal::ONE_HUNDRED;

fn team_id(errors: &mut ValidationErrors, raw: Option<&str>) -> Option<TeamId> {
    match raw.map(str::trim) {
        Some(id) if TEAM_ID.fits(id) => Some(TeamId::new(id)),
        Some(_) => {
            errors.push("teamId", TEAM_ID.message());
            None
        }
        None => {
            errors.push("teamId", "is required");
            None
        }
    }
}

fn location_id(errors: &mut ValidationErrors, field: &str, raw: Option<&str>) -> Option<LocationId> {
    let raw = raw?;
    match Uuid::parse_str(raw) {
        Ok(id) => Some(LocationId(id)),
        Err(_) => {
            errors.push(field, "must be a UUID");
            None
        }
    }
}

fn week(errors: &mut ValidationErrors, raw: &str) -> Option<Week> {
    let date = errors.check(parse_iso_date("weekOf", raw))?;
    errors.check(Week::starting("weekOf", date))
}

#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OptimizationQuery {
    /// The team (organization) id.
    pub team_id: Option<String>,
    /// The Saturday that starts the week, `YYYY-MM-DD`.
    pub week_of: Option<String>,
    /// One location of the team; without it the team's locations are summed.
    pub location_id: Option<String>,
}

impl OptimizationQuery {
    pub fn try_into_domain(&self) -> Result<ReportKey, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let team = team_id(&mut errors, self.team_id.as_deref());
        let location = location_id(&mut errors, "locationId", self.location_id.as_deref());
        let week = match &self.week_of {
            Some(raw) => week(&mut errors, raw),
            None => {
                errors.push("weekOf", "is required");
                None
            }
        };
        errors.into_result()?;
        Ok(ReportKey { team: team.expect("checked"), location, week: week.expect("checked") })
    }
}

impl FromQuery for ReportKey {
    type Wire = OptimizationQuery;

    fn from_wire(wire: OptimizationQuery) -> Result<Self, ApiError> {
        Ok(wire.try_into_domain()?)
    }
}

#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalsQuery {
    pub team_id: Option<String>,
    pub location_id: Option<String>,
    /// Optional; validated when present (a Saturday).
    pub week_of: Option<String>,
}

impl GoalsQuery {
    pub fn try_into_domain(&self) -> Result<(TeamId, Option<LocationId>), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let team = team_id(&mut errors, self.team_id.as_deref());
        let location = location_id(&mut errors, "locationId", self.location_id.as_deref());
        if let Some(raw) = &self.week_of {
            week(&mut errors, raw);
        }
        errors.into_result()?;
        Ok((team.expect("checked"), location))
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SalesRowRequest {
    pub location_id: Uuid,
    /// `YYYY-MM-DD`.
    pub date: String,
    #[schema(value_type = wire::Block)]
    pub block: domain::Block,
    #[schema(value_type = f64)]
    pub food: serde_json::Number,
    #[schema(value_type = f64)]
    pub beverage: serde_json::Number,
    #[schema(value_type = f64)]
    pub other: serde_json::Number,
    pub guests: Option<i32>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SalesIngestRequest {
    pub team_id: String,
    /// At most 10,000 rows, each (location, date, block) at most once; upserted as one transaction.
    pub rows: Vec<SalesRowRequest>,
}

impl SalesIngestRequest {
    pub fn try_into_domain(&self) -> Result<(TeamId, Vec<SalesRow>), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let team = team_id(&mut errors, Some(&self.team_id));
        if self.rows.len() > MAX_SALES_ROWS {
            errors.push("rows", "must hold at most 10000 rows");
            return Err(errors);
        }
        let mut seen = std::collections::HashMap::new();
        let mut rows = Vec::with_capacity(self.rows.len());
        for (index, row) in self.rows.iter().enumerate() {
            let field = |name: &str| format!("rows[{index}].{name}");
            let before = errors.errors().len();
            let date = errors.check(parse_iso_date(&field("date"), &row.date));
            let food = errors.check(parse_money(&field("food"), &row.food.to_string()));
            let beverage = errors.check(parse_money(&field("beverage"), &row.beverage.to_string()));
            let other = errors.check(parse_money(&field("other"), &row.other.to_string()));
            if row.guests.is_some_and(|g| g < 0) {
                errors.push(field("guests"), "must be 0 or more");
            }
            if let Some(date) = date
                && let Some(first) = seen.insert((row.location_id, date, row.block), index)
            {
                errors.push(format!("rows[{index}]"), format!("repeats the location, date and block of rows[{first}]"));
            }
            if errors.errors().len() == before {
                rows.push(SalesRow {
                    location_id: LocationId(row.location_id),
                    date: date.expect("checked"),
                    block: row.block,
                    food: food.expect("checked"),
                    beverage: beverage.expect("checked"),
                    other: other.expect("checked"),
                    guests: row.guests,
                });
            }
        }
        errors.into_result()?;
        Ok((team.expect("checked"), rows))
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalRequest {
    /// 0 (Saturday) to 6 (Friday).
    pub day_of_week: i64,
    #[schema(value_type = f64)]
    pub sales_goal: serde_json::Number,
    /// A percentage, 0 to 100.
    #[schema(value_type = f64)]
    pub labor_pct_target: serde_json::Number,
    /// USD per labor hour.
    #[schema(value_type = f64)]
    pub splh_target: serde_json::Number,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalsRequest {
    pub team_id: String,
    /// Without it, the goals are the team defaults.
    pub location_id: Option<Uuid>,
    /// At most one goal per weekday.
    pub goals: Vec<GoalRequest>,
}

impl GoalsRequest {
    pub fn try_into_domain(&self) -> Result<(TeamId, Option<LocationId>, Vec<DayGoal>), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let team = team_id(&mut errors, Some(&self.team_id));
        let mut days = [false; 7];
        let mut goals = Vec::new();
        for (index, goal) in self.goals.iter().enumerate() {
            let field = |name: &str| format!("goals[{index}].{name}");
            let before = errors.errors().len();
            if !DAYS_OF_WEEK.contains(&goal.day_of_week) {
                errors.push(field("dayOfWeek"), "must be 0 (Saturday) to 6 (Friday)");
            } else if std::mem::replace(&mut days[goal.day_of_week as usize], true) {
                errors.push(field("dayOfWeek"), "repeats a weekday");
            }
            let sales_goal = errors.check(parse_money(&field("salesGoal"), &goal.sales_goal.to_string()));
            let labor_pct_target =
                errors.check(parse_money(&field("laborPctTarget"), &goal.labor_pct_target.to_string()));
            if labor_pct_target.is_some_and(|t| t > MAX_LABOR_PCT) {
                errors.push(field("laborPctTarget"), "must be at most 100");
            }
            let splh_target = errors.check(parse_money(&field("splhTarget"), &goal.splh_target.to_string()));
            if errors.errors().len() == before {
                goals.push(DayGoal {
                    day_of_week: goal.day_of_week as u8,
                    sales_goal: sales_goal.expect("checked"),
                    labor_pct_target: labor_pct_target.expect("checked"),
                    splh_target: splh_target.expect("checked"),
                });
            }
        }
        errors.into_result()?;
        goals.sort_by_key(|g| g.day_of_week);
        Ok((team.expect("checked"), self.location_id.map(LocationId), goals))
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OptimizationReport {
    /// `Week of YYYY-MM-DD`.
    week_label: String,
    summary: Summary,
    sales_by_category: Vec<SalesReportRow>,
    labor_by_category: Vec<LaborRow>,
    daily_summary: Vec<DailyRow>,
    weekly_summary: WeeklySummary,
}

/// The report's JSON, as the cache keeps it.
pub fn render(report: &domain::OptimizationReport) -> String {
    serde_json::to_string(&OptimizationReport::from(report)).expect("a report serializes")
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total_sales: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total_labor_cost: Money,
    /// Labor cost / sales of the week, 4 decimals; null with reason `no_sales`.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    labor_pct_fraction: Option<Decimal>,
    labor_pct_reason: Option<&'static str>,
    /// Mean of the week's goals' labor percentage targets (0-100); absent without goals.
    #[serde(with = "opsd_core::json_number::option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    target_labor_pct: Option<Decimal>,
    /// Sales per labor hour of the week (USD/hour), 2 decimals; null with reason `no_labor_hours`.
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    splh: Option<Decimal>,
    splh_reason: Option<&'static str>,
    #[serde(with = "opsd_core::json_number::option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    target_splh: Option<Decimal>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = SalesRow)]
pub struct SalesReportRow {
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    day: Date,
    #[schema(value_type = wire::Block)]
    block: domain::Block,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    food: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    beverage: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    other: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total: Money,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaborRow {
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    day: Date,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    foh_hours: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    boh_hours: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    na_hours: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total_hours: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    cost: Money,
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    labor_pct_fraction: Option<Decimal>,
    labor_pct_reason: Option<&'static str>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DailyRow {
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    day: Date,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    sales: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    labor_cost: Money,
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    labor_pct_fraction: Option<Decimal>,
    labor_pct_reason: Option<&'static str>,
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    splh: Option<Decimal>,
    splh_reason: Option<&'static str>,
    /// Present when the day's sales carried guest counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    served_guests: Option<i64>,
    /// Present only for a day with a goal.
    #[serde(skip_serializing_if = "Option::is_none")]
    goals_met: Option<bool>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeeklySummary {
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total_sales: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total_labor_cost: Money,
    /// Plain mean of the non-null daily fractions (diagnostic only).
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    avg_labor_pct_fraction: Option<Decimal>,
    avg_labor_pct_reason: Option<&'static str>,
    /// Plain mean of the non-null daily SPLH values (diagnostic only, not the weekly KPI).
    #[serde(with = "opsd_core::json_number::option")]
    #[schema(value_type = Option<f64>)]
    avg_splh: Option<Decimal>,
    #[serde(with = "opsd_core::json_number::option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    goals_met_percent: Option<Decimal>,
    #[serde(with = "opsd_core::iso_date::option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Date)]
    top_day: Option<Date>,
    #[serde(with = "opsd_core::iso_date::option", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Date)]
    worst_day: Option<Date>,
}

impl From<&domain::OptimizationReport> for OptimizationReport {
    fn from(report: &domain::OptimizationReport) -> Self {
        let s = &report.summary;
        let w = &report.weekly_summary;
        Self {
            week_label: report.week_label.clone(),
            summary: Summary {
                total_sales: s.total_sales,
                total_labor_cost: s.total_labor_cost,
                labor_pct_fraction: s.labor_pct_fraction,
                labor_pct_reason: s.labor_pct_reason,
                target_labor_pct: s.target_labor_pct,
                splh: s.splh,
                splh_reason: s.splh_reason,
                target_splh: s.target_splh,
            },
            sales_by_category: report
                .sales_by_category
                .iter()
                .map(|r| SalesReportRow {
                    day: r.day,
                    block: r.block,
                    food: r.food,
                    beverage: r.beverage,
                    other: r.other,
                    total: r.total,
                })
                .collect(),
            labor_by_category: report
                .labor_by_category
                .iter()
                .map(|r| LaborRow {
                    day: r.day,
                    foh_hours: r.foh_hours,
                    boh_hours: r.boh_hours,
                    na_hours: r.na_hours,
                    total_hours: r.total_hours,
                    cost: r.cost,
                    labor_pct_fraction: r.labor_pct_fraction,
                    labor_pct_reason: r.labor_pct_reason,
                })
                .collect(),
            daily_summary: report
                .daily_summary
                .iter()
                .map(|r| DailyRow {
                    day: r.day,
                    sales: r.sales,
                    labor_cost: r.labor_cost,
                    labor_pct_fraction: r.labor_pct_fraction,
                    labor_pct_reason: r.labor_pct_reason,
                    splh: r.splh,
                    splh_reason: r.splh_reason,
                    served_guests: r.served_guests,
                    goals_met: r.goals_met,
                })
                .collect(),
            weekly_summary: WeeklySummary {
                total_sales: w.total_sales,
                total_labor_cost: w.total_labor_cost,
                avg_labor_pct_fraction: w.avg_labor_pct_fraction,
                avg_labor_pct_reason: w.avg_labor_pct_reason,
                avg_splh: w.avg_splh,
                goals_met_percent: w.goals_met_percent,
                top_day: w.top_day,
                worst_day: w.worst_day,
            },
        }
    }
}

/// The goal of one weekday (0 = Saturday).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = DayGoal)]
pub struct DayGoalBody {
    day_of_week: u8,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    sales_goal: Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    labor_pct_target: Decimal,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    splh_target: Decimal,
}

#[derive(Serialize, ToSchema)]
pub struct GoalsResponse {
    goals: Vec<DayGoalBody>,
}

impl From<Vec<DayGoal>> for GoalsResponse {
    fn from(goals: Vec<DayGoal>) -> Self {
        let goals = goals
            .into_iter()
            .map(|g| DayGoalBody {
                day_of_week: g.day_of_week,
                sales_goal: g.sales_goal,
                labor_pct_target: g.labor_pct_target,
                splh_target: g.splh_target,
            })
            .collect();
        Self { goals }
    }
}

#[derive(Serialize, ToSchema)]
pub struct SalesIngested {
    /// Rows inserted or updated.
    pub written: u64,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(errors: ValidationErrors) -> Vec<String> {
        errors.errors().iter().map(|e| e.field.clone()).collect()
    }

    #[test]
    fn the_optimization_query_needs_a_team_and_a_saturday() {
        let missing = OptimizationQuery::default().try_into_domain().unwrap_err();
        assert_eq!(fields(missing), ["teamId", "weekOf"]);
        let query = |week: &str, location: Option<&str>| OptimizationQuery {
            team_id: Some("org_1".into()),
            week_of: Some(week.into()),
            location_id: location.map(Into::into),
        };
        assert_eq!(fields(query("2026-11-22", None).try_into_domain().unwrap_err()), ["weekOf"]);
        assert_eq!(fields(query("next week", None).try_into_domain().unwrap_err()), ["weekOf"]);
        assert_eq!(fields(query("2026-11-21", Some("x")).try_into_domain().unwrap_err()), ["locationId"]);
        assert!(query("2026-11-21", Some(&Uuid::nil().to_string())).try_into_domain().is_ok());
    }

    #[test]
    fn sales_rows_are_checked_one_by_one_and_duplicates_named() {
        let row = |block: &str, food: serde_json::Value| {
            json!({
                "locationId": Uuid::nil(), "date": "2026-11-21", "block": block, "food": food, "beverage": 1, "other": 0,
            })
        };
        let request: SalesIngestRequest = serde_json::from_value(json!({
            "teamId": "org_1", "rows": [row("Lunch", json!(10)), row("Dinner", json!(-1)), row("Lunch", json!(5))],
        }))
        .unwrap();
        assert_eq!(fields(request.try_into_domain().unwrap_err()), ["rows[1].food", "rows[2]"]);
    }

    #[test]
    fn goals_need_distinct_weekdays_and_sane_targets() {
        let request: GoalsRequest = serde_json::from_value(json!({
            "teamId": "org_1",
            "goals": [
                { "dayOfWeek": 0, "salesGoal": 1000, "laborPctTarget": 25, "splhTarget": 50 },
                { "dayOfWeek": 0, "salesGoal": 1000, "laborPctTarget": 25, "splhTarget": 50 },
                { "dayOfWeek": 7, "salesGoal": 1000, "laborPctTarget": 101, "splhTarget": -1 },
            ],
        }))
        .unwrap();
        assert_eq!(
            fields(request.try_into_domain().unwrap_err()),
            ["goals[1].dayOfWeek", "goals[2].dayOfWeek", "goals[2].laborPctTarget", "goals[2].splhTarget"]
        );
    }

    #[test]
    fn the_rendered_report_names_the_specified_fields_and_nulls_what_cannot_be_computed() {
        let week = Week::containing(time::macros::date!(2026 - 11 - 21));
        let json: serde_json::Value =
            serde_json::from_str(&render(&domain::build_report(week, &domain::WeekData::default()))).unwrap();
        assert_eq!(json["weekLabel"], "Week of 2026-11-21");
        assert_eq!(json["dailySummary"].as_array().unwrap().len(), 7);
        assert_eq!(json["summary"]["laborPctFraction"], serde_json::Value::Null);
        assert_eq!(json["summary"]["laborPctReason"], "no_sales");
        assert!(json["summary"].get("targetSplh").is_none(), "absent targets are left out");
    }
}
