//! A restaurant's week as a rostering instance (`opsd-rostering`), and its roster read back as shifts.
//!
//! The correspondence (`docs/labor-planning.md`): a day is a day of the week from Saturday (the
//! weekend is offsets 0 and 1); a shift type is one department's shift in one block; cover is the
//! minutes a block's hours call for in that department, counted over its whole and short shifts,
//! each minute short weighted by the sales at risk; every assignment costs its employee's wage for the shift's hours, so overstaffing costs the
//! wage; the rules are the team's (`PlanRules`), unavailable days are days off and preferences are
//! off-requests on the blocks not preferred.

use opsd_core::{Department, Week};
use opsd_optimization::Block;
use opsd_rostering::{Cover, Employee, Instance, Overtime, Roster, ShiftRequest, ShiftType, Weekend};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use time::{Date, Duration, PrimitiveDateTime};
use time_tz::{PrimitiveDateTimeExt, Tz};

use super::inputs::{Availability, BlockNeed, ShiftTemplate, StaffMember};
use super::proposal::PlannedShift;
use super::rules::PlanRules;

const DAYS: usize = 7;
/// FLSA overtime: the hours past 40 in a workweek.
const FLSA_WEEK_MINUTES: u32 = 40 * 60;

/// Each department's shift per block as the location runs it (lengthened to the shortest shift the
/// rules allow), and beside it a short one of that shortest length from the same start, where it is
/// at least an hour shorter: the part of a block's need under a whole shift is met by a short shift
/// instead of a long one over it or nobody.
fn with_short_shifts(templates: &[ShiftTemplate], shortest: u32) -> Vec<ShiftTemplate> {
    templates
        .iter()
        .flat_map(|t| {
            let full = ShiftTemplate { minutes: t.minutes.max(shortest), ..*t };
            let short = ShiftTemplate { minutes: shortest, ..*t };
            std::iter::once(full).chain((full.minutes >= shortest + 60).then_some(short))
        })
        .collect()
}

/// The week's instance, with what its indexes stand for.
#[derive(Debug, Clone)]
pub struct WeekModel {
    pub week: Week,
    pub instance: Instance,
    pub templates: Vec<ShiftTemplate>,
    pub staff: Vec<StaffMember>,
    pub needs: Vec<BlockNeed>,
    pub rules: PlanRules,
    /// The week's published shifts (employee, date, department, block) when it is inside the notice
    /// period; empty otherwise.
    pub published: Vec<(String, Date, Department, Block)>,
}

/// How a proposed day differs from the published one, for one employee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Removed,
    Moved,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Moved => "moved",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [ChangeKind::Added, ChangeKind::Removed, ChangeKind::Moved].into_iter().find(|kind| kind.as_str() == raw)
    }
}

/// A change to a published schedule inside the notice period, with the premium it owes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleChange {
    pub employee_key: String,
    pub date: Date,
    pub kind: ChangeKind,
    /// The published shift's department and block, and the proposed one's.
    pub from: Option<(Department, Block)>,
    pub to: Option<(Department, Block)>,
    pub premium: Decimal,
}

/// Needed against planned for one day, block and department.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    pub date: Date,
    pub block: Block,
    pub department: Department,
    pub hours_needed: Decimal,
    pub hours_planned: Decimal,
}

fn cents(amount: Decimal) -> i64 {
    (amount * Decimal::ONE_HUNDRED)
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .to_i64()
        .unwrap_or(i64::MAX)
}

impl WeekModel {
    pub fn new(
        week: Week,
        staff: Vec<StaffMember>,
        templates: &[ShiftTemplate],
        needs: Vec<BlockNeed>,
        availability: &[Availability],
        rules: PlanRules,
    ) -> Self {
        let templates = with_short_shifts(templates, rules.min_shift_minutes);
        let shifts = templates
            .iter()
            .map(|from| ShiftType {
                id: from.id(),
                minutes: from.minutes,
                not_followed_by: (0..templates.len())
                    .filter(|&to| {
                        templates[to].start_minute() + 24 * 60 < from.ends_at_minute() + rules.min_rest_minutes
                    })
                    .collect(),
            })
            .collect();
        let dates = week.days();
        let mut off_requests = Vec::new();
        let employees = staff
            .iter()
            .enumerate()
            .map(|(index, member)| {
                let available = availability.iter().find(|a| a.employee_key == member.key);
                let works = |t: &ShiftTemplate| member.role_in(t.department).is_some();
                if let Some(available) = available.filter(|a| !a.preferred_blocks.is_empty()) {
                    for (day, _) in dates.iter().enumerate() {
                        for (shift, template) in templates.iter().enumerate() {
                            if works(template) && !available.preferred_blocks.contains(&template.block) {
                                off_requests.push(ShiftRequest {
                                    employee: index,
                                    day,
                                    shift,
                                    weight: rules.preference_weight_cents,
                                });
                            }
                        }
                    }
                }
                Employee {
                    id: member.key.clone(),
                    max_shifts: templates.iter().map(|t| if works(t) { None } else { Some(0) }).collect(),
                    max_minutes: available
                        .and_then(|a| a.max_weekly_minutes)
                        .map_or(rules.max_weekly_minutes, |m| m.min(rules.max_weekly_minutes)),
                    min_minutes: 0,
                    max_consecutive_shifts: rules.max_days_in_a_row,
                    min_consecutive_shifts: 1,
                    min_consecutive_days_off: 1,
                    max_weekends: 1,
                    days_off: (0..DAYS)
                        .filter(|&day| available.is_some_and(|a| a.unavailable_on(dates[day])))
                        .collect(),
                    shift_costs: templates.iter().map(|t| cents(member.hourly_wage * t.hours())).collect(),
                    // Reached only where the team allows more than 40 hours.
                    overtime: Some(Overtime {
                        after_minutes: FLSA_WEEK_MINUTES,
                        cost_per_minute: cents(member.hourly_wage / Decimal::from(120)),
                    }),
                }
            })
            .collect();
        let cover = needs
            .iter()
            .filter_map(|need| {
                let day = dates.iter().position(|d| *d == need.date)?;
                let counted: Vec<(usize, u32)> = (0..templates.len())
                    .filter(|&t| templates[t].department == need.department && templates[t].block == need.block)
                    .map(|t| (t, templates[t].minutes))
                    .collect();
                if counted.is_empty() {
                    return None;
                }
                let sales_per_minute = if need.hours > Decimal::ZERO {
                    need.sales / need.hours / Decimal::from(60)
                } else {
                    Decimal::ZERO
                };
                let at_risk =
                    sales_per_minute * Decimal::from(rules.understaffed_sales_at_risk_pct) / Decimal::ONE_HUNDRED;
                Some(Cover {
                    day,
                    shifts: counted,
                    requirement: (need.hours * Decimal::from(60)).round().to_u32().unwrap_or(0),
                    under_weight: cents(at_risk),
                    over_weight: 0,
                })
            })
            .collect();
        let instance = Instance {
            horizon: DAYS,
            weekend: Weekend::new(vec![0, 1]).expect("offsets of a week"),
            shifts,
            staff: employees,
            on_requests: Vec::new(),
            off_requests,
            cover,
        };
        Self { week, instance, templates, staff, needs, rules, published: Vec::new() }
    }

    /// Fair workweek: the published schedule of the week kept unless a change is worth its premium.
    /// Each published shift is an on-request weighted by the premium; each day an employee was not
    /// published on is an off-request of that weight on every shift they could work. A published
    /// shift is not cut short (the laws count fewer hours as a change), so the short shifts are off.
    pub fn keeping_published(mut self, published: &[(String, Date, Department, Block)]) -> Self {
        let dates = self.week.days();
        let premium = self.rules.change_premium_cents;
        let short: Vec<usize> =
            (0..self.templates.len()).filter(|&t| self.templates[t].minutes < self.full_minutes(t)).collect();
        for employee in &mut self.instance.staff {
            for &shift in &short {
                employee.max_shifts[shift] = Some(0);
            }
        }
        for (employee, member) in self.staff.iter().enumerate() {
            for (day, date) in dates.iter().enumerate() {
                let kept = published.iter().find(|(key, on, _, _)| *key == member.key && on == date);
                for (shift, template) in self.templates.iter().enumerate().filter(|(t, _)| !short.contains(t)) {
                    let request = ShiftRequest { employee, day, shift, weight: premium };
                    match kept {
                        Some((_, _, department, block))
                            if template.department == *department && template.block == *block =>
                        {
                            self.instance.on_requests.push(request);
                        }
                        None if member.role_in(template.department).is_some() => {
                            self.instance.off_requests.push(request)
                        }
                        _ => {}
                    }
                }
            }
        }
        self.published = published.to_vec();
        self
    }

    /// The length of the whole shift of a template's department and block.
    fn full_minutes(&self, template: usize) -> u32 {
        let of = &self.templates[template];
        self.templates
            .iter()
            .filter(|t| t.department == of.department && t.block == of.block)
            .map(|t| t.minutes)
            .max()
            .unwrap_or(of.minutes)
    }

    /// Every shift of the published schedule the roster does not keep, and every shift it adds, for
    /// the employees the week plans. A published double (two shifts in a day) keeps at most one: the
    /// model proposes one shift a day.
    pub fn changes(&self, roster: &Roster) -> Vec<ScheduleChange> {
        if self.published.is_empty() {
            return Vec::new();
        }
        let premium = Decimal::new(self.rules.change_premium_cents, 2);
        let dates = self.week.days();
        let mut changes = Vec::new();
        for (member, row) in self.staff.iter().zip(&roster.days) {
            for (day, date) in dates.iter().enumerate() {
                let mut from: Vec<(Department, Block)> = self
                    .published
                    .iter()
                    .filter(|(key, on, _, _)| *key == member.key && on == date)
                    .map(|(_, _, department, block)| (*department, *block))
                    .collect();
                let to = row[day].map(|s| (self.templates[s].department, self.templates[s].block));
                let change = |kind, from, to| ScheduleChange {
                    employee_key: member.key.clone(),
                    date: *date,
                    kind,
                    from,
                    to,
                    premium,
                };
                match to {
                    Some(slot) if from.contains(&slot) => from.retain(|published| *published != slot),
                    Some(slot) if from.is_empty() => changes.push(change(ChangeKind::Added, None, Some(slot))),
                    Some(slot) => changes.push(change(ChangeKind::Moved, Some(from.remove(0)), Some(slot))),
                    None => {}
                }
                changes.extend(from.into_iter().map(|slot| change(ChangeKind::Removed, Some(slot), None)));
            }
        }
        changes
    }

    /// The roster as shifts, by employee then day; their local times in `zone` as instants.
    pub fn shifts(&self, roster: &Roster, zone: &Tz) -> Vec<PlannedShift> {
        let instant = |local: PrimitiveDateTime| {
            local.assume_timezone(zone).take_first().unwrap_or_else(|| local.assume_timezone_utc(zone))
        };
        let dates = self.week.days();
        let mut shifts = Vec::new();
        for (member, row) in self.staff.iter().zip(&roster.days) {
            let mut worked = 0;
            for (day, shift) in row.iter().enumerate() {
                let Some(template) = shift.map(|s| &self.templates[s]) else { continue };
                let start = PrimitiveDateTime::new(dates[day], template.start);
                let hours = template.hours();
                // FLSA: the minutes past 40 in the week, on the shift that crosses 40 and those
                // after it, at half the wage on top.
                let overtime = (worked + template.minutes).saturating_sub(FLSA_WEEK_MINUTES)
                    - worked.saturating_sub(FLSA_WEEK_MINUTES);
                worked += template.minutes;
                let premium = member.hourly_wage / Decimal::TWO * Decimal::from(overtime) / Decimal::from(60);
                shifts.push(PlannedShift {
                    employee_key: member.key.clone(),
                    employee_name: member.name.clone(),
                    role: member.role_in(template.department).unwrap_or_default().to_owned(),
                    department: template.department,
                    date: dates[day],
                    block: template.block,
                    start: instant(start),
                    end: instant(start + Duration::minutes(i64::from(template.minutes))),
                    hours,
                    cost: (member.hourly_wage * hours + premium).round_dp(2),
                });
            }
        }
        shifts
    }

    /// Hours needed against planned for every need, in the needs' order.
    pub fn coverage(&self, shifts: &[PlannedShift]) -> Vec<Coverage> {
        self.needs
            .iter()
            .map(|need| Coverage {
                date: need.date,
                block: need.block,
                department: need.department,
                hours_needed: need.hours,
                hours_planned: shifts
                    .iter()
                    .filter(|s| s.date == need.date && s.block == need.block && s.department == need.department)
                    .map(|s| s.hours)
                    .sum(),
            })
            .collect()
    }

    /// The rules that kept the roster from covering more: for each, the employees it held back from a
    /// shift that was short and that they work (by department), on a day they were free for it.
    pub fn binding_rules(&self, roster: &Roster) -> Vec<(&'static str, Vec<String>)> {
        let instance = &self.instance;
        // Short by at least the shift: one more of it would not have been over.
        let short = |day: usize, shift: usize| {
            instance.cover.iter().any(|c| {
                c.day == day
                    && c.shifts.iter().any(|&(s, _)| s == shift)
                    && c.staffed(roster) + instance.shifts[shift].minutes <= c.requirement
            })
        };
        let mut binding: Vec<(&'static str, Vec<String>)> =
            ["max_weekly_hours", "max_days_in_a_row", "min_rest", "unavailable"]
                .into_iter()
                .map(|rule| (rule, Vec::new()))
                .collect();
        for (index, (employee, member)) in instance.staff.iter().zip(&self.staff).enumerate() {
            let row = &roster.days[index];
            let minutes: u32 = row.iter().flatten().map(|&s| instance.shifts[s].minutes).sum();
            let mut held = [false; 4];
            for day in (0..DAYS).filter(|&day| row[day].is_none()) {
                let run = |days: &mut dyn Iterator<Item = usize>| days.take_while(|&d| row[d].is_some()).count();
                let run_through = run(&mut (0..day).rev()) + 1 + run(&mut (day + 1..DAYS));
                for shift in (0..instance.shifts.len()).filter(|&s| employee.max_shifts[s] != Some(0) && short(day, s))
                {
                    let rested = |before: Option<usize>, after: Option<usize>| {
                        before.is_none_or(|b| !instance.shifts[b].not_followed_by.contains(&shift))
                            && after.is_none_or(|a| !instance.shifts[shift].not_followed_by.contains(&a))
                    };
                    let before = day.checked_sub(1).and_then(|d| row[d]);
                    let after = row.get(day + 1).copied().flatten();
                    held[0] |= minutes + instance.shifts[shift].minutes > employee.max_minutes;
                    held[1] |= run_through as u32 > employee.max_consecutive_shifts;
                    held[2] |= !rested(before, after);
                    held[3] |= employee.days_off.contains(&day);
                }
            }
            for (rule, held) in binding.iter_mut().zip(held) {
                if held {
                    rule.1.push(member.key.clone());
                }
            }
        }
        binding.retain(|(_, employees)| !employees.is_empty());
        binding
    }
}
