use opsd_core::{LocationId, Money, UserId};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

/// The report shifts, by local start time: morning before 11:00, afternoon 11:00 to 15:59, evening
/// from 16:00. Ordered as the day runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReportShift {
    Morning,
    Afternoon,
    Evening,
}

impl ReportShift {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportShift::Morning => "morning",
            ReportShift::Afternoon => "afternoon",
            ReportShift::Evening => "evening",
        }
    }

    pub fn parse(stored: &str) -> Option<Self> {
        [ReportShift::Morning, ReportShift::Afternoon, ReportShift::Evening].into_iter().find(|s| s.as_str() == stored)
    }

    /// The report shift a scheduled shift starting at `hour` (local) belongs to.
    pub fn of_start_hour(hour: u8) -> Self {
        match hour {
            0..=10 => ReportShift::Morning,
            11..=15 => ReportShift::Afternoon,
            _ => ReportShift::Evening,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewShiftReport {
    pub location_id: LocationId,
    pub date: Date,
    pub shift: ReportShift,
    pub actual_sales: Money,
    pub goal_sales: Money,
    pub hero: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EmployeeReview {
    pub employee_name: String,
    pub employee_key: Option<String>,
    pub rating: u8,
    pub notes: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewManagerReport {
    pub location_id: LocationId,
    pub date: Date,
    pub total_sales: Money,
    pub employee_reviews: Vec<EmployeeReview>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ShiftReport {
    pub id: Uuid,
    #[cfg_attr(feature = "openapi", schema(value_type = Uuid))]
    pub location_id: LocationId,
    #[serde(with = "opsd_core::iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub date: Date,
    pub shift: ReportShift,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub actual_sales: Money,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub goal_sales: Money,
    pub hero: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub submitted_by: UserId,
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ManagerReport {
    pub id: Uuid,
    #[cfg_attr(feature = "openapi", schema(value_type = Uuid))]
    pub location_id: LocationId,
    #[serde(with = "opsd_core::iso_date")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub date: Date,
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub total_sales: Money,
    pub employee_reviews: Vec<EmployeeReview>,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub submitted_by: UserId,
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_hours_map_to_report_shifts() {
        assert_eq!(ReportShift::of_start_hour(0), ReportShift::Morning);
        assert_eq!(ReportShift::of_start_hour(10), ReportShift::Morning);
        assert_eq!(ReportShift::of_start_hour(11), ReportShift::Afternoon);
        assert_eq!(ReportShift::of_start_hour(15), ReportShift::Afternoon);
        assert_eq!(ReportShift::of_start_hour(16), ReportShift::Evening);
        assert_eq!(ReportShift::of_start_hour(23), ReportShift::Evening);
    }
}
