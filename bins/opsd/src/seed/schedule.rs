//! The demo's published schedules, as a careful manager writes them: each block staffed for the
//! sales the manager expects (the weekday and the season, not the day's own luck) at the team's SPLH
//! goal, split between the roles as the restaurant runs, with a misjudged count now and then; each
//! person at most 5 days a week, unless the week runs short of people, and one shift a day.

use opsd_core::Department;

use super::jitter;

/// One kind of shift the demo restaurant runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub start_hour: u8,
    pub start_minute: u8,
    pub minutes: i64,
    pub department: Department,
    pub role: &'static str,
    pub wage_cents: i64,
    /// The pool of people this role is drawn from, before the location's size scales it.
    pool: u32,
}

const SERVER_LUNCH: Slot = slot(10, 0, 360, Department::Foh, "Server", 1500, 14);
const SERVER_DINNER: Slot = slot(16, 0, 360, Department::Foh, "Server", 1500, 14);
const BARTENDER: Slot = slot(16, 0, 420, Department::Foh, "Bartender", 1700, 3);
const COOK_LUNCH: Slot = slot(10, 0, 420, Department::Boh, "Line Cook", 1900, 10);
const COOK_DINNER: Slot = slot(16, 0, 450, Department::Boh, "Line Cook", 1900, 10);
const MANAGER: Slot = slot(9, 0, 480, Department::Other, "Manager", 2600, 2);

const fn slot(
    start_hour: u8,
    start_minute: u8,
    minutes: i64,
    department: Department,
    role: &'static str,
    wage_cents: i64,
    pool: u32,
) -> Slot {
    Slot { start_hour, start_minute, minutes, department, role, wage_cents, pool }
}

/// The share of a block's expected hours each of its shifts takes (the manager is one a day).
const LUNCH: [(Slot, u32); 2] = [(SERVER_LUNCH, 60), (COOK_LUNCH, 40)];
/// Dinner's people stay for the late-night trade.
const DINNER: [(Slot, u32); 3] = [(BARTENDER, 12), (SERVER_DINNER, 48), (COOK_DINNER, 40)];

/// Who works a shift: the role's pool and the person's number in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub slot: Slot,
    /// Unique at the location, stable across weeks.
    pub employee: u32,
    /// A senior person earns up to a dollar more than the role's base.
    pub wage_cents: i64,
}

/// The people of each role at a location of a size (100 is the ordinary one).
fn pool_size(slot: &Slot, location_size: i64) -> u32 {
    (u64::from(slot.pool) * location_size as u64).div_ceil(100) as u32
}

/// The first employee number of a role's pool: roles follow each other in a fixed order.
fn pool_offset(slot: &Slot, location_size: i64) -> u32 {
    let roles = [MANAGER, SERVER_LUNCH, BARTENDER, COOK_LUNCH];
    roles.iter().take_while(|r| r.role != slot.role).map(|r| pool_size(r, location_size)).sum()
}

/// How many of a shift a day gets: the expected hours over the shift's length, misjudged by one in
/// about one slot of four.
fn count(expected_hours: f64, share: u32, slot: &Slot, key: &str) -> u32 {
    let planned = (expected_hours * f64::from(share) / 100.0 / (slot.minutes as f64 / 60.0)).round() as i64;
    let misjudged = match jitter(key, 8) {
        0 => planned - 1,
        1 => planned + 1,
        _ => planned,
    };
    misjudged.max(1) as u32
}

/// A week's shifts, day by day: `expected_sales[day]` is (lunch, dinner and late night) in dollars.
pub fn week_schedule(
    location: u32,
    location_size: i64,
    week_key: &str,
    expected_sales: &[(f64, f64)],
    splh_goal: f64,
) -> Vec<Vec<Assignment>> {
    let mut days_worked: std::collections::BTreeMap<u32, u32> = Default::default();
    let mut cursor: std::collections::BTreeMap<&str, u32> = Default::default();
    let mut week = Vec::new();
    for (day, &(lunch_sales, dinner_sales)) in expected_sales.iter().enumerate() {
        let mut slots = vec![MANAGER];
        // The manager's hours are labor too: they are on through lunch.
        let manager_hours = MANAGER.minutes as f64 / 60.0;
        let lunch_hours = (lunch_sales / splh_goal - manager_hours).max(0.0);
        for (blocks, hours) in [(&LUNCH[..], lunch_hours), (&DINNER[..], dinner_sales / splh_goal)] {
            for (slot, share) in blocks {
                let key = format!("{location}-{week_key}-{day}-{}-{}", slot.role, slot.start_hour);
                slots.extend(std::iter::repeat_n(*slot, count(hours, *share, slot, &key) as usize));
            }
        }
        let mut today: Vec<Assignment> = Vec::new();
        for slot in slots {
            let (size, offset) = (pool_size(&slot, location_size), pool_offset(&slot, location_size));
            let next =
                cursor.entry(slot.role).or_insert(jitter(&format!("{location}-{week_key}-{}", slot.role), 7) as u32);
            let free = |n: u32| !today.iter().any(|a| a.employee == offset + n);
            // Round the pool from where the last shift left off: the first free person under 5 days,
            // else (a short week) the free person with the fewest days.
            let order: Vec<u32> = (0..size).map(|i| (*next + i) % size).filter(|&n| free(n)).collect();
            let Some(&n) = order
                .iter()
                .find(|&&n| days_worked.get(&(offset + n)).copied().unwrap_or(0) < 5)
                .or_else(|| order.iter().min_by_key(|&&n| days_worked.get(&(offset + n)).copied().unwrap_or(0)))
            else {
                continue; // everyone of the role is on already: the manager leaves the slot empty
            };
            *next = (n + 1) % size;
            *days_worked.entry(offset + n).or_default() += 1;
            let seniority = i64::from((offset + n) % 3) * 50;
            today.push(Assignment { slot, employee: offset + n, wage_cents: slot.wage_cents + seniority });
        }
        week.push(today);
    }
    week
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordinary_week() -> Vec<Vec<Assignment>> {
        let sales = [(2600.0, 5700.0), (2200.0, 4900.0), (1600.0, 3500.0), (1600.0, 3500.0), (1850.0, 4050.0)];
        week_schedule(0, 100, "2026-11-21", &sales.into_iter().cycle().take(7).collect::<Vec<_>>(), 60.0)
    }

    #[test]
    fn staffing_follows_the_expected_sales() {
        let week = ordinary_week();
        let hours = |day: &Vec<Assignment>| day.iter().map(|a| a.slot.minutes).sum::<i64>() as f64 / 60.0;
        // The busiest day is staffed well above the quietest, near its sales over the SPLH goal.
        assert!(hours(&week[0]) > hours(&week[2]) * 1.3, "{} {}", hours(&week[0]), hours(&week[2]));
        let goal_hours = (2600.0 + 5700.0) / 60.0;
        assert!((hours(&week[0]) - goal_hours).abs() < goal_hours * 0.25, "{}", hours(&week[0]));
    }

    #[test]
    fn nobody_works_twice_a_day_and_the_week_has_every_role() {
        let week = ordinary_week();
        for day in &week {
            let mut people: Vec<u32> = day.iter().map(|a| a.employee).collect();
            people.sort_unstable();
            people.dedup();
            assert_eq!(people.len(), day.len());
            assert_eq!(day.iter().filter(|a| a.slot.role == "Manager").count(), 1);
        }
        for role in ["Server", "Bartender", "Line Cook"] {
            assert!(week.iter().flatten().any(|a| a.slot.role == role), "{role}");
        }
    }

    #[test]
    fn a_role_keeps_its_own_people() {
        let week = ordinary_week();
        for a in week.iter().flatten() {
            let others = week.iter().flatten().filter(|b| b.employee == a.employee);
            assert!(others.into_iter().all(|b| b.slot.role == a.slot.role), "{a:?}");
        }
    }
}
