//! The engine around the MIP solver, as operations research does it: a construction that needs no
//! solver for a start, the solver one employee at a time for whom it could not place (and a proof of
//! infeasibility when an employee has no roster), the whole program for the bound, a large
//! neighbourhood search whose moves the solver solves (most of the roster fixed, the rest
//! re-optimised), and the whole program again from the best roster to close the gap. Only rosters the
//! evaluator passes are ever kept.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::construction::{Construction, construct};
use crate::evaluate::{Objective, Rule, evaluate};
use crate::model::{Instance, Roster};
use crate::neighbourhood::Neighbourhoods;
use crate::ports::{FreeCells, RosterProblem, RosterSolver, SolverError, SolverOutcome, SolverStatus};

/// Above this many assignment columns the whole program is not built: its memory and its root LP would
/// not fit the limits, and the search works on neighbourhoods only.
pub const WHOLE_PROGRAM_COLUMNS: usize = 120_000;

/// Neighbourhood moves in a row without a better roster after which the whole program starts.
const STALLED: u32 = 30;

#[derive(Clone, Debug)]
pub struct SolveOptions {
    pub time_limit: Duration,
    /// How many solves run at once (each on one thread): the whole program and neighbourhood moves.
    pub threads: u32,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Optimal,
    Feasible,
    Infeasible,
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Optimal => "optimal",
            Status::Feasible => "feasible",
            Status::Infeasible => "infeasible",
            Status::Unknown => "unknown",
        }
    }
}

/// Why an instance has no roster, where it can be told: the employee whose rules cannot all be met
/// and the rules that, each left out alone, would let them be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Infeasibility {
    pub employee: Option<usize>,
    pub rules: Vec<Rule>,
}

#[derive(Clone, Debug)]
pub struct Solution {
    pub status: Status,
    pub roster: Option<Roster>,
    pub objective: Option<Objective>,
    /// A proven lower bound on the objective (0 when nothing better is proven: no weight is negative).
    pub lower_bound: i64,
    pub seconds: f64,
    /// When the best roster was found, from the start.
    pub seconds_to_best: Option<f64>,
    pub infeasibility: Option<Infeasibility>,
}

impl Solution {
    /// `(objective - bound) / objective`, 0 for a proven optimum.
    pub fn gap(&self) -> Option<f64> {
        let objective = self.objective?.total();
        Some(if objective == 0 { 0.0 } else { (objective - self.lower_bound) as f64 / objective as f64 })
    }
}

/// What the search reports as it goes: each better roster and each better bound.
#[derive(Clone, Debug)]
pub struct Progress {
    pub elapsed: Duration,
    pub phase: &'static str,
    pub objective: Option<i64>,
    pub bound: i64,
}

pub struct Engine<S> {
    solver: S,
}

impl<S: RosterSolver> Engine<S> {
    pub fn new(solver: S) -> Self {
        Self { solver }
    }

    pub async fn solve(
        &self,
        instance: Arc<Instance>,
        options: &SolveOptions,
        progress: &(dyn Fn(&Progress) + Sync),
    ) -> Solution {
        let mut search = Search::new(instance, options, progress);
        if let Some(infeasibility) = self.construct(&mut search).await {
            return search.finish_infeasible(infeasibility);
        }
        self.improve(&mut search).await;
        if search.infeasible {
            let infeasibility = self.diagnose(&search, None).await;
            return search.finish_infeasible(infeasibility);
        }
        search.finish()
    }

    /// Neighbourhood moves first, on every thread, until they stall (or a share of the time has
    /// passed); then the whole program from the best roster, for the bound and a proof, on one thread
    /// to the end, while the moves go on beside it on the others. One whole program, never restarted: a
    /// restart would throw away its search tree and the bound it has earned.
    async fn improve(&self, search: &mut Search<'_>) {
        let slots = search.options.threads.max(1) as usize;
        let whole_fits = search.assignment_columns() <= WHOLE_PROGRAM_COLUMNS;
        let mut neighbourhoods = Neighbourhoods::new(&search.instance, StdRng::seed_from_u64(search.options.seed));
        // With threads to spare the whole program starts at once; on one, the moves go first.
        let moves_until = search.options.time_limit.mul_f64(if slots > 1 { 0.0 } else { 0.4 });
        let mut whole_started = !whole_fits;
        let mut moves_without_gain = 0;
        let mut running = FuturesUnordered::new();
        loop {
            while running.len() < slots && search.remaining() > Duration::from_millis(50) && !search.proven() {
                let best = search.best.as_ref().map(|(roster, _)| roster.clone());
                let whole_due =
                    best.is_none() || search.started.elapsed() >= moves_until || moves_without_gain >= STALLED;
                let job = match best {
                    _ if !whole_started && whole_due => {
                        whole_started = true;
                        Job::Whole(search.problem(
                            search.best.as_ref().map(|(roster, _)| roster),
                            None,
                            search.remaining(),
                        ))
                    }
                    Some(best) => {
                        // On one thread the moves stop where the whole program's turn begins.
                        let limit = if slots > 1 || whole_started {
                            neighbourhoods.time_limit().min(search.remaining())
                        } else {
                            let until = moves_until.saturating_sub(search.started.elapsed());
                            neighbourhoods.time_limit().min(until).max(Duration::from_millis(100))
                        };
                        Job::Move(search.problem(Some(&best), Some(neighbourhoods.next()), limit))
                    }
                    None => break,
                };
                running.push(self.run(job));
            }
            let Some((job, outcome, took)) = running.next().await else { return };
            let Ok(outcome) = outcome else { continue };
            match job {
                Job::Whole(_) => search.record_whole(outcome, "whole program"),
                Job::Move(problem) => {
                    neighbourhoods.learn(outcome.status == SolverStatus::Optimal, took, problem.time_limit);
                    let before = search.best_objective();
                    if let Some(roster) = outcome.roster {
                        search.offer(roster, "neighbourhood");
                    }
                    moves_without_gain = if search.best_objective() < before { 0 } else { moves_without_gain + 1 };
                }
            }
            if search.proven() || search.infeasible {
                return;
            }
        }
    }

    async fn run(&self, job: Job) -> (Job, Result<SolverOutcome, SolverError>, Duration) {
        let started = Instant::now();
        let outcome = self.solver.solve(job.problem().clone()).await;
        (job, outcome, started.elapsed())
    }

    /// A start from the construction, which needs no solver. An employee it could not place (or whose
    /// row the evaluator faults) is given to the solver, the others fixed as placed: hard rules bind
    /// one employee each, so an employee with no roster alone proves there is none. An employee the
    /// solver could not place in its share of time is tried again with a larger share while the
    /// roster is not valid and a tenth of the time is left.
    async fn construct(&self, search: &mut Search<'_>) -> Option<Infeasibility> {
        let instance = Arc::clone(&search.instance);
        let Construction { mut roster, unplaced: mut pending } = construct(&instance);
        for violation in evaluate(&instance, &roster).violations {
            if let Some(employee) = violation.employee.filter(|employee| !pending.contains(employee)) {
                roster.days[employee] = vec![None; instance.horizon];
                pending.push(employee);
            }
        }
        let mut share = 0.3;
        while !pending.is_empty() && search.remaining() > search.options.time_limit / 10 {
            let budget = search.remaining().mul_f64(share);
            let started = Instant::now();
            let mut unplaced = Vec::new();
            for (placed, &employee) in pending.iter().enumerate() {
                if search.remaining() <= search.options.time_limit / 10 {
                    unplaced.extend_from_slice(&pending[placed..]);
                    break;
                }
                let left = budget.saturating_sub(started.elapsed());
                let limit =
                    (left / (pending.len() - placed) as u32).max(Duration::from_millis(50)).min(search.remaining());
                let mut free = FreeCells::none(&instance);
                (0..instance.horizon).for_each(|day| free.free(employee, day));
                let problem = search.problem(Some(&roster), Some(free), limit);
                let outcome = self.solver.solve(problem).await.ok();
                match outcome.map(|outcome| (outcome.status, outcome.roster)) {
                    Some((SolverStatus::Infeasible, _)) => return Some(self.diagnose(search, Some(employee)).await),
                    Some((_, Some(found))) if found.days.len() == instance.staff.len() => {
                        roster.days[employee] = found.days[employee].clone();
                    }
                    _ => unplaced.push(employee),
                }
            }
            pending = unplaced;
            share = 0.6;
        }
        search.offer(roster, "construction");
        None
    }

    /// Which rules, each left out alone, let the employee (or the whole instance) have a roster.
    async fn diagnose(&self, search: &Search<'_>, employee: Option<usize>) -> Infeasibility {
        let instance = &search.instance;
        let mut rules = Vec::new();
        for rule in Rule::ALL.into_iter().filter(|&rule| rule != Rule::Shape) {
            if search.remaining() < Duration::from_millis(300) {
                break;
            }
            let free = employee.map(|employee| {
                let mut free = FreeCells::none(instance);
                (0..instance.horizon).for_each(|day| free.free(employee, day));
                free
            });
            let limit = Duration::from_secs(1).min(search.remaining());
            let mut problem = search.problem(Some(&Roster::empty(instance)), free, limit);
            problem.relaxed = vec![rule];
            if let Ok(outcome) = self.solver.solve(problem).await
                && outcome.roster.is_some()
            {
                rules.push(rule);
            }
        }
        Infeasibility { employee, rules }
    }
}

/// One solve on one thread: the whole program, or a neighbourhood of the best roster.
enum Job {
    Whole(RosterProblem),
    Move(RosterProblem),
}

impl Job {
    fn problem(&self) -> &RosterProblem {
        match self {
            Job::Whole(problem) | Job::Move(problem) => problem,
        }
    }
}

/// The state of one solve: the best roster the evaluator passed, the best bound, the clock.
struct Search<'a> {
    instance: Arc<Instance>,
    options: &'a SolveOptions,
    progress: &'a (dyn Fn(&Progress) + Sync),
    started: Instant,
    best: Option<(Roster, Objective)>,
    best_at: Option<Duration>,
    bound: i64,
    infeasible: bool,
}

impl<'a> Search<'a> {
    fn new(instance: Arc<Instance>, options: &'a SolveOptions, progress: &'a (dyn Fn(&Progress) + Sync)) -> Self {
        Self {
            instance,
            options,
            progress,
            started: Instant::now(),
            best: None,
            best_at: None,
            bound: 0,
            infeasible: false,
        }
    }

    fn assignment_columns(&self) -> usize {
        self.instance.staff.len() * self.instance.horizon * self.instance.shifts.len()
    }

    fn remaining(&self) -> Duration {
        self.options.time_limit.saturating_sub(self.started.elapsed())
    }

    fn best_objective(&self) -> Option<i64> {
        self.best.as_ref().map(|(_, objective)| objective.total())
    }

    fn proven(&self) -> bool {
        self.best_objective().is_some_and(|objective| objective <= self.bound)
    }

    fn problem(&self, start: Option<&Roster>, free: Option<FreeCells>, limit: Duration) -> RosterProblem {
        RosterProblem {
            instance: Arc::clone(&self.instance),
            start: start.map(|roster| Arc::new(roster.clone())),
            free: free.map(Arc::new),
            relaxed: Vec::new(),
            time_limit: limit,
            seed: self.options.seed,
        }
    }

    /// Keeps the roster if the evaluator passes it and it is no worse than the best (an equal one moves
    /// the search along a plateau); false when the evaluator refuses it.
    fn offer(&mut self, roster: Roster, phase: &'static str) -> bool {
        let evaluation = evaluate(&self.instance, &roster);
        if !evaluation.is_valid() {
            return false;
        }
        let objective = evaluation.objective.total();
        match self.best_objective() {
            Some(best) if objective > best => {}
            Some(best) if objective == best => self.best = Some((roster, evaluation.objective)),
            _ => {
                self.best = Some((roster, evaluation.objective));
                self.best_at = Some(self.started.elapsed());
                self.report(phase);
            }
        }
        true
    }

    fn record_whole(&mut self, outcome: SolverOutcome, phase: &'static str) {
        match outcome.status {
            SolverStatus::Infeasible => self.infeasible = true,
            SolverStatus::Optimal | SolverStatus::Feasible | SolverStatus::Unknown => {}
        }
        // A proof comes with a roster the evaluator passes, or it is no proof.
        let optimal =
            outcome.status == SolverStatus::Optimal && outcome.roster.is_some_and(|roster| self.offer(roster, phase));
        // Integer weights make the objective integral: a bound of 606.2 proves 607.
        let mut bound = outcome.bound.map_or(0, |bound| (bound - 1e-6).ceil() as i64);
        if optimal && let Some(best) = self.best_objective() {
            bound = bound.max(best);
        }
        if bound > self.bound {
            self.bound = bound.min(self.best_objective().unwrap_or(i64::MAX));
            self.report(phase);
        }
    }

    fn report(&self, phase: &'static str) {
        (self.progress)(&Progress {
            elapsed: self.started.elapsed(),
            phase,
            objective: self.best_objective(),
            bound: self.bound,
        });
    }

    fn finish(self) -> Solution {
        let status = match (&self.best, self.proven()) {
            (Some(_), true) => Status::Optimal,
            (Some(_), false) => Status::Feasible,
            (None, _) => Status::Unknown,
        };
        let (roster, objective) = self.best.unzip();
        Solution {
            status,
            roster,
            objective,
            lower_bound: self.bound,
            seconds: self.started.elapsed().as_secs_f64(),
            seconds_to_best: self.best_at.map(|at| at.as_secs_f64()),
            infeasibility: None,
        }
    }

    fn finish_infeasible(self, infeasibility: Infeasibility) -> Solution {
        Solution {
            status: Status::Infeasible,
            roster: None,
            objective: None,
            lower_bound: self.bound,
            seconds: self.started.elapsed().as_secs_f64(),
            seconds_to_best: None,
            infeasibility: Some(infeasibility),
        }
    }
}

#[cfg(test)]
mod tests;
