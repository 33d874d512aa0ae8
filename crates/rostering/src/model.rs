//! A rostering instance: the Shift Scheduling Benchmark's model (Curtois & Qu), with weekends as data
//! and an optional cost per employee and shift type.

use serde::Serialize;

/// Days in a week: weekends repeat with this period from day 0.
pub const WEEK: usize = 7;

/// A whole rostering problem. Indexes (`usize`) point into `shifts` and `staff`; days count from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub horizon: usize,
    pub weekend: Weekend,
    pub shifts: Vec<ShiftType>,
    pub staff: Vec<Employee>,
    pub on_requests: Vec<ShiftRequest>,
    pub off_requests: Vec<ShiftRequest>,
    pub cover: Vec<Cover>,
}

/// Which days of each 7-day week form its weekend, as offsets from day 0's weekday: the benchmark starts
/// on a Monday (`[5, 6]`), a restaurant week on a Saturday (`[0, 1]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weekend {
    offsets: Vec<usize>,
}

impl Weekend {
    /// `None` when an offset is not a day of a week (0 to 6).
    pub fn new(mut offsets: Vec<usize>) -> Option<Self> {
        offsets.sort_unstable();
        offsets.dedup();
        offsets.iter().all(|&offset| offset < WEEK).then_some(Self { offsets })
    }

    /// Saturday and Sunday of a horizon that starts on a Monday.
    pub fn saturday_sunday_from_monday() -> Self {
        Self { offsets: vec![5, 6] }
    }

    /// The weekends that fall in the horizon, each as its days; a weekend cut by the horizon keeps the
    /// days inside it, and one with none is left out.
    pub fn weekends(&self, horizon: usize) -> Vec<Vec<usize>> {
        (0..horizon.div_ceil(WEEK))
            .map(|week| self.offsets.iter().map(|offset| week * WEEK + offset).filter(|&day| day < horizon).collect())
            .filter(|days: &Vec<usize>| !days.is_empty())
            .collect()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShiftType {
    pub id: String,
    pub minutes: u32,
    /// Shift types that may not be worked the day after this one.
    pub not_followed_by: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Employee {
    pub id: String,
    /// The most shifts of each type (indexed like `Instance::shifts`); `None` is no limit.
    pub max_shifts: Vec<Option<u32>>,
    pub max_minutes: u32,
    pub min_minutes: u32,
    pub max_consecutive_shifts: u32,
    pub min_consecutive_shifts: u32,
    pub min_consecutive_days_off: u32,
    pub max_weekends: u32,
    /// Days the employee cannot work, sorted.
    pub days_off: Vec<usize>,
    /// The cost of one shift of each type (indexed like `Instance::shifts`): wages, for a restaurant;
    /// zero in the benchmark.
    pub shift_costs: Vec<i64>,
    /// What each minute past a threshold costs beyond its shift's cost; none in the benchmark.
    pub overtime: Option<Overtime>,
}

/// Minutes worked past `after_minutes` in the horizon, each at `cost_per_minute` on top of the
/// shift's cost: a restaurant's FLSA overtime premium (half the wage past 40 hours).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overtime {
    pub after_minutes: u32,
    pub cost_per_minute: i64,
}

impl Overtime {
    /// What a total of `minutes` in the horizon costs.
    pub fn cost(&self, minutes: u32) -> i64 {
        i64::from(minutes.saturating_sub(self.after_minutes)) * self.cost_per_minute
    }
}

/// An on-request (wants `shift` on `day`) or an off-request (does not), with the weight of not granting it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShiftRequest {
    pub employee: usize,
    pub day: usize,
    pub shift: usize,
    pub weight: i64,
}

/// Staff wanted on a day, with the weight of each unit under or over. A benchmark line counts the
/// people on one shift type; a line may count several, each person by its units (a restaurant counts
/// a block's minutes, so a short shift and a long one cover the same need).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cover {
    pub day: usize,
    /// The shift types counted, with the units one person on each counts.
    pub shifts: Vec<(usize, u32)>,
    pub requirement: u32,
    pub under_weight: i64,
    pub over_weight: i64,
}

impl Cover {
    /// One shift type's people, as the benchmark counts them.
    pub fn people(day: usize, shift: usize, requirement: u32, under_weight: i64, over_weight: i64) -> Self {
        Self { day, shifts: vec![(shift, 1)], requirement, under_weight, over_weight }
    }

    /// The units the roster puts on the line.
    pub fn staffed(&self, roster: &Roster) -> u32 {
        self.shifts.iter().map(|&(shift, units)| roster.staffed(self.day, shift) * units).sum()
    }

    /// The most units the whole staff could put on the line.
    fn most(&self, staff: usize) -> i64 {
        staff as i64 * i64::from(self.shifts.iter().map(|&(_, units)| units).max().unwrap_or(0))
    }
}

/// Who works what: for each employee (in the instance's order), each day's shift or `None` for a day off.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Roster {
    pub days: Vec<Vec<Option<usize>>>,
}

impl Roster {
    /// Everybody off every day.
    pub fn empty(instance: &Instance) -> Self {
        Self { days: vec![vec![None; instance.horizon]; instance.staff.len()] }
    }

    pub fn shift(&self, employee: usize, day: usize) -> Option<usize> {
        self.days[employee][day]
    }

    pub fn works(&self, employee: usize, day: usize) -> bool {
        self.days[employee][day].is_some()
    }

    /// How many staff work `shift` on `day`.
    pub fn staffed(&self, day: usize, shift: usize) -> u32 {
        self.days.iter().filter(|row| row[day] == Some(shift)).count() as u32
    }

    /// The roster written with the instance's shift IDs, `""` for a day off.
    pub fn named(&self, instance: &Instance) -> Vec<(String, Vec<String>)> {
        self.days
            .iter()
            .zip(&instance.staff)
            .map(|(row, employee)| {
                let days = row.iter().map(|shift| shift.map_or_else(String::new, |s| instance.shifts[s].id.clone()));
                (employee.id.clone(), days.collect())
            })
            .collect()
    }
}

impl Instance {
    pub fn shift_index(&self, id: &str) -> Option<usize> {
        self.shifts.iter().position(|shift| shift.id == id)
    }

    pub fn employee_index(&self, id: &str) -> Option<usize> {
        self.staff.iter().position(|employee| employee.id == id)
    }

    /// One more than the largest the objective can be: every request unmet, every cover line as short
    /// as it can be or as over as the staff allow, every shift at its cost.
    pub fn objective_ceiling(&self) -> i64 {
        let requests: i64 = self.on_requests.iter().chain(&self.off_requests).map(|request| request.weight).sum();
        let cover: i64 = self
            .cover
            .iter()
            .map(|line| {
                let under = i64::from(line.requirement) * line.under_weight;
                let over = (line.most(self.staff.len()) - i64::from(line.requirement)).max(0) * line.over_weight;
                under.max(over)
            })
            .sum();
        let longest = self.shifts.iter().map(|shift| shift.minutes).max().unwrap_or(0);
        let costs: i64 = self
            .staff
            .iter()
            .map(|employee| {
                let overtime = employee.overtime.map_or(0, |o| o.cost(longest * self.horizon as u32));
                employee.shift_costs.iter().copied().max().unwrap_or(0) * self.horizon as i64 + overtime
            })
            .sum();
        requests + cover + costs + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekends_follow_the_offsets_and_the_horizon() {
        assert_eq!(Weekend::saturday_sunday_from_monday().weekends(14), vec![vec![5, 6], vec![12, 13]]);
        // A restaurant week from Saturday, and a horizon that cuts the last weekend.
        assert_eq!(Weekend::new(vec![1, 0]).unwrap().weekends(8), vec![vec![0, 1], vec![7]]);
        assert_eq!(Weekend::saturday_sunday_from_monday().weekends(5), Vec::<Vec<usize>>::new());
        assert!(Weekend::new(vec![7]).is_none());
    }
}
