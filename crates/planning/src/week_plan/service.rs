//! The week planner's use cases: availability, asking for a proposal, and solving the queue.

use std::collections::BTreeSet;
use std::sync::Arc;

use opsd_core::{
    Caller, Clock, LocationId, Page, PageRequest, ServiceError, StoreError, TeamId, ValidationErrors, Week,
};
use opsd_optimization::effective_goals;
use opsd_rostering::{Engine, RosterSolver, SolveOptions};
use rust_decimal::Decimal;
use time::Duration;
use uuid::Uuid;

use super::backtest::{
    BacktestWeek, past_staffing, proposal_staffing, rule_of_thumb, rules_broken, score, worked_of_past,
    worked_of_proposal,
};
use super::history::{needs_from_forecast, staff_from_history, templates_from_history, with_set_times};
use super::inputs::{Availability, ShiftTemplate};
use super::model::WeekModel;
use super::plan::{WeekTargets, plan_week};
use super::ports::{AvailabilityWrite, ClaimedProposal, PlanRulesStore, PlanningInputs, WeekPlanStore};
use super::proposal::{Proposal, ProposalKey, ProposalResult, TIME_LIMIT_SECONDS};
use super::rules::PlanRules;
use crate::forecast_report::{ForecastReport, HISTORY_WEEKS, build_forecast, hindsight};
use crate::ports::PlanningStore;

/// Staff and shift times are read from this many weeks before the planned week.
pub const STAFF_WEEKS: i64 = 8;
/// The most employees one availability request sets.
pub const MAX_AVAILABILITY_ROWS: usize = 500;
/// How far ahead unavailable dates may be given.
pub const AVAILABILITY_WEEKS_AHEAD: i64 = 52;

/// Why a location's week cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanRefusal {
    #[error("the location has under 4 weeks of sales history")]
    InsufficientHistory,
    #[error("nobody worked at the location in the 8 weeks before the week")]
    NoStaff,
    #[error("no shift of the 8 weeks before the week has a wage")]
    NoWage,
    #[error("employee keys not seen at the location: {0:?}")]
    UnknownEmployees(Vec<String>),
    #[error("the proposal is not ready (still solving, or failed)")]
    NotReady,
    #[error("another publish of this proposal is under way")]
    PublishInProgress,
    #[error("the proposal's week has passed")]
    WeekPassed,
    #[error("the location is not linked to a 7shifts location (schedulerLocationId)")]
    NotLinked,
    #[error("7shifts is not configured on this server")]
    SchedulerNotConfigured,
    #[error("7shifts failed ({0}); publish again to resume where it stopped")]
    ProviderFailed(String),
}

pub type WeekPlanError = ServiceError<PlanRefusal>;

/// A week's inputs: the location's history and availability, its forecast, and the week's goals (the
/// mean of its days' targets).
struct WeekInputs {
    inputs: PlanningInputs,
    forecast: ForecastReport,
    splh_target: Option<Decimal>,
    labor_pct_target: Option<Decimal>,
}

/// What a plan makes of the week's published schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Published {
    /// Fair workweek: kept unless a change is worth its premium.
    Kept,
    /// Its people are staff (someone new may be on it); its shifts are not kept.
    StaffOnly,
    /// A backtest plans as if it were not yet written.
    Unknown,
}

#[derive(derive_new::new)]
pub struct WeekPlanService {
    store: Arc<dyn WeekPlanStore>,
    team_rules: Arc<dyn PlanRulesStore>,
    planning: Arc<dyn PlanningStore>,
    solver: Arc<dyn RosterSolver>,
    clock: Arc<dyn Clock>,
    /// The rules of a team that has not set its own.
    defaults: PlanRules,
}

/// The most shift times one location sets: each department's in each block.
pub const MAX_SHIFT_TIMES: usize = 9;
/// The longest shift time a manager sets, in minutes.
pub const MAX_SHIFT_MINUTES: u32 = 16 * 60;

/// A location's shift type, and whether its manager set it (else it is the history's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShiftTime {
    pub template: ShiftTemplate,
    pub set: bool,
}

/// A team's rules, and whether it set them (or the defaults hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamRules {
    pub rules: PlanRules,
    pub set_by_team: bool,
}

impl WeekPlanService {
    pub async fn rules(&self, caller: &Caller) -> Result<TeamRules, WeekPlanError> {
        Ok(self.rules_of(caller.admin_team()?).await?)
    }

    /// Replaces the team's rules; the proposals asked for from then on are planned under them.
    pub async fn put_rules(&self, caller: &Caller, rules: PlanRules) -> Result<TeamRules, WeekPlanError> {
        let team = caller.admin_team()?;
        rules.validate()?;
        self.team_rules.put_rules(team, &rules).await?;
        Ok(TeamRules { rules, set_by_team: true })
    }

    async fn rules_of(&self, team: &TeamId) -> Result<TeamRules, StoreError> {
        Ok(match self.team_rules.rules(team).await? {
            Some(rules) => TeamRules { rules, set_by_team: true },
            None => TeamRules { rules: self.defaults.clone(), set_by_team: false },
        })
    }

    /// The location's shift types as its next week is planned: the history's of the 8 weeks before
    /// this one, with the manager's set times over them.
    pub async fn shift_times(&self, caller: &Caller, location: LocationId) -> Result<Vec<ShiftTime>, WeekPlanError> {
        let team = caller.admin_team()?;
        let start = Week::containing(self.clock.now().date()).start();
        let inputs = self
            .store
            .inputs(team, location, start - Duration::weeks(STAFF_WEEKS), start)
            .await?
            .ok_or(ServiceError::NotFound)?;
        Ok(with_set_times(templates_from_history(&inputs.history), &inputs.shift_times)
            .into_iter()
            .map(|template| ShiftTime { set: inputs.shift_times.contains(&template), template })
            .collect())
    }

    /// Replaces the shift times the location's manager set; answers the location's shift types.
    pub async fn put_shift_times(
        &self,
        caller: &Caller,
        location: LocationId,
        times: Vec<ShiftTemplate>,
    ) -> Result<Vec<ShiftTime>, WeekPlanError> {
        let team = caller.admin_team()?;
        let mut errors = ValidationErrors::new();
        if times.len() > MAX_SHIFT_TIMES {
            errors.push("shifts", format!("at most {MAX_SHIFT_TIMES}: one per department and block"));
        }
        for (i, time) in times.iter().enumerate() {
            if times[..i].iter().any(|t| t.department == time.department && t.block == time.block) {
                errors.push(format!("shifts[{i}]"), "a department and block appears twice: one time each");
            }
            if !(60..=MAX_SHIFT_MINUTES).contains(&time.minutes) {
                errors.push(format!("shifts[{i}].hours"), "must be 1 to 16");
            }
        }
        errors.into_result()?;
        self.store.put_shift_times(team, location, &times).await?.ok_or(ServiceError::NotFound)?;
        self.shift_times(caller, location).await
    }

    pub async fn availability(
        &self,
        caller: &Caller,
        location: LocationId,
    ) -> Result<Vec<Availability>, WeekPlanError> {
        self.store.availability(caller.admin_team()?, location).await?.ok_or(ServiceError::NotFound)
    }

    /// Replaces the listed employees' availability at the location; answers the location's whole list.
    pub async fn put_availability(
        &self,
        caller: &Caller,
        location: LocationId,
        rows: Vec<Availability>,
    ) -> Result<Vec<Availability>, WeekPlanError> {
        let team = caller.admin_team()?;
        self.validate(&rows)?;
        match self.store.put_availability(team, location, &rows).await?.ok_or(ServiceError::NotFound)? {
            AvailabilityWrite::Saved => self.availability(caller, location).await,
            AvailabilityWrite::UnknownEmployees(keys) => Err(ServiceError::Domain(PlanRefusal::UnknownEmployees(keys))),
        }
    }

    fn validate(&self, rows: &[Availability]) -> Result<(), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let first_day = Week::containing(self.clock.now().date()).start();
        let last_day = first_day + Duration::weeks(AVAILABILITY_WEEKS_AHEAD);
        if rows.len() > MAX_AVAILABILITY_ROWS {
            errors.push("employees", format!("at most {MAX_AVAILABILITY_ROWS} a request"));
        }
        let mut seen = BTreeSet::new();
        for (i, row) in rows.iter().enumerate() {
            let field = |name: &str| format!("employees[{i}].{name}");
            if row.employee_key.trim().is_empty() || row.employee_key.chars().count() > 200 {
                errors.push(field("employeeKey"), "must be 1 to 200 characters");
            } else if !seen.insert(row.employee_key.as_str()) {
                errors.push(field("employeeKey"), "appears twice: one row per employee");
            }
            if row.unavailable_weekdays.iter().any(|&day| day > 6) {
                errors.push(field("unavailableWeekdays"), "days are 0 (Saturday) to 6 (Friday)");
            }
            if row.unavailable_dates.iter().any(|date| *date < first_day || *date > last_day) {
                errors.push(
                    field("unavailableDates"),
                    format!(
                        "dates fall in a week from this one ({first_day}) to {AVAILABILITY_WEEKS_AHEAD} weeks ahead"
                    ),
                );
            }
            if row.max_weekly_minutes.is_some_and(|minutes| minutes > 7 * 24 * 60) {
                errors.push(field("maxWeeklyHours"), "must be 0 to 168");
            }
        }
        errors.into_result()
    }

    /// Checks that the week can be planned and queues it; the solve happens on the queue.
    pub async fn propose(
        &self,
        caller: &Caller,
        location: LocationId,
        week: Week,
        time_limit_seconds: u32,
    ) -> Result<Proposal, WeekPlanError> {
        let team = caller.admin_team()?;
        if !TIME_LIMIT_SECONDS.contains(&time_limit_seconds) {
            return Err(ValidationErrors::single("timeLimitSeconds", "must be 1 to 120").into());
        }
        let WeekInputs { inputs, forecast, .. } =
            self.read(team, location, week).await?.ok_or(ServiceError::NotFound)?;
        if forecast.method.is_none() {
            return Err(ServiceError::Domain(PlanRefusal::InsufficientHistory));
        }
        let staff = staff_from_history(&inputs.history, &inputs.punches);
        if staff.is_empty() {
            return Err(ServiceError::Domain(PlanRefusal::NoStaff));
        }
        if staff.iter().all(|member| member.hourly_wage <= Decimal::ZERO) {
            return Err(ServiceError::Domain(PlanRefusal::NoWage));
        }
        Ok(self.store.create_proposal(team, location, week, time_limit_seconds, caller.user_id.as_str()).await?)
    }

    pub async fn proposal(&self, caller: &Caller, id: Uuid) -> Result<Proposal, WeekPlanError> {
        self.store.proposal(caller.admin_team()?, id).await?.ok_or(ServiceError::NotFound)
    }

    pub async fn proposals(
        &self,
        caller: &Caller,
        location: Option<LocationId>,
        page: PageRequest<ProposalKey>,
    ) -> Result<Page<Proposal>, WeekPlanError> {
        let rows = self.store.proposals(caller.admin_team()?, location, &page).await?;
        Ok(Page::of(rows, &page, Proposal::key))
    }

    async fn read(&self, team: &TeamId, location: LocationId, week: Week) -> Result<Option<WeekInputs>, StoreError> {
        let start = week.start();
        let Some(inputs) = self.store.inputs(team, location, start - Duration::weeks(STAFF_WEEKS), start).await? else {
            return Ok(None);
        };
        let since = start - Duration::weeks(HISTORY_WEEKS);
        let Some(data) = self.planning.forecast_data(team, Some(location), week, since).await? else {
            return Ok(None);
        };
        let forecast = build_forecast(week, &data);
        let goals = effective_goals(&data.goals);
        let mean = |values: Vec<Decimal>| {
            (!values.is_empty()).then(|| (values.iter().sum::<Decimal>() / Decimal::from(values.len())).round_dp(2))
        };
        Ok(Some(WeekInputs {
            inputs,
            forecast,
            splh_target: mean(goals.iter().map(|g| g.splh_target).filter(|t| *t > Decimal::ZERO).collect()),
            labor_pct_target: mean(goals.iter().map(|g| g.labor_pct_target).filter(|t| *t > Decimal::ZERO).collect()),
        }))
    }

    /// Solves the oldest proposal waiting (or whose solver died), if any; true when one was taken.
    /// The store is read before and written after, never held while the engine searches.
    pub async fn solve_next(&self, lease_margin: Duration) -> Result<bool, StoreError> {
        // The lease covers the time limit and the reads and writes around it; a solve is never longer.
        let lease = Duration::seconds(i64::from(*TIME_LIMIT_SECONDS.end())) + lease_margin;
        let Some(claimed) = self.store.claim_proposal(lease).await? else {
            return Ok(false);
        };
        let outcome = self.solve(&claimed).await?;
        if !self.store.finish_proposal(claimed.id, claimed.lease, outcome, self.clock.now()).await? {
            // Its lease ran out (a paused instance) and another solver has it: that one records it.
            tracing::warn!(proposal = %claimed.id, "a schedule proposal's lease was lost; its new holder finishes it");
        }
        Ok(true)
    }

    async fn solve(&self, claimed: &ClaimedProposal) -> Result<Result<ProposalResult, String>, StoreError> {
        let Some(week_inputs) = self.read(&claimed.team, claimed.location, claimed.week).await? else {
            return Ok(Err("the location is no longer the team's".into()));
        };
        let rules = self.rules_of(&claimed.team).await?.rules;
        let notice_ends = self.clock.now().date() + Duration::days(i64::from(rules.notice_days));
        let published = if claimed.week.start() < notice_ends { Published::Kept } else { Published::StaffOnly };
        let options = SolveOptions {
            time_limit: std::time::Duration::from_secs(u64::from(claimed.time_limit_seconds)),
            threads: 1,
            seed: claimed.id.as_u128() as u64,
        };
        Ok(self.plan(claimed.week, &week_inputs, &rules, published, &options).await)
    }

    /// The week's model from its inputs, solved.
    async fn plan(
        &self,
        week: Week,
        week_inputs: &WeekInputs,
        rules: &PlanRules,
        published: Published,
        options: &SolveOptions,
    ) -> Result<ProposalResult, String> {
        let WeekInputs { inputs, forecast, splh_target, labor_pct_target } = week_inputs;
        let Some(timezone) = time_tz::timezones::get_by_name(&inputs.timezone) else {
            return Err(format!("the location's time zone {} is unknown", inputs.timezone));
        };
        let known = if published == Published::Unknown { &[][..] } else { &inputs.published[..] };
        let everyone: Vec<_> = inputs.history.iter().chain(known).cloned().collect();
        let mut model = WeekModel::new(
            week,
            staff_from_history(&everyone, &inputs.punches),
            &with_set_times(templates_from_history(&inputs.history), &inputs.shift_times),
            needs_from_forecast(forecast, &inputs.history),
            &inputs.availability,
            rules.clone(),
        );
        if published == Published::Kept && !inputs.published.is_empty() {
            let published: Vec<_> = inputs
                .published
                .iter()
                .map(|s| (s.employee_key.clone(), s.start.date(), s.department, s.block))
                .collect();
            model = model.keeping_published(&published);
        }
        let targets = WeekTargets {
            projected_sales: forecast.days.iter().filter_map(|d| d.forecast_sales).sum(),
            splh_target: *splh_target,
            labor_pct_target: *labor_pct_target,
        };
        let engine = Engine::new(self.solver.clone());
        plan_week(&engine, model, targets, timezone, options).await.map_err(|failure| failure.to_string())
    }

    /// Plans a week that has passed from what was known before it (its published schedule is not
    /// kept: the plan is made as if the week were still open), and scores the plan beside the
    /// schedule that was published for it and the rule of thumb, against the need its actual sales
    /// called for. An error says why the week could not be planned.
    pub async fn backtest(
        &self,
        team: &TeamId,
        location: LocationId,
        week: Week,
        options: &SolveOptions,
    ) -> Result<Result<BacktestWeek, String>, StoreError> {
        let Some(week_inputs) = self.read(team, location, week).await? else {
            return Ok(Err("the location is not the team's".into()));
        };
        if week_inputs.forecast.method.is_none() {
            return Ok(Err(PlanRefusal::InsufficientHistory.to_string()));
        }
        let following = Week::containing(week.start() + Duration::weeks(1));
        let Some(actual) = self.planning.forecast_data(team, Some(location), following, week.start()).await? else {
            return Ok(Err("the location is not the team's".into()));
        };
        let rules = self.rules_of(team).await?.rules;
        let result = match self.plan(week, &week_inputs, &rules, Published::Unknown, options).await {
            Ok(result) => result,
            Err(reason) => return Ok(Err(reason)),
        };
        let happened = hindsight(week, &actual);
        let needs = needs_from_forecast(&happened, &week_inputs.inputs.history);
        let actual_sales: Decimal = happened.days.iter().filter_map(|d| d.forecast_sales).sum();
        let published = &week_inputs.inputs.published;
        Ok(Ok(BacktestWeek {
            week,
            actual_sales,
            labor_pct_target: week_inputs.labor_pct_target,
            proposal: score(
                &proposal_staffing(&result.shifts),
                &needs,
                actual_sales,
                Some(rules_broken(&worked_of_proposal(&result.shifts), &rules)),
            ),
            published: score(
                &past_staffing(published),
                &needs,
                actual_sales,
                Some(rules_broken(&worked_of_past(published), &rules)),
            ),
            rule_of_thumb: score(&rule_of_thumb(&week_inputs.inputs.history, week), &needs, actual_sales, None),
            solver: result.solver,
        }))
    }
}
