use std::sync::Arc;

use opsd_optimization::{CacheStatus, ReportCache, ReportKey, through_cache};
use time::Duration;

use crate::forecast_report::{ForecastReport, HISTORY_WEEKS, build_forecast};
use crate::ports::PlanningStore;
use crate::variance_report::{VarianceReport, build_variance};

/// An unknown team, or a location that is not the team's, is `NotFound`.
pub type PlanningError = opsd_core::ServiceError;

/// The variance and forecast reports, each cached like the optimization report: per team,
/// location and week, dropped when the team's data changes.
#[derive(derive_new::new)]
pub struct PlanningService {
    store: Arc<dyn PlanningStore>,
    variances: Arc<dyn ReportCache<VarianceReport>>,
    forecasts: Arc<dyn ReportCache<ForecastReport>>,
}

impl PlanningService {
    pub async fn variance(&self, key: ReportKey) -> Result<(Arc<VarianceReport>, CacheStatus), PlanningError> {
        through_cache(self.variances.as_ref(), &key, async {
            let data =
                self.store.variance_week(&key.team, key.location, key.week).await?.ok_or(PlanningError::NotFound)?;
            Ok(build_variance(key.week, &data))
        })
        .await
    }

    /// The week's forecast from the sales before it, so a past week can be checked against what
    /// happened.
    pub async fn forecast(&self, key: ReportKey) -> Result<(Arc<ForecastReport>, CacheStatus), PlanningError> {
        through_cache(self.forecasts.as_ref(), &key, async {
            let since = key.week.start() - Duration::weeks(HISTORY_WEEKS);
            let data = self
                .store
                .forecast_data(&key.team, key.location, key.week, since)
                .await?
                .ok_or(PlanningError::NotFound)?;
            Ok(build_forecast(key.week, &data))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::{TeamId, Week};
    use opsd_optimization::{CacheLookup, MockReportCache};
    use time::macros::date;

    use super::*;
    use crate::ports::{ForecastData, MockPlanningStore, VarianceData};

    fn key() -> ReportKey {
        ReportKey { team: TeamId::new("org_1"), location: None, week: Week::containing(date!(2026 - 11 - 21)) }
    }

    fn missing<V: Send + Sync + 'static>() -> MockReportCache<V> {
        let mut cache = MockReportCache::new();
        cache.expect_get().returning(|_| CacheLookup::Miss { generation: 3 });
        cache
    }

    #[tokio::test]
    async fn a_miss_builds_and_stores_with_the_generation_it_saw_and_a_hit_skips_the_store() {
        let mut store = MockPlanningStore::new();
        store.expect_variance_week().times(1).returning(|_, _, _| Ok(Some(VarianceData::default())));
        store.expect_forecast_data().never();
        let mut variances = missing::<VarianceReport>();
        variances.expect_put().withf(|_, _, generation| *generation == 3).times(1).return_const(());
        let mut forecasts = MockReportCache::<ForecastReport>::new();
        let cached = Arc::new(build_forecast(key().week, &ForecastData::default()));
        forecasts.expect_get().returning(move |_| CacheLookup::Hit(cached.clone()));
        let service = PlanningService::new(Arc::new(store), Arc::new(variances), Arc::new(forecasts));
        let (report, status) = service.variance(key()).await.unwrap();
        assert_eq!((status, report.days.len()), (CacheStatus::Miss, 7));
        assert_eq!(service.forecast(key()).await.unwrap().1, CacheStatus::Hit);
    }

    #[tokio::test]
    async fn an_unknown_scope_is_not_found_and_nothing_is_cached() {
        let mut store = MockPlanningStore::new();
        store
            .expect_forecast_data()
            .withf(|_, _, _, since| *since == date!(2025 - 08 - 23))
            .returning(|_, _, _, _| Ok(None));
        let mut forecasts = missing::<ForecastReport>();
        forecasts.expect_put().never();
        let service = PlanningService::new(Arc::new(store), Arc::new(missing()), Arc::new(forecasts));
        assert!(matches!(service.forecast(key()).await, Err(PlanningError::NotFound)));
    }
}
