use std::time::Duration;

use opsd_core::{Department, Week};
use opsd_optimization::Block;
use opsd_rostering::ports::MockRosterSolver;
use opsd_rostering::{Engine, Roster, SolveOptions, SolverError, SolverOutcome, SolverStatus, Status, evaluate};
use rust_decimal::Decimal;
use time::macros::{date, datetime, time};
use time_tz::timezones::db::UTC;

use super::*;

fn week() -> Week {
    Week::containing(date!(2026 - 12 - 05))
}

fn past(
    key: &str,
    role: &str,
    department: Department,
    block: Block,
    start: time::PrimitiveDateTime,
    minutes: u32,
    wage: i64,
) -> PastShift {
    PastShift {
        employee_key: key.into(),
        employee_name: key.to_uppercase(),
        role: role.into(),
        department,
        block,
        start,
        minutes,
        hourly_wage: Decimal::from(wage),
    }
}

/// The model's shift type of a department's block and length.
fn index(model: &WeekModel, department: Department, block: Block, minutes: u32) -> usize {
    model
        .templates
        .iter()
        .position(|t| t.department == department && t.block == block && t.minutes == minutes)
        .expect("a shift type of that block and length")
}

fn template(department: Department, block: Block, start: time::Time, minutes: u32) -> ShiftTemplate {
    ShiftTemplate { department, block, start, minutes }
}

/// FOH lunch 10:00 to 16:00, FOH dinner 16:00 to 23:30, FOH late night 20:00 to 02:00, BOH dinner 15:00 to 23:00.
fn templates() -> Vec<ShiftTemplate> {
    vec![
        template(Department::Foh, Block::Lunch, time!(10:00), 360),
        template(Department::Foh, Block::Dinner, time!(16:00), 450),
        template(Department::Foh, Block::LateNight, time!(20:00), 360),
        template(Department::Boh, Block::Dinner, time!(15:00), 480),
    ]
}

fn member(key: &str, departments: &[Department], wage: i64) -> StaffMember {
    StaffMember {
        key: key.into(),
        name: key.to_uppercase(),
        roles: departments.iter().map(|d| (*d, format!("{} role", d.as_str()))).collect(),
        hourly_wage: Decimal::from(wage),
    }
}

fn need(day: i64, block: Block, department: Department, hours: i64, sales: i64) -> BlockNeed {
    BlockNeed {
        date: week().start() + time::Duration::days(day),
        block,
        department,
        hours: Decimal::from(hours),
        sales: Decimal::from(sales),
    }
}

#[test]
fn history_gives_each_employee_their_most_worked_role_per_department_and_latest_wage() {
    let shifts = vec![
        past("ana", "Server", Department::Foh, Block::Dinner, datetime!(2026-11-07 16:00), 420, 15),
        past("ana", "Server", Department::Foh, Block::Dinner, datetime!(2026-11-08 16:30), 480, 16),
        past("ana", "Host", Department::Foh, Block::Lunch, datetime!(2026-11-09 10:00), 300, 16),
        past("ana", "Prep", Department::Boh, Block::Lunch, datetime!(2026-11-01 09:00), 360, 14),
        past("ben", "Cook", Department::Boh, Block::Dinner, datetime!(2026-11-07 15:00), 480, 19),
    ];
    let staff = staff_from_history(&shifts, &[]);
    assert_eq!(staff.len(), 2);
    assert_eq!(staff[0].roles, vec![(Department::Foh, "Server".into()), (Department::Boh, "Prep".into())]);
    assert_eq!(staff[0].hourly_wage, Decimal::from(16), "the wage of her latest shift");
    assert_eq!(staff[1].role_in(Department::Foh), None);

    let templates = templates_from_history(&shifts);
    let dinner = templates.iter().find(|t| t.department == Department::Foh && t.block == Block::Dinner).unwrap();
    assert_eq!((dinner.start, dinner.minutes), (time!(16:30), 480), "the upper median of two");
    assert_eq!(templates.len(), 4);
}

#[test]
fn who_only_punched_is_staff_too_at_the_wage_of_their_latest_punch() {
    let shifts = vec![
        past("ana", "Server", Department::Foh, Block::Dinner, datetime!(2026-11-07 16:00), 420, 15),
        past("ben", "Cook", Department::Boh, Block::Dinner, datetime!(2026-11-07 15:00), 480, 19),
    ];
    let punch = |key: &str, department, at, wage| PastPunch {
        employee_key: String::from(key),
        department,
        clocked_in: at,
        hourly_wage: Decimal::from(wage),
    };
    let punches = vec![
        punch("cy", Department::Foh, datetime!(2026-11-08 16:00), 14),
        punch("cy", Department::Foh, datetime!(2026-11-10 16:00), 16),
        punch("cy", Department::Foh, datetime!(2026-11-09 16:00), 15),
        punch("ana", Department::Boh, datetime!(2026-11-09 15:00), 30),
    ];
    let staff = staff_from_history(&shifts, &punches);
    assert_eq!(staff.len(), 3);
    assert_eq!(staff[2].key, "cy");
    assert_eq!(staff[2].name, "cy", "known only by their key");
    assert_eq!(staff[2].roles, vec![(Department::Foh, "Server".into())], "the department's most worked role");
    assert_eq!(staff[2].hourly_wage, Decimal::from(16), "the latest punch's wage");
    // Ana called in to the kitchen once: she works there too, at her shifts' wage.
    assert_eq!(staff[0].roles, vec![(Department::Foh, "Server".into()), (Department::Boh, "Cook".into())]);
    assert_eq!(staff[0].hourly_wage, Decimal::from(15));
}

#[test]
fn needs_split_the_days_hours_by_block_sales_and_department_share_with_late_night_served_by_dinner() {
    let history = vec![
        past("ana", "Server", Department::Foh, Block::Lunch, datetime!(2026-11-07 10:00), 360, 15),
        past("ben", "Server", Department::Foh, Block::Dinner, datetime!(2026-11-07 16:00), 360, 15),
        past("cy", "Cook", Department::Boh, Block::Dinner, datetime!(2026-11-07 16:00), 720, 19),
    ];
    let day = crate::forecast_report::ForecastDay {
        day: week().start(),
        blocks: vec![
            (Block::Lunch, Some(Decimal::from(1000))),
            (Block::Dinner, Some(Decimal::from(2500))),
            (Block::LateNight, Some(Decimal::from(500))),
        ],
        forecast_sales: Some(Decimal::from(4000)),
        hours: crate::recommend::HoursRecommendation {
            hours_for_splh: Some(Decimal::from(80)),
            ..crate::recommend::HoursRecommendation::unknown("")
        },
    };
    let forecast = crate::forecast_report::ForecastReport {
        week_label: String::new(),
        method: None,
        reason: None,
        backtest: None,
        blended_hourly_wage: None,
        wage_source: None,
        days: vec![day],
    };
    let needs = needs_from_forecast(&forecast, &history);
    let hours = |block, department| {
        needs.iter().find(|n| n.block == block && n.department == department).map(|n| n.hours.normalize().to_string())
    };
    assert_eq!(hours(Block::Lunch, Department::Foh).as_deref(), Some("20"), "80 h x 1000 / 4000");
    // Dinner serves its own sales and late night's: 3000 of 4000, split 1 to 2 as its hours were.
    assert_eq!(hours(Block::Dinner, Department::Foh).as_deref(), Some("20"));
    assert_eq!(hours(Block::Dinner, Department::Boh).as_deref(), Some("40"));
    assert_eq!(needs.len(), 3, "late night has no shifts, so no need of its own");
    let total: Decimal = needs.iter().map(|n| n.hours).sum();
    assert_eq!(total, Decimal::from(80), "no hour of the day is lost");
}

#[test]
fn the_rest_rule_forbids_a_close_then_an_open_and_nothing_else() {
    let model = WeekModel::new(
        week(),
        vec![member("ana", &[Department::Foh], 15)],
        &templates(),
        vec![],
        &[],
        PlanRules::default(),
    );
    let shifts = &model.instance.shifts;
    let lunch = [index(&model, Department::Foh, Block::Lunch, 360), index(&model, Department::Foh, Block::Lunch, 240)];
    // Late night ends 02:00: 8 hours before lunch at 10:00 (whole or short), 14 before dinner at 16:00.
    assert_eq!(shifts[index(&model, Department::Foh, Block::LateNight, 360)].not_followed_by, lunch.to_vec());
    // The short late night ends at midnight: 10 hours before lunch.
    assert!(shifts[index(&model, Department::Foh, Block::LateNight, 240)].not_followed_by.is_empty());
    // Dinner ends 23:30: 10.5 hours before lunch.
    assert!(shifts[index(&model, Department::Foh, Block::Dinner, 450)].not_followed_by.is_empty());
    let strict = PlanRules { min_rest_minutes: 11 * 60, ..PlanRules::default() };
    let model = WeekModel::new(week(), vec![], &templates(), vec![], &[], strict);
    let shifts = &model.instance.shifts;
    assert_eq!(shifts[index(&model, Department::Foh, Block::Dinner, 450)].not_followed_by, lunch.to_vec());
    let boh = index(&model, Department::Boh, Block::Dinner, 480);
    assert_eq!(shifts[boh].not_followed_by, Vec::<usize>::new(), "23:00 to 10:00 is 11 hours");
}

#[test]
fn staff_rules_availability_and_preferences_become_the_instances_limits() {
    let staff = vec![member("ana", &[Department::Foh], 15), member("ben", &[Department::Boh], 20)];
    let availability = vec![Availability {
        employee_key: "ana".into(),
        unavailable_weekdays: vec![2],
        unavailable_dates: vec![date!(2026 - 12 - 10)],
        preferred_blocks: vec![Block::Dinner],
        max_weekly_minutes: Some(20 * 60),
    }];
    let short = vec![template(Department::Foh, Block::Lunch, time!(11:00), 120)];
    let model = WeekModel::new(week(), staff, &short, vec![], &availability, PlanRules::default());
    let ana = &model.instance.staff[0];
    assert_eq!(model.instance.shifts[0].minutes, 240, "lengthened to the minimum shift");
    assert_eq!(ana.days_off, vec![2, 5], "Monday, and Thursday 10 December");
    assert_eq!(ana.max_minutes, 1200);
    assert_eq!(ana.max_consecutive_shifts, 6);
    assert_eq!(ana.shift_costs, vec![6000], "4 h at $15 in cents");
    assert_eq!(model.instance.staff[1].max_shifts, vec![Some(0)], "BOH does not work FOH shifts");
    assert_eq!(model.instance.staff[1].max_minutes, 2400);
    assert_eq!(model.instance.off_requests.len(), 7, "lunch, not preferred, every day");
    assert!(model.instance.off_requests.iter().all(|r| r.employee == 0 && r.weight == 500));
    assert_eq!(model.instance.weekend.weekends(7), vec![vec![0, 1]], "the week starts on Saturday");
}

#[test]
fn cover_asks_for_the_blocks_minutes_over_its_whole_and_short_shifts_weighted_by_the_sales_at_risk() {
    let needs =
        vec![need(0, Block::Dinner, Department::Foh, 15, 1800), need(1, Block::LateNight, Department::Boh, 4, 400)];
    let rules = PlanRules { understaffed_sales_at_risk_pct: 100, ..PlanRules::default() };
    let model = WeekModel::new(week(), vec![], &templates(), needs, &[], rules);
    assert_eq!(model.instance.shifts.len(), 8, "each block's whole shift and a 4-hour one");
    assert_eq!(model.instance.cover.len(), 1, "no BOH late-night shift exists to cover");
    let cover = &model.instance.cover[0];
    let (whole, short) =
        (index(&model, Department::Foh, Block::Dinner, 450), index(&model, Department::Foh, Block::Dinner, 240));
    assert_eq!((cover.day, cover.shifts.clone(), cover.requirement), (0, vec![(whole, 450), (short, 240)], 900));
    // $120 of sales an hour, all at risk: $2 a minute short.
    assert_eq!((cover.under_weight, cover.over_weight), (200, 0));
}

#[test]
fn a_need_between_whole_shifts_is_met_with_a_short_one() {
    let staff: Vec<StaffMember> = ["ana", "ben", "cy"].iter().map(|k| member(k, &[Department::Foh], 15)).collect();
    // 19 h: two whole 7.5 h dinners and a 4 h one.
    let needs = vec![need(0, Block::Dinner, Department::Foh, 19, 1900)];
    let model = WeekModel::new(week(), staff, &templates(), needs, &[], PlanRules::default());
    let mut roster = Roster::empty(&model.instance);
    roster.days[0][0] = Some(index(&model, Department::Foh, Block::Dinner, 450));
    roster.days[1][0] = Some(index(&model, Department::Foh, Block::Dinner, 450));
    assert_eq!(model.instance.cover[0].staffed(&roster), 900);
    roster.days[2][0] = Some(index(&model, Department::Foh, Block::Dinner, 240));
    assert_eq!(model.instance.cover[0].staffed(&roster), 1140);
    assert_eq!(evaluate(&model.instance, &roster).objective.under_cover, 0);
    let shifts = model.shifts(&roster, UTC);
    assert_eq!(shifts[2].end - shifts[2].start, time::Duration::hours(4));
    assert_eq!(model.coverage(&shifts)[0].hours_planned, Decimal::from(19));
}

#[test]
fn a_roster_reads_back_as_shifts_with_their_coverage_and_what_bound_it() {
    let staff = vec![member("ana", &[Department::Foh], 15), member("ben", &[Department::Foh, Department::Boh], 20)];
    let needs = vec![need(0, Block::Dinner, Department::Foh, 15, 1500), need(1, Block::Lunch, Department::Foh, 6, 600)];
    let availability =
        vec![Availability { employee_key: "ben".into(), unavailable_weekdays: vec![0], ..Availability::default() }];
    let model = WeekModel::new(week(), staff, &templates(), needs, &availability, PlanRules::default());
    let mut roster = Roster::empty(&model.instance);
    // Ana closes late on Saturday, so cannot open on Sunday.
    roster.days[0][0] = Some(index(&model, Department::Foh, Block::LateNight, 360));
    roster.days[0][1] = None;
    assert!(evaluate(&model.instance, &roster).is_valid());
    let shifts = model.shifts(&roster, UTC);
    assert_eq!(shifts.len(), 1);
    assert_eq!((shifts[0].start, shifts[0].end), (datetime!(2026-12-05 20:00 UTC), datetime!(2026-12-06 02:00 UTC)));
    assert_eq!(
        (shifts[0].hours, shifts[0].cost, shifts[0].role.as_str()),
        (Decimal::from(6), Decimal::from(90), "FOH role")
    );
    let coverage = model.coverage(&shifts);
    assert_eq!(coverage[0].hours_planned, Decimal::ZERO, "late night is not dinner");
    let binding = model.binding_rules(&roster);
    assert_eq!(binding, vec![("min_rest", vec!["ana".to_owned()]), ("unavailable", vec!["ben".to_owned()])]);
}

fn targets() -> WeekTargets {
    WeekTargets { projected_sales: Decimal::from(800), splh_target: None, labor_pct_target: None }
}

fn options() -> SolveOptions {
    SolveOptions { time_limit: Duration::from_secs(2), threads: 1, seed: 1 }
}

#[tokio::test]
async fn a_failing_solver_leaves_the_constructed_week_unproven_and_a_valid_answer_gives_its_figures() {
    let model = WeekModel::new(
        week(),
        vec![member("ana", &[Department::Foh], 15)],
        &templates(),
        vec![need(0, Block::Dinner, Department::Foh, 15, 900)],
        &[],
        PlanRules { understaffed_sales_at_risk_pct: 100, ..PlanRules::default() },
    );
    let mut failing = MockRosterSolver::new();
    failing.expect_solve().returning(|_| Err(SolverError::Failed("crashed".into())));
    // The engine keeps what its construction found without the solver, proven nothing of.
    let failed = plan_week(&Engine::new(failing), model.clone(), targets(), UTC, &options()).await.unwrap();
    assert_eq!(
        failed.shifts.iter().map(|s| (s.employee_key.as_str(), s.block)).collect::<Vec<_>>(),
        [("ana", Block::Dinner)]
    );
    assert_eq!((failed.solver.status, failed.solver.bound, failed.solver.gap), (Status::Feasible, 0, 1.0));

    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|problem| {
        let mut roster = Roster::empty(&problem.instance);
        if problem.is_free(0, 0) {
            roster.days[0][0] = Some(2); // the whole dinner shift
        }
        Ok(SolverOutcome { status: SolverStatus::Optimal, roster: Some(roster), bound: Some(0.0) })
    });
    let planned = plan_week(&Engine::new(solver), model, targets(), UTC, &options()).await.unwrap();
    assert_eq!(planned.shifts.len(), 1);
    assert_eq!((planned.hours, planned.labor_cost), (Decimal::new(75, 1), Decimal::new(11250, 2)));
    assert_eq!(planned.labor_pct, Some(Decimal::new(1406, 2)));
    assert_eq!(planned.splh, Some(Decimal::new(10667, 2)));
    assert_eq!(planned.solver.objective, 11_250 + 45_000, "the wage, and 7.5 of the 15 hours short at $60");
    assert_ne!(planned.solver.status, Status::Infeasible);
}

#[test]
fn a_published_week_inside_the_notice_is_kept_unless_a_change_is_worth_its_premium() {
    let staff = vec![member("ana", &[Department::Foh], 15), member("ben", &[Department::Foh], 15)];
    let model = WeekModel::new(week(), staff, &templates(), vec![], &[], PlanRules::default());
    let saturday = week().start();
    let published = vec![("ana".to_owned(), saturday, Department::Foh, Block::Dinner)];
    let model = model.keeping_published(&published);
    // Ana's published dinner is an on-request worth the premium; every other cell she or Ben could
    // work is an off-request of the same weight.
    assert_eq!(
        model.instance.on_requests,
        vec![opsd_rostering::ShiftRequest { employee: 0, day: 0, shift: 2, weight: 1500 }]
    );
    assert_eq!(model.instance.off_requests.len(), 6 * 3 + 7 * 3, "3 FOH shifts a day; Ana's Saturday is published");
    assert!(model.instance.staff.iter().all(|e| e.max_shifts[3] == Some(0)), "a published week is not cut short");

    let mut roster = Roster::empty(&model.instance);
    assert_eq!(evaluate(&model.instance, &roster).objective.total(), 1500, "dropping Ana's dinner costs the premium");
    roster.days[0][0] = Some(0); // Ana moved to lunch.
    roster.days[1][3] = Some(2); // Ben added on Tuesday.
    let changes = model.changes(&roster);
    let kinds: Vec<_> = changes.iter().map(|c| (c.employee_key.as_str(), c.kind, c.from, c.to)).collect();
    assert_eq!(
        kinds,
        vec![
            ("ana", ChangeKind::Moved, Some((Department::Foh, Block::Dinner)), Some((Department::Foh, Block::Lunch))),
            ("ben", ChangeKind::Added, None, Some((Department::Foh, Block::Dinner))),
        ]
    );
    assert!(changes.iter().all(|c| c.premium == Decimal::from(15)));
    let objective = evaluate(&model.instance, &roster).objective;
    assert_eq!(objective.on_requests + objective.off_requests, 2 * 1500, "two changes, two premiums");
    roster.days[0][0] = Some(2);
    roster.days[1][3] = None;
    assert!(model.changes(&roster).is_empty());

    // A published double keeps one of its shifts: the other is removed.
    let double = vec![
        ("ben".to_owned(), saturday, Department::Foh, Block::Lunch),
        ("ben".to_owned(), saturday, Department::Foh, Block::Dinner),
    ];
    let staff = vec![member("ben", &[Department::Foh], 15)];
    let model =
        WeekModel::new(week(), staff, &templates(), vec![], &[], PlanRules::default()).keeping_published(&double);
    let mut roster = Roster::empty(&model.instance);
    roster.days[0][0] = Some(2);
    let changes = model.changes(&roster);
    assert_eq!(changes.len(), 1);
    assert_eq!((changes[0].kind, changes[0].from), (ChangeKind::Removed, Some((Department::Foh, Block::Lunch))));
}
