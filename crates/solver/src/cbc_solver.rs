//! `RosterSolver` on CBC (Debian's coinor-libcbc-dev), the same program as HiGHS gets: built only
//! with the `cbc` feature, to measure the two on the benchmark (docs/rostering.md has the figures).

use async_trait::async_trait;
use coin_cbc::{Model, Sense};

use opsd_rostering::formulation::Formulation;
use opsd_rostering::{RosterProblem, RosterSolver, SolverError, SolverOutcome, SolverStatus};

#[derive(Clone, Copy, Debug, Default)]
pub struct CbcSolver;

#[async_trait]
impl RosterSolver for CbcSolver {
    async fn solve(&self, problem: RosterProblem) -> Result<SolverOutcome, SolverError> {
        tokio::task::spawn_blocking(move || solve(&problem))
            .await
            .map_err(|error| SolverError::Failed(format!("the solver's thread ended: {error}")))
    }
}

fn solve(problem: &RosterProblem) -> SolverOutcome {
    let formulation = Formulation::build(problem);
    let mip = &formulation.mip;
    if mip.infeasible {
        return SolverOutcome { status: SolverStatus::Infeasible, roster: None, bound: None };
    }
    if mip.columns.is_empty() {
        let roster = problem.start.as_deref().cloned();
        return SolverOutcome { status: SolverStatus::Optimal, roster, bound: Some(mip.offset) };
    }
    let mut model = Model::default();
    model.set_obj_sense(Sense::Minimize);
    let columns: Vec<_> = mip
        .columns
        .iter()
        .map(|column| {
            let col = if column.integer { model.add_integer() } else { model.add_col() };
            model.set_col_lower(col, column.lower);
            model.set_col_upper(col, column.upper);
            model.set_obj_coeff(col, column.cost);
            col
        })
        .collect();
    for row in &mip.rows {
        let added = model.add_row();
        if row.lower.is_finite() {
            model.set_row_lower(added, row.lower);
        }
        if row.upper.is_finite() {
            model.set_row_upper(added, row.upper);
        }
        for &(column, factor) in &row.terms {
            model.set_weight(added, columns[column], factor);
        }
    }
    if let Some(start) = &problem.start {
        for (column, value) in formulation.values(&problem.instance, start).into_iter().enumerate() {
            model.set_col_initial_solution(columns[column], value);
        }
    }
    model.set_log_level(0);
    model.set_parameter("log", "0");
    model.set_parameter("sec", &format!("{:.2}", problem.time_limit.as_secs_f64().max(0.01)));
    model.set_parameter("allowableGap", "0.999");
    model.set_parameter("ratioGap", "0");
    let solved = model.solve();
    let raw = solved.raw();
    let has_roster = raw.obj_value().is_finite() && raw.obj_value() < 1e49 && !raw.is_proven_infeasible();
    let status = if raw.is_proven_infeasible() {
        SolverStatus::Infeasible
    } else if raw.is_proven_optimal() {
        SolverStatus::Optimal
    } else if has_roster {
        SolverStatus::Feasible
    } else {
        SolverStatus::Unknown
    };
    let roster = matches!(status, SolverStatus::Optimal | SolverStatus::Feasible).then(|| {
        let values: Vec<f64> = columns.iter().map(|&col| solved.col(col)).collect();
        formulation.roster(&values)
    });
    let bound = Some(raw.best_possible_value()).filter(|bound| bound.is_finite() && bound.abs() < 1e49);
    SolverOutcome { status, roster, bound: bound.map(|bound| bound + mip.offset) }
}
