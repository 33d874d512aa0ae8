//! The judge of any roster, written from the benchmark's rules and independent of any solver: which
//! hard rule each part breaks, and the objective.

use serde::Serialize;
use std::fmt;

use crate::model::{Instance, Roster};

/// The benchmark's hard rules, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The roster does not have one row per employee and one entry per day, or names an unknown shift.
    Shape,
    /// A shift on the day after one it may not follow.
    Rotation,
    MaxShiftsOfType,
    MaxTotalMinutes,
    MinTotalMinutes,
    MaxConsecutiveShifts,
    MinConsecutiveShifts,
    MinConsecutiveDaysOff,
    MaxWeekends,
    DayOff,
}

impl Rule {
    pub const ALL: [Rule; 10] = [
        Rule::Shape,
        Rule::Rotation,
        Rule::MaxShiftsOfType,
        Rule::MaxTotalMinutes,
        Rule::MinTotalMinutes,
        Rule::MaxConsecutiveShifts,
        Rule::MinConsecutiveShifts,
        Rule::MinConsecutiveDaysOff,
        Rule::MaxWeekends,
        Rule::DayOff,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rule::Shape => "shape",
            Rule::Rotation => "rotation",
            Rule::MaxShiftsOfType => "max_shifts_of_type",
            Rule::MaxTotalMinutes => "max_total_minutes",
            Rule::MinTotalMinutes => "min_total_minutes",
            Rule::MaxConsecutiveShifts => "max_consecutive_shifts",
            Rule::MinConsecutiveShifts => "min_consecutive_shifts",
            Rule::MinConsecutiveDaysOff => "min_consecutive_days_off",
            Rule::MaxWeekends => "max_weekends",
            Rule::DayOff => "day_off",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule: which, whose (an index into the staff) and from which day, with what was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub rule: Rule,
    pub employee: Option<usize>,
    pub day: Option<usize>,
    pub detail: String,
}

/// The objective and its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Objective {
    pub on_requests: i64,
    pub off_requests: i64,
    pub under_cover: i64,
    pub over_cover: i64,
    pub shift_costs: i64,
    pub overtime: i64,
}

impl Objective {
    pub fn total(&self) -> i64 {
        self.on_requests + self.off_requests + self.under_cover + self.over_cover + self.shift_costs + self.overtime
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    pub objective: Objective,
    pub violations: Vec<Violation>,
}

impl Evaluation {
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }
}

pub fn evaluate(instance: &Instance, roster: &Roster) -> Evaluation {
    let mut violations = Vec::new();
    if let Some(shape) = shape(instance, roster) {
        violations.push(shape);
        return Evaluation { objective: Objective::default(), violations };
    }
    for employee in 0..instance.staff.len() {
        EmployeeCheck { instance, roster, employee, violations: &mut violations }.run();
    }
    Evaluation { objective: objective(instance, roster), violations }
}

fn shape(instance: &Instance, roster: &Roster) -> Option<Violation> {
    let detail = if roster.days.len() != instance.staff.len() {
        format!("{} rows for {} employees", roster.days.len(), instance.staff.len())
    } else if let Some(row) = roster.days.iter().position(|row| row.len() != instance.horizon) {
        format!("{} days for employee {} in a horizon of {}", roster.days[row].len(), row, instance.horizon)
    } else if roster.days.iter().flatten().flatten().any(|&shift| shift >= instance.shifts.len()) {
        "a shift that is not declared".to_owned()
    } else {
        return None;
    };
    Some(Violation { rule: Rule::Shape, employee: None, day: None, detail })
}

fn objective(instance: &Instance, roster: &Roster) -> Objective {
    let mut objective = Objective::default();
    for request in &instance.on_requests {
        if roster.shift(request.employee, request.day) != Some(request.shift) {
            objective.on_requests += request.weight;
        }
    }
    for request in &instance.off_requests {
        if roster.shift(request.employee, request.day) == Some(request.shift) {
            objective.off_requests += request.weight;
        }
    }
    for line in &instance.cover {
        let staffed = i64::from(line.staffed(roster));
        let requirement = i64::from(line.requirement);
        objective.under_cover += (requirement - staffed).max(0) * line.under_weight;
        objective.over_cover += (staffed - requirement).max(0) * line.over_weight;
    }
    for (row, employee) in roster.days.iter().zip(&instance.staff) {
        objective.shift_costs += row.iter().flatten().map(|&shift| employee.shift_costs[shift]).sum::<i64>();
        if let Some(overtime) = employee.overtime {
            let minutes: u32 = row.iter().flatten().map(|&shift| instance.shifts[shift].minutes).sum();
            objective.overtime += overtime.cost(minutes);
        }
    }
    objective
}

struct EmployeeCheck<'a> {
    instance: &'a Instance,
    roster: &'a Roster,
    employee: usize,
    violations: &'a mut Vec<Violation>,
}

impl EmployeeCheck<'_> {
    fn run(&mut self) {
        self.rotation();
        self.shift_counts_and_minutes();
        self.runs();
        self.weekends();
        self.days_off();
    }

    fn broken(&mut self, rule: Rule, day: Option<usize>, detail: String) {
        self.violations.push(Violation { rule, employee: Some(self.employee), day, detail });
    }

    fn row(&self) -> &[Option<usize>] {
        &self.roster.days[self.employee]
    }

    fn rotation(&mut self) {
        let shifts = &self.instance.shifts;
        let found: Vec<(usize, usize, usize)> = self
            .row()
            .windows(2)
            .enumerate()
            .filter_map(|(day, pair)| match (pair[0], pair[1]) {
                (Some(today), Some(tomorrow)) if shifts[today].not_followed_by.contains(&tomorrow) => {
                    Some((day, today, tomorrow))
                }
                _ => None,
            })
            .collect();
        for (day, today, tomorrow) in found {
            let detail = format!("{} on day {} after {}", shifts[tomorrow].id, day + 1, shifts[today].id);
            self.broken(Rule::Rotation, Some(day + 1), detail);
        }
    }

    fn shift_counts_and_minutes(&mut self) {
        let employee = &self.instance.staff[self.employee];
        let mut counts = vec![0u32; self.instance.shifts.len()];
        for &shift in self.row().iter().flatten() {
            counts[shift] += 1;
        }
        for (shift, (&count, limit)) in counts.iter().zip(&employee.max_shifts).enumerate() {
            if let Some(limit) = *limit
                && count > limit
            {
                let detail = format!("{count} shifts of {} where at most {limit}", self.instance.shifts[shift].id);
                self.broken(Rule::MaxShiftsOfType, None, detail);
            }
        }
        let minutes: u32 = counts.iter().zip(&self.instance.shifts).map(|(count, shift)| count * shift.minutes).sum();
        let (min, max) = (employee.min_minutes, employee.max_minutes);
        if minutes > max {
            self.broken(Rule::MaxTotalMinutes, None, format!("{minutes} minutes where at most {max}"));
        }
        if minutes < min {
            self.broken(Rule::MinTotalMinutes, None, format!("{minutes} minutes where at least {min}"));
        }
    }

    /// Runs of working days and of days off; days outside the horizon count as off for the longest run,
    /// and a run that touches either end of the horizon is exempt from the shortest.
    fn runs(&mut self) {
        let employee = &self.instance.staff[self.employee];
        let horizon = self.instance.horizon;
        let (max_work, min_work, min_off) =
            (employee.max_consecutive_shifts, employee.min_consecutive_shifts, employee.min_consecutive_days_off);
        for (start, length, working) in runs(self.row()) {
            let length_u32 = length as u32;
            let touches_edge = start == 0 || start + length == horizon;
            if working && length_u32 > max_work {
                let detail = format!("{length} working days in a row where at most {max_work}");
                self.broken(Rule::MaxConsecutiveShifts, Some(start), detail);
            }
            if working && !touches_edge && length_u32 < min_work {
                let detail = format!("{length} working days in a row where at least {min_work}");
                self.broken(Rule::MinConsecutiveShifts, Some(start), detail);
            }
            if !working && !touches_edge && length_u32 < min_off {
                let detail = format!("{length} days off in a row where at least {min_off}");
                self.broken(Rule::MinConsecutiveDaysOff, Some(start), detail);
            }
        }
    }

    fn weekends(&mut self) {
        let max = self.instance.staff[self.employee].max_weekends;
        let worked = self
            .instance
            .weekend
            .weekends(self.instance.horizon)
            .iter()
            .filter(|days| days.iter().any(|&day| self.roster.works(self.employee, day)))
            .count() as u32;
        if worked > max {
            self.broken(Rule::MaxWeekends, None, format!("{worked} weekends worked where at most {max}"));
        }
    }

    fn days_off(&mut self) {
        let worked: Vec<usize> = self.instance.staff[self.employee]
            .days_off
            .iter()
            .copied()
            .filter(|&day| self.roster.works(self.employee, day))
            .collect();
        for day in worked {
            self.broken(Rule::DayOff, Some(day), format!("works day {day}, a day off"));
        }
    }
}

/// Maximal runs of the row as (first day, length, working).
fn runs(row: &[Option<usize>]) -> Vec<(usize, usize, bool)> {
    let mut runs: Vec<(usize, usize, bool)> = Vec::new();
    for (day, shift) in row.iter().enumerate() {
        match runs.last_mut() {
            Some((_, length, working)) if *working == shift.is_some() => *length += 1,
            _ => runs.push((day, 1, shift.is_some())),
        }
    }
    runs
}
