use opsd_core::{LocationId, Money, UserId};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

opsd_core::wire_enum! {
    /// The report shifts, by local start time: morning before 11:00, afternoon 11:00 to 15:59, evening
    /// from 16:00. Ordered as the day runs.
    #[strum(serialize_all = "lowercase")]
    pub enum ReportShift {
        Morning,
        Afternoon,
        Evening,
    }
}

impl ReportShift {
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

#[derive(Debug, Clone, PartialEq)]
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

/// Where a shift report stands in a location's list: its date, then its shift's wire name (the
/// store orders shifts as the day runs).
pub type ShiftReportKey = (Date, String);

impl ShiftReport {
    pub fn key(&self) -> ShiftReportKey {
        (self.date, self.shift.as_str().to_owned())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ShiftReport {
    pub id: Uuid,
    pub location_id: LocationId,
    pub date: Date,
    pub shift: ReportShift,
    pub actual_sales: Money,
    pub goal_sales: Money,
    pub hero: Option<String>,
    pub submitted_by: UserId,
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ManagerReport {
    pub id: Uuid,
    pub location_id: LocationId,
    pub date: Date,
    pub total_sales: Money,
    pub employee_reviews: Vec<EmployeeReview>,
    pub submitted_by: UserId,
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
