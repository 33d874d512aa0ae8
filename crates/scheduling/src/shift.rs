use opsd_core::{Department, Money};
use rust_decimal::Decimal;
use time::{Date, OffsetDateTime};
use time_tz::{OffsetDateTimeExt, Tz};

opsd_core::wire_enum! {
    /// The daypart of a shift, by its local start time: Lunch from 04:00 to 15:59, Dinner 16:00 to
    /// 21:59, LateNight from 22:00 and before 04:00.
    pub enum Daypart {
        Lunch,
        Dinner,
        LateNight,
    }
}

impl Daypart {
    pub fn of_local_hour(hour: u8) -> Self {
        match hour {
            4..=15 => Daypart::Lunch,
            16..=21 => Daypart::Dinner,
            _ => Daypart::LateNight,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShiftError {
    #[error("the shift ends before it starts")]
    EndsBeforeStart,
    #[error("the unpaid breaks are longer than the shift")]
    BreaksTooLong,
    #[error("the wage is negative")]
    NegativeWage,
}

/// A shift as the provider describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftInput {
    pub provider_shift_id: String,
    pub employee_name: String,
    pub employee_key: String,
    pub role: String,
    pub department: Department,
    pub start_at: OffsetDateTime,
    pub end_at: OffsetDateTime,
    pub unpaid_break_minutes: u32,
    /// USD per hour, as it was when synced.
    pub hourly_wage: Money,
    pub is_draft: bool,
}

/// A shift placed in its location's calendar.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduledShift {
    pub input: ShiftInput,
    /// The local date of the start, in the location's time zone.
    pub business_date: Date,
    pub daypart: Daypart,
    /// End minus start less unpaid breaks, rounded to 2 decimals per shift (as the provider does).
    pub hours_worked: Decimal,
}

impl ScheduledShift {
    pub fn place(input: ShiftInput, zone: &Tz) -> Result<Self, ShiftError> {
        if input.end_at <= input.start_at {
            return Err(ShiftError::EndsBeforeStart);
        }
        if input.hourly_wage.is_sign_negative() {
            return Err(ShiftError::NegativeWage);
        }
        let minutes = (input.end_at - input.start_at).whole_minutes() - i64::from(input.unpaid_break_minutes);
        if minutes < 0 {
            return Err(ShiftError::BreaksTooLong);
        }
        let local_start = input.start_at.to_timezone(zone);
        Ok(Self {
            business_date: local_start.date(),
            daypart: Daypart::of_local_hour(local_start.hour()),
            hours_worked: (Decimal::from(minutes) / Decimal::from(60)).round_dp(2),
            input,
        })
    }

    /// Hours times the wage, in cents.
    pub fn cost(&self) -> Money {
        (self.hours_worked * self.input.hourly_wage).round_dp(2)
    }
}

#[cfg(test)]
mod tests {
    use time::macros::{date, datetime};

    use super::*;

    fn input(start: OffsetDateTime, end: OffsetDateTime, breaks: u32) -> ShiftInput {
        ShiftInput {
            provider_shift_id: "1".into(),
            employee_name: "Ann".into(),
            employee_key: "7s-1".into(),
            role: "Server".into(),
            department: Department::Foh,
            start_at: start,
            end_at: end,
            unpaid_break_minutes: breaks,
            hourly_wage: Decimal::new(1750, 2),
            is_draft: false,
        }
    }

    #[test]
    fn a_late_shift_belongs_to_the_local_day_it_starts_on() {
        let chicago = time_tz::timezones::db::america::CHICAGO;
        // 04:30 UTC on the 22nd is 22:30 on the 21st in Chicago (UTC-6).
        let shift =
            ScheduledShift::place(input(datetime!(2026-11-22 04:30 UTC), datetime!(2026-11-22 09:00 UTC), 30), chicago)
                .unwrap();
        assert_eq!(shift.business_date, date!(2026 - 11 - 21));
        assert_eq!(shift.daypart, Daypart::LateNight);
        assert_eq!(shift.hours_worked, Decimal::new(400, 2));
        assert_eq!(shift.cost(), Decimal::new(7000, 2));
    }

    #[test]
    fn dayparts_follow_the_local_start_hour() {
        assert_eq!(Daypart::of_local_hour(3), Daypart::LateNight);
        assert_eq!(Daypart::of_local_hour(4), Daypart::Lunch);
        assert_eq!(Daypart::of_local_hour(15), Daypart::Lunch);
        assert_eq!(Daypart::of_local_hour(16), Daypart::Dinner);
        assert_eq!(Daypart::of_local_hour(21), Daypart::Dinner);
        assert_eq!(Daypart::of_local_hour(22), Daypart::LateNight);
    }

    #[test]
    fn hours_round_to_two_decimals_per_shift() {
        let shift = ScheduledShift::place(
            input(datetime!(2026-11-21 15:00 UTC), datetime!(2026-11-21 22:20 UTC), 0),
            time_tz::timezones::db::UTC,
        )
        .unwrap();
        assert_eq!(shift.hours_worked, Decimal::new(733, 2));
    }

    #[test]
    fn impossible_shifts_are_refused() {
        let utc = time_tz::timezones::db::UTC;
        let (a, b) = (datetime!(2026-11-21 15:00 UTC), datetime!(2026-11-21 16:00 UTC));
        assert_eq!(ScheduledShift::place(input(b, a, 0), utc), Err(ShiftError::EndsBeforeStart));
        assert_eq!(ScheduledShift::place(input(a, b, 61), utc), Err(ShiftError::BreaksTooLong));
    }
}
