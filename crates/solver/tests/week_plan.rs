//! A restaurant's week on HiGHS: the planning domain's instance solved by the engine, and the proposal
//! checked against the rules from outside the engine.

use std::time::Duration;

use opsd_core::{Department, Week};
use opsd_optimization::Block;
use opsd_planning::week_plan::{
    Availability, BlockNeed, PlanRules, PlannedShift, ProposalResult, ShiftTemplate, StaffMember, WeekModel,
    WeekTargets, plan_week,
};
use opsd_rostering::{Engine, Roster, SolveOptions, Status, evaluate};
use opsd_solver::HighsSolver;
use rust_decimal::Decimal;
use time::Date;
use time::macros::{date, time};

fn member(key: &str, department: Department, wage: i64) -> StaffMember {
    StaffMember {
        key: key.into(),
        name: key.to_uppercase(),
        roles: vec![(department, if department == Department::Foh { "Server" } else { "Cook" }.into())],
        hourly_wage: Decimal::from(wage),
    }
}

/// The proposal as the engine's roster: each member's shift of each day as its template's index.
fn roster_of(model: &WeekModel, planned: &ProposalResult) -> Roster {
    let template = |s: &PlannedShift| {
        model.templates.iter().position(|t| t.department == s.department && t.block == s.block && t.hours() == s.hours)
    };
    let days = model.week.days();
    let shift_on = |key: &str, day: Date| {
        planned.shifts.iter().find(|s| s.employee_key == key && s.date == day).map(|s| template(s).unwrap())
    };
    Roster { days: model.staff.iter().map(|m| days.iter().map(|d| shift_on(&m.key, *d)).collect()).collect() }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_week_is_covered_within_the_rules_at_the_least_cost() {
    let week = Week::containing(date!(2026 - 12 - 05));
    let templates = [
        ShiftTemplate { department: Department::Foh, block: Block::Lunch, start: time!(10:00), minutes: 360 },
        ShiftTemplate { department: Department::Foh, block: Block::Dinner, start: time!(16:00), minutes: 420 },
        ShiftTemplate { department: Department::Foh, block: Block::LateNight, start: time!(21:00), minutes: 300 },
        ShiftTemplate { department: Department::Boh, block: Block::Dinner, start: time!(15:00), minutes: 480 },
    ];
    // Seven servers (one dearer), three cooks; Ana never works Mondays. A weekend day needs all seven
    // servers, a weekday four.
    let mut staff: Vec<StaffMember> =
        ["ana", "bo", "cy", "di", "ed", "gia", "flo"].iter().map(|k| member(k, Department::Foh, 15)).collect();
    staff[6].hourly_wage = Decimal::from(25);
    staff.extend(["gus", "hal", "ivy"].iter().map(|k| member(k, Department::Boh, 20)));
    let availability =
        [Availability { employee_key: "ana".into(), unavailable_weekdays: vec![2], ..Availability::default() }];
    let mut needs = Vec::new();
    for (day, date) in week.days().into_iter().enumerate() {
        let busy = if day < 2 { 2 } else { 1 };
        let need = |block, department, people: i64, minutes: i64, sales: i64| BlockNeed {
            date,
            block,
            department,
            hours: Decimal::from(people * minutes) / Decimal::from(60),
            sales: Decimal::from(sales * busy),
        };
        needs.push(need(Block::Lunch, Department::Foh, busy, 360, 900));
        needs.push(need(Block::Dinner, Department::Foh, 2 * busy, 420, 2400));
        needs.push(need(Block::LateNight, Department::Foh, 1, 300, 400));
        needs.push(need(Block::Dinner, Department::Boh, busy, 480, 2000));
    }
    let model = WeekModel::new(week, staff, &templates, needs, &availability, PlanRules::default());
    let instance = model.instance.clone();
    let options = SolveOptions { time_limit: Duration::from_secs(10), threads: 2, seed: 7 };
    let targets = WeekTargets { projected_sales: Decimal::from(40_000), splh_target: None, labor_pct_target: None };
    let planned = plan_week(&Engine::new(HighsSolver), model.clone(), targets, time_tz::timezones::db::UTC, &options)
        .await
        .unwrap();

    // Every need is met (the staff suffice), to the hour, and nothing breaks a rule.
    for line in &planned.coverage {
        assert!(line.hours_planned >= line.hours_needed, "{line:?}");
    }
    let roster = roster_of(&model, &planned);
    assert!(evaluate(&instance, &roster).is_valid(), "{:?}", evaluate(&instance, &roster).violations);
    assert!(!planned.shifts.iter().any(|s| s.employee_key == "ana" && s.date == date!(2026 - 12 - 07)));
    for member in &model.staff {
        let hours: Decimal = planned.shifts.iter().filter(|s| s.employee_key == member.key).map(|s| s.hours).sum();
        assert!(hours <= Decimal::from(40), "{} works {hours} h", member.key);
    }
    // Nobody closes late night and opens lunch the day after (9 hours' rest).
    for late in planned.shifts.iter().filter(|s| s.block == Block::LateNight) {
        let next = late.date.next_day().unwrap();
        assert!(
            !planned
                .shifts
                .iter()
                .any(|s| s.employee_key == late.employee_key && s.date == next && s.block == Block::Lunch)
        );
    }
    // Exactly the need is staffed (overstaffing only costs), and the dearer server works only the
    // weekend, where the six others do not suffice.
    let needed: Decimal = planned.coverage.iter().map(|c| c.hours_needed).sum();
    assert_eq!(planned.hours, needed);
    let flo: Vec<_> = planned.shifts.iter().filter(|s| s.employee_key == "flo").map(|s| s.date).collect();
    assert_eq!(flo, vec![date!(2026 - 12 - 05), date!(2026 - 12 - 06)]);
    assert_eq!(planned.solver.status, Status::Optimal, "{:?}", planned.solver);
    assert_eq!(planned.solver.gap, 0.0);
    let labor_cost: Decimal = planned.shifts.iter().map(|s| s.cost).sum();
    assert_eq!(planned.labor_cost, labor_cost);
    assert_eq!(planned.solver.objective, (labor_cost * Decimal::ONE_HUNDRED).try_into().unwrap_or(0i64));
}

/// Ana ($15) and Ben: one 8-hour dinner a day, 7 days, at most 6 in a row and 50 hours a week. Ana's
/// sixth day costs $22.50 an hour with the FLSA premium: she works it only when Ben costs more.
async fn week_of_overtime(ben_wage: i64) -> (ProposalResult, Vec<(String, Decimal)>) {
    let week = Week::containing(date!(2026 - 12 - 05));
    let templates =
        [ShiftTemplate { department: Department::Foh, block: Block::Dinner, start: time!(15:00), minutes: 480 }];
    let staff = vec![member("ana", Department::Foh, 15), member("ben", Department::Foh, ben_wage)];
    let needs = week
        .days()
        .into_iter()
        .map(|date| BlockNeed {
            date,
            block: Block::Dinner,
            department: Department::Foh,
            hours: Decimal::from(8),
            sales: Decimal::from(4000),
        })
        .collect();
    let rules = PlanRules { max_weekly_minutes: 50 * 60, min_shift_minutes: 480, ..PlanRules::default() };
    let model = WeekModel::new(week, staff, &templates, needs, &[], rules);
    let instance = model.instance.clone();
    let options = SolveOptions { time_limit: Duration::from_secs(10), threads: 2, seed: 3 };
    let targets = WeekTargets { projected_sales: Decimal::from(28_000), splh_target: None, labor_pct_target: None };
    let planned = plan_week(&Engine::new(HighsSolver), model.clone(), targets, time_tz::timezones::db::UTC, &options)
        .await
        .unwrap();
    assert_eq!(planned.solver.status, Status::Optimal, "{:?}", planned.solver);
    let roster = roster_of(&model, &planned);
    let evaluation = evaluate(&instance, &roster);
    assert!(evaluation.is_valid(), "{:?}", evaluation.violations);
    assert_eq!(planned.solver.objective, evaluation.objective.total(), "the MIP prices overtime as the evaluator");
    let hours = ["ana", "ben"]
        .map(|key| {
            let hours = planned.shifts.iter().filter(|s| s.employee_key == key).map(|s| s.hours).sum();
            (key.to_owned(), hours)
        })
        .to_vec();
    (planned, hours)
}

#[tokio::test(flavor = "multi_thread")]
async fn overtime_is_planned_only_where_it_costs_less_than_another_person() {
    // Ben at $20 is cheaper than Ana's overtime at $22.50: Ana stops at 40 hours.
    let (planned, hours) = week_of_overtime(20).await;
    assert_eq!(hours, vec![("ana".to_owned(), Decimal::from(40)), ("ben".to_owned(), Decimal::from(16))]);
    assert_eq!(planned.labor_cost, Decimal::from(40 * 15 + 16 * 20));

    // Ben at $25: Ana's sixth day, 8 hours past 40 at $7.50 on top, is the cheaper one.
    let (planned, hours) = week_of_overtime(25).await;
    assert_eq!(hours, vec![("ana".to_owned(), Decimal::from(48)), ("ben".to_owned(), Decimal::from(8))]);
    assert_eq!(planned.labor_cost, Decimal::from(48 * 15 + 60 + 8 * 25), "the premium is in the labor cost");
}
