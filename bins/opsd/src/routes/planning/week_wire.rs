//! The week planner's bodies: availability, and schedule proposals as clients receive them.

use opsd_core::{Department, LocationId, ValidationErrors, Week, parse_iso_date};
use opsd_optimization::Block;
use opsd_planning::week_plan::{self as domain, DEFAULT_TIME_LIMIT_SECONDS, ProposalStatus};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::wire;

/// One employee's availability at a location.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmployeeAvailability {
    /// The employee's key as the schedule sync stores it (their 7shifts user id).
    employee_key: String,
    /// Weekdays they never work: 0 for Saturday through 6 for Friday (the week starts on Saturday).
    #[serde(default)]
    unavailable_weekdays: Vec<u8>,
    /// Dates they cannot work (`YYYY-MM-DD`), from this week to 52 weeks ahead.
    #[serde(default)]
    #[schema(value_type = Vec<String>, format = Date)]
    unavailable_dates: Vec<String>,
    /// Blocks they would rather work; empty: no preference. A shift in another block is proposed only
    /// where it is worth more than the preference ($5).
    #[serde(default)]
    #[schema(value_type = Vec<wire::Block>)]
    preferred_blocks: Vec<Block>,
    /// The most hours a week they work (at most the team's 40); null: the team's.
    #[serde(default)]
    max_weekly_hours: Option<f64>,
}

impl EmployeeAvailability {
    fn into_domain(self, index: usize, errors: &mut ValidationErrors) -> domain::Availability {
        let mut preferred_blocks = self.preferred_blocks;
        preferred_blocks.sort();
        preferred_blocks.dedup();
        let field = format!("employees[{index}].unavailableDates");
        domain::Availability {
            employee_key: self.employee_key.trim().to_owned(),
            unavailable_weekdays: self.unavailable_weekdays,
            unavailable_dates: self
                .unavailable_dates
                .iter()
                .filter_map(|raw| errors.check(parse_iso_date(&field, raw)))
                .collect(),
            preferred_blocks,
            // Out of range (negative included) is refused by the service's check of at most 168 hours.
            max_weekly_minutes: self.max_weekly_hours.map(|hours| {
                if (0.0..=f64::from(u32::MAX / 60)).contains(&hours) { (hours * 60.0).round() as u32 } else { u32::MAX }
            }),
        }
    }
}

impl From<domain::Availability> for EmployeeAvailability {
    fn from(row: domain::Availability) -> Self {
        Self {
            employee_key: row.employee_key,
            unavailable_weekdays: row.unavailable_weekdays,
            unavailable_dates: row.unavailable_dates.iter().map(Date::to_string).collect(),
            preferred_blocks: row.preferred_blocks,
            max_weekly_hours: row.max_weekly_minutes.map(|minutes| (f64::from(minutes) / 60.0 * 100.0).round() / 100.0),
        }
    }
}

/// Replaces the listed employees' availability at the location; the others keep theirs.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AvailabilityRequest {
    pub location_id: Uuid,
    /// One row per employee.
    employees: Vec<EmployeeAvailability>,
}

impl AvailabilityRequest {
    pub fn try_into_domain(self) -> Result<(LocationId, Vec<domain::Availability>), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let rows = self.employees.into_iter().enumerate().map(|(i, row)| row.into_domain(i, &mut errors)).collect();
        errors.into_result()?;
        Ok((LocationId(self.location_id), rows))
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AvailabilityView {
    location_id: Uuid,
    employees: Vec<EmployeeAvailability>,
}

impl AvailabilityView {
    pub fn new(location: LocationId, rows: Vec<domain::Availability>) -> Self {
        Self { location_id: location.0, employees: rows.into_iter().map(EmployeeAvailability::from).collect() }
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct LocationQuery {
    pub location_id: Uuid,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProposalListQuery {
    /// Only this location's proposals.
    pub location_id: Option<Uuid>,
    /// Items per page: 1 to 500, default 100.
    pub limit: Option<u32>,
    /// Where the page starts: take it from the previous page's `Link: <…>; rel="next"`.
    pub cursor: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProposalRequest {
    location_id: Uuid,
    /// The Saturday that starts the week to plan (`YYYY-MM-DD`).
    week_of: String,
    /// How long the engine may search: 1 to 120 seconds, default 20.
    time_limit_seconds: Option<i64>,
}

impl ProposalRequest {
    pub fn try_into_domain(self) -> Result<(LocationId, Week, u32), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let week = errors
            .check(parse_iso_date("weekOf", &self.week_of))
            .and_then(|d| errors.check(Week::starting("weekOf", d)));
        let limit = self.time_limit_seconds.unwrap_or(i64::from(DEFAULT_TIME_LIMIT_SECONDS));
        if !(1..=120).contains(&limit) {
            errors.push("timeLimitSeconds", "must be 1 to 120");
        }
        errors.into_result()?;
        Ok((LocationId(self.location_id), week.expect("checked"), limit as u32))
    }
}

fn number(value: Decimal) -> f64 {
    value.to_f64().unwrap_or_default()
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalShift {
    employee_key: String,
    employee_name: String,
    role: String,
    #[schema(value_type = wire::Department)]
    department: Department,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    date: Date,
    #[schema(value_type = wire::Block)]
    block: Block,
    /// The instant (UTC) of the location's local start time.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    start: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    end: OffsetDateTime,
    hours: f64,
    /// Hours × the employee's wage (USD).
    cost: f64,
}

/// Hours one day, block and department calls for against those the proposal plans.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalCoverage {
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    date: Date,
    #[schema(value_type = wire::Block)]
    block: Block,
    #[schema(value_type = wire::Department)]
    department: Department,
    hours_needed: f64,
    hours_planned: f64,
}

/// The week as proposed, against its goals.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalWeek {
    /// The forecast's sales for the week (USD).
    projected_sales: f64,
    hours: f64,
    labor_cost: f64,
    /// Labor cost ÷ projected sales × 100; null without sales.
    labor_pct: Option<f64>,
    /// Projected sales ÷ planned hours; null without hours.
    splh: Option<f64>,
    /// The mean of the week's days' SPLH targets; null without goals.
    splh_target: Option<f64>,
    labor_pct_target: Option<f64>,
    /// Fair workweek: the premiums the changes to the published schedule owe (USD).
    change_premiums: f64,
}

/// What the engine reached: the objective (cents of wages, sales at risk and preferences not granted),
/// the best bound it proved, the gap between them, and the seconds it searched.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProposalSolver {
    /// `optimal` (proven), `feasible` (no proof in time).
    status: &'static str,
    objective: i64,
    lower_bound: i64,
    gap: f64,
    seconds: f64,
}

/// Fair workweek: one employee's day as proposed against the published schedule, inside the notice
/// period, with the premium the change owes them.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleChangeView {
    employee_key: String,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    date: Date,
    /// `added`, `removed`, or `moved` (another block or department).
    kind: &'static str,
    /// The published shift's department and block; null when nothing was published that day.
    from: Option<ShiftSlot>,
    /// The proposed one; null when the proposal takes the day away.
    to: Option<ShiftSlot>,
    /// USD.
    premium: f64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShiftSlot {
    #[schema(value_type = wire::Department)]
    department: Department,
    #[schema(value_type = wire::Block)]
    block: Block,
}

/// A rule that kept the proposal from covering more, with the employees it held back.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingRuleView {
    /// `max_weekly_hours`, `max_days_in_a_row`, `min_rest` or `unavailable`.
    rule: String,
    employee_keys: Vec<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleProposal {
    id: Uuid,
    location_id: Uuid,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    week_of: Date,
    /// `solving`, then `ready` or `failed` (with `reason`).
    status: &'static str,
    reason: Option<String>,
    time_limit_seconds: u32,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    completed_at: Option<OffsetDateTime>,
    /// The rest is present on a ready proposal read by its id; lists leave it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    week: Option<ProposalWeek>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shifts: Option<Vec<ProposalShift>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<Vec<ProposalCoverage>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    solver: Option<ProposalSolver>,
    #[serde(skip_serializing_if = "Option::is_none")]
    binding_rules: Option<Vec<BindingRuleView>>,
    /// Fair workweek: for a week inside the notice period (14 days) that has published shifts, each
    /// change to them; empty otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<Vec<ScheduleChangeView>>,
}

impl ScheduleProposal {
    pub fn is_solving(&self) -> bool {
        self.status == ProposalStatus::Solving.as_str()
    }
}

impl From<domain::Proposal> for ScheduleProposal {
    fn from(proposal: domain::Proposal) -> Self {
        let result = proposal.result;
        Self {
            id: proposal.id,
            location_id: proposal.location.0,
            week_of: proposal.week.start(),
            status: proposal.status.as_str(),
            reason: proposal.reason,
            time_limit_seconds: proposal.time_limit_seconds,
            created_at: proposal.created_at,
            completed_at: proposal.completed_at,
            week: result.as_ref().map(|r| ProposalWeek {
                projected_sales: number(r.projected_sales),
                hours: number(r.hours),
                labor_cost: number(r.labor_cost),
                labor_pct: r.labor_pct.map(number),
                splh: r.splh.map(number),
                splh_target: r.splh_target.map(number),
                labor_pct_target: r.labor_pct_target.map(number),
                change_premiums: number(r.change_premiums()),
            }),
            solver: result.as_ref().map(|r| ProposalSolver {
                status: r.solver.status.name(),
                objective: r.solver.objective,
                lower_bound: r.solver.bound,
                gap: (r.solver.gap * 10_000.0).round() / 10_000.0,
                seconds: (r.solver.seconds * 10.0).round() / 10.0,
            }),
            binding_rules: result.as_ref().map(|r| {
                r.binding_rules
                    .iter()
                    .map(|b| BindingRuleView { rule: b.rule.clone(), employee_keys: b.employees.clone() })
                    .collect()
            }),
            changes: result.as_ref().map(|r| {
                let slot =
                    |pair: Option<(Department, Block)>| pair.map(|(department, block)| ShiftSlot { department, block });
                r.changes
                    .iter()
                    .map(|c| ScheduleChangeView {
                        employee_key: c.employee_key.clone(),
                        date: c.date,
                        kind: c.kind.as_str(),
                        from: slot(c.from),
                        to: slot(c.to),
                        premium: number(c.premium),
                    })
                    .collect()
            }),
            coverage: result.as_ref().map(|r| {
                r.coverage
                    .iter()
                    .map(|c| ProposalCoverage {
                        date: c.date,
                        block: c.block,
                        department: c.department,
                        hours_needed: number(c.hours_needed),
                        hours_planned: number(c.hours_planned),
                    })
                    .collect()
            }),
            shifts: result.map(|r| {
                r.shifts
                    .into_iter()
                    .map(|s| ProposalShift {
                        employee_key: s.employee_key,
                        employee_name: s.employee_name,
                        role: s.role,
                        department: s.department,
                        date: s.date,
                        block: s.block,
                        start: s.start,
                        end: s.end,
                        hours: number(s.hours),
                        cost: number(s.cost),
                    })
                    .collect()
            }),
        }
    }
}

/// What a publish did: drafts created now, and those an earlier publish had sent.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftsPublished {
    created: u32,
    already_sent: u32,
}

impl From<domain::Published> for DraftsPublished {
    fn from(published: domain::Published) -> Self {
        Self { created: published.created, already_sent: published.already_sent }
    }
}

/// The rules a team's weeks are planned under (docs/labor-planning.md), all of them: `PUT` replaces
/// the set.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanningRules {
    /// The most an employee works in a week (FLSA overtime starts after 40), 1 to 80.
    max_weekly_hours: f64,
    /// The least rest between two shifts, 0 to 24 (10: no close then open).
    min_rest_hours: f64,
    /// 1 to 7 (7: no limit within the week).
    max_days_in_a_row: u32,
    /// The shortest shift, 1 to 12, and the length of each block's short shift.
    min_shift_hours: f64,
    /// Fair workweek: a week starting within this many days is planned against its published
    /// schedule, 0 to 28.
    notice_days: u32,
    /// Fair workweek: the premium owed per changed shift, in dollars, 0 to 1000.
    change_premium: f64,
    /// What not granting a preferred block costs, in dollars, 0 to 1000.
    preference_weight: f64,
    /// The share of the sales an hour short of the need puts at risk, 0 to 200.
    understaffed_sales_at_risk_pct: u32,
}

/// Hours or dollars as whole minutes or cents; anything out of range becomes a value the rules'
/// check refuses.
fn scaled(value: f64, by: f64) -> i64 {
    if value.is_finite() && (0.0..=1e9).contains(&value) { (value * by).round() as i64 } else { -1 }
}

fn minutes(hours: f64) -> u32 {
    u32::try_from(scaled(hours, 60.0)).unwrap_or(u32::MAX)
}

impl PlanningRules {
    pub fn into_domain(self) -> domain::PlanRules {
        domain::PlanRules {
            max_weekly_minutes: minutes(self.max_weekly_hours),
            min_rest_minutes: minutes(self.min_rest_hours),
            max_days_in_a_row: self.max_days_in_a_row,
            min_shift_minutes: minutes(self.min_shift_hours),
            understaffed_sales_at_risk_pct: self.understaffed_sales_at_risk_pct,
            preference_weight_cents: scaled(self.preference_weight, 100.0),
            notice_days: self.notice_days,
            change_premium_cents: scaled(self.change_premium, 100.0),
        }
    }
}

impl From<domain::PlanRules> for PlanningRules {
    fn from(rules: domain::PlanRules) -> Self {
        let hours = |minutes: u32| (f64::from(minutes) / 60.0 * 100.0).round() / 100.0;
        let dollars = |cents: i64| cents as f64 / 100.0;
        Self {
            max_weekly_hours: hours(rules.max_weekly_minutes),
            min_rest_hours: hours(rules.min_rest_minutes),
            max_days_in_a_row: rules.max_days_in_a_row,
            min_shift_hours: hours(rules.min_shift_minutes),
            notice_days: rules.notice_days,
            change_premium: dollars(rules.change_premium_cents),
            preference_weight: dollars(rules.preference_weight_cents),
            understaffed_sales_at_risk_pct: rules.understaffed_sales_at_risk_pct,
        }
    }
}

/// The rules a team's weeks are planned under, and whether the team set them (else the defaults).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanningRulesView {
    #[serde(flatten)]
    rules: PlanningRules,
    set_by_team: bool,
}

impl From<domain::TeamRules> for PlanningRulesView {
    fn from(team: domain::TeamRules) -> Self {
        Self { rules: team.rules.into(), set_by_team: team.set_by_team }
    }
}

/// One department's shift in one block at a location, at its local time.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShiftTime {
    #[schema(value_type = wire::Department)]
    department: Department,
    #[schema(value_type = wire::Block)]
    block: Block,
    /// The local start, `HH:MM`.
    #[schema(example = "16:30")]
    start: String,
    /// 1 to 16.
    hours: f64,
}

impl ShiftTime {
    fn into_domain(self, index: usize, errors: &mut ValidationErrors) -> Option<domain::ShiftTemplate> {
        let start = time::Time::parse(&self.start, time::macros::format_description!("[hour]:[minute]")).ok();
        if start.is_none() {
            errors.push(format!("shifts[{index}].start"), "must be a local time HH:MM");
        }
        Some(domain::ShiftTemplate {
            department: self.department,
            block: self.block,
            start: start?,
            minutes: minutes(self.hours),
        })
    }
}

impl From<domain::ShiftTemplate> for ShiftTime {
    fn from(template: domain::ShiftTemplate) -> Self {
        Self {
            department: template.department,
            block: template.block,
            start: format!("{:02}:{:02}", template.start.hour(), template.start.minute()),
            hours: (f64::from(template.minutes) / 60.0 * 100.0).round() / 100.0,
        }
    }
}

/// Replaces the shift times a location's manager set (an empty list goes back to the history's).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShiftTimesRequest {
    pub location_id: Uuid,
    /// At most one per department and block.
    shifts: Vec<ShiftTime>,
}

impl ShiftTimesRequest {
    pub fn try_into_domain(self) -> Result<(LocationId, Vec<domain::ShiftTemplate>), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let times =
            self.shifts.into_iter().enumerate().filter_map(|(i, time)| time.into_domain(i, &mut errors)).collect();
        errors.into_result()?;
        Ok((LocationId(self.location_id), times))
    }
}

/// A location's shift type as its weeks are planned, and where it comes from.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlannedShiftTime {
    #[serde(flatten)]
    time: ShiftTime,
    /// `set` by the manager, or read from the `history` of the 8 weeks before this one (the median
    /// start and length).
    #[schema(example = "history")]
    source: &'static str,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShiftTimesView {
    location_id: Uuid,
    shifts: Vec<PlannedShiftTime>,
}

impl ShiftTimesView {
    pub fn new(location: LocationId, times: Vec<domain::ShiftTime>) -> Self {
        let shifts = times
            .into_iter()
            .map(|t| PlannedShiftTime { time: t.template.into(), source: if t.set { "set" } else { "history" } })
            .collect();
        Self { location_id: location.0, shifts }
    }
}
