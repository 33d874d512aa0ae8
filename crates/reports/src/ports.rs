use async_trait::async_trait;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId, UserId};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::model::{ManagerReport, NewManagerReport, NewShiftReport, ShiftReport, ShiftReportKey};

#[derive(Debug, thiserror::Error)]
pub enum SaveReportError {
    #[error("the location is not one of the team's")]
    LocationNotInTeam,
    #[error("a report for this slot exists: {0}")]
    Duplicate(Uuid),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ReportStore: Send + Sync {
    /// One per (location, date, shift).
    async fn create_shift_report(
        &self,
        team: &TeamId,
        report: &NewShiftReport,
        by: &UserId,
        at: OffsetDateTime,
    ) -> Result<ShiftReport, SaveReportError>;
    /// One per (location, date).
    async fn create_manager_report(
        &self,
        team: &TeamId,
        report: &NewManagerReport,
        by: &UserId,
        at: OffsetDateTime,
    ) -> Result<ManagerReport, SaveReportError>;
    /// By date and shift as the day runs, `page.rows_to_read()` of them after `page.after`; `None`
    /// when the location is not the team's.
    async fn shift_reports(
        &self,
        team: &TeamId,
        location: LocationId,
        from: Date,
        to: Date,
        page: &PageRequest<ShiftReportKey>,
    ) -> Result<Option<Vec<ShiftReport>>, StoreError>;
    /// By date, as above.
    async fn manager_reports(
        &self,
        team: &TeamId,
        location: LocationId,
        from: Date,
        to: Date,
        page: &PageRequest<Date>,
    ) -> Result<Option<Vec<ManagerReport>>, StoreError>;
}
