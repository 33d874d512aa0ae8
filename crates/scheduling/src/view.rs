//! The legacy, deprecated, read-only view of the imported schedule (snake_case, as it always was).

use opsd_core::{Department, ValidationErrors, parse_iso_date};
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;

use crate::shift::Daypart;

const MAX_RANGE_DAYS: i64 = 62;

/// The view's parameters as given, parsed against the location's today (`parse`).
#[derive(Debug, Clone, Default)]
pub struct ViewParams {
    /// `YYYY-MM-DD`; default yesterday in the location's time zone.
    pub start_date: Option<String>,
    /// `YYYY-MM-DD`; default start_date + 6 days; at most 62 days after start_date.
    pub end_date: Option<String>,
    pub employee_key: Option<String>,
    /// `FOH`, `BOH` or `Other`.
    pub department: Option<String>,
    /// `Lunch`, `Dinner` or `LateNight`.
    pub daypart: Option<String>,
    /// `true` or `false` (default).
    pub include_draft: Option<String>,
    /// 1 to 500, default 100.
    pub limit: Option<String>,
    /// 0 or more, default 0.
    pub offset: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewFilter {
    pub start: Date,
    pub end: Date,
    pub employee_key: Option<String>,
    pub department: Option<Department>,
    pub daypart: Option<Daypart>,
    pub include_draft: bool,
    pub limit: u32,
    pub offset: u32,
}

impl ViewParams {
    pub fn parse(&self, today: Date) -> Result<ViewFilter, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let start = match &self.start_date {
            Some(raw) => errors.check(parse_iso_date("start_date", raw)),
            None => Some(today - Duration::days(1)),
        };
        let end = match (&self.end_date, start) {
            (Some(raw), _) => errors.check(parse_iso_date("end_date", raw)),
            (None, Some(start)) => Some(start + Duration::days(6)),
            (None, None) => None,
        };
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                errors.push("end_date", "must not be before start_date");
            } else if end - start > Duration::days(MAX_RANGE_DAYS) {
                errors.push("end_date", "the range must be at most 62 days");
            }
        }
        let department = self.department.as_deref().and_then(|raw| {
            let parsed = Department::parse(raw);
            if parsed.is_none() {
                errors.push("department", "must be FOH, BOH or Other");
            }
            parsed
        });
        let daypart = self.daypart.as_deref().and_then(|raw| {
            let parsed = Daypart::parse(raw);
            if parsed.is_none() {
                errors.push("daypart", "must be Lunch, Dinner or LateNight");
            }
            parsed
        });
        let include_draft = match self.include_draft.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                errors.push("include_draft", "must be true or false");
                false
            }
        };
        let limit = match self.limit.as_deref().map(str::parse::<i64>) {
            None => 100,
            Some(Ok(limit)) if (1..=500).contains(&limit) => limit as u32,
            Some(_) => {
                errors.push("limit", "must be an integer from 1 to 500");
                100
            }
        };
        let offset = match self.offset.as_deref().map(str::parse::<i64>) {
            None => 0,
            Some(Ok(offset)) if (0..=i64::from(u32::MAX)).contains(&offset) => offset as u32,
            Some(_) => {
                errors.push("offset", "must be an integer of 0 or more");
                0
            }
        };
        errors.into_result()?;
        Ok(ViewFilter {
            start: start.expect("checked"),
            end: end.expect("checked"),
            employee_key: self.employee_key.clone().filter(|k| !k.is_empty()),
            department,
            daypart,
            include_draft,
            limit,
            offset,
        })
    }
}

/// One shift of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewShift {
    pub shift_id: Uuid,
    pub business_date: Date,
    pub employee_name: String,
    pub employee_key: String,
    pub role: String,
    /// `FOH`, `BOH` or `Other`.
    pub department: String,
    /// `Lunch`, `Dinner` or `LateNight`.
    pub daypart: String,
    pub start_at: OffsetDateTime,
    pub end_at: OffsetDateTime,
    /// Decimal text with 2 decimals.
    pub hours_worked: String,
    /// Decimal text with 2 decimals.
    pub hourly_wage: String,
    pub is_draft: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleView {
    pub location_slug: String,
    pub location_name: String,
    pub start_date: Date,
    pub end_date: Date,
    pub shifts: Vec<ViewShift>,
    pub total_count: u64,
    pub limit: u32,
    pub offset: u32,
    pub generated_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    fn query(pairs: &[(&str, &str)]) -> ViewParams {
        let mut q = ViewParams::default();
        for (key, value) in pairs {
            let value = Some((*value).to_owned());
            match *key {
                "start_date" => q.start_date = value,
                "end_date" => q.end_date = value,
                "department" => q.department = value,
                "daypart" => q.daypart = value,
                "include_draft" => q.include_draft = value,
                "limit" => q.limit = value,
                "offset" => q.offset = value,
                _ => q.employee_key = value,
            }
        }
        q
    }

    #[test]
    fn defaults_are_yesterday_and_a_week() {
        let filter = query(&[]).parse(date!(2026 - 11 - 22)).unwrap();
        assert_eq!((filter.start, filter.end), (date!(2026 - 11 - 21), date!(2026 - 11 - 27)));
        assert_eq!((filter.limit, filter.offset, filter.include_draft), (100, 0, false));
    }

    #[test]
    fn every_bad_parameter_is_named() {
        let today = date!(2026 - 11 - 22);
        for (pairs, field) in [
            (vec![("start_date", "2026-11-10"), ("end_date", "2026-11-09")], "end_date"),
            (vec![("start_date", "2026-01-01"), ("end_date", "2026-03-05")], "end_date"),
            (vec![("start_date", "yesterday")], "start_date"),
            (vec![("limit", "0")], "limit"),
            (vec![("limit", "501")], "limit"),
            (vec![("limit", "ten")], "limit"),
            (vec![("offset", "-1")], "offset"),
            (vec![("department", "foh")], "department"),
            (vec![("daypart", "Brunch")], "daypart"),
            (vec![("include_draft", "yes")], "include_draft"),
        ] {
            let errors = query(&pairs).parse(today).unwrap_err();
            assert_eq!(errors.errors()[0].field, field, "{pairs:?}");
        }
        assert!(
            query(&[("start_date", "2026-01-01"), ("end_date", "2026-03-04")]).parse(today).is_ok(),
            "62 days is fine"
        );
    }
}
