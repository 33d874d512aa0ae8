use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use opsd_core::{Clock, Department, LocationId, StoreError, TeamCacheInvalidation};
use rust_decimal::Decimal;
use serde::Serialize;
use time::{Duration, Time};

use crate::ports::{
    ProviderError, ProviderShift, ProviderUser, PunchStore, RoleMap, ScheduleStore, SchedulingProvider, SyncCounts,
    SyncLocation,
};
use crate::shift::{ScheduledShift, ShiftInput};
use crate::view::{ScheduleView, ViewParams};

/// The synced window: 14 days back to 28 days ahead.
const DAYS_BACK: i64 = 14;
const DAYS_AHEAD: i64 = 28;

/// How a sync went: `ok`, `partial` (some locations failed) or `failed` (all did, or the provider).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncStatus {
    #[default]
    Ok,
    Partial,
    Failed,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    pub status: SyncStatus,
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    pub unchanged: u64,
    /// Which locations failed and why; empty when none did.
    pub failed_locations: Vec<FailedLocation>,
}

/// A location a sync left as it was, with a short classification of why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedLocation {
    pub location_id: LocationId,
    pub slug: String,
    /// `provider_5xx`, `provider_4xx`, `provider_rate_limit`, `provider_auth`, `provider_malformed`,
    /// `timeout` or `network`: never the provider's own text.
    pub reason: &'static str,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleSyncReport {
    pub status: SyncStatus,
    pub inserted: u64,
    pub updated: u64,
    pub unchanged: u64,
}

/// The department a provider department or role name counts under.
pub fn department_of(name: &str) -> Department {
    let name = name.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if any(&["foh", "front", "server", "bar", "host", "cashier", "runner"]) {
        Department::Foh
    } else if any(&["boh", "back", "kitchen", "cook", "chef", "dish", "prep", "line"]) {
        Department::Boh
    } else {
        Department::Other
    }
}

/// The 7shifts sync: shifts, roles and time punches, each a job of its own.
#[derive(derive_new::new)]
pub struct ScheduleService {
    pub(crate) provider: Arc<dyn SchedulingProvider>,
    store: Arc<dyn ScheduleStore>,
    pub(crate) punches: Arc<dyn PunchStore>,
    pub(crate) cache: Arc<dyn TeamCacheInvalidation>,
    pub(crate) clock: Arc<dyn Clock>,
}

impl ScheduleService {
    /// The locations to sync and the role mapping, or `None` when no location syncs.
    pub(crate) async fn to_sync(&self) -> Result<Option<(Vec<SyncLocation>, RoleMap)>, StoreError> {
        let locations = self.store.locations_to_sync().await?;
        if locations.is_empty() {
            return Ok(None);
        }
        Ok(Some((locations, self.store.role_map().await?)))
    }

    /// Refreshes every syncing location's window, one transaction per location: a provider
    /// failure leaves that location as it was and makes the run `partial`.
    pub async fn sync_schedule(&self) -> Result<SyncReport, StoreError> {
        let Some((locations, roles)) = self.to_sync().await? else { return Ok(SyncReport::default()) };
        let users: HashMap<String, ProviderUser> = match self.provider.users().await {
            Ok(users) => users.into_iter().map(|u| (u.id.clone(), u)).collect(),
            Err(error) => {
                tracing::warn!(%error, "provider users unavailable; shifts keep their employee ids as names");
                HashMap::new()
            }
        };
        let today = self.clock.now().date();
        let from = (today - Duration::days(DAYS_BACK)).with_time(Time::MIDNIGHT).assume_utc();
        let to = (today + Duration::days(DAYS_AHEAD + 1)).with_time(Time::MIDNIGHT).assume_utc();
        let mut tally = SyncTally::default();
        for location in &locations {
            let outcome = match self.provider.shifts(&location.provider_location_id, from, to).await {
                Ok(fetched) => {
                    let placed = place_all(location, fetched, &roles, &users);
                    Ok(self.store.replace_window(location.id, from, to, placed, self.clock.now()).await?)
                }
                Err(error) => Err(error),
            };
            tally.record(location, outcome);
        }
        Ok(tally.finish(self.cache.as_ref()).await)
    }

    /// Refreshes the role mapping: each role's department from its provider department's name
    /// (or its own name when it has none).
    pub async fn sync_roles(&self) -> Result<RoleSyncReport, StoreError> {
        let (departments, roles) = match (self.provider.departments().await, self.provider.roles().await) {
            (Ok(departments), Ok(roles)) => (departments, roles),
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!(%error, "role sync failed");
                return Ok(RoleSyncReport { status: SyncStatus::Failed, ..RoleSyncReport::default() });
            }
        };
        let names: HashMap<String, String> = departments.into_iter().map(|d| (d.id, d.name)).collect();
        let mapped = roles
            .into_iter()
            .map(|role| {
                let source = role.department_id.as_ref().and_then(|id| names.get(id)).unwrap_or(&role.name).clone();
                (role, department_of(&source))
            })
            .collect();
        let counts = self.store.upsert_roles(mapped, self.clock.now()).await?;
        Ok(RoleSyncReport {
            status: SyncStatus::Ok,
            inserted: counts.inserted,
            updated: counts.updated,
            unchanged: counts.unchanged,
        })
    }
}

/// The legacy read-only view: it needs only the store and the clock.
#[derive(derive_new::new)]
pub struct LegacyScheduleView {
    store: Arc<dyn ScheduleStore>,
    clock: Arc<dyn Clock>,
}

impl LegacyScheduleView {
    /// The legacy read-only view: defaults relative to the location's own "yesterday".
    pub async fn view(&self, slug: &str, query: &ViewParams) -> Result<Option<ScheduleView>, ScheduleViewError> {
        let Some(zone) = self.store.timezone_of(slug).await? else { return Ok(None) };
        let zone = time_tz::timezones::get_by_name(&zone).unwrap_or(time_tz::timezones::db::UTC);
        let today = time_tz::OffsetDateTimeExt::to_timezone(&self.clock.now(), zone).date();
        let filter = query.parse(today)?;
        Ok(self.store.view(slug, filter).await?)
    }
}

pub type ScheduleViewError = opsd_core::ServiceError;

/// A sync's running count over its locations: a provider failure leaves that location as it was
/// and makes the run `partial` (or `failed` when every location failed). The teams whose data
/// changed have their caches dropped once, at the end.
#[derive(Default)]
pub(crate) struct SyncTally {
    report: SyncReport,
    touched: BTreeSet<opsd_core::TeamId>,
    locations: usize,
}

impl SyncTally {
    pub(crate) fn record(&mut self, location: &SyncLocation, outcome: Result<SyncCounts, ProviderError>) {
        self.locations += 1;
        let counts = match outcome {
            Ok(counts) => counts,
            Err(error) => {
                tracing::warn!(location = %location.id, %error, "sync failed for a location; left as it was");
                self.report.failed_locations.push(FailedLocation {
                    location_id: location.id,
                    slug: location.slug.clone(),
                    reason: error.reason(),
                });
                return;
            }
        };
        let report = &mut self.report;
        report.inserted += counts.inserted;
        report.updated += counts.updated;
        report.deleted += counts.deleted;
        report.unchanged += counts.unchanged;
        if counts.inserted + counts.updated + counts.deleted > 0 {
            self.touched.insert(location.team_id.clone());
        }
    }

    pub(crate) async fn finish(mut self, cache: &dyn TeamCacheInvalidation) -> SyncReport {
        for team in &self.touched {
            cache.invalidate_team(team).await;
        }
        self.report.status = match self.report.failed_locations.len() {
            0 => SyncStatus::Ok,
            n if n < self.locations => SyncStatus::Partial,
            _ => SyncStatus::Failed,
        };
        self.report
    }
}

fn place_all(
    location: &SyncLocation,
    fetched: Vec<ProviderShift>,
    roles: &RoleMap,
    users: &HashMap<String, ProviderUser>,
) -> Vec<ScheduledShift> {
    let zone = time_tz::timezones::get_by_name(&location.timezone).unwrap_or(time_tz::timezones::db::UTC);
    fetched
        .into_iter()
        .filter(|shift| !shift.deleted)
        .filter_map(|shift| {
            let (role, department) = shift
                .role_id
                .as_ref()
                .and_then(|id| roles.get(id))
                .cloned()
                .unwrap_or_else(|| ("Unassigned".to_owned(), Department::Other));
            let employee_name = match shift.user_id.as_ref() {
                Some(id) => users.get(id).map_or_else(
                    || format!("Employee {id}"),
                    |u| format!("{} {}", u.first_name, u.last_name).trim().to_owned(),
                ),
                None => "Open shift".to_owned(),
            };
            let input = ShiftInput {
                provider_shift_id: shift.id.clone(),
                employee_name,
                employee_key: shift.user_id.as_ref().map_or_else(|| "open".to_owned(), |id| format!("7shifts:{id}")),
                role,
                department,
                start_at: shift.start,
                end_at: shift.end,
                unpaid_break_minutes: shift.unpaid_break_minutes,
                hourly_wage: Decimal::new(shift.hourly_wage_cents.unwrap_or(0).max(0), 2),
                is_draft: shift.draft,
            };
            match ScheduledShift::place(input, zone) {
                Ok(placed) => Some(placed),
                Err(error) => {
                    tracing::warn!(shift = %shift.id, %error, "skipping a shift the provider described impossibly");
                    None
                }
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use opsd_core::{LocationId, MockClock, MockTeamCacheInvalidation, TeamId};
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::ports::{
        MockPunchStore, MockScheduleStore, MockSchedulingProvider, ProviderDepartment, ProviderError, ProviderRole,
        RoleCounts, SyncCounts,
    };

    pub(crate) fn location(n: u128) -> SyncLocation {
        SyncLocation {
            id: LocationId(Uuid::from_u128(n)),
            slug: format!("loc-{n}"),
            team_id: TeamId::new("org_1"),
            provider_location_id: n.to_string(),
            timezone: "America/Chicago".into(),
        }
    }

    fn service(
        provider: MockSchedulingProvider,
        store: MockScheduleStore,
        cache: MockTeamCacheInvalidation,
    ) -> ScheduleService {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| datetime!(2026-11-22 12:00 UTC));
        ScheduleService::new(
            Arc::new(provider),
            Arc::new(store),
            Arc::new(MockPunchStore::new()),
            Arc::new(cache),
            Arc::new(clock),
        )
    }

    fn shift(id: &str, role: &str, deleted: bool) -> ProviderShift {
        ProviderShift {
            id: id.into(),
            user_id: Some("7".into()),
            role_id: Some(role.into()),
            start: datetime!(2026-11-21 16:00 UTC),
            end: datetime!(2026-11-21 22:00 UTC),
            hourly_wage_cents: Some(1650),
            draft: false,
            deleted,
            unpaid_break_minutes: 30,
        }
    }

    #[test]
    fn departments_follow_their_names() {
        assert_eq!(department_of("Front of House"), Department::Foh);
        assert_eq!(department_of("BOH"), Department::Boh);
        assert_eq!(department_of("Line Cook"), Department::Boh);
        assert_eq!(department_of("Management"), Department::Other);
    }

    #[tokio::test]
    async fn a_failing_location_is_left_alone_and_the_run_is_partial() {
        let mut provider = MockSchedulingProvider::new();
        provider.expect_users().returning(|| {
            Ok(vec![ProviderUser { id: "7".into(), first_name: "Ana".into(), last_name: "Ruiz".into() }])
        });
        provider.expect_shifts().returning(|location, from, to| {
            assert_eq!((from, to), (datetime!(2026-11-08 00:00 UTC), datetime!(2026-12-21 00:00 UTC)));
            if location == "1" {
                Ok(vec![shift("a", "r1", false), shift("gone", "r1", true)])
            } else {
                Err(ProviderError::ServerError(500))
            }
        });
        let mut store = MockScheduleStore::new();
        store.expect_locations_to_sync().returning(|| Ok(vec![location(1), location(2)]));
        store
            .expect_role_map()
            .returning(|| Ok(HashMap::from([("r1".to_owned(), ("Server".to_owned(), Department::Foh))])));
        store
            .expect_replace_window()
            .withf(|location, _, _, shifts, _| {
                *location == LocationId(Uuid::from_u128(1))
                    && shifts.len() == 1
                    && shifts[0].input.employee_name == "Ana Ruiz"
                    && shifts[0].input.department == Department::Foh
                    && shifts[0].input.hourly_wage == Decimal::new(1650, 2)
                    && shifts[0].hours_worked == Decimal::new(550, 2)
            })
            .times(1)
            .returning(|_, _, _, _, _| Ok(SyncCounts { inserted: 1, ..SyncCounts::default() }));
        let mut cache = MockTeamCacheInvalidation::new();
        cache.expect_invalidate_team().times(1).return_const(());
        let report = service(provider, store, cache).sync_schedule().await.unwrap();
        let failed = FailedLocation {
            location_id: LocationId(Uuid::from_u128(2)),
            slug: "loc-2".into(),
            reason: "provider_5xx",
        };
        assert_eq!(
            report,
            SyncReport {
                status: SyncStatus::Partial,
                inserted: 1,
                failed_locations: vec![failed],
                ..SyncReport::default()
            }
        );
    }

    #[tokio::test]
    async fn an_unchanged_sync_drops_no_cache() {
        let mut provider = MockSchedulingProvider::new();
        provider.expect_users().returning(|| Ok(vec![]));
        provider.expect_shifts().returning(|_, _, _| Ok(vec![shift("a", "r1", false)]));
        let mut store = MockScheduleStore::new();
        store.expect_locations_to_sync().returning(|| Ok(vec![location(1)]));
        store.expect_role_map().returning(|| Ok(HashMap::new()));
        store
            .expect_replace_window()
            .returning(|_, _, _, _, _| Ok(SyncCounts { unchanged: 1, ..SyncCounts::default() }));
        let mut cache = MockTeamCacheInvalidation::new();
        cache.expect_invalidate_team().never();
        let report = service(provider, store, cache).sync_schedule().await.unwrap();
        assert_eq!((report.status, report.unchanged), (SyncStatus::Ok, 1));
    }

    #[tokio::test]
    async fn roles_take_the_department_of_their_provider_department() {
        let mut provider = MockSchedulingProvider::new();
        provider
            .expect_departments()
            .returning(|| Ok(vec![ProviderDepartment { id: "d1".into(), name: "Kitchen".into() }]));
        provider.expect_roles().returning(|| {
            Ok(vec![
                ProviderRole {
                    id: "r1".into(),
                    location_id: None,
                    department_id: Some("d1".into()),
                    name: "Expo".into(),
                },
                ProviderRole { id: "r2".into(), location_id: None, department_id: None, name: "Bartender".into() },
            ])
        });
        let mut store = MockScheduleStore::new();
        store
            .expect_upsert_roles()
            .withf(|roles, _| roles[0].1 == Department::Boh && roles[1].1 == Department::Foh)
            .returning(|_, _| Ok(RoleCounts { inserted: 2, ..RoleCounts::default() }));
        let report = service(provider, store, MockTeamCacheInvalidation::new()).sync_roles().await.unwrap();
        assert_eq!((report.status, report.inserted), (SyncStatus::Ok, 2));
    }
}
