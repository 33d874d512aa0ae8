//! The evaluator on its own: the research note's test vector, every rule broken once, every exception
//! at the horizon's edges.

use opsd_rostering::{Instance, Roster, Rule, evaluate, parse};

const INSTANCE1: &str = include_str!("fixtures/instance1.txt");

/// One employee, 14 days, shifts E and L (L may not be followed by E), runs of 2 to 4 work days and at
/// least 2 days off, at most 1 weekend, days off on day 9, at most 3 L, 2400 to 3840 minutes.
const SMALL: &str = "
SECTION_HORIZON
14
SECTION_SHIFTS
E,480,
L,480,E
SECTION_STAFF
A,L=3,3840,2400,4,2,2,1
SECTION_DAYS_OFF
A,9
SECTION_SHIFT_ON_REQUESTS
A,0,E,2
SECTION_SHIFT_OFF_REQUESTS
A,1,E,3
SECTION_COVER
0,E,1,100,1
1,E,0,100,5
";

fn roster(row: &str) -> Roster {
    let days = row.chars().map(|c| match c {
        'E' => Some(0),
        'L' => Some(1),
        _ => None,
    });
    Roster { days: vec![days.collect()] }
}

fn broken(instance: &Instance, row: &str) -> Vec<(Rule, Option<usize>)> {
    let evaluation = evaluate(instance, &roster(row));
    evaluation.violations.iter().map(|violation| (violation.rule, violation.day)).collect()
}

#[test]
fn the_research_notes_test_vector_everybody_off() {
    let instance = parse(INSTANCE1).unwrap();
    let evaluation = evaluate(&instance, &Roster::empty(&instance));
    assert_eq!(evaluation.objective.total(), 7137);
    assert_eq!(evaluation.objective.under_cover, 7100);
    assert_eq!(evaluation.objective.on_requests, 37);
    let rules: Vec<_> = evaluation.violations.iter().map(|violation| (violation.rule, violation.employee)).collect();
    let expected: Vec<_> = (0..8).map(|employee| (Rule::MinTotalMinutes, Some(employee))).collect();
    assert_eq!(rules, expected);
}

#[test]
fn a_valid_roster_breaks_nothing_and_scores_each_part() {
    let instance = parse(SMALL).unwrap();
    // Six shifts (2880 minutes), one weekend, the on-request met, the off-request broken (3), day 1
    // over by one (5).
    let evaluation = evaluate(&instance, &roster("EE..EE....EE.."));
    assert_eq!(evaluation.violations, vec![]);
    assert_eq!(evaluation.objective.on_requests, 0);
    assert_eq!(evaluation.objective.off_requests, 3);
    assert_eq!(evaluation.objective.over_cover, 5);
    assert_eq!(evaluation.objective.under_cover, 0);
    assert_eq!(evaluation.objective.total(), 8);
}

#[test]
fn each_rule_broken_once_is_named_with_its_day() {
    let instance = parse(SMALL).unwrap();
    let cases = [
        ("LE..EE....EE..", Rule::Rotation, Some(1)),
        ("LL..LL....EE..", Rule::MaxShiftsOfType, None),
        ("EEEE...EE..EEE", Rule::MaxTotalMinutes, None),
        ("EE..EE........", Rule::MinTotalMinutes, None),
        ("EEEEE..EE.....", Rule::MaxConsecutiveShifts, Some(0)),
        ("EE..E..EE.....", Rule::MinConsecutiveShifts, Some(4)),
        ("EE.EE..EE.....", Rule::MinConsecutiveDaysOff, Some(2)),
        ("EE..EEE....EE.", Rule::MaxWeekends, None),
        ("EE..EE...EE...", Rule::DayOff, Some(9)),
    ];
    for (row, rule, day) in cases {
        assert_eq!(broken(&instance, row), vec![(rule, day)], "{row}");
    }
}

#[test]
fn runs_that_touch_either_edge_of_the_horizon_are_exempt_from_the_shortest() {
    let instance = parse(SMALL).unwrap();
    for row in [
        "E..EE.....EE..", // one working day at the start
        "EEE....EE....E", // one working day at the end
        ".EE..EEE......", // one day off at the start
        "EEE....EE..EE.", // one day off at the end
    ] {
        assert_eq!(broken(&instance, row), vec![], "{row}");
    }
}

#[test]
fn days_outside_the_horizon_count_as_off_for_the_longest_run() {
    let instance = parse(SMALL).unwrap();
    // Four at the end is the most; the days after the horizon do not lengthen the run.
    assert_eq!(broken(&instance, "EEE.......EEEE"), vec![]);
    assert_eq!(
        broken(&instance, "EE.......EEEEE"),
        vec![(Rule::MaxConsecutiveShifts, Some(9)), (Rule::DayOff, Some(9))]
    );
}

#[test]
fn a_roster_of_the_wrong_shape_is_refused_whole() {
    let instance = parse(SMALL).unwrap();
    let short = Roster { days: vec![vec![None; 13]] };
    let extra = Roster { days: vec![vec![None; 14], vec![None; 14]] };
    let undeclared = Roster { days: vec![vec![Some(2); 14]] };
    for roster in [short, extra, undeclared] {
        let rules: Vec<_> = evaluate(&instance, &roster).violations.iter().map(|violation| violation.rule).collect();
        assert_eq!(rules, vec![Rule::Shape]);
    }
}
