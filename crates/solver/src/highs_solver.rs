//! `RosterSolver` on HiGHS: the domain's program loaded column by column, the start roster as a MIP
//! start, solved on Tokio's blocking pool so no runtime worker waits on the search.

use async_trait::async_trait;
use highs::{HighsModelStatus, HighsSolutionStatus, RowProblem, Sense};

use opsd_rostering::formulation::{Formulation, Mip};
use opsd_rostering::{RosterProblem, RosterSolver, SolverError, SolverOutcome, SolverStatus};

#[derive(Clone, Copy, Debug, Default)]
pub struct HighsSolver;

#[async_trait]
impl RosterSolver for HighsSolver {
    async fn solve(&self, problem: RosterProblem) -> Result<SolverOutcome, SolverError> {
        tokio::task::spawn_blocking(move || solve(&problem))
            .await
            .map_err(|error| SolverError::Failed(format!("the solver's thread ended: {error}")))?
    }
}

fn solve(problem: &RosterProblem) -> Result<SolverOutcome, SolverError> {
    let formulation = Formulation::build(problem);
    let mip = &formulation.mip;
    if mip.infeasible {
        return Ok(SolverOutcome { status: SolverStatus::Infeasible, roster: None, bound: None });
    }
    if mip.columns.is_empty() {
        // Every cell fixed: the start roster is the answer (and the evaluator its judge).
        let roster = problem.start.as_deref().cloned();
        return Ok(SolverOutcome { status: SolverStatus::Optimal, roster, bound: Some(mip.offset) });
    }
    let mut model = load(mip).try_optimise(Sense::Minimise).map_err(|status| failed("loading", status))?;
    model.make_quiet();
    set(&mut model, "time_limit", problem.time_limit.as_secs_f64().max(0.01))?;
    // One thread a solve: the engine runs several at once, and HiGHS's thread pool is one per process.
    set(&mut model, "threads", 1)?;
    set(&mut model, "random_seed", (problem.seed % i32::MAX as u64) as i32)?;
    set(&mut model, "mip_rel_gap", 0.0)?;
    // The objective is integral: a gap under one unit is closed.
    set(&mut model, "mip_abs_gap", 0.999)?;
    if let Some(start) = &problem.start {
        let values = formulation.values(&problem.instance, start);
        model
            .try_set_solution(Some(&values), None, None, None)
            .map_err(|status| failed("setting the start", status))?;
    }
    let solved = model.try_solve().map_err(|status| failed("solving", status))?;
    let status = match solved.status() {
        HighsModelStatus::Optimal => SolverStatus::Optimal,
        HighsModelStatus::Infeasible => SolverStatus::Infeasible,
        _ if solved.primal_solution_status() == HighsSolutionStatus::Feasible => SolverStatus::Feasible,
        _ => SolverStatus::Unknown,
    };
    let roster = matches!(status, SolverStatus::Optimal | SolverStatus::Feasible)
        .then(|| formulation.roster(solved.get_solution().columns()));
    let bound = solved.double_info_value(c"mip_dual_bound").ok().filter(|bound| bound.is_finite());
    tracing::debug!(columns = mip.columns.len(), rows = mip.rows.len(), ?status, ?bound, "HiGHS solved");
    Ok(SolverOutcome { status, roster, bound: bound.map(|bound| bound + mip.offset) })
}

fn load(mip: &Mip) -> RowProblem {
    let mut problem = RowProblem::default();
    let columns: Vec<_> = mip
        .columns
        .iter()
        .map(|column| problem.add_column_with_integrality(column.cost, column.lower..=column.upper, column.integer))
        .collect();
    for row in &mip.rows {
        problem.add_row(row.lower..=row.upper, row.terms.iter().map(|&(column, factor)| (columns[column], factor)));
    }
    problem
}

fn set<V: highs::HighsOptionValue>(model: &mut highs::Model, option: &str, value: V) -> Result<(), SolverError> {
    model.try_set_option(option, value).map_err(|_| SolverError::Failed(format!("HiGHS refused the option {option}")))
}

fn failed(step: &str, status: highs::HighsStatus) -> SolverError {
    SolverError::Failed(format!("HiGHS failed {step}: {status:?}"))
}
