//! `opsd plan backtest`: the week planner on weeks that have passed (docs/labor-planning.md,
//! "Backtest"). For a sample of the team's locations, each of the last weeks is planned from what
//! was known before it and scored against what it sold, beside the schedule published for it and the
//! rule of thumb; then the totals, and whether the plan beat both.

use std::sync::Arc;

use anyhow::Context;
use opsd_core::{Decimal, PageRequest, SystemClock, TeamId, Week};
use opsd_planning::week_plan::{BacktestWeek, PlanRules, ScheduleScore, WeekPlanService};
use opsd_postgres::{PgLocationStore, PgPlanRulesStore, PgPlanningStore, PgWeekPlanStore};
use opsd_rostering::SolveOptions;
use opsd_solver::HighsSolver;
use opsd_teams::LocationStore;

use crate::config::Config;

pub struct BacktestCommand {
    pub team: String,
    pub locations: usize,
    pub weeks: u32,
    pub time_limit: u32,
    pub threads: u32,
}

/// Every `count`-th of the team's locations by name, spread over the whole list.
fn sample<T: Clone>(all: &[T], count: usize) -> Vec<T> {
    if all.len() <= count {
        return all.to_vec();
    }
    (0..count).map(|i| all[i * all.len() / count].clone()).collect()
}

pub async fn run(command: BacktestCommand) -> anyhow::Result<()> {
    let config = Config::from_environment()?;
    let db = crate::startup_database(&config).await?;
    let team = TeamId::new(command.team.clone());
    let page = PageRequest { limit: opsd_core::MAX_LIMIT, after: None };
    let all = PgLocationStore::new(db.clone()).list(&team, &page).await.context("listing the team's locations")?;
    anyhow::ensure!(!all.is_empty(), "the team {} has no locations", command.team);
    let planner = WeekPlanService::new(
        Arc::new(PgWeekPlanStore::new(db.clone())),
        Arc::new(PgPlanRulesStore::new(db.clone())),
        Arc::new(PgPlanningStore::new(db.clone())),
        Arc::new(HighsSolver),
        Arc::new(SystemClock),
        PlanRules::default(),
    );
    let options = SolveOptions {
        time_limit: std::time::Duration::from_secs(u64::from(command.time_limit)),
        threads: command.threads,
        seed: 0,
    };
    let this_week = Week::containing(time::OffsetDateTime::now_utc().date());
    let mut weeks = vec![this_week.previous()];
    while weeks.len() < command.weeks as usize {
        weeks.push(weeks.last().expect("one").previous());
    }
    weeks.reverse();
    println!(
        "{:<16} {:<10} {:>9} {:>6} | {:^27} | {:^27} | {:^22} | solver",
        "location", "week", "sales", "goal %", "proposal", "published", "rule of thumb"
    );
    println!("{:<16} {:<10} {:>9} {:>6} | {} | {} | {} |", "", "", "", "", header(true), header(true), header(false));
    let mut scored: Vec<BacktestWeek> = Vec::new();
    for location in sample(&all, command.locations) {
        for week in &weeks {
            match planner.backtest(&team, location.id, *week, &options).await? {
                Ok(result) => {
                    println!(
                        "{:<16} {:<10} {:>9} {:>6} | {} | {} | {} | {} {:.1}s, gap {:.1}%",
                        truncate(&location.name, 16),
                        week.start(),
                        result.actual_sales.round(),
                        result.labor_pct_target.map_or("-".into(), |t| t.round_dp(1).to_string()),
                        columns(&result.proposal),
                        columns(&result.published),
                        columns(&result.rule_of_thumb),
                        result.solver.status.name(),
                        result.solver.seconds,
                        result.solver.gap * 100.0
                    );
                    scored.push(result);
                }
                Err(reason) => {
                    println!("{:<16} {:<10} not planned: {reason}", truncate(&location.name, 16), week.start())
                }
            }
        }
    }
    anyhow::ensure!(!scored.is_empty(), "no week could be planned");
    summary(&scored);
    Ok(())
}

fn truncate(name: &str, width: usize) -> String {
    name.chars().take(width).collect()
}

fn header(with_rules: bool) -> String {
    if with_rules {
        format!("{:>6} {:>6} {:>6} {:>5}", "short", "over", "labor%", "rules")
    } else {
        format!("{:>6} {:>6} {:>6}", "short", "over", "labor%")
    }
}

fn columns(score: &ScheduleScore) -> String {
    let pct = score.labor_pct.map_or("-".into(), |p| p.round_dp(1).to_string());
    let base = format!("{:>6} {:>6} {:>6}", score.hours_short.round_dp(1), score.hours_over.round_dp(1), pct);
    match score.rules_broken {
        Some(rules) => format!("{base} {rules:>5}"),
        None => base,
    }
}

/// One of the three schedules of a week.
type Pick = fn(&BacktestWeek) -> &ScheduleScore;

/// The totals of each way over the weeks, and whether the plan was short fewer hours and nearer the
/// labor-% goal than both others.
fn summary(weeks: &[BacktestWeek]) {
    let n = Decimal::from(weeks.len());
    let total = |pick: Pick| {
        let short: Decimal = weeks.iter().map(|w| pick(w).hours_short).sum();
        let over: Decimal = weeks.iter().map(|w| pick(w).hours_over).sum();
        // How far the week's labor % was from its goal, on average over the weeks.
        let off: Decimal =
            weeks.iter().filter_map(|w| Some((pick(w).labor_pct? - w.labor_pct_target?).abs())).sum::<Decimal>() / n;
        let rules: Option<u32> = weeks.iter().map(|w| pick(w).rules_broken).sum();
        (short, over, off, rules)
    };
    let ways: [(&str, Pick); 3] =
        [("proposal", |w| &w.proposal), ("published", |w| &w.published), ("rule of thumb", |w| &w.rule_of_thumb)];
    println!();
    println!(
        "over {} weeks: {:<14} {:>9} {:>9} {:>22} {:>13}",
        weeks.len(),
        "",
        "hours short",
        "hours over",
        "labor % from goal (mean)",
        "rules broken"
    );
    let figures: Vec<_> = ways.iter().map(|(name, pick)| (*name, total(*pick))).collect();
    for (name, (short, over, off, rules)) in &figures {
        println!(
            "{:>14}{:<14} {:>9} {:>9} {:>22} {:>13}",
            "",
            name,
            short.round_dp(1),
            over.round_dp(1),
            format!("{} pts", off.round_dp(2)),
            rules.map_or("-".into(), |r| r.to_string())
        );
    }
    let (_, (short, _, off, rules)) = figures[0];
    let beats = figures[1..].iter().all(|(_, (s, _, o, _))| short < *s && off < *o);
    println!(
        "goal (fewer hours short and a labor % nearer the goal than both, no rule broken): {}",
        if beats && rules == Some(0) { "met" } else { "NOT met" }
    );
}
