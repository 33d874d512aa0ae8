use time::Date;
use time::macros::format_description;

use crate::FieldError;

// `YYYY-MM-DD` for `#[serde(with = "opsd_core::iso_date")]`.
time::serde::format_description!(pub iso_date, Date, "[year]-[month]-[day]");

/// Parses `YYYY-MM-DD`, naming `field` when it is not a real date.
pub fn parse_iso_date(field: &str, raw: &str) -> Result<Date, FieldError> {
    Date::parse(raw, format_description!("[year]-[month]-[day]"))
        .map_err(|_| FieldError::new(field, "must be a date in the form YYYY-MM-DD"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_real_dates_only() {
        assert_eq!(parse_iso_date("date", "2026-11-21").unwrap().to_string(), "2026-11-21");
        for bad in ["2026-02-30", "2026-1-5", "21/11/2026", "", "2026-11-21T00:00:00Z"] {
            assert!(parse_iso_date("date", bad).is_err(), "{bad}");
        }
    }
}
