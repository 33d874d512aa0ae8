use async_trait::async_trait;
use opsd_core::{LocationId, StoreError, TeamId, UserId};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::model::{ManagerReport, NewManagerReport, NewShiftReport, ShiftReport};

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
    /// `None` when the location is not the team's.
    async fn shift_reports(
        &self,
        team: &TeamId,
        location: LocationId,
        from: Date,
        to: Date,
    ) -> Result<Option<Vec<ShiftReport>>, StoreError>;
    async fn manager_reports(
        &self,
        team: &TeamId,
        location: LocationId,
        from: Date,
        to: Date,
    ) -> Result<Option<Vec<ManagerReport>>, StoreError>;
}
