//! How a plan would have done: a past week planned only from what was known before it, scored
//! against the need its actual sales called for, beside the schedule that was published for it and
//! a manager's rule of thumb (each weekday, block and department staffed as the mean of the 4 weeks
//! before). The same scoring and the same labor rules apply to all three.

use std::collections::{BTreeMap, BTreeSet};

use opsd_core::{Department, Week};
use opsd_optimization::Block;
use rust_decimal::Decimal;
use time::{Date, Duration, PrimitiveDateTime};

use super::history::PastShift;
use super::inputs::BlockNeed;
use super::plan::SolverFigures;
use super::proposal::PlannedShift;
use super::rules::PlanRules;

/// The weeks before a past week the rule of thumb averages.
pub const RULE_OF_THUMB_WEEKS: i64 = 4;

/// Hours and their cost in one day, block and department of a schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Staffed {
    pub hours: Decimal,
    pub cost: Decimal,
}

pub type Staffing = BTreeMap<(Date, Block, Department), Staffed>;

/// A shift at its local times, as the labor rules read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worked {
    pub employee_key: String,
    pub start: PrimitiveDateTime,
    pub minutes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleScore {
    pub hours: Decimal,
    /// The hours under the need the week's actual sales called for, over every day, block and
    /// department (an hour over in one does not make up for an hour short in another).
    pub hours_short: Decimal,
    pub hours_over: Decimal,
    pub labor_cost: Decimal,
    /// Labor cost over the week's actual sales, in percent.
    pub labor_pct: Option<Decimal>,
    /// Breaks of the labor rules; None for a schedule without names (the rule of thumb).
    pub rules_broken: Option<u32>,
}

/// One past week of one location, three ways.
#[derive(Debug, Clone, PartialEq)]
pub struct BacktestWeek {
    pub week: Week,
    pub actual_sales: Decimal,
    pub labor_pct_target: Option<Decimal>,
    pub proposal: ScheduleScore,
    pub published: ScheduleScore,
    pub rule_of_thumb: ScheduleScore,
    pub solver: SolverFigures,
}

fn hours_of(minutes: u32) -> Decimal {
    Decimal::from(minutes) / Decimal::from(60)
}

pub fn proposal_staffing(shifts: &[PlannedShift]) -> Staffing {
    let mut staffing = Staffing::new();
    for shift in shifts {
        let cell = staffing.entry((shift.date, shift.block, shift.department)).or_default();
        cell.hours += shift.hours;
        cell.cost += shift.cost;
    }
    staffing
}

pub fn past_staffing(shifts: &[PastShift]) -> Staffing {
    let mut staffing = Staffing::new();
    for shift in shifts {
        let cell = staffing.entry((shift.start.date(), shift.block, shift.department)).or_default();
        cell.hours += hours_of(shift.minutes);
        cell.cost += hours_of(shift.minutes) * shift.hourly_wage;
    }
    staffing
}

/// The rule of thumb: each day of the week staffed, per block and department, as the mean of the
/// same weekday over the `RULE_OF_THUMB_WEEKS` weeks before (a weekday not staffed counts as none).
pub fn rule_of_thumb(history: &[PastShift], week: Week) -> Staffing {
    let start = week.start();
    let first = start - Duration::weeks(RULE_OF_THUMB_WEEKS);
    let recent: Vec<PastShift> =
        history.iter().filter(|s| s.start.date() >= first && s.start.date() < start).cloned().collect();
    let weeks = Decimal::from(RULE_OF_THUMB_WEEKS);
    let mut staffing = Staffing::new();
    for ((date, block, department), staffed) in past_staffing(&recent) {
        let day = start + Duration::days(i64::from(Week::day_of_week(date)));
        let cell = staffing.entry((day, block, department)).or_default();
        cell.hours += staffed.hours / weeks;
        cell.cost += staffed.cost / weeks;
    }
    staffing
}

pub fn worked_of_proposal(shifts: &[PlannedShift]) -> Vec<Worked> {
    shifts
        .iter()
        .map(|s| Worked {
            employee_key: s.employee_key.clone(),
            start: PrimitiveDateTime::new(s.start.date(), s.start.time()),
            minutes: ((s.end - s.start).whole_minutes()).max(0) as u32,
        })
        .collect()
}

pub fn worked_of_past(shifts: &[PastShift]) -> Vec<Worked> {
    shifts.iter().map(|s| Worked { employee_key: s.employee_key.clone(), start: s.start, minutes: s.minutes }).collect()
}

/// How many times a week's shifts break the rules: each employee's week over the most hours, each
/// rest between two shifts under the least, each run of days longer than the most in a row, each
/// shift shorter than the shortest.
pub fn rules_broken(shifts: &[Worked], rules: &PlanRules) -> u32 {
    let mut by_employee: BTreeMap<&str, Vec<&Worked>> = BTreeMap::new();
    for shift in shifts {
        by_employee.entry(&shift.employee_key).or_default().push(shift);
    }
    let mut broken = 0;
    for mut own in by_employee.into_values() {
        own.sort_by_key(|s| s.start);
        let minutes: u32 = own.iter().map(|s| s.minutes).sum();
        broken += u32::from(minutes > rules.max_weekly_minutes);
        broken += own.iter().filter(|s| s.minutes < rules.min_shift_minutes).count() as u32;
        for pair in own.windows(2) {
            let rest = pair[1].start - (pair[0].start + Duration::minutes(i64::from(pair[0].minutes)));
            broken += u32::from(rest < Duration::minutes(i64::from(rules.min_rest_minutes)));
        }
        let days: BTreeSet<Date> = own.iter().map(|s| s.start.date()).collect();
        let mut run = 0;
        let mut previous: Option<Date> = None;
        for day in days {
            run = if previous.is_some_and(|p| p.next_day() == Some(day)) { run + 1 } else { 1 };
            broken += u32::from(run == rules.max_days_in_a_row + 1);
            previous = Some(day);
        }
    }
    broken
}

/// A schedule against the need: hours short and over per day, block and department, and its cost
/// against the actual sales.
pub fn score(
    staffing: &Staffing,
    needs: &[BlockNeed],
    actual_sales: Decimal,
    rules_broken: Option<u32>,
) -> ScheduleScore {
    let mut needed: BTreeMap<(Date, Block, Department), Decimal> = BTreeMap::new();
    for need in needs {
        *needed.entry((need.date, need.block, need.department)).or_default() += need.hours;
    }
    let cells: BTreeSet<_> = needed.keys().chain(staffing.keys()).copied().collect();
    let (mut short, mut over) = (Decimal::ZERO, Decimal::ZERO);
    for cell in cells {
        let need = needed.get(&cell).copied().unwrap_or_default();
        let planned = staffing.get(&cell).map(|s| s.hours).unwrap_or_default();
        short += (need - planned).max(Decimal::ZERO);
        over += (planned - need).max(Decimal::ZERO);
    }
    let labor_cost: Decimal = staffing.values().map(|s| s.cost).sum();
    ScheduleScore {
        hours: staffing.values().map(|s| s.hours).sum::<Decimal>().round_dp(2),
        hours_short: short.round_dp(2),
        hours_over: over.round_dp(2),
        labor_cost: labor_cost.round_dp(2),
        labor_pct: (actual_sales > Decimal::ZERO)
            .then(|| (labor_cost / actual_sales * Decimal::ONE_HUNDRED).round_dp(2)),
        rules_broken,
    }
}

#[cfg(test)]
mod tests {
    use time::macros::{date, datetime};

    use super::*;

    fn worked(key: &str, start: PrimitiveDateTime, minutes: u32) -> Worked {
        Worked { employee_key: key.into(), start, minutes }
    }

    fn past(key: &str, start: PrimitiveDateTime, minutes: u32, block: Block) -> PastShift {
        PastShift {
            employee_key: key.into(),
            employee_name: key.into(),
            role: "Server".into(),
            department: Department::Foh,
            block,
            start,
            minutes,
            hourly_wage: Decimal::from(15),
        }
    }

    #[test]
    fn each_labor_rule_broken_counts_once_and_a_lawful_week_counts_none() {
        let rules = PlanRules::default();
        // Five 8-hour days with a night between each: 40 hours, nothing broken.
        let lawful: Vec<Worked> =
            (0..5).map(|d| worked("ana", datetime!(2026-11-21 10:00) + Duration::days(d), 480)).collect();
        assert_eq!(rules_broken(&lawful, &rules), 0);

        let mut over = lawful.clone();
        over.push(worked("ana", datetime!(2026-11-27 10:00), 60)); // 41 h, and a 1-hour shift
        assert_eq!(rules_broken(&over, &rules), 2);

        // Closing at 23:00 and opening at 08:00 leaves 9 hours.
        let clopen =
            vec![worked("ben", datetime!(2026-11-21 15:00), 480), worked("ben", datetime!(2026-11-22 08:00), 300)];
        assert_eq!(rules_broken(&clopen, &rules), 1);

        // Seven days in a row of 5 hours: 35 hours, one run too long.
        let every_day: Vec<Worked> =
            (0..7).map(|d| worked("cy", datetime!(2026-11-21 11:00) + Duration::days(d), 300)).collect();
        assert_eq!(rules_broken(&every_day, &rules), 1);

        let everyone: Vec<Worked> = [lawful, clopen, every_day].concat();
        assert_eq!(rules_broken(&everyone, &rules), 2, "each employee's own shifts");
    }

    #[test]
    fn hours_over_in_one_block_do_not_make_up_for_hours_short_in_another() {
        let day = date!(2026 - 11 - 21);
        let needs = vec![
            BlockNeed {
                date: day,
                block: Block::Lunch,
                department: Department::Foh,
                hours: Decimal::from(10),
                sales: Decimal::ZERO,
            },
            BlockNeed {
                date: day,
                block: Block::Dinner,
                department: Department::Foh,
                hours: Decimal::from(20),
                sales: Decimal::ZERO,
            },
        ];
        let staffing = past_staffing(&[
            past("ana", datetime!(2026-11-21 10:00), 16 * 60, Block::Lunch),
            past("ben", datetime!(2026-11-21 16:00), 6 * 60, Block::Dinner),
            past("cy", datetime!(2026-11-21 16:00), 6 * 60, Block::Dinner),
        ]);
        let scored = score(&staffing, &needs, Decimal::from(2800), Some(0));
        assert_eq!(scored.hours, Decimal::from(28));
        assert_eq!(scored.hours_short, Decimal::from(8));
        assert_eq!(scored.hours_over, Decimal::from(6));
        assert_eq!(scored.labor_cost, Decimal::from(420));
        assert_eq!(scored.labor_pct, Some(Decimal::from(15)));
        assert_eq!(score(&staffing, &needs, Decimal::ZERO, None).labor_pct, None);
    }

    #[test]
    fn the_rule_of_thumb_staffs_each_weekday_as_the_mean_of_the_four_weeks_before() {
        let week = Week::containing(date!(2026 - 11 - 21));
        let history = vec![
            // Saturdays 4, 3 and 2 weeks before: 8, 8 and 4 hours; 5 weeks before is too old.
            past("ana", datetime!(2026-10-24 10:00), 480, Block::Lunch),
            past("ana", datetime!(2026-10-31 10:00), 480, Block::Lunch),
            past("ana", datetime!(2026-11-07 10:00), 240, Block::Lunch),
            past("ana", datetime!(2026-10-17 10:00), 600, Block::Lunch),
            // A Monday a week before.
            past("ben", datetime!(2026-11-16 16:00), 360, Block::Dinner),
        ];
        let staffing = rule_of_thumb(&history, week);
        let saturday = staffing[&(date!(2026 - 11 - 21), Block::Lunch, Department::Foh)];
        assert_eq!(saturday.hours, Decimal::from(5), "(8 + 8 + 4 + 0) / 4");
        assert_eq!(saturday.cost, Decimal::from(75));
        let monday = staffing[&(date!(2026 - 11 - 23), Block::Dinner, Department::Foh)];
        assert_eq!(monday.hours, Decimal::new(15, 1));
        assert_eq!(staffing.len(), 2);
    }
}
