//! The solver port: a MIP solver takes a rostering problem (the whole instance or a neighbourhood of a
//! roster) and returns what it found.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::evaluate::Rule;
use crate::model::{Instance, Roster};

/// Which employee-days a solve may change; the others keep the start roster's shift.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreeCells {
    cells: Vec<Vec<bool>>,
}

impl FreeCells {
    pub fn none(instance: &Instance) -> Self {
        Self { cells: vec![vec![false; instance.horizon]; instance.staff.len()] }
    }

    pub fn free(&mut self, employee: usize, day: usize) {
        self.cells[employee][day] = true;
    }

    pub fn is_free(&self, employee: usize, day: usize) -> bool {
        self.cells[employee][day]
    }

    pub fn count(&self) -> usize {
        self.cells.iter().flatten().filter(|&&free| free).count()
    }
}

#[derive(Clone, Debug)]
pub struct RosterProblem {
    pub instance: Arc<Instance>,
    /// A roster to start from; the values of the cells that are not free.
    pub start: Option<Arc<Roster>>,
    /// `None`: every cell is free.
    pub free: Option<Arc<FreeCells>>,
    /// Rules left out of the program (to find which one makes an instance infeasible).
    pub relaxed: Vec<Rule>,
    pub time_limit: Duration,
    pub seed: u64,
}

impl RosterProblem {
    pub fn whole(instance: Arc<Instance>, time_limit: Duration) -> Self {
        Self { instance, start: None, free: None, relaxed: Vec::new(), time_limit, seed: 0 }
    }

    pub fn is_free(&self, employee: usize, day: usize) -> bool {
        self.free.as_ref().is_none_or(|free| free.is_free(employee, day))
    }

    pub fn relaxes(&self, rule: Rule) -> bool {
        self.relaxed.contains(&rule)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverStatus {
    /// The roster is proven best for the problem.
    Optimal,
    /// A roster, no proof.
    Feasible,
    /// Proven to have no roster.
    Infeasible,
    /// No roster found in time, nothing proven.
    Unknown,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SolverOutcome {
    pub status: SolverStatus,
    pub roster: Option<Roster>,
    /// The solver's lower bound on the problem's objective (fixed cells included), when it has one.
    pub bound: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum SolverError {
    #[error("the solver failed: {0}")]
    Failed(String),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait RosterSolver: Send + Sync {
    /// Solves within the problem's time limit; never blocks the caller's thread on the search.
    async fn solve(&self, problem: RosterProblem) -> Result<SolverOutcome, SolverError>;
}

/// A shared solver is a solver: the engine can hold one the service was given.
#[async_trait]
impl<T: RosterSolver + ?Sized> RosterSolver for Arc<T> {
    async fn solve(&self, problem: RosterProblem) -> Result<SolverOutcome, SolverError> {
        (**self).solve(problem).await
    }
}
