//! The engine's decisions with a mocked solver: what it keeps, what it proves, what it refuses.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::parse;
use crate::ports::MockRosterSolver;

/// Two employees, one shift, four days; each must work two or three days.
const TWO: &str = "
SECTION_HORIZON
4
SECTION_SHIFTS
D,480,
SECTION_STAFF
A,,1440,960,4,1,1,1
B,,1440,960,4,1,1,1
SECTION_DAYS_OFF
SECTION_SHIFT_ON_REQUESTS
SECTION_SHIFT_OFF_REQUESTS
SECTION_COVER
0,D,1,10,1
1,D,1,10,1
2,D,1,10,1
3,D,1,10,1
";

fn instance() -> Arc<Instance> {
    Arc::new(parse(TWO).unwrap())
}

fn row(pattern: &str) -> Vec<Option<usize>> {
    pattern.chars().map(|c| (c == 'D').then_some(0)).collect()
}

fn options() -> SolveOptions {
    SolveOptions { time_limit: Duration::from_secs(2), threads: 1, seed: 7 }
}

/// The roster the problem's start holds, with the free employee's row replaced.
fn with_row(problem: &RosterProblem, employee: usize, pattern: &str) -> Roster {
    let mut roster = problem.start.as_deref().cloned().unwrap_or_else(|| Roster::empty(&problem.instance));
    roster.days[employee] = row(pattern);
    roster
}

fn both(first: &str, second: &str) -> Roster {
    Roster { days: vec![row(first), row(second)] }
}

fn single_free_employee(problem: &RosterProblem) -> Option<usize> {
    let free = problem.free.as_ref()?;
    (0..problem.instance.staff.len())
        .find(|&employee| free.is_free(employee, 0) && free.is_free(employee, 3))
        .filter(|_| free.count() == problem.instance.horizon)
}

#[tokio::test]
async fn a_proven_whole_program_ends_the_search_as_optimal() {
    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|problem| {
        let roster = match single_free_employee(&problem) {
            Some(0) => with_row(&problem, 0, "DD.."),
            Some(_) => with_row(&problem, 1, "..DD"),
            None => both("DD..", "..DD"),
        };
        let status = if problem.free.is_none() { SolverStatus::Optimal } else { SolverStatus::Feasible };
        Ok(SolverOutcome { status, roster: Some(roster), bound: Some(-0.2) })
    });
    let solution = Engine::new(solver).solve(instance(), &options(), &|_| {}).await;
    assert_eq!(solution.status, Status::Optimal);
    assert_eq!(solution.objective.map(|objective| objective.total()), Some(0));
    assert_eq!(solution.lower_bound, 0);
    assert_eq!(solution.gap(), Some(0.0));
}

/// What the construction reaches on `TWO` without the solver: A takes three days, B the fourth and
/// one more, over by one.
const CONSTRUCTED: i64 = 1;

#[tokio::test]
async fn a_roster_the_evaluator_refuses_never_reaches_the_caller() {
    let mut solver = MockRosterSolver::new();
    // A solver with a bug: everybody works every day, over the 1440 minutes, and it claims a proof.
    solver.expect_solve().returning(|problem| {
        let roster = Roster { days: vec![row("DDDD"); problem.instance.staff.len()] };
        Ok(SolverOutcome { status: SolverStatus::Optimal, roster: Some(roster), bound: Some(0.0) })
    });
    let solution = Engine::new(solver).solve(instance(), &options(), &|_| {}).await;
    let roster = solution.roster.expect("the construction's roster");
    assert!(evaluate(&instance(), &roster).is_valid());
    assert_eq!(solution.objective.map(|objective| objective.total()), Some(CONSTRUCTED));
    assert_eq!((solution.status, solution.lower_bound), (Status::Feasible, 0), "a refused roster proves nothing");
}

#[tokio::test]
async fn the_bound_is_rounded_up_to_the_integral_objective_and_never_claims_more_than_found() {
    for (bound, proven) in [(0.2, 1), (19.2, CONSTRUCTED)] {
        let mut solver = MockRosterSolver::new();
        solver.expect_solve().returning(move |problem| {
            let bound = problem.free.is_none().then_some(bound);
            Ok(SolverOutcome { status: SolverStatus::Feasible, roster: None, bound })
        });
        let solution = Engine::new(solver).solve(instance(), &options(), &|_| {}).await;
        assert_eq!(solution.objective.map(|objective| objective.total()), Some(CONSTRUCTED));
        assert_eq!((solution.lower_bound, solution.status), (proven, Status::Optimal), "bound {bound}");
    }
}

#[tokio::test]
async fn an_employee_without_a_roster_proves_the_instance_infeasible_and_names_the_rule() {
    // B must work five shifts in four days: the construction cannot place B, and the solver proves it.
    let instance = Arc::new(parse(&TWO.replace("B,,1440,960", "B,,2400,2400")).unwrap());
    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|problem| {
        if single_free_employee(&problem) == Some(1) && !problem.relaxes(Rule::MinTotalMinutes) {
            return Ok(SolverOutcome { status: SolverStatus::Infeasible, roster: None, bound: None });
        }
        let roster = with_row(&problem, single_free_employee(&problem).unwrap_or(0), "DD..");
        Ok(SolverOutcome { status: SolverStatus::Feasible, roster: Some(roster), bound: None })
    });
    let solution = Engine::new(solver).solve(instance, &options(), &|_| {}).await;
    assert_eq!(solution.status, Status::Infeasible);
    assert_eq!(solution.roster, None);
    assert_eq!(solution.infeasibility, Some(Infeasibility { employee: Some(1), rules: vec![Rule::MinTotalMinutes] }));
}

#[tokio::test]
async fn a_failing_solver_leaves_the_constructed_roster_and_no_claim() {
    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|_| Err(crate::ports::SolverError::Failed("crashed".into())));
    let solution = Engine::new(solver).solve(instance(), &options(), &|_| {}).await;
    assert_eq!((solution.status, solution.lower_bound), (Status::Feasible, 0));
    assert_eq!(solution.objective.map(|objective| objective.total()), Some(CONSTRUCTED));
}
