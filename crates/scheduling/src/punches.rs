//! The time-punch sync: each mapped location's punches modified since its last successful sync
//! (less an overlap), upserted by the provider's id in one transaction per location; deleted ones
//! removed. A punch belongs to the local date of its clock-in in the location's time zone; its
//! worked hours are counted only when it is closed and approved (`opsd_planning::worked_hours`).

use opsd_core::{Department, StoreError};
use opsd_planning::{Punch, unpaid_break_seconds, worked_hours};
use rust_decimal::Decimal;
use time::{Date, Duration, OffsetDateTime};

use crate::ports::{ProviderPunch, PunchWindow, RoleMap, SyncLocation};
use crate::sync::{ScheduleService, SyncReport, SyncTally};

/// How far back a location's first sync reads, by clock-in.
pub const FIRST_SYNC_DAYS: i64 = 56;
/// How far before the last successful sync the next one asks from, for punches edited while it ran
/// and for clock skew between us and the provider.
pub const OVERLAP: Duration = Duration::hours(1);

/// A punch as stored: placed in its location's day, with the hours it counts (None when open or
/// unapproved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPunch {
    pub provider_punch_id: String,
    pub employee_key: String,
    pub department: Department,
    pub business_date: Date,
    pub clocked_in: OffsetDateTime,
    pub clocked_out: Option<OffsetDateTime>,
    pub approved: bool,
    pub unpaid_break_minutes: i32,
    pub worked_hours: Option<Decimal>,
    pub hourly_wage: Decimal,
}

impl StoredPunch {
    pub fn place(punch: &ProviderPunch, department: Department, zone: &time_tz::Tz) -> Self {
        let unpaid_seconds = unpaid_break_seconds(&punch.breaks);
        let hours = worked_hours(&Punch {
            clocked_in: punch.clocked_in,
            clocked_out: punch.clocked_out,
            approved: punch.approved,
            breaks: punch.breaks.clone(),
        });
        StoredPunch {
            provider_punch_id: punch.id.clone(),
            employee_key: punch.user_id.as_ref().map_or_else(|| "unknown".to_owned(), |id| format!("7shifts:{id}")),
            department,
            business_date: time_tz::OffsetDateTimeExt::to_timezone(&punch.clocked_in, zone).date(),
            clocked_in: punch.clocked_in,
            clocked_out: punch.clocked_out,
            approved: punch.approved,
            unpaid_break_minutes: i32::try_from(unpaid_seconds / 60).unwrap_or(i32::MAX),
            worked_hours: hours,
            hourly_wage: Decimal::new(punch.hourly_wage_cents.unwrap_or(0).max(0), 2),
        }
    }
}

impl ScheduleService {
    /// Syncs each location's punches modified since its last successful sync, one transaction per
    /// location.
    pub async fn sync_punches(&self) -> Result<SyncReport, StoreError> {
        let Some((locations, roles)) = self.to_sync().await? else { return Ok(SyncReport::default()) };
        let synced = self.punches.synced_through().await?;
        let mut tally = SyncTally::default();
        for location in &locations {
            // Read before asking, so whatever changes while the listing is read is asked for again.
            let now = self.clock.now();
            let window = match synced.get(&location.id) {
                Some(through) => PunchWindow::ModifiedSince(*through - OVERLAP),
                None => PunchWindow::ClockedInSince(now - Duration::days(FIRST_SYNC_DAYS)),
            };
            let outcome = match self.provider.punches(&location.provider_location_id, window).await {
                Ok(fetched) => {
                    let (punches, deleted) = place_all(location, fetched, &roles);
                    Ok(self.punches.apply_punches(location.id, punches, deleted, now).await?)
                }
                Err(error) => Err(error),
            };
            tally.record(location, outcome);
        }
        Ok(tally.finish(self.cache.as_ref()).await)
    }
}

/// The punches to keep and the provider ids of those deleted.
fn place_all(location: &SyncLocation, fetched: Vec<ProviderPunch>, roles: &RoleMap) -> (Vec<StoredPunch>, Vec<String>) {
    let zone = time_tz::timezones::get_by_name(&location.timezone).unwrap_or(time_tz::timezones::db::UTC);
    let (deleted, kept): (Vec<ProviderPunch>, Vec<ProviderPunch>) = fetched.into_iter().partition(|p| p.deleted);
    let placed = kept
        .iter()
        .map(|punch| {
            let department = punch
                .role_id
                .as_ref()
                .and_then(|id| roles.get(id))
                .map_or(Department::Other, |(_, department)| *department);
            StoredPunch::place(punch, department, zone)
        })
        .collect();
    (placed, deleted.into_iter().map(|p| p.id).collect())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use opsd_core::{LocationId, MockClock, MockTeamCacheInvalidation};
    use time::macros::{date, datetime};
    use uuid::Uuid;

    use opsd_planning::Break;

    use super::*;
    use crate::SyncStatus;
    use crate::ports::{MockPunchStore, MockScheduleStore, MockSchedulingProvider, ProviderError, SyncCounts};
    use crate::sync::tests::location;

    const NOW: OffsetDateTime = datetime!(2026-11-22 12:00 UTC);

    fn punch(id: &str, clocked_in: OffsetDateTime, clocked_out: Option<OffsetDateTime>) -> ProviderPunch {
        ProviderPunch {
            id: id.into(),
            user_id: Some("7".into()),
            role_id: Some("r1".into()),
            clocked_in,
            clocked_out,
            approved: true,
            deleted: false,
            hourly_wage_cents: Some(1550),
            breaks: vec![],
        }
    }

    fn sync(
        provider: MockSchedulingProvider,
        store: MockPunchStore,
        cache: MockTeamCacheInvalidation,
    ) -> ScheduleService {
        let mut schedule = MockScheduleStore::new();
        schedule.expect_locations_to_sync().returning(|| Ok(vec![location(1), location(2)]));
        schedule
            .expect_role_map()
            .returning(|| Ok(HashMap::from([("r1".to_owned(), ("Cook".to_owned(), Department::Boh))])));
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| NOW);
        ScheduleService::new(Arc::new(provider), Arc::new(schedule), Arc::new(store), Arc::new(cache), Arc::new(clock))
    }

    #[test]
    fn a_punch_across_midnight_belongs_to_its_clock_in_day_and_loses_only_unpaid_breaks() {
        let mut overnight = punch("1", datetime!(2026-11-21 22:00 -6), Some(datetime!(2026-11-22 06:30 -6)));
        overnight.breaks = vec![
            Break { start: datetime!(2026-11-22 01:00 -6), end: Some(datetime!(2026-11-22 01:30 -6)), paid: false },
            Break { start: datetime!(2026-11-22 03:00 -6), end: Some(datetime!(2026-11-22 03:10 -6)), paid: true },
        ];
        let zone = time_tz::timezones::get_by_name("America/Chicago").unwrap();
        let placed = StoredPunch::place(&overnight, Department::Boh, zone);
        assert_eq!(placed.business_date, date!(2026 - 11 - 21));
        assert_eq!(placed.worked_hours, Some(Decimal::new(800, 2)));
        assert_eq!((placed.unpaid_break_minutes, placed.hourly_wage), (30, Decimal::new(1550, 2)));
    }

    #[tokio::test]
    async fn a_synced_location_asks_from_its_last_sync_less_the_overlap_and_a_new_one_from_eight_weeks_back() {
        let mut provider = MockSchedulingProvider::new();
        provider.expect_punches().returning(|location, window| {
            match location {
                "1" => assert_eq!(window, PunchWindow::ModifiedSince(datetime!(2026-11-22 10:45 UTC))),
                _ => assert_eq!(window, PunchWindow::ClockedInSince(datetime!(2026-09-27 12:00 UTC))),
            }
            if location == "1" {
                let mut gone = punch("gone", datetime!(2026-11-21 16:00 UTC), None);
                gone.deleted = true;
                Ok(vec![punch("a", datetime!(2026-11-21 16:00 UTC), Some(datetime!(2026-11-21 20:00 UTC))), gone])
            } else {
                Err(ProviderError::Timeout)
            }
        });
        let mut store = MockPunchStore::new();
        store
            .expect_synced_through()
            .returning(|| Ok(HashMap::from([(LocationId(Uuid::from_u128(1)), datetime!(2026-11-22 11:45 UTC))])));
        store
            .expect_apply_punches()
            .withf(|location, punches, deleted, through| {
                *location == LocationId(Uuid::from_u128(1))
                    && punches.len() == 1
                    && punches[0].department == Department::Boh
                    && punches[0].worked_hours == Some(Decimal::from(4))
                    && deleted == &["gone".to_owned()]
                    && *through == NOW
            })
            .times(1)
            .returning(|_, _, _, _| Ok(SyncCounts { inserted: 1, deleted: 1, ..SyncCounts::default() }));
        let mut cache = MockTeamCacheInvalidation::new();
        cache.expect_invalidate_team().times(1).return_const(());
        let report = sync(provider, store, cache).sync_punches().await.unwrap();
        assert_eq!((report.status, report.inserted, report.deleted), (SyncStatus::Partial, 1, 1));
        assert_eq!(report.failed_locations[0].reason, "timeout");
    }
}
