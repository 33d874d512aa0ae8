//! What a week is planned from: the location's staff and shift types from its history, the need per
//! day, block and department from the forecast, and each employee's availability.

use opsd_core::Department;
use opsd_optimization::Block;
use rust_decimal::Decimal;
use time::{Date, Time};

/// An employee of the location: seen in its shifts or punches of the weeks before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaffMember {
    pub key: String,
    pub name: String,
    /// The departments they worked, each with the role they worked most in it.
    pub roles: Vec<(Department, String)>,
    /// Their latest hourly wage.
    pub hourly_wage: Decimal,
}

impl StaffMember {
    pub fn role_in(&self, department: Department) -> Option<&str> {
        self.roles.iter().find(|(d, _)| *d == department).map(|(_, role)| role.as_str())
    }
}

/// One department's shift in one block, at the location's local times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShiftTemplate {
    pub department: Department,
    pub block: Block,
    pub start: Time,
    pub minutes: u32,
}

impl ShiftTemplate {
    /// Unique in a week's model: a block's whole and short shifts differ in length.
    pub fn id(&self) -> String {
        format!("{}-{}-{}", self.department.as_str(), self.block.as_str(), self.minutes)
    }

    /// Minutes from the start of the shift's day to its end (past 1440 when it ends after midnight).
    pub fn ends_at_minute(&self) -> u32 {
        self.start_minute() + self.minutes
    }

    pub fn start_minute(&self) -> u32 {
        u32::from(self.start.hour()) * 60 + u32::from(self.start.minute())
    }

    pub fn hours(&self) -> Decimal {
        Decimal::from(self.minutes) / Decimal::from(60)
    }
}

/// The hours one day, block and department calls for, and the sales they serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockNeed {
    pub date: Date,
    pub block: Block,
    pub department: Department,
    pub hours: Decimal,
    pub sales: Decimal,
}

/// When an employee cannot or would rather not work.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Availability {
    pub employee_key: String,
    /// 0 for Saturday through 6 for Friday, as `Week::day_of_week`.
    pub unavailable_weekdays: Vec<u8>,
    pub unavailable_dates: Vec<Date>,
    /// Empty: no preference.
    pub preferred_blocks: Vec<Block>,
    pub max_weekly_minutes: Option<u32>,
}

impl Availability {
    pub fn unavailable_on(&self, date: Date) -> bool {
        self.unavailable_dates.contains(&date)
            || self.unavailable_weekdays.contains(&opsd_core::Week::day_of_week(date))
    }
}
