//! Queries and bodies as clients send them; parsing names each bad field.

use opsd_core::{LocationId, TeamId, ValidationErrors, parse_iso_date, parse_money};
use rust_decimal::Decimal;
use serde::Deserialize;
use uuid::Uuid;

use crate::goals::DayGoal;
use crate::model::{Block, SalesRow, Week};

pub const MAX_SALES_ROWS: usize = 10_000;

fn team_id(errors: &mut ValidationErrors, raw: Option<&str>) -> Option<TeamId> {
    match raw.map(str::trim) {
        Some(id) if !id.is_empty() && id.len() <= 200 => Some(TeamId::new(id)),
        Some(_) => {
            errors.push("teamId", "must be 1 to 200 characters");
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

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
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
    pub fn parse(&self) -> Result<(TeamId, Option<LocationId>, Week), ValidationErrors> {
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
        Ok((team.expect("checked"), location, week.expect("checked")))
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalsQuery {
    pub team_id: Option<String>,
    pub location_id: Option<String>,
    /// Optional; validated when present (a Saturday).
    pub week_of: Option<String>,
}

impl GoalsQuery {
    pub fn parse(&self) -> Result<(TeamId, Option<LocationId>), ValidationErrors> {
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

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SalesRowRequest {
    pub location_id: Uuid,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub block: Block,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0))]
    pub food: serde_json::Number,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0))]
    pub beverage: serde_json::Number,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0))]
    pub other: serde_json::Number,
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub guests: Option<i32>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SalesIngestRequest {
    pub team_id: String,
    /// At most 10,000 rows, each (location, date, block) at most once; upserted as one transaction.
    pub rows: Vec<SalesRowRequest>,
}

impl SalesIngestRequest {
    pub fn parse(&self) -> Result<(TeamId, Vec<SalesRow>), ValidationErrors> {
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

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalRequest {
    /// 0 (Saturday) to 6 (Friday).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 6))]
    pub day_of_week: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0))]
    pub sales_goal: serde_json::Number,
    /// A percentage, 0 to 100.
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0, maximum = 100))]
    pub labor_pct_target: serde_json::Number,
    /// USD per labor hour.
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 0))]
    pub splh_target: serde_json::Number,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GoalsRequest {
    pub team_id: String,
    /// Without it, the goals are the team defaults.
    pub location_id: Option<Uuid>,
    /// At most one goal per weekday.
    pub goals: Vec<GoalRequest>,
}

impl GoalsRequest {
    pub fn parse(&self) -> Result<(TeamId, Option<LocationId>, Vec<DayGoal>), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let team = team_id(&mut errors, Some(&self.team_id));
        let mut days = [false; 7];
        let mut goals = Vec::new();
        for (index, goal) in self.goals.iter().enumerate() {
            let field = |name: &str| format!("goals[{index}].{name}");
            let before = errors.errors().len();
            if !(0..=6).contains(&goal.day_of_week) {
                errors.push(field("dayOfWeek"), "must be 0 (Saturday) to 6 (Friday)");
            } else if std::mem::replace(&mut days[goal.day_of_week as usize], true) {
                errors.push(field("dayOfWeek"), "repeats a weekday");
            }
            let sales_goal = errors.check(parse_money(&field("salesGoal"), &goal.sales_goal.to_string()));
            let labor_pct_target =
                errors.check(parse_money(&field("laborPctTarget"), &goal.labor_pct_target.to_string()));
            if labor_pct_target.is_some_and(|t| t > Decimal::ONE_HUNDRED) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(errors: ValidationErrors) -> Vec<String> {
        errors.errors().iter().map(|e| e.field.clone()).collect()
    }

    #[test]
    fn the_optimization_query_needs_a_team_and_a_saturday() {
        let missing = OptimizationQuery::default().parse().unwrap_err();
        assert_eq!(fields(missing), ["teamId", "weekOf"]);
        let query = |week: &str, location: Option<&str>| OptimizationQuery {
            team_id: Some("org_1".into()),
            week_of: Some(week.into()),
            location_id: location.map(Into::into),
        };
        assert_eq!(fields(query("2026-11-22", None).parse().unwrap_err()), ["weekOf"]);
        assert_eq!(fields(query("next week", None).parse().unwrap_err()), ["weekOf"]);
        assert_eq!(fields(query("2026-11-21", Some("x")).parse().unwrap_err()), ["locationId"]);
        assert!(query("2026-11-21", Some(&Uuid::nil().to_string())).parse().is_ok());
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
        assert_eq!(fields(request.parse().unwrap_err()), ["rows[1].food", "rows[2]"]);
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
            fields(request.parse().unwrap_err()),
            ["goals[1].dayOfWeek", "goals[2].dayOfWeek", "goals[2].laborPctTarget", "goals[2].splhTarget"]
        );
    }
}
