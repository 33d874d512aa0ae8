use time::Date;
use time::macros::format_description;

use crate::FieldError;

// time's own `YYYY-MM-DD` (de)serializer; `iso_date` writes the common years itself.
time::serde::format_description!(time_iso_date, Date, "[year]-[month]-[day]");

/// `YYYY-MM-DD` for `#[serde(with = "opsd_core::iso_date")]`. Writing goes around time's format
/// descriptions for years 0 to 9999: they cost about 750 instructions a date, most of what an
/// uncached report's fifty dates cost to serialize. Reading and other years are time's.
pub mod iso_date {
    use serde::{Deserializer, Serializer};
    use time::Date;

    use super::time_iso_date;

    pub fn serialize<S: Serializer>(date: &Date, serializer: S) -> Result<S::Ok, S::Error> {
        match super::ascii_date(*date) {
            Some(bytes) => serializer.serialize_str(std::str::from_utf8(&bytes).expect("ASCII digits and dashes")),
            None => time_iso_date::serialize(date, serializer),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Date, D::Error> {
        time_iso_date::deserialize(deserializer)
    }

    /// For `Option<Date>`: `null` when none.
    pub mod option {
        use serde::{Deserializer, Serializer};
        use time::Date;

        pub fn serialize<S: Serializer>(date: &Option<Date>, serializer: S) -> Result<S::Ok, S::Error> {
            match date {
                Some(date) => super::serialize(date, serializer),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Date>, D::Error> {
            super::time_iso_date::option::deserialize(deserializer)
        }
    }
}

/// `YYYY-MM-DD` of a date in years 0 to 9999, as time's `[year]-[month]-[day]` writes it.
fn ascii_date(date: Date) -> Option<[u8; 10]> {
    let year = u16::try_from(date.year()).ok().filter(|year| *year <= 9999)?;
    let (month, day) = (u8::from(date.month()), date.day());
    let digit = |value: u16, place: u16| b'0' + u8::try_from(value / place % 10).expect("a digit");
    Some([
        digit(year, 1000),
        digit(year, 100),
        digit(year, 10),
        digit(year, 1),
        b'-',
        digit(month.into(), 10),
        digit(month.into(), 1),
        b'-',
        digit(day.into(), 10),
        digit(day.into(), 1),
    ])
}

/// Parses `YYYY-MM-DD`, naming `field` when it is not a real date.
pub fn parse_iso_date(field: &str, raw: &str) -> Result<Date, FieldError> {
    match date_of_ascii(raw) {
        Some(date) => Ok(date),
        None => Date::parse(raw, format_description!("[year]-[month]-[day]"))
            .map_err(|_| FieldError::new(field, "must be a date in the form YYYY-MM-DD")),
    }
}

/// The real date written `YYYY-MM-DD` with ASCII digits, read without time's format descriptions
/// (a request's dates, ten thousand of them in a sales upload); `None` leaves anything else, and
/// every error, to time.
fn date_of_ascii(raw: &str) -> Option<Date> {
    let bytes: &[u8; 10] = raw.as_bytes().try_into().ok()?;
    if bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let number = |digits: &[u8]| {
        digits
            .iter()
            .try_fold(0u16, |value, digit| digit.is_ascii_digit().then(|| value * 10 + u16::from(digit - b'0')))
    };
    let (year, month, day) = (number(&bytes[..4])?, number(&bytes[5..7])?, number(&bytes[8..])?);
    let month = time::Month::try_from(u8::try_from(month).ok()?).ok()?;
    Date::from_calendar_date(i32::from(year), month, u8::try_from(day).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_date_as_time_does() {
        #[derive(serde::Serialize)]
        struct Ours(#[serde(with = "iso_date")] Date);
        #[derive(serde::Serialize)]
        struct Times(#[serde(with = "time_iso_date")] Date);
        // Every day of 1999 to 2100, and the first and last day of every year time can hold.
        let first = Date::from_calendar_date(1999, time::Month::January, 1).unwrap();
        let every_day = (0..102 * 366).filter_map(|days| first.checked_add(time::Duration::days(days)));
        let every_year = (Date::MIN.year()..=Date::MAX.year()).flat_map(|year| {
            [(time::Month::January, 1), (time::Month::December, 31)]
                .map(|(month, day)| Date::from_calendar_date(year, month, day).unwrap())
        });
        for date in every_day.chain(every_year) {
            let ours = serde_json::to_string(&Ours(date)).unwrap();
            assert_eq!(ours, serde_json::to_string(&Times(date)).unwrap());
        }
        let back: Date = iso_date::deserialize(&mut serde_json::Deserializer::from_str("\"2026-11-21\"")).unwrap();
        assert_eq!(back, Date::from_calendar_date(2026, time::Month::November, 21).unwrap());
    }

    #[test]
    fn reads_every_date_as_time_does() {
        let time_reads = |raw: &str| Date::parse(raw, format_description!("[year]-[month]-[day]")).ok();
        let first = Date::from_calendar_date(1999, time::Month::January, 1).unwrap();
        let every_day = (0..102 * 366).filter_map(|days| first.checked_add(time::Duration::days(days)));
        let every_year = (0..=9999).flat_map(|year| {
            [(time::Month::January, 1), (time::Month::December, 31)]
                .map(|(month, day)| Date::from_calendar_date(year, month, day).unwrap())
        });
        for date in every_day.chain(every_year) {
            let raw = date.to_string();
            assert_eq!(parse_iso_date("date", &raw).ok(), time_reads(&raw), "{raw}");
            assert_eq!(date_of_ascii(&raw), Some(date), "{raw}");
        }
        let odd = [
            "2026-00-10",
            "2026-13-10",
            "2026-11-00",
            "2026-11-31",
            "2025-02-29",
            "2024-02-29",
            "0000-01-01",
            "+2026-11-1",
            "2026-1-121",
            "2026/11/21",
            "２026-11-21",
            "20261121xx",
            "2026-11-2a",
            "-026-11-21",
        ];
        for raw in odd {
            assert_eq!(parse_iso_date("date", raw).ok(), time_reads(raw), "{raw}");
        }
    }

    #[test]
    fn parses_real_dates_only() {
        assert_eq!(parse_iso_date("date", "2026-11-21").unwrap().to_string(), "2026-11-21");
        for bad in ["2026-02-30", "2026-1-5", "21/11/2026", "", "2026-11-21T00:00:00Z"] {
            assert!(parse_iso_date("date", bad).is_err(), "{bad}");
        }
    }
}
