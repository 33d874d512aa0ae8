//! Solving a week: the engine on the week's instance, and the figures a manager reviews.

use std::sync::Arc;

use opsd_rostering::{Engine, RosterSolver, SolveOptions, Status};
use rust_decimal::Decimal;

use time_tz::Tz;

use super::model::WeekModel;
use super::proposal::{BindingRule, ProposalResult};

/// What a week is measured against: its forecast sales and the goals (the means of its days').
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeekTargets {
    pub projected_sales: Decimal,
    pub splh_target: Option<Decimal>,
    pub labor_pct_target: Option<Decimal>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SolverFigures {
    pub status: Status,
    /// In cents: wages, sales at risk and preferences not granted.
    pub objective: i64,
    pub bound: i64,
    pub gap: f64,
    pub seconds: f64,
}

/// Why a week has no proposal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanFailure {
    #[error("no roster keeps every rule ({0})")]
    Infeasible(String),
    #[error("no roster was found within the time limit")]
    NoRosterInTime,
}

pub async fn plan_week<S: RosterSolver>(
    engine: &Engine<S>,
    model: WeekModel,
    targets: WeekTargets,
    zone: &Tz,
    options: &SolveOptions,
) -> Result<ProposalResult, PlanFailure> {
    let instance = Arc::new(model.instance.clone());
    let solution = engine.solve(instance, options, &|_| {}).await;
    let (Some(roster), Some(objective)) = (solution.roster.as_ref(), solution.objective) else {
        return Err(match solution.status {
            Status::Infeasible => PlanFailure::Infeasible(
                solution
                    .infeasibility
                    .map(|why| why.rules.iter().map(|rule| rule.name()).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default(),
            ),
            _ => PlanFailure::NoRosterInTime,
        });
    };
    let shifts = model.shifts(roster, zone);
    let projected_sales = targets.projected_sales;
    let hours: Decimal = shifts.iter().map(|s| s.hours).sum();
    let labor_cost: Decimal = shifts.iter().map(|s| s.cost).sum();
    let positive = |value: Decimal| (value > Decimal::ZERO).then_some(value);
    Ok(ProposalResult {
        coverage: model.coverage(&shifts),
        binding_rules: model
            .binding_rules(roster)
            .into_iter()
            .map(|(rule, employees)| BindingRule { rule: rule.to_owned(), employees })
            .collect(),
        changes: model.changes(roster),
        labor_pct: positive(projected_sales).map(|sales| (labor_cost / sales * Decimal::ONE_HUNDRED).round_dp(2)),
        splh: positive(hours).map(|hours| (projected_sales / hours).round_dp(2)),
        projected_sales,
        splh_target: targets.splh_target,
        labor_pct_target: targets.labor_pct_target,
        hours,
        labor_cost,
        solver: SolverFigures {
            status: solution.status,
            objective: objective.total(),
            bound: solution.lower_bound,
            gap: solution.gap().unwrap_or(0.0),
            seconds: solution.seconds,
        },
        shifts,
    })
}
