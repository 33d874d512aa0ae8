use std::sync::Arc;

use opsd_core::{LocationId, StoreError, TeamCacheInvalidation, TeamId, ValidationErrors};

use crate::breaker::{CircuitBreaker, CircuitOpen};
use crate::goals::{DayGoal, effective_goals};
use crate::kpi::build_report;
use crate::model::{SalesRow, Week};
use crate::ports::{AnalyticsStore, IngestError, ReportCache, ReportKey, through_cache};
use crate::report::{RenderedReport, ReportRenderer};

/// An unknown team or location is `NotFound`; an open circuit is the domain's own answer.
pub type OptimizationError = opsd_core::ServiceError<CircuitOpen>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    Hit,
    Miss,
}

impl CacheStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CacheStatus::Hit => "hit",
            CacheStatus::Miss => "miss",
        }
    }
}

#[derive(derive_new::new)]
pub struct OptimizationService {
    store: Arc<dyn AnalyticsStore>,
    cache: Arc<dyn ReportCache<RenderedReport>>,
    invalidation: Arc<dyn TeamCacheInvalidation>,
    breaker: CircuitBreaker,
    renderer: Arc<dyn ReportRenderer>,
}

impl OptimizationService {
    /// The week's report, from the cache when it holds it (even while the circuit is open).
    pub async fn report(&self, key: ReportKey) -> Result<(Arc<RenderedReport>, CacheStatus), OptimizationError> {
        through_cache(self.cache.as_ref(), &key, async {
            let data = self.guarded(self.store.week(&key.team, key.location, key.week)).await?;
            let report = build_report(key.week, &data.ok_or(OptimizationError::NotFound)?);
            Ok(RenderedReport::new(report, self.renderer.as_ref()))
        })
        .await
    }

    /// The week of the scope's latest sales on or before `today`, or `today`'s week without any:
    /// the week a report page opens on.
    pub async fn latest_week_with_sales(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        today: time::Date,
    ) -> Result<Week, OptimizationError> {
        let latest = self.guarded(self.store.latest_sales_date(team, location, today)).await?;
        Ok(Week::containing(latest.unwrap_or(today)))
    }

    /// The goals in effect for each weekday of the scope.
    pub async fn goals(&self, team: &TeamId, location: Option<LocationId>) -> Result<Vec<DayGoal>, OptimizationError> {
        let stored = self.guarded(self.store.goals(team, location)).await?.ok_or(OptimizationError::NotFound)?;
        Ok(effective_goals(&stored))
    }

    /// Sets the scope's goals (at most one per weekday) and answers the goals then in effect.
    pub async fn set_goals(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        goals: &[DayGoal],
    ) -> Result<Vec<DayGoal>, OptimizationError> {
        self.store.set_goals(team, location, goals).await?.ok_or(OptimizationError::NotFound)?;
        self.invalidation.invalidate_team(team).await;
        let stored = self.store.goals(team, location).await?.ok_or(OptimizationError::NotFound)?;
        Ok(effective_goals(&stored))
    }

    /// Upserts a batch of sales facts; all or nothing.
    pub async fn ingest_sales(&self, team: &TeamId, rows: &[SalesRow]) -> Result<u64, OptimizationError> {
        let written = self.store.ingest_sales(team, rows).await.map_err(|error| match error {
            IngestError::ForeignLocations(indexes) => {
                let mut errors = ValidationErrors::new();
                for index in indexes.into_iter().take(20) {
                    errors.push(format!("rows[{index}].locationId"), "is not a location of the team");
                }
                OptimizationError::Invalid(errors)
            }
            IngestError::Store(error) => error.into(),
        })?;
        self.invalidation.invalidate_team(team).await;
        Ok(written)
    }

    /// Whether the analytics store's circuit refuses reads now.
    pub fn store_circuit_open(&self) -> bool {
        self.breaker.is_open()
    }

    /// Runs a store read through the circuit breaker.
    async fn guarded<T>(&self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, OptimizationError> {
        let permit = self.breaker.admit().map_err(OptimizationError::Domain)?;
        match call.await {
            Ok(value) => {
                permit.success();
                Ok(value)
            }
            Err(error) => {
                permit.failure();
                Err(error.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::{MockClock, MockTeamCacheInvalidation, TeamId};
    use time::OffsetDateTime;

    use super::*;
    use crate::model::WeekData;
    use crate::ports::{CacheLookup, MockAnalyticsStore, MockReportCache};

    fn query() -> ReportKey {
        ReportKey {
            team: TeamId::new("org_1"),
            location: None,
            week: crate::model::Week::containing(time::macros::date!(2026 - 11 - 21)),
        }
    }

    fn render(report: &crate::OptimizationReport) -> String {
        report.week_label.clone()
    }

    fn service(store: MockAnalyticsStore, cache: MockReportCache<RenderedReport>) -> OptimizationService {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap());
        let mut invalidation = MockTeamCacheInvalidation::new();
        invalidation.expect_invalidate_team().return_const(());
        OptimizationService::new(
            Arc::new(store),
            Arc::new(cache),
            Arc::new(invalidation),
            CircuitBreaker::new(Arc::new(clock), crate::breaker::DEFAULT_OPEN_FOR),
            Arc::new(render),
        )
    }

    fn missing_cache() -> MockReportCache<RenderedReport> {
        let mut cache = MockReportCache::new();
        cache.expect_get().returning(|_| CacheLookup::Miss { generation: 7 });
        cache
    }

    #[tokio::test]
    async fn a_page_opens_on_the_week_of_the_latest_sales_or_else_on_this_week() {
        use time::macros::date;
        let today = date!(2026 - 11 - 25);
        let mut store = MockAnalyticsStore::new();
        store
            .expect_latest_sales_date()
            .withf(move |_, location, until| location.is_none() && *until == today)
            .times(1)
            .returning(|_, _, _| Ok(Some(date!(2026 - 11 - 17))));
        store.expect_latest_sales_date().returning(|_, _, _| Ok(None));
        let service = service(store, missing_cache());
        let team = TeamId::new("org_1");
        let week = service.latest_week_with_sales(&team, None, today).await.unwrap();
        assert_eq!(week.start(), date!(2026 - 11 - 14), "the Saturday-to-Friday week of the 17th");
        let week = service.latest_week_with_sales(&team, None, today).await.unwrap();
        assert_eq!(week.start(), date!(2026 - 11 - 21), "no sales at all: this week");
    }

    #[tokio::test]
    async fn a_cache_hit_does_not_touch_the_store() {
        let mut store = MockAnalyticsStore::new();
        store.expect_week().never();
        let report = Arc::new(RenderedReport::new(
            build_report(crate::model::Week::containing(time::macros::date!(2026 - 11 - 21)), &WeekData::default()),
            &render,
        ));
        let mut cache = MockReportCache::new();
        cache.expect_get().returning(move |_| CacheLookup::Hit(report.clone()));
        let (_, status) = service(store, cache).report(query()).await.unwrap();
        assert_eq!(status, CacheStatus::Hit);
    }

    #[tokio::test]
    async fn a_miss_loads_builds_and_stores_with_the_generation_it_saw() {
        let mut store = MockAnalyticsStore::new();
        store.expect_week().times(1).returning(|_, _, _| Ok(Some(WeekData::default())));
        let mut cache = missing_cache();
        cache
            .expect_put()
            .withf(|key, _, generation| key.team == TeamId::new("org_1") && *generation == 7)
            .times(1)
            .return_const(());
        let (report, status) = service(store, cache).report(query()).await.unwrap();
        assert_eq!(status, CacheStatus::Miss);
        assert_eq!(report.report.week_label, "Week of 2026-11-21");
    }

    #[tokio::test]
    async fn five_store_failures_open_the_circuit_and_later_calls_skip_the_store() {
        let mut store = MockAnalyticsStore::new();
        store.expect_week().times(5).returning(|_, _, _| Err(StoreError::Unavailable("down".into())));
        let service = service(store, missing_cache());
        for _ in 0..5 {
            assert!(matches!(service.report(query()).await, Err(OptimizationError::Store(_))));
        }
        let error = service.report(query()).await.unwrap_err();
        assert!(matches!(error, OptimizationError::Domain(CircuitOpen { retry_after_seconds: 30 })));
    }

    #[tokio::test]
    async fn an_unknown_scope_is_not_found_and_nothing_is_cached() {
        let mut store = MockAnalyticsStore::new();
        store.expect_week().returning(|_, _, _| Ok(None));
        let mut cache = missing_cache();
        cache.expect_put().never();
        assert!(matches!(service(store, cache).report(query()).await, Err(OptimizationError::NotFound)));
    }
}
