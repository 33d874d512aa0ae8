//! The program agrees with the evaluator: for any roster, its rows hold exactly when the evaluator
//! finds no broken rule, and its objective is the evaluator's. Checked on random rosters of a small
//! instance with every rule in play, in both forms of the run rules.

use std::sync::Arc;
use std::time::Duration;

use opsd_rostering::formulation::{Formulation, Mip};
use opsd_rostering::{FreeCells, Instance, Roster, RosterProblem, Rule, evaluate, parse};
use proptest::prelude::*;

const SMALL: &str = "
SECTION_HORIZON
14
SECTION_SHIFTS
E,480,
L,480,E
N,600,E|L
SECTION_STAFF
A,L=3|N=2,3840,2400,4,2,2,1
B,N=0,4800,1440,5,1,1,2
C,,4800,0,3,3,2,1
SECTION_DAYS_OFF
A,9
C,0,6
SECTION_SHIFT_ON_REQUESTS
A,0,E,2
B,3,N,4
SECTION_SHIFT_OFF_REQUESTS
A,1,E,3
C,12,L,1
SECTION_COVER
0,E,1,100,1
1,E,0,100,5
5,L,2,50,2
13,N,1,70,3
";

fn instance() -> Arc<Instance> {
    Arc::new(parse(SMALL).unwrap())
}

fn satisfied(mip: &Mip, values: &[f64]) -> bool {
    let columns_ok = mip
        .columns
        .iter()
        .zip(values)
        .all(|(column, &value)| value >= column.lower - 1e-9 && value <= column.upper + 1e-9);
    columns_ok
        && mip.rows.iter().all(|row| {
            let activity: f64 = row.terms.iter().map(|&(column, factor)| factor * values[column]).sum();
            activity >= row.lower - 1e-9 && activity <= row.upper + 1e-9
        })
}

fn objective(mip: &Mip, values: &[f64]) -> f64 {
    mip.offset + mip.columns.iter().zip(values).map(|(column, value)| column.cost * value).sum::<f64>()
}

fn roster_strategy() -> impl Strategy<Value = Roster> {
    // Mostly E, some L, N and days off: near-valid rosters, so both outcomes are common.
    let day = prop_oneof![4 => Just(None), 4 => Just(Some(0)), 1 => Just(Some(1)), 1 => Just(Some(2))];
    proptest::collection::vec(proptest::collection::vec(day, 14), 3).prop_map(|days| Roster { days })
}

fn check(problem: &RosterProblem, roster: &Roster) -> Result<(), TestCaseError> {
    let formulation = Formulation::build(problem);
    let values = formulation.values(&problem.instance, roster);
    let evaluation = evaluate(&problem.instance, roster);
    // The cells a neighbourhood fixes are the start's: judge the roster only where it agrees.
    prop_assert_eq!(satisfied(&formulation.mip, &values), evaluation.is_valid(), "{:?}", evaluation.violations);
    if evaluation.is_valid() {
        prop_assert!((objective(&formulation.mip, &values) - evaluation.objective.total() as f64).abs() < 1e-6);
        prop_assert_eq!(formulation.roster(&values), roster.clone());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_network_form_agrees_with_the_evaluator(roster in roster_strategy()) {
        check(&RosterProblem::whole(instance(), Duration::from_secs(1)), &roster)?;
    }

    /// Leaving out a rule the roster keeps changes nothing; the rows' form of the run rules is used.
    #[test]
    fn the_rows_form_agrees_with_the_evaluator(roster in roster_strategy()) {
        let mut problem = RosterProblem::whole(instance(), Duration::from_secs(1));
        problem.relaxed = vec![Rule::MaxConsecutiveShifts];
        let formulation = Formulation::build(&problem);
        let values = formulation.values(&problem.instance, &roster);
        let evaluation = evaluate(&problem.instance, &roster);
        let broken_other_than_relaxed = evaluation.violations.iter().any(|violation| violation.rule != Rule::MaxConsecutiveShifts);
        prop_assert_eq!(satisfied(&formulation.mip, &values), !broken_other_than_relaxed, "{:?}", evaluation.violations);
    }

    /// A neighbourhood: one employee free, the others fixed to the roster.
    #[test]
    fn a_neighbourhood_agrees_with_the_evaluator_on_its_free_employee(roster in roster_strategy(), free in 0usize..3) {
        let instance = instance();
        let mut cells = FreeCells::none(&instance);
        (0..14).for_each(|day| cells.free(free, day));
        let mut problem = RosterProblem::whole(Arc::clone(&instance), Duration::from_secs(1));
        problem.start = Some(Arc::new(roster.clone()));
        problem.free = Some(Arc::new(cells));
        let formulation = Formulation::build(&problem);
        let values = formulation.values(&instance, &roster);
        let evaluation = evaluate(&instance, &roster);
        let free_broken = evaluation.violations.iter().any(|violation| violation.employee == Some(free));
        prop_assert_eq!(satisfied(&formulation.mip, &values), !free_broken, "{:?}", evaluation.violations);
        if !free_broken {
            prop_assert_eq!(formulation.roster(&values), roster);
        }
    }

    /// A neighbourhood of any shape (any cells free, the rest fixed to a valid roster): the roster
    /// meets its program, whose objective (the fixed cells' part a constant) is the evaluator's.
    #[test]
    fn any_neighbourhood_of_a_valid_roster_holds_it_at_its_objective(
        free in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 14), 3),
    ) {
        let instance = instance();
        let roster = optimum();
        let mut cells = FreeCells::none(&instance);
        for (employee, days) in free.iter().enumerate() {
            (0..14).filter(|&day| days[day]).for_each(|day| cells.free(employee, day));
        }
        let mut problem = RosterProblem::whole(Arc::clone(&instance), Duration::from_secs(1));
        problem.start = Some(Arc::new(roster.clone()));
        problem.free = Some(Arc::new(cells));
        let formulation = Formulation::build(&problem);
        let values = formulation.values(&instance, &roster);
        prop_assert!(satisfied(&formulation.mip, &values));
        prop_assert!((objective(&formulation.mip, &values) - 4.0).abs() < 1e-6);
    }
}

/// An optimal roster of `SMALL` (objective 4, found by the engine and judged by the evaluator).
fn optimum() -> Roster {
    let row = |pattern: &str| pattern.chars().map(|c| "ELN".find(c)).collect();
    let roster = Roster { days: vec![row("ELN....EE...EN"), row(".LLL.LLL.EEL.E"), row("...EEL..ELN...")] };
    let evaluation = evaluate(&instance(), &roster);
    assert!(evaluation.is_valid() && evaluation.objective.total() == 4, "{evaluation:?}");
    roster
}

#[test]
fn an_employee_who_must_work_but_has_every_day_off_makes_the_program_infeasible() {
    let text = SMALL.replace("A,9\n", "A,0,1,2,3,4,5,6,7,8,9,10,11,12,13\n");
    let problem = RosterProblem::whole(Arc::new(parse(&text).unwrap()), Duration::from_secs(1));
    assert!(Formulation::build(&problem).mip.infeasible);
    assert!(!Formulation::build(&RosterProblem::whole(instance(), Duration::from_secs(1))).mip.infeasible);
}
