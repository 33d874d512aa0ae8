use std::sync::Arc;

use opsd_core::{Caller, Department, LocationId, MockClock, Role, ServiceError, StoreError, TeamId, Week};
use opsd_optimization::Block;
use opsd_rostering::ports::MockRosterSolver;
use opsd_rostering::{Roster, SolverOutcome, SolverStatus};
use rust_decimal::Decimal;
use time::Duration;
use time::macros::{date, datetime};
use uuid::Uuid;

use super::*;
use crate::ports::{ForecastData, MockPlanningStore};

const LOCATION: LocationId = LocationId(Uuid::from_u128(7));

fn week() -> Week {
    Week::containing(date!(2026 - 12 - 05))
}

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(datetime!(2026-11-28 12:00 UTC));
    Arc::new(clock)
}

fn admin() -> Caller {
    Caller::in_team("user_1", "org_1", Role::Admin)
}

fn service(store: MockWeekPlanStore, planning: MockPlanningStore, solver: MockRosterSolver) -> WeekPlanService {
    let mut rules = MockPlanRulesStore::new();
    rules.expect_rules().returning(|_| Ok(None));
    service_with_rules(store, rules, planning, solver)
}

fn service_with_rules(
    store: MockWeekPlanStore,
    rules: MockPlanRulesStore,
    planning: MockPlanningStore,
    solver: MockRosterSolver,
) -> WeekPlanService {
    WeekPlanService::new(
        Arc::new(store),
        Arc::new(rules),
        Arc::new(planning),
        Arc::new(solver),
        clock(),
        PlanRules::default(),
    )
}

fn row(key: &str) -> Availability {
    Availability { employee_key: key.into(), ..Availability::default() }
}

#[tokio::test]
async fn availability_is_checked_before_anything_is_written() {
    let mut store = MockWeekPlanStore::new();
    store.expect_put_availability().never();
    let planner = service(store, MockPlanningStore::new(), MockRosterSolver::new());
    let member = Caller::in_team("user_2", "org_1", Role::Member);
    assert!(matches!(
        planner.put_availability(&member, LOCATION, vec![row("a")]).await,
        Err(ServiceError::Forbidden(_))
    ));
    let cases: Vec<(Vec<Availability>, &str)> = vec![
        (vec![row("a"), row("a")], "employees[1].employeeKey"),
        (vec![row("  ")], "employees[0].employeeKey"),
        (vec![Availability { unavailable_weekdays: vec![7], ..row("a") }], "employees[0].unavailableWeekdays"),
        (
            vec![Availability { unavailable_dates: vec![date!(2026 - 11 - 27)], ..row("a") }],
            "employees[0].unavailableDates",
        ),
        (
            vec![Availability { unavailable_dates: vec![date!(2027 - 12 - 31)], ..row("a") }],
            "employees[0].unavailableDates",
        ),
        (vec![Availability { max_weekly_minutes: Some(169 * 60), ..row("a") }], "employees[0].maxWeeklyHours"),
    ];
    for (rows, field) in cases {
        let Err(ServiceError::Invalid(errors)) = planner.put_availability(&admin(), LOCATION, rows).await else {
            panic!("{field} is refused");
        };
        assert_eq!(errors.errors()[0].field, field);
    }
}

#[tokio::test]
async fn unknown_employees_and_another_teams_location_are_refused() {
    let mut store = MockWeekPlanStore::new();
    store
        .expect_put_availability()
        .times(1)
        .returning(|_, _, _| Ok(Some(AvailabilityWrite::UnknownEmployees(vec!["x".into()]))));
    store.expect_put_availability().times(1).returning(|_, _, _| Ok(None));
    let planner = service(store, MockPlanningStore::new(), MockRosterSolver::new());
    let unknown = planner.put_availability(&admin(), LOCATION, vec![row("x")]).await;
    assert!(matches!(unknown, Err(ServiceError::Domain(PlanRefusal::UnknownEmployees(keys))) if keys == ["x"]));
    assert!(matches!(planner.put_availability(&admin(), LOCATION, vec![row("a")]).await, Err(ServiceError::NotFound)));
}

fn history(weeks: i64) -> PlanningInputs {
    let start = week().start();
    let history = (1..=weeks * 7)
        .flat_map(|day| {
            let date = start - Duration::days(day);
            [("ana", Department::Foh, Block::Dinner, 17), ("ben", Department::Boh, Block::Dinner, 16)].map(
                |(key, department, block, hour)| PastShift {
                    employee_key: key.into(),
                    employee_name: key.into(),
                    role: "Crew".into(),
                    department,
                    block,
                    start: date.with_hms(hour, 0, 0).unwrap(),
                    minutes: 360,
                    hourly_wage: Decimal::from(15),
                },
            )
        })
        .collect();
    PlanningInputs { timezone: "America/Chicago".into(), history, ..PlanningInputs::default() }
}

fn sales(weeks: i64) -> ForecastData {
    let start = week().start();
    ForecastData {
        sales: (1..=weeks * 7).map(|day| (start - Duration::days(day), Block::Dinner, Decimal::from(1200))).collect(),
        goals: (0..7)
            .map(|day| opsd_optimization::StoredGoal {
                location_id: Some(LOCATION),
                day_of_week: day,
                sales_goal: opsd_core::Money::default(),
                labor_pct_target: Decimal::from(25),
                splh_target: Decimal::from(100),
            })
            .collect(),
        ..ForecastData::default()
    }
}

#[tokio::test]
async fn a_week_without_history_staff_or_wage_is_refused_and_nothing_is_queued() {
    let cases: Vec<(PlanningInputs, ForecastData, PlanRefusal)> = vec![
        (history(8), sales(2), PlanRefusal::InsufficientHistory),
        (PlanningInputs::default(), sales(8), PlanRefusal::NoStaff),
        (
            PlanningInputs {
                history: history(8)
                    .history
                    .into_iter()
                    .map(|s| PastShift { hourly_wage: Decimal::ZERO, ..s })
                    .collect(),
                ..history(8)
            },
            sales(8),
            PlanRefusal::NoWage,
        ),
    ];
    for (inputs, data, refusal) in cases {
        let mut store = MockWeekPlanStore::new();
        store.expect_inputs().return_once(move |_, _, _, _| Ok(Some(inputs)));
        store.expect_create_proposal().never();
        let mut planning = MockPlanningStore::new();
        planning.expect_forecast_data().return_once(move |_, _, _, _| Ok(Some(data)));
        let planner = service(store, planning, MockRosterSolver::new());
        let refused = planner.propose(&admin(), LOCATION, week(), 20).await;
        assert!(matches!(refused, Err(ServiceError::Domain(ref r)) if *r == refusal), "{refusal:?}: {refused:?}");
    }
    let planner = service(MockWeekPlanStore::new(), MockPlanningStore::new(), MockRosterSolver::new());
    assert!(matches!(planner.propose(&admin(), LOCATION, week(), 121).await, Err(ServiceError::Invalid(_))));
}

fn claimed() -> ClaimedProposal {
    ClaimedProposal {
        id: Uuid::from_u128(1),
        lease: Uuid::from_u128(2),
        team: TeamId::new("org_1"),
        location: LOCATION,
        week: week(),
        time_limit_seconds: 1,
    }
}

#[tokio::test]
async fn the_queue_is_solved_off_the_store_and_a_lost_lease_changes_nothing() {
    let claimed = claimed();
    let mut store = MockWeekPlanStore::new();
    store
        .expect_claim_proposal()
        .withf(|lease| *lease == Duration::seconds(180))
        .return_once(move |_| Ok(Some(claimed)));
    store
        .expect_inputs()
        .withf(|_, _, since, until| *until == date!(2026 - 12 - 05) && *since == date!(2026 - 10 - 10))
        .return_once(|_, _, _, _| Ok(Some(history(8))));
    store
        .expect_finish_proposal()
        .withf(|id, lease, outcome, _| {
            let Ok(result) = outcome else { return false };
            // Ana serves dinner six days (the most in a row), at 17:00 in Chicago (UTC-6).
            *id == Uuid::from_u128(1)
                && *lease == Uuid::from_u128(2)
                && result
                    .shifts
                    .iter()
                    .filter(|s| s.employee_key == "ana")
                    .all(|s| s.start.to_offset(time::UtcOffset::UTC).time() == time::macros::time!(23:00))
                && result.shifts.iter().any(|s| s.employee_key == "ana")
                && result.splh_target == Some(Decimal::from(100))
        })
        .times(1)
        .returning(|_, _, _, _| Ok(false));
    let mut planning = MockPlanningStore::new();
    planning.expect_forecast_data().return_once(|_, _, _, _| Ok(Some(sales(8))));
    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|problem| {
        let mut roster = Roster::empty(&problem.instance);
        for day in (0..6).filter(|&day| problem.is_free(0, day)) {
            roster.days[0][day] = Some(0);
        }
        Ok(SolverOutcome { status: SolverStatus::Feasible, roster: Some(roster), bound: Some(0.0) })
    });
    let planner = service(store, planning, solver);
    assert!(planner.solve_next(Duration::seconds(60)).await.unwrap(), "one was taken, though its lease was lost");

    let mut empty = MockWeekPlanStore::new();
    empty.expect_claim_proposal().return_once(|_| Ok(None));
    let idle = service(empty, MockPlanningStore::new(), MockRosterSolver::new());
    assert!(!idle.solve_next(Duration::seconds(60)).await.unwrap());
    let mut failing = MockWeekPlanStore::new();
    failing.expect_claim_proposal().return_once(|_| Err(StoreError::Unavailable("down".into())));
    let down = service(failing, MockPlanningStore::new(), MockRosterSolver::new());
    assert!(down.solve_next(Duration::seconds(60)).await.is_err());
}

fn ready(week_of: Week, shifts: usize) -> Proposal {
    let start = datetime!(2026-12-05 23:00 UTC);
    Proposal {
        id: Uuid::from_u128(9),
        location: LOCATION,
        week: week_of,
        status: ProposalStatus::Ready,
        reason: None,
        time_limit_seconds: 5,
        created_at: start,
        completed_at: Some(start),
        result: Some(ProposalResult {
            shifts: (0..shifts)
                .map(|i| PlannedShift {
                    employee_key: format!("{}", 7 + i),
                    employee_name: "Ana".into(),
                    role: "Server".into(),
                    department: Department::Foh,
                    date: date!(2026 - 12 - 05),
                    block: Block::Dinner,
                    start: start + Duration::days(i as i64),
                    end: start + Duration::days(i as i64) + Duration::hours(6),
                    hours: Decimal::from(6),
                    cost: Decimal::from(90),
                })
                .collect(),
            coverage: vec![],
            projected_sales: Decimal::ZERO,
            hours: Decimal::ZERO,
            labor_cost: Decimal::ZERO,
            labor_pct: None,
            splh: None,
            splh_target: None,
            labor_pct_target: None,
            solver: SolverFigures {
                status: opsd_rostering::Status::Optimal,
                objective: 0,
                bound: 0,
                gap: 0.0,
                seconds: 0.0,
            },
            binding_rules: vec![],
            changes: vec![],
        }),
    }
}

fn claim(proposal: Proposal, sent: Vec<(Option<String>, bool)>) -> PublishStart {
    PublishStart::Claimed(Box::new(PublishClaim {
        proposal,
        provider_location: Some("100".into()),
        roles: vec![("Server".into(), "3".into())],
        sent,
        lease: Uuid::from_u128(5),
    }))
}

#[tokio::test]
async fn a_resumed_publish_skips_what_was_sent_finds_what_was_tried_and_creates_the_rest() {
    let mut store = MockPublishStore::new();
    let sent = vec![(Some("501".into()), true), (None, true), (None, false)];
    store.expect_start_publish().return_once(move |_, _, _| Ok(claim(ready(week(), 3), sent)));
    store
        .expect_record_sent()
        .withf(|_, position, id| (*position, id) == (1, "502"))
        .times(1)
        .returning(|_, _, _| Ok(()));
    store.expect_mark_tried().withf(|_, position| *position == 2).times(1).returning(|_, _| Ok(()));
    store
        .expect_record_sent()
        .withf(|_, position, id| (*position, id) == (2, "503"))
        .times(1)
        .returning(|_, _, _| Ok(()));
    store.expect_end_publish().withf(|_, _, complete, _| *complete).times(1).returning(|_, _, _, _| Ok(()));
    let mut drafts = MockDraftScheduler::new();
    let marker = format!("opsd schedule proposal {} shift 1", Uuid::from_u128(9));
    drafts
        .expect_drafts()
        .withf(|location, user, _, _| (location, user) == ("100", "8"))
        .return_once(move |_, _, _, _| Ok(vec![("499".into(), "someone else's".into()), ("502".into(), marker)]));
    drafts
        .expect_create_draft()
        .withf(|d| d.user == "9" && d.role.as_deref() == Some("3") && d.notes.ends_with("shift 2"))
        .times(1)
        .returning(|_| Ok("503".into()));
    let publisher = PublishService::new(Arc::new(store), Some(Arc::new(drafts)), clock());
    assert_eq!(
        publisher.publish(&admin(), Uuid::from_u128(9)).await.unwrap(),
        Published { created: 1, already_sent: 2 }
    );
}

#[tokio::test]
async fn a_past_week_or_a_busy_proposal_sends_nothing() {
    let mut store = MockPublishStore::new();
    let past = Week::containing(date!(2026 - 11 - 20));
    store.expect_start_publish().times(1).return_once(move |_, _, _| Ok(claim(ready(past, 2), vec![(None, false); 2])));
    store.expect_start_publish().times(1).returning(|_, _, _| Ok(PublishStart::Busy));
    store.expect_end_publish().withf(|_, _, complete, _| !*complete).times(1).returning(|_, _, _, _| Ok(()));
    store.expect_mark_tried().never();
    let mut drafts = MockDraftScheduler::new();
    drafts.expect_create_draft().never();
    let publisher = PublishService::new(Arc::new(store), Some(Arc::new(drafts)), clock());
    let passed = publisher.publish(&admin(), Uuid::from_u128(9)).await;
    assert!(matches!(passed, Err(ServiceError::Domain(PlanRefusal::WeekPassed))));
    let busy = publisher.publish(&admin(), Uuid::from_u128(9)).await;
    assert!(matches!(busy, Err(ServiceError::Domain(PlanRefusal::PublishInProgress))));
}

#[tokio::test]
async fn a_backtest_plans_from_before_the_week_and_scores_three_schedules_against_its_actual_sales() {
    let mut inputs = history(8);
    // The week as it was published: Cy (new that week) and Ana on all 7 days, 8 hours each.
    inputs.published = (0..7)
        .flat_map(|day| {
            let date = week().start() + Duration::days(day);
            ["ana", "cy"].map(|key| PastShift {
                employee_key: key.into(),
                employee_name: key.into(),
                role: "Crew".into(),
                department: Department::Foh,
                block: Block::Dinner,
                start: date.with_hms(16, 0, 0).unwrap(),
                minutes: 480,
                hourly_wage: Decimal::from(15),
            })
        })
        .collect();
    let mut store = MockWeekPlanStore::new();
    store.expect_inputs().return_once(move |_, _, _, _| Ok(Some(inputs)));
    let mut planning = MockPlanningStore::new();
    planning
        .expect_forecast_data()
        .withf(|_, _, forecast_week, _| *forecast_week == week())
        .return_once(|_, _, _, _| Ok(Some(sales(8))));
    // What the week sold: read as the history of the week after it.
    planning
        .expect_forecast_data()
        .withf(|_, _, following, since| following.start() == date!(2026 - 12 - 12) && *since == date!(2026 - 12 - 05))
        .return_once(|_, _, _, _| {
            let mut data = sales(0);
            data.sales = week().days().map(|day| (day, Block::Dinner, Decimal::from(1500))).to_vec();
            Ok(Some(data))
        });
    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|problem| {
        assert_eq!(problem.instance.staff.len(), 2, "planned only with who worked before the week");
        let mut roster = Roster::empty(&problem.instance);
        for day in (0..6).filter(|&day| problem.is_free(0, day)) {
            roster.days[0][day] = Some(0);
        }
        Ok(SolverOutcome { status: SolverStatus::Feasible, roster: Some(roster), bound: Some(0.0) })
    });
    let planner = service(store, planning, solver);
    let options = opsd_rostering::SolveOptions { time_limit: std::time::Duration::from_secs(1), threads: 1, seed: 1 };
    let scored = planner.backtest(&TeamId::new("org_1"), LOCATION, week(), &options).await.unwrap().unwrap();
    assert_eq!(scored.actual_sales, Decimal::from(7 * 1500));
    assert_eq!(scored.labor_pct_target, Some(Decimal::from(25)));
    assert_eq!(scored.proposal.rules_broken, Some(0), "{scored:?}");
    // Ana's 56 hours over 7 days in a row, and Cy's: two rules each.
    assert_eq!(scored.published.rules_broken, Some(4));
    assert_eq!(scored.published.hours, Decimal::from(112));
    assert_eq!(scored.rule_of_thumb.rules_broken, None);
    assert_eq!(scored.rule_of_thumb.hours, Decimal::from(7 * 12), "two 6-hour dinners a day before");
    // 1500 a day at 100 SPLH is 15 hours a day, half front and half back of house as before: the
    // published week is 8.5 hours over in front and 7.5 short in back each day.
    assert_eq!(scored.published.hours_over, Decimal::new(595, 1));
    assert_eq!(scored.published.hours_short, Decimal::new(525, 1));
    assert_eq!(scored.published.labor_pct, Some(Decimal::from(16)));
    assert!(scored.proposal.hours_short > Decimal::ZERO, "one person six days cannot cover 15 hours a day");
}

#[tokio::test]
async fn a_teams_rules_are_checked_before_they_are_written_and_plan_its_weeks() {
    let mut refused = MockPlanRulesStore::new();
    refused.expect_put_rules().never();
    let planner =
        service_with_rules(MockWeekPlanStore::new(), refused, MockPlanningStore::new(), MockRosterSolver::new());
    let member = Caller::in_team("user_2", "org_1", Role::Member);
    assert!(matches!(planner.put_rules(&member, PlanRules::default()).await, Err(ServiceError::Forbidden(_))));
    let too_long = PlanRules { max_weekly_minutes: 100 * 60, ..PlanRules::default() };
    let Err(ServiceError::Invalid(errors)) = planner.put_rules(&admin(), too_long).await else {
        panic!("100 hours a week is refused");
    };
    assert_eq!(errors.errors()[0].field, "maxWeeklyHours");

    // A team that allows 20 hours a week: its proposals' instances say so.
    let part_time = PlanRules { max_weekly_minutes: 20 * 60, ..PlanRules::default() };
    let mut rules = MockPlanRulesStore::new();
    rules
        .expect_put_rules()
        .withf(|team, r| team.as_str() == "org_1" && r.max_weekly_minutes == 1200)
        .times(1)
        .returning(|_, _| Ok(()));
    let stored = part_time.clone();
    rules.expect_rules().returning(move |_| Ok(Some(stored.clone())));
    let claimed = claimed();
    let mut store = MockWeekPlanStore::new();
    store.expect_claim_proposal().return_once(move |_| Ok(Some(claimed)));
    store.expect_inputs().return_once(|_, _, _, _| Ok(Some(history(8))));
    store.expect_finish_proposal().returning(|_, _, _, _| Ok(true));
    let mut planning = MockPlanningStore::new();
    planning.expect_forecast_data().return_once(|_, _, _, _| Ok(Some(sales(8))));
    let mut solver = MockRosterSolver::new();
    solver.expect_solve().returning(|problem| {
        assert!(problem.instance.staff.iter().all(|e| e.max_minutes == 1200), "the team's 20 hours");
        Ok(SolverOutcome {
            status: SolverStatus::Feasible,
            roster: Some(Roster::empty(&problem.instance)),
            bound: Some(0.0),
        })
    });
    let planner = service_with_rules(store, rules, planning, solver);
    let set = planner.put_rules(&admin(), part_time.clone()).await.unwrap();
    assert!(set.set_by_team);
    assert_eq!(planner.rules(&admin()).await.unwrap(), TeamRules { rules: part_time, set_by_team: true });
    assert!(planner.solve_next(Duration::seconds(60)).await.unwrap());
}

#[tokio::test]
async fn a_managers_shift_times_are_checked_before_they_are_written_and_replace_the_historys() {
    let dinner = |start: time::Time, minutes: u32| ShiftTemplate {
        department: Department::Foh,
        block: Block::Dinner,
        start,
        minutes,
    };
    let mut refused = MockWeekPlanStore::new();
    refused.expect_put_shift_times().never();
    let planner = service(refused, MockPlanningStore::new(), MockRosterSolver::new());
    for (times, field) in [
        (vec![dinner(time::macros::time!(16:00), 300), dinner(time::macros::time!(17:00), 300)], "shifts[1]"),
        (vec![dinner(time::macros::time!(16:00), 20 * 60)], "shifts[0].hours"),
        (vec![dinner(time::macros::time!(16:00), 30)], "shifts[0].hours"),
    ] {
        let Err(ServiceError::Invalid(errors)) = planner.put_shift_times(&admin(), LOCATION, times).await else {
            panic!("{field} is refused");
        };
        assert_eq!(errors.errors()[0].field, field);
    }

    // Dinner at 16:30 for 5 hours over the history's 17:00 for 6; BOH keeps the history's.
    let set = vec![dinner(time::macros::time!(16:30), 300)];
    let mut store = MockWeekPlanStore::new();
    let stored = set.clone();
    store
        .expect_put_shift_times()
        .withf(move |_, _, times| times == stored.as_slice())
        .returning(|_, _, _| Ok(Some(())));
    let with_set = set.clone();
    store
        .expect_inputs()
        .returning(move |_, _, _, _| Ok(Some(PlanningInputs { shift_times: with_set.clone(), ..history(8) })));
    let planner = service(store, MockPlanningStore::new(), MockRosterSolver::new());
    let times = planner.put_shift_times(&admin(), LOCATION, set.clone()).await.unwrap();
    assert_eq!(times.len(), 2);
    assert_eq!(times[0], ShiftTime { template: set[0], set: true });
    assert_eq!(
        (times[1].template.department, times[1].template.start, times[1].set),
        (Department::Boh, time::macros::time!(16:00), false)
    );
}
