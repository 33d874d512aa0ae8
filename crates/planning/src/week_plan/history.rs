//! What a location's past weeks tell the planner: who works there, in which departments and roles,
//! at what wage; when each department's shifts of each block start and how long they run; and how a
//! block's hours split between departments.

use std::collections::BTreeMap;

use opsd_core::Department;
use opsd_optimization::Block;
use rust_decimal::Decimal;
use time::{PrimitiveDateTime, Time};

use super::inputs::{BlockNeed, ShiftTemplate, StaffMember};
use crate::forecast_report::ForecastReport;

/// A shift of the weeks before, at the location's local time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastShift {
    pub employee_key: String,
    pub employee_name: String,
    pub role: String,
    pub department: Department,
    pub block: Block,
    pub start: PrimitiveDateTime,
    pub minutes: u32,
    pub hourly_wage: Decimal,
}

/// A time punch of the weeks before, as the staff reads it: who worked, where, at what wage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastPunch {
    pub employee_key: String,
    pub department: Department,
    pub clocked_in: PrimitiveDateTime,
    pub hourly_wage: Decimal,
}

/// Everyone in the shifts and punches: first who was scheduled, in order of first appearance, each
/// department with its most worked role and the wage of their latest shift; then who only punched
/// (called in unscheduled), at the wage of their latest punch. A department someone punched in but
/// was never scheduled in is theirs too, with the role most worked there by the others (else the
/// department's name); someone known only by punches goes by their key.
pub fn staff_from_history(shifts: &[PastShift], punches: &[PastPunch]) -> Vec<StaffMember> {
    let mut staff = scheduled_staff(shifts);
    let mut latest: BTreeMap<&str, PrimitiveDateTime> = BTreeMap::new();
    for punch in punches {
        let index = match staff.iter().position(|m| m.key == punch.employee_key) {
            Some(index) => index,
            None => {
                staff.push(StaffMember {
                    key: punch.employee_key.clone(),
                    name: punch.employee_key.clone(),
                    roles: Vec::new(),
                    hourly_wage: punch.hourly_wage,
                });
                latest.insert(&punch.employee_key, punch.clocked_in);
                staff.len() - 1
            }
        };
        if staff[index].role_in(punch.department).is_none() {
            let role = most_worked_role(shifts, punch.department).unwrap_or(punch.department.as_str()).to_owned();
            staff[index].roles.push((punch.department, role));
        }
        if let Some(seen) = latest.get_mut(punch.employee_key.as_str())
            && punch.clocked_in >= *seen
        {
            *seen = punch.clocked_in;
            staff[index].hourly_wage = punch.hourly_wage;
        }
    }
    staff
}

fn most_worked_role(shifts: &[PastShift], department: Department) -> Option<&str> {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for shift in shifts.iter().filter(|s| s.department == department) {
        *counts.entry(&shift.role).or_default() += 1;
    }
    counts.into_iter().max_by_key(|(_, count)| *count).map(|(role, _)| role)
}

fn scheduled_staff(shifts: &[PastShift]) -> Vec<StaffMember> {
    let mut staff: Vec<StaffMember> = Vec::new();
    let mut latest: BTreeMap<&str, PrimitiveDateTime> = BTreeMap::new();
    let mut role_counts: BTreeMap<(&str, Department, &str), u32> = BTreeMap::new();
    for shift in shifts {
        *role_counts.entry((&shift.employee_key, shift.department, &shift.role)).or_default() += 1;
        let index = match staff.iter().position(|m| m.key == shift.employee_key) {
            Some(index) => index,
            None => {
                staff.push(StaffMember {
                    key: shift.employee_key.clone(),
                    name: shift.employee_name.clone(),
                    roles: Vec::new(),
                    hourly_wage: shift.hourly_wage,
                });
                staff.len() - 1
            }
        };
        let seen = latest.entry(&shift.employee_key).or_insert(shift.start);
        if shift.start >= *seen {
            *seen = shift.start;
            staff[index].hourly_wage = shift.hourly_wage;
            staff[index].name = shift.employee_name.clone();
        }
    }
    for member in &mut staff {
        for department in [Department::Foh, Department::Boh, Department::Other] {
            let most = role_counts
                .iter()
                .filter(|((key, d, _), _)| *key == member.key && *d == department)
                .max_by_key(|(_, count)| **count)
                .map(|((_, _, role), _)| (*role).to_owned());
            if let Some(role) = most {
                member.roles.push((department, role));
            }
        }
    }
    staff
}

fn median(mut values: Vec<u32>) -> u32 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// Each department's shift per block as the location runs it: the median start and the median length.
pub fn templates_from_history(shifts: &[PastShift]) -> Vec<ShiftTemplate> {
    let mut seen: BTreeMap<(Department, Block), (Vec<u32>, Vec<u32>)> = BTreeMap::new();
    for shift in shifts {
        let (starts, lengths) = seen.entry((shift.department, shift.block)).or_default();
        starts.push(u32::from(shift.start.hour()) * 60 + u32::from(shift.start.minute()));
        lengths.push(shift.minutes);
    }
    seen.into_iter()
        .map(|((department, block), (starts, lengths))| {
            let start = median(starts);
            ShiftTemplate {
                department,
                block,
                start: Time::from_hms((start / 60) as u8, (start % 60) as u8, 0).expect("a minute of a day"),
                minutes: median(lengths),
            }
        })
        .collect()
}

/// The history's shift types with the manager's set times over them: a set time replaces its
/// department and block's, or adds one the history lacks.
pub fn with_set_times(from_history: Vec<ShiftTemplate>, set: &[ShiftTemplate]) -> Vec<ShiftTemplate> {
    let mut templates: Vec<ShiftTemplate> = from_history
        .into_iter()
        .filter(|t| !set.iter().any(|s| s.department == t.department && s.block == t.block))
        .collect();
    templates.extend_from_slice(set);
    templates.sort_by_key(|t| (t.department, t.block));
    templates
}

/// The hours each day, block and department calls for: the day's hours by the SPLH goal (by the
/// labor-% budget when there is no SPLH goal), split over the blocks by their forecast sales and over
/// the departments by the share of the block's hours each worked in the weeks before. A block the
/// location staffs no shift in (late night, served by dinner's people) adds its sales to the block
/// before it that has shifts. A day without a forecast or either goal calls for nothing.
pub fn needs_from_forecast(forecast: &ForecastReport, history: &[PastShift]) -> Vec<BlockNeed> {
    let mut block_hours: BTreeMap<(Block, Department), Decimal> = BTreeMap::new();
    for shift in history {
        *block_hours.entry((shift.block, shift.department)).or_default() += Decimal::from(shift.minutes);
    }
    let staffed = |block: Block| block_hours.keys().any(|(b, _)| *b == block);
    let mut needs = Vec::new();
    for day in &forecast.days {
        let (Some(day_sales), Some(day_hours)) =
            (day.forecast_sales, day.hours.hours_for_splh.or(day.hours.hours_for_labor_pct))
        else {
            continue;
        };
        if day_sales <= Decimal::ZERO {
            continue;
        }
        let mut served: BTreeMap<Block, Decimal> = BTreeMap::new();
        let mut last_staffed = None;
        for (block, sales) in &day.blocks {
            if staffed(*block) {
                last_staffed = Some(*block);
            }
            if let Some(by) = last_staffed {
                *served.entry(by).or_default() += sales.unwrap_or_default();
            }
        }
        for (block, sales) in served {
            let in_block: Decimal = block_hours.iter().filter(|((b, _), _)| *b == block).map(|(_, h)| *h).sum();
            for ((_, department), worked) in block_hours.iter().filter(|((b, _), _)| *b == block) {
                let share = *worked / in_block;
                needs.push(BlockNeed {
                    date: day.day,
                    block,
                    department: *department,
                    hours: (day_hours * sales / day_sales * share).round_dp(2),
                    sales: (sales * share).round_dp(2),
                });
            }
        }
    }
    needs
}
