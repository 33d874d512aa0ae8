use std::sync::Arc;

use opsd_core::{Caller, Clock, LocationId, Page, PageRequest, ValidationErrors, parse_iso_date};
use time::{Date, Duration};

use crate::model::{ManagerReport, NewManagerReport, NewShiftReport, ShiftReport, ShiftReportKey};
use crate::ports::{ReportStore, SaveReportError};

/// A report for the slot exists: the existing report's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a report for this slot exists")]
pub struct Duplicate(pub uuid::Uuid);

pub type ReportError = opsd_core::ServiceError<Duplicate>;

impl From<SaveReportError> for ReportError {
    fn from(error: SaveReportError) -> Self {
        match error {
            SaveReportError::LocationNotInTeam => {
                ValidationErrors::single("locationId", "is not a location of your team").into()
            }
            SaveReportError::Duplicate(existing) => ReportError::Domain(Duplicate(existing)),
            SaveReportError::Store(error) => error.into(),
        }
    }
}

/// A listing's location and date range, as the query gave them.
#[derive(Debug, Clone)]
pub struct ReportRange {
    pub location_id: LocationId,
    pub from: Option<String>,
    pub to: Option<String>,
}

#[derive(derive_new::new)]
pub struct ReportService {
    store: Arc<dyn ReportStore>,
    clock: Arc<dyn Clock>,
}

impl ReportService {
    /// Reports may be filed for dates up to tomorrow (UTC), which covers every location's today.
    pub fn latest_date(&self) -> Date {
        self.clock.now().date() + Duration::days(1)
    }

    /// Files a report parsed against `latest_date()`.
    pub async fn submit_shift(&self, caller: &Caller, report: NewShiftReport) -> Result<ShiftReport, ReportError> {
        let team = caller.team_id()?;
        Ok(self.store.create_shift_report(team, &report, &caller.user_id, self.clock.now()).await?)
    }

    pub async fn submit_manager(
        &self,
        caller: &Caller,
        report: NewManagerReport,
    ) -> Result<ManagerReport, ReportError> {
        let team = caller.admin_team()?;
        Ok(self.store.create_manager_report(team, &report, &caller.user_id, self.clock.now()).await?)
    }

    pub async fn shift_reports(
        &self,
        caller: &Caller,
        range: ReportRange,
        page: PageRequest<ShiftReportKey>,
    ) -> Result<Page<ShiftReport>, ReportError> {
        let team = caller.team_id()?;
        let (from, to) = self.dates(&range)?;
        let rows =
            self.store.shift_reports(team, range.location_id, from, to, &page).await?.ok_or(ReportError::NotFound)?;
        Ok(Page::of(rows, &page, ShiftReport::key))
    }

    pub async fn manager_reports(
        &self,
        caller: &Caller,
        range: ReportRange,
        page: PageRequest<Date>,
    ) -> Result<Page<ManagerReport>, ReportError> {
        let team = caller.team_id()?;
        let (from, to) = self.dates(&range)?;
        let rows =
            self.store.manager_reports(team, range.location_id, from, to, &page).await?.ok_or(ReportError::NotFound)?;
        Ok(Page::of(rows, &page, |report| report.date))
    }

    /// `to` defaults to today (UTC), `from` to 30 days before `to`; at most 366 days.
    fn dates(&self, range: &ReportRange) -> Result<(Date, Date), ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let to = match &range.to {
            Some(raw) => errors.check(parse_iso_date("to", raw)),
            None => Some(self.clock.now().date()),
        };
        let from = match (&range.from, to) {
            (Some(raw), _) => errors.check(parse_iso_date("from", raw)),
            (None, Some(to)) => Some(to - Duration::days(30)),
            (None, None) => None,
        };
        errors.into_result()?;
        let (from, to) = (from.expect("checked"), to.expect("checked"));
        if from > to {
            return Err(ValidationErrors::single("from", "must not be after to"));
        }
        if to - from > Duration::days(366) {
            return Err(ValidationErrors::single("from", "the range must be at most 366 days"));
        }
        Ok((from, to))
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::Forbidden;
    use opsd_core::{MockClock, Role};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::ports::MockReportStore;

    fn caller(role: Role) -> Caller {
        Caller::in_team("user_1", "org_1", role)
    }

    fn service(store: MockReportStore) -> ReportService {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap());
        ReportService::new(Arc::new(store), Arc::new(clock))
    }

    fn manager_request() -> NewManagerReport {
        NewManagerReport {
            location_id: LocationId(Uuid::nil()),
            date: time::macros::date!(2026 - 11 - 21),
            total_sales: 10.into(),
            employee_reviews: Vec::new(),
        }
    }

    #[tokio::test]
    async fn members_cannot_file_manager_reports() {
        let mut store = MockReportStore::new();
        store.expect_create_manager_report().never();
        let error = service(store).submit_manager(&caller(Role::Member), manager_request()).await;
        assert!(matches!(error, Err(ReportError::Forbidden(Forbidden::NotAdmin))));
    }

    #[tokio::test]
    async fn a_duplicate_names_the_existing_report() {
        let existing = Uuid::now_v7();
        let mut store = MockReportStore::new();
        store.expect_create_manager_report().returning(move |_, _, _, _| Err(SaveReportError::Duplicate(existing)));
        let error = service(store).submit_manager(&caller(Role::Admin), manager_request()).await;
        assert!(matches!(error, Err(ReportError::Domain(Duplicate(id))) if id == existing));
    }

    #[tokio::test]
    async fn listing_ranges_are_checked_before_the_store() {
        let mut store = MockReportStore::new();
        store.expect_shift_reports().never();
        let service = service(store);
        for (from, to) in
            [(Some("2026-11-10"), Some("2026-11-01")), (Some("2024-01-01"), Some("2026-01-01")), (Some("x"), None)]
        {
            let range = ReportRange {
                location_id: LocationId(Uuid::nil()),
                from: from.map(Into::into),
                to: to.map(Into::into),
            };
            let listed = service.shift_reports(&caller(Role::Member), range, PageRequest::default()).await;
            assert!(matches!(listed, Err(ReportError::Invalid(_))));
        }
    }
}
