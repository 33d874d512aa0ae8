//! `opsd roster solve`: a benchmark instance in, the best roster found out (a table, or one JSON
//! object), with progress on stderr. Exit 0 with a roster, 3 without one, 2 for a file or arguments
//! it cannot use.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opsd_rostering::{Engine, Instance, Progress, Solution, SolveOptions, Status};
use opsd_solver::HighsSolver;

pub const EXIT_NO_ROSTER: i32 = 3;
pub const EXIT_UNUSABLE: i32 = 2;

/// The MIP solver under the engine: HiGHS, or CBC in a build with the `cbc` feature (to compare them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SolverChoice {
    Highs,
    Cbc,
}

pub struct SolveCommand {
    pub file: PathBuf,
    pub solver: SolverChoice,
    pub time_limit: f64,
    pub threads: u32,
    pub seed: u64,
    pub json: bool,
}

/// Runs the command and returns its exit code.
pub async fn solve(command: SolveCommand) -> i32 {
    let started = Instant::now();
    let text = match std::fs::read_to_string(&command.file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("opsd roster solve: cannot read {}: {error}", command.file.display());
            return EXIT_UNUSABLE;
        }
    };
    let instance = match opsd_rostering::parse(&text) {
        Ok(instance) => Arc::new(instance),
        Err(error) => {
            eprintln!("opsd roster solve: {}: {error}", command.file.display());
            return EXIT_UNUSABLE;
        }
    };
    // The limit counts from the start: reading and building the model are inside it.
    let time_limit = Duration::from_secs_f64(command.time_limit).saturating_sub(started.elapsed());
    let options = SolveOptions { time_limit, threads: command.threads, seed: command.seed };
    let report = |progress: &Progress| {
        let objective = progress.objective.map_or_else(|| "none".to_owned(), |objective| objective.to_string());
        eprintln!(
            "{:>7.2}s  {:<28} best {objective:>8}  bound {:>8}",
            (started.elapsed()).as_secs_f64(),
            progress.phase,
            progress.bound
        );
    };
    let instance_for_engine = Arc::clone(&instance);
    let mut solution = match command.solver {
        SolverChoice::Highs => Engine::new(HighsSolver).solve(instance_for_engine, &options, &report).await,
        #[cfg(feature = "cbc")]
        SolverChoice::Cbc => Engine::new(opsd_solver::CbcSolver).solve(instance_for_engine, &options, &report).await,
        #[cfg(not(feature = "cbc"))]
        SolverChoice::Cbc => {
            eprintln!("opsd roster solve: this opsd was built without CBC (cargo build --features cbc)");
            return EXIT_UNUSABLE;
        }
    };
    solution.seconds = started.elapsed().as_secs_f64();
    let output = if command.json { json(&instance, &solution) } else { table(&instance, &solution) };
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{output}").and_then(|()| stdout.flush()).is_err() {
        return EXIT_UNUSABLE;
    }
    if solution.roster.is_some() { 0 } else { EXIT_NO_ROSTER }
}

fn json(instance: &Instance, solution: &Solution) -> String {
    let roster = solution.roster.as_ref().map(|roster| {
        // An object in the file's order of employees, which a map would sort.
        let rows: Vec<String> = roster
            .named(instance)
            .into_iter()
            .map(|(employee, days)| format!("{}:{}", serde_json::json!(employee), serde_json::json!(days)))
            .collect();
        format!("{{{}}}", rows.join(","))
    });
    let infeasibility = solution.infeasibility.as_ref().map(|why| {
        serde_json::json!({
            "employee": why.employee.map(|employee| instance.staff[employee].id.clone()),
            "rules": why.rules.iter().map(|rule| rule.name()).collect::<Vec<_>>(),
        })
    });
    let seconds = |seconds: f64| (seconds * 1000.0).round() / 1000.0;
    // In this order, which a map would sort.
    let fields: [(&str, serde_json::Value); 8] = [
        ("objective", solution.objective.map(|objective| objective.total()).into()),
        ("lowerBound", solution.lower_bound.into()),
        ("status", solution.status.name().into()),
        ("seconds", seconds(solution.seconds).into()),
        ("gap", solution.gap().into()),
        ("secondsToBest", solution.seconds_to_best.map(seconds).into()),
        ("parts", serde_json::to_value(solution.objective).expect("plain numbers")),
        ("infeasible", infeasibility.into()),
    ];
    let head: Vec<String> = fields.iter().map(|(name, value)| format!("\"{name}\":{value}")).collect();
    format!("{{{},\"roster\":{}}}", head.join(","), roster.as_deref().unwrap_or("null"))
}

fn table(instance: &Instance, solution: &Solution) -> String {
    let mut out = String::new();
    if let Some(roster) = &solution.roster {
        let width = instance.shifts.iter().map(|shift| shift.id.len()).max().unwrap_or(1).max(2);
        let name_width = instance.staff.iter().map(|employee| employee.id.len()).max().unwrap_or(1).max(8);
        out.push_str(&format!("{:name_width$}", "day"));
        for day in 0..instance.horizon {
            out.push_str(&format!(" {:>width$}", day));
        }
        out.push('\n');
        for (employee, days) in roster.named(instance) {
            out.push_str(&format!("{employee:name_width$}"));
            for shift in days {
                let shown = if shift.is_empty() { "." } else { shift.as_str() };
                out.push_str(&format!(" {shown:>width$}"));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    match solution.status {
        Status::Infeasible => {
            out.push_str("infeasible: no roster meets every rule");
            if let Some(why) = &solution.infeasibility {
                if let Some(employee) = why.employee {
                    out.push_str(&format!(" for employee {}", instance.staff[employee].id));
                }
                if !why.rules.is_empty() {
                    let rules: Vec<_> = why.rules.iter().map(|rule| rule.name()).collect();
                    out.push_str(&format!(" (without any one of {} it could)", rules.join(", ")));
                }
            }
        }
        Status::Unknown => out.push_str("unknown: no roster found in time"),
        Status::Optimal | Status::Feasible => {
            let objective = solution.objective.map_or(0, |objective| objective.total());
            let gap = solution.gap().unwrap_or(0.0) * 100.0;
            out.push_str(&format!(
                "{}: objective {objective}, lower bound {} (gap {gap:.2} %), best found at {:.1} s",
                solution.status.name(),
                solution.lower_bound,
                solution.seconds_to_best.unwrap_or(0.0)
            ));
        }
    }
    out.push_str(&format!(", {:.1} s in all", solution.seconds));
    out
}
