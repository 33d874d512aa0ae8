use time::{Date, Duration, Weekday};

use crate::FieldError;

/// A week from a Saturday to the Friday after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Week {
    start: Date,
}

impl Week {
    pub fn starting(field: &str, saturday: Date) -> Result<Self, FieldError> {
        if saturday.weekday() == Weekday::Saturday {
            Ok(Self { start: saturday })
        } else {
            Err(FieldError::new(field, "must be a Saturday (the first day of the week)"))
        }
    }

    /// The week that holds `date`.
    pub fn containing(date: Date) -> Self {
        let back = (date.weekday().number_days_from_sunday() + 1) % 7;
        Self { start: date - Duration::days(i64::from(back)) }
    }

    pub fn start(&self) -> Date {
        self.start
    }

    pub fn end(&self) -> Date {
        self.start + Duration::days(6)
    }

    pub fn days(&self) -> [Date; 7] {
        std::array::from_fn(|i| self.start + Duration::days(i as i64))
    }

    /// 0 for Saturday through 6 for Friday.
    pub fn day_of_week(date: Date) -> u8 {
        (date.weekday().number_days_from_sunday() + 1) % 7
    }

    pub fn previous(&self) -> Self {
        Self { start: self.start - Duration::days(7) }
    }
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    #[test]
    fn weeks_start_on_saturday() {
        assert!(Week::starting("weekOf", date!(2026 - 11 - 21)).is_ok());
        assert_eq!(Week::starting("weekOf", date!(2026 - 11 - 22)).unwrap_err().field, "weekOf");
        let week = Week::starting("weekOf", date!(2026 - 11 - 21)).unwrap();
        assert_eq!(week.end(), date!(2026 - 11 - 27));
        assert_eq!(week.days()[6], date!(2026 - 11 - 27));
    }

    #[test]
    fn day_zero_is_saturday_and_containing_finds_the_saturday() {
        assert_eq!(Week::day_of_week(date!(2026 - 11 - 21)), 0);
        assert_eq!(Week::day_of_week(date!(2026 - 11 - 27)), 6);
        for day in 21..=27 {
            let date = time::Date::from_calendar_date(2026, time::Month::November, day).unwrap();
            assert_eq!(Week::containing(date).start(), date!(2026 - 11 - 21));
        }
    }
}
