//! A start without the solver, for an instance of any size: each employee in turn takes the best
//! sequence of days (`sequence`), valued by the cover the employees before them left unmet, their
//! requests and their costs. The rules a sequence cannot see are met around it: the weekends to work
//! are chosen first (those the cover needs most), a price per minute worked is searched until the
//! total lies in the employee's window, and a shift type over its limit is taken off its least valued
//! days. An employee it cannot place is left off every day and named, for the solver to place.

mod sequence;

use std::collections::HashMap;

use crate::model::{Instance, Roster};
use sequence::{RunLimits, best_sequence};

/// The shifts a day offers the sequence: the most valuable at the price per minute being tried.
const CANDIDATES: usize = 4;
/// Rounds of taking shift types over their limit off days.
const TYPE_ROUNDS: usize = 8;
/// Steps of each half of the search for the price per minute.
const PRICE_STEPS: usize = 40;

pub struct Construction {
    pub roster: Roster,
    /// Employees for whom no row meeting their rules was found; their rows are empty.
    pub unplaced: Vec<usize>,
}

pub fn construct(instance: &Instance) -> Construction {
    let mut builder = Builder::new(instance);
    let mut roster = Roster::empty(instance);
    let mut unplaced = Vec::new();
    for employee in 0..instance.staff.len() {
        match builder.place(employee) {
            Some(row) => {
                builder.cover_with(&row);
                roster.days[employee] = row;
            }
            None => unplaced.push(employee),
        }
    }
    Construction { roster, unplaced }
}

/// One employee's worth of each shift on each day (`None`: may not be worked), by `day * shifts + shift`.
type Values = Vec<Option<f64>>;

struct Builder<'a> {
    instance: &'a Instance,
    /// By `day * shifts + shift`: the cover lines that count it, with the units one person counts.
    lines: Vec<Vec<(usize, u32)>>,
    /// Per cover line: the units still wanted (below zero: over).
    unmet: Vec<i64>,
    /// `forbidden[a][b]`: `b` may not follow `a`.
    forbidden: Vec<Vec<bool>>,
    /// Per employee, by (day, shift): what granting the requests there is worth.
    requests: Vec<HashMap<(usize, usize), i64>>,
}

impl<'a> Builder<'a> {
    fn new(instance: &'a Instance) -> Self {
        let shifts = instance.shifts.len();
        let mut lines = vec![Vec::new(); instance.horizon * shifts];
        for (index, line) in instance.cover.iter().enumerate() {
            for &(shift, units) in &line.shifts {
                lines[line.day * shifts + shift].push((index, units));
            }
        }
        let forbidden = instance
            .shifts
            .iter()
            .map(|shift| (0..shifts).map(|next| shift.not_followed_by.contains(&next)).collect())
            .collect();
        let mut requests = vec![HashMap::new(); instance.staff.len()];
        for (request, sign) in
            instance.on_requests.iter().map(|r| (r, 1)).chain(instance.off_requests.iter().map(|r| (r, -1)))
        {
            *requests[request.employee].entry((request.day, request.shift)).or_insert(0) += sign * request.weight;
        }
        let unmet = instance.cover.iter().map(|line| i64::from(line.requirement)).collect();
        Self { instance, lines, unmet, forbidden, requests }
    }

    fn place(&self, employee: usize) -> Option<Vec<Option<usize>>> {
        let mut values = self.values(employee);
        let limits = &self.instance.staff[employee].max_shifts;
        for _ in 0..TYPE_ROUNDS {
            let row = self.within_minutes(employee, &values)?;
            let mut counts = vec![0u32; self.instance.shifts.len()];
            row.iter().flatten().for_each(|&shift| counts[shift] += 1);
            let over: Vec<(usize, u32)> = (0..counts.len())
                .filter_map(|shift| limits[shift].filter(|&max| counts[shift] > max).map(|max| (shift, max)))
                .collect();
            if over.is_empty() {
                return Some(row);
            }
            for (shift, max) in over {
                self.keep_best_days(&mut values, &row, shift, max as usize);
            }
        }
        None
    }

    /// The shift worked only on the `keep` days of the row where it is worth most.
    fn keep_best_days(&self, values: &mut Values, row: &[Option<usize>], shift: usize, keep: usize) {
        let shifts = self.instance.shifts.len();
        let mut days: Vec<usize> = (0..row.len()).filter(|&day| row[day] == Some(shift)).collect();
        days.sort_by(|&a, &b| {
            values[b * shifts + shift].unwrap_or(0.0).total_cmp(&values[a * shifts + shift].unwrap_or(0.0))
        });
        for day in days.into_iter().skip(keep) {
            values[day * shifts + shift] = None;
        }
    }

    /// A row whose total minutes lie in the employee's window: the price of a minute worked (added to
    /// each shift's worth) is 0 if that is enough, else the price nearest 0 that brings the total into
    /// the window, found by doubling away from 0 until the total crosses into it, then halving back.
    fn within_minutes(&self, employee: usize, values: &Values) -> Option<Vec<Option<usize>>> {
        let person = &self.instance.staff[employee];
        let (min, max) = (person.min_minutes, person.max_minutes);
        let (row, total) = self.sequence(employee, values, 0.0)?;
        if (min..=max).contains(&total) {
            return Some(row);
        }
        let direction = if total < min { 1.0 } else { -1.0 };
        let short = |total: u32| if direction > 0.0 { total < min } else { total > max };
        let shortest = self.instance.shifts.iter().map(|shift| shift.minutes).min().unwrap_or(1).max(1);
        let largest = values.iter().flatten().fold(1.0_f64, |largest, value| largest.max(value.abs()));
        let (mut near, mut far) = (0.0, largest / f64::from(shortest) / 8.0);
        let mut found = None;
        for _ in 0..PRICE_STEPS {
            let (row, total) = self.sequence(employee, values, direction * far)?;
            if !short(total) {
                found = (total <= max && total >= min).then_some(row);
                break;
            }
            (near, far) = (far, far * 2.0);
        }
        for _ in 0..PRICE_STEPS {
            let middle = (near + far) / 2.0;
            let (row, total) = self.sequence(employee, values, direction * middle)?;
            if short(total) {
                near = middle;
            } else {
                if (min..=max).contains(&total) {
                    found = Some(row);
                }
                far = middle;
            }
        }
        found
    }

    /// The best sequence at a price per minute worked, and its total minutes.
    fn sequence(&self, employee: usize, values: &Values, price: f64) -> Option<(Vec<Option<usize>>, u32)> {
        let instance = self.instance;
        let shifts = instance.shifts.len();
        let candidates: Vec<Vec<(usize, f64)>> = (0..instance.horizon)
            .map(|day| {
                let mut offered: Vec<(usize, f64)> = (0..shifts)
                    .filter_map(|shift| {
                        let value = values[day * shifts + shift]?;
                        Some((shift, value + price * f64::from(instance.shifts[shift].minutes)))
                    })
                    .collect();
                offered.sort_by(|a, b| b.1.total_cmp(&a.1));
                offered.truncate(CANDIDATES);
                offered
            })
            .collect();
        let person = &instance.staff[employee];
        let limits = RunLimits {
            max_work: person.max_consecutive_shifts as usize,
            min_work: person.min_consecutive_shifts as usize,
            min_off: person.min_consecutive_days_off as usize,
        };
        let row = best_sequence(&candidates, limits, &self.forbidden)?;
        let total = row.iter().flatten().map(|&shift| instance.shifts[shift].minutes).sum();
        Some((row, total))
    }

    /// What each shift on each day is worth to the roster if this employee works it: the cover still
    /// unmet, the employee's requests, less the shift's cost. Days off, shift types with a limit of
    /// none, and the weekends beyond the employee's most are `None`.
    fn values(&self, employee: usize) -> Values {
        let instance = self.instance;
        let person = &instance.staff[employee];
        let shifts = instance.shifts.len();
        let mut values: Values = (0..instance.horizon * shifts)
            .map(|cell| {
                let (day, shift) = (cell / shifts, cell % shifts);
                if person.days_off.binary_search(&day).is_ok() || person.max_shifts[shift] == Some(0) {
                    return None;
                }
                let cover: i64 = self.lines[cell].iter().map(|&(line, units)| self.cover_gain(line, units)).sum();
                let request = self.requests[employee].get(&(day, shift)).copied().unwrap_or(0);
                Some((cover + request - person.shift_costs[shift]) as f64 + tie_break(employee, cell))
            })
            .collect();
        let mut weekends = instance.weekend.weekends(instance.horizon);
        if weekends.len() > person.max_weekends as usize {
            let need = |days: &Vec<usize>| -> f64 {
                let best = |day: usize| (0..shifts).filter_map(|s| values[day * shifts + s]).fold(0.0, f64::max);
                days.iter().map(|&day| best(day)).sum()
            };
            weekends.sort_by(|a, b| need(b).total_cmp(&need(a)));
            for &day in weekends.iter().skip(person.max_weekends as usize).flatten() {
                (0..shifts).for_each(|shift| values[day * shifts + shift] = None);
            }
        }
        values
    }

    /// What one more person counting `units` on the line is worth: under-cover avoided, over-cover added.
    fn cover_gain(&self, line: usize, units: u32) -> i64 {
        let cover = &self.instance.cover[line];
        let units = i64::from(units);
        let filled = self.unmet[line].clamp(0, units);
        filled * cover.under_weight - (units - filled) * cover.over_weight
    }

    fn cover_with(&mut self, row: &[Option<usize>]) {
        let shifts = self.instance.shifts.len();
        for (day, &shift) in row.iter().enumerate() {
            for &(line, units) in shift.map_or(&[][..], |shift| &self.lines[day * shifts + shift]) {
                self.unmet[line] -= i64::from(units);
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// A fixed fraction below a hundredth, different for most cells: equal worths (a cover wanted alike on
/// every day) would otherwise cross any price together, and the total would jump over a narrow window.
fn tie_break(employee: usize, cell: usize) -> f64 {
    let mixed =
        (employee as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (cell as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (mixed >> 40) as f64 / (1u64 << 24) as f64 / 100.0
}
