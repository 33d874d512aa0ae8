//! The report bodies as clients send and receive them. Requests parse into the domain's validated
//! reports (`try_into_domain`); responses are built from the stored reports.

use opsd_core::{LocationId, PageRequest, TextLength, ValidationErrors, parse_iso_date, parse_money};
use opsd_reports::{self as domain, EmployeeReview, NewManagerReport, NewShiftReport, ReportRange};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::errors::ApiError;
use crate::wire;

pub const HERO: TextLength = TextLength::new(0, 100);
pub const REVIEW_NAME: TextLength = TextLength::new(1, 100);
pub const REVIEW_KEY: TextLength = TextLength::new(0, 100);
pub const REVIEW_NOTES: TextLength = TextLength::new(0, 2000);
pub const RATINGS: std::ops::RangeInclusive<i64> = 1..=5;
pub const MAX_REVIEWS: usize = 100;

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShiftReportRequest {
    pub location_id: Uuid,
    /// `YYYY-MM-DD`, not after tomorrow.
    pub date: String,
    #[schema(value_type = wire::ReportShift)]
    pub shift: domain::ReportShift,
    /// At least 0, at most 2 decimals.
    #[schema(value_type = f64)]
    pub actual_sales: serde_json::Number,
    #[schema(value_type = f64)]
    pub goal_sales: serde_json::Number,
    /// Hero of the Shift: at most 100 characters, trimmed.
    pub hero: Option<String>,
}

impl ShiftReportRequest {
    /// `latest_date` is the last date a report may be for (tomorrow).
    pub fn try_into_domain(self, latest_date: Date) -> Result<NewShiftReport, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let date = check_date(&mut errors, &self.date, latest_date);
        let actual_sales = errors.check(parse_money("actualSales", &self.actual_sales.to_string()));
        let goal_sales = errors.check(parse_money("goalSales", &self.goal_sales.to_string()));
        let hero = self.hero.as_deref().map(str::trim).filter(|h| !h.is_empty()).map(str::to_owned);
        if hero.as_ref().is_some_and(|h| !HERO.fits(h)) {
            errors.push("hero", HERO.message());
        }
        errors.into_result()?;
        Ok(NewShiftReport {
            location_id: LocationId(self.location_id),
            date: date.expect("checked"),
            shift: self.shift,
            actual_sales: actual_sales.expect("checked"),
            goal_sales: goal_sales.expect("checked"),
            hero,
        })
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmployeeReviewRequest {
    /// 1 to 100 characters.
    pub employee_name: String,
    /// The scheduling provider's employee key, at most 100 characters.
    pub employee_key: Option<String>,
    /// An integer from 1 to 5.
    pub rating: i64,
    /// At most 2000 characters.
    pub notes: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ManagerReportRequest {
    pub location_id: Uuid,
    /// `YYYY-MM-DD`, not after tomorrow.
    pub date: String,
    #[schema(value_type = f64)]
    pub total_sales: serde_json::Number,
    /// At most 100 reviews.
    pub employee_reviews: Option<Vec<EmployeeReviewRequest>>,
}

impl ManagerReportRequest {
    pub fn try_into_domain(self, latest_date: Date) -> Result<NewManagerReport, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let date = check_date(&mut errors, &self.date, latest_date);
        let total_sales = errors.check(parse_money("totalSales", &self.total_sales.to_string()));
        let reviews = self.employee_reviews.unwrap_or_default();
        if reviews.len() > MAX_REVIEWS {
            errors.push("employeeReviews", "must hold at most 100 reviews");
        }
        let employee_reviews = reviews
            .into_iter()
            .enumerate()
            .filter_map(|(index, review)| review_of(&mut errors, index, review))
            .collect();
        errors.into_result()?;
        Ok(NewManagerReport {
            location_id: LocationId(self.location_id),
            date: date.expect("checked"),
            total_sales: total_sales.expect("checked"),
            employee_reviews,
        })
    }
}

fn check_date(errors: &mut ValidationErrors, raw: &str, latest: Date) -> Option<Date> {
    let date = errors.check(parse_iso_date("date", raw))?;
    if date > latest {
        errors.push("date", "must not be after tomorrow");
        return None;
    }
    Some(date)
}

fn review_of(errors: &mut ValidationErrors, index: usize, review: EmployeeReviewRequest) -> Option<EmployeeReview> {
    let field = |name: &str| format!("employeeReviews[{index}].{name}");
    let before = errors.errors().len();
    let name = review.employee_name.trim();
    if !REVIEW_NAME.fits(name) {
        errors.push(field("employeeName"), REVIEW_NAME.message());
    }
    let key = review.employee_key.as_deref().map(str::trim).filter(|k| !k.is_empty());
    if key.is_some_and(|k| !REVIEW_KEY.fits(k)) {
        errors.push(field("employeeKey"), REVIEW_KEY.message());
    }
    if !RATINGS.contains(&review.rating) {
        errors.push(field("rating"), "must be an integer from 1 to 5");
    }
    let notes = review.notes.as_deref().map(str::trim).filter(|n| !n.is_empty());
    if notes.is_some_and(|n| !REVIEW_NOTES.fits(n)) {
        errors.push(field("notes"), REVIEW_NOTES.message());
    }
    (errors.errors().len() == before).then(|| EmployeeReview {
        employee_name: name.to_owned(),
        employee_key: key.map(str::to_owned),
        rating: review.rating as u8,
        notes: notes.map(str::to_owned),
    })
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    location_id: Uuid,
    /// `YYYY-MM-DD`; default 30 days before `to`.
    from: Option<String>,
    /// `YYYY-MM-DD`; default today (UTC). At most 366 days after `from`.
    to: Option<String>,
    /// Items per page: 1 to 500, default 100.
    limit: Option<u32>,
    /// Where the page starts: take it from the previous page's `Link: <…>; rel="next"`.
    cursor: Option<String>,
}

impl ReportQuery {
    /// The range and the page asked for (a bad `limit` or `cursor` is refused here).
    pub fn into_domain<K: serde::de::DeserializeOwned>(self) -> Result<(ReportRange, PageRequest<K>), ApiError> {
        let page = PageRequest::parse(self.limit, self.cursor.as_deref())?;
        Ok((ReportRange { location_id: LocationId(self.location_id), from: self.from, to: self.to }, page))
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShiftReport {
    id: Uuid,
    location_id: Uuid,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    date: Date,
    #[schema(value_type = wire::ReportShift)]
    shift: domain::ReportShift,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    actual_sales: opsd_core::Money,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    goal_sales: opsd_core::Money,
    hero: Option<String>,
    submitted_by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
}

impl From<domain::ShiftReport> for ShiftReport {
    fn from(report: domain::ShiftReport) -> Self {
        Self {
            id: report.id,
            location_id: report.location_id.0,
            date: report.date,
            shift: report.shift,
            actual_sales: report.actual_sales,
            goal_sales: report.goal_sales,
            hero: report.hero,
            submitted_by: report.submitted_by.to_string(),
            created_at: report.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = EmployeeReview)]
pub struct EmployeeReviewBody {
    employee_name: String,
    employee_key: Option<String>,
    rating: u8,
    notes: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManagerReport {
    id: Uuid,
    location_id: Uuid,
    #[serde(with = "opsd_core::iso_date")]
    #[schema(value_type = String, format = Date)]
    date: Date,
    #[serde(with = "opsd_core::json_number")]
    #[schema(value_type = f64)]
    total_sales: opsd_core::Money,
    employee_reviews: Vec<EmployeeReviewBody>,
    submitted_by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
}

impl From<domain::ManagerReport> for ManagerReport {
    fn from(report: domain::ManagerReport) -> Self {
        let review = |review: EmployeeReview| EmployeeReviewBody {
            employee_name: review.employee_name,
            employee_key: review.employee_key,
            rating: review.rating,
            notes: review.notes,
        };
        Self {
            id: report.id,
            location_id: report.location_id.0,
            date: report.date,
            total_sales: report.total_sales,
            employee_reviews: report.employee_reviews.into_iter().map(review).collect(),
            submitted_by: report.submitted_by.to_string(),
            created_at: report.created_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::date;

    use super::*;

    const TOMORROW: Date = date!(2026 - 11 - 23);

    fn shift(extra: serde_json::Value) -> Result<NewShiftReport, ValidationErrors> {
        let mut body = json!({
            "locationId": Uuid::nil(), "date": "2026-11-22", "shift": "evening", "actualSales": 1234.5, "goalSales": 1200,
        });
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value::<ShiftReportRequest>(body).unwrap().try_into_domain(TOMORROW)
    }

    fn field(result: Result<impl std::fmt::Debug, ValidationErrors>) -> String {
        result.unwrap_err().errors()[0].field.clone()
    }

    #[test]
    fn a_good_shift_report_parses_with_a_trimmed_hero() {
        let report = shift(json!({ "hero": "  Maria  " })).unwrap();
        assert_eq!(report.hero.as_deref(), Some("Maria"));
        assert_eq!(report.actual_sales.to_string(), "1234.5");
    }

    #[test]
    fn bad_amounts_dates_and_heroes_name_their_field() {
        assert_eq!(field(shift(json!({ "actualSales": -1 }))), "actualSales");
        assert_eq!(field(shift(json!({ "goalSales": 10.125 }))), "goalSales");
        assert_eq!(field(shift(json!({ "date": "2026-11-24" }))), "date");
        assert_eq!(field(shift(json!({ "date": "yesterday" }))), "date");
        assert_eq!(field(shift(json!({ "hero": "x".repeat(101) }))), "hero");
        assert!(shift(json!({ "date": "2026-11-23" })).is_ok(), "tomorrow is allowed");
    }

    #[test]
    fn reviews_are_checked_item_by_item() {
        let body = json!({
            "locationId": Uuid::nil(), "date": "2026-11-22", "totalSales": 5000,
            "employeeReviews": [
                { "employeeName": "Ann", "rating": 5 },
                { "employeeName": "", "rating": 6 },
            ],
        });
        let errors =
            serde_json::from_value::<ManagerReportRequest>(body).unwrap().try_into_domain(TOMORROW).unwrap_err();
        let fields: Vec<&str> = errors.errors().iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["employeeReviews[1].employeeName", "employeeReviews[1].rating"]);
    }

    #[test]
    fn at_most_100_reviews() {
        let reviews: Vec<_> = (0..101).map(|i| json!({ "employeeName": format!("E{i}"), "rating": 3 })).collect();
        let body =
            json!({ "locationId": Uuid::nil(), "date": "2026-11-22", "totalSales": 1, "employeeReviews": reviews });
        let errors =
            serde_json::from_value::<ManagerReportRequest>(body).unwrap().try_into_domain(TOMORROW).unwrap_err();
        assert_eq!(errors.errors()[0].field, "employeeReviews");
    }
}
