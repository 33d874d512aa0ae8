use std::sync::Arc;

use async_trait::async_trait;
use opsd_core::{LocationId, StoreError, TeamId};

use crate::goals::DayGoal;
use crate::model::{SalesRow, StoredGoal, Week, WeekData};
use crate::report::RenderedReport;
use crate::service::CacheStatus;

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Indexes of the rows whose location is not one of the team's.
    #[error("locations outside the team")]
    ForeignLocations(Vec<usize>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait AnalyticsStore: Send + Sync {
    /// The week's facts and goals for the team, or one location of it. `None` when the team is
    /// unknown or the location is not the team's. A fixed number of round trips, whatever the data.
    async fn week(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
    ) -> Result<Option<WeekData>, StoreError>;
    /// The latest business date with sales in the scope, on or before `until`: `None` without any.
    async fn latest_sales_date(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        until: time::Date,
    ) -> Result<Option<time::Date>, StoreError>;
    /// The stored goals of the scope (a location's own and the team defaults); `None` as above.
    async fn goals(&self, team: &TeamId, location: Option<LocationId>) -> Result<Option<Vec<StoredGoal>>, StoreError>;
    /// Upserts sales by (location, date, block) in one transaction; returns the rows written.
    async fn ingest_sales(&self, team: &TeamId, rows: &[SalesRow]) -> Result<u64, IngestError>;
    /// Upserts the scope's goals by weekday; `None` when the location is not the team's.
    async fn set_goals(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        goals: &[DayGoal],
    ) -> Result<Option<()>, StoreError>;
}

/// A report's cache key: team, location (or all of the team's) and week.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReportKey {
    pub team: TeamId,
    pub location: Option<LocationId>,
    pub week: Week,
}

#[derive(Debug, Clone)]
pub enum CacheLookup<V = RenderedReport> {
    Hit(Arc<V>),
    /// Not cached; `generation` must be handed back to `put`, which drops the report if the team
    /// was invalidated meanwhile.
    Miss {
        generation: u64,
    },
}

/// The shared 15-minute cache of one kind of report (the optimization report, and the planning
/// reports), dropped per team on invalidation.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ReportCache<V: Send + Sync + 'static>: Send + Sync {
    async fn get(&self, key: &ReportKey) -> CacheLookup<V>;
    async fn put(&self, key: ReportKey, report: Arc<V>, generation: u64);
}

/// The report of `key` from the cache; on a miss, `build`'s, stored with the generation seen before
/// building, so a report built across an invalidation of its team is not kept.
pub async fn through_cache<V: Send + Sync + 'static, E>(
    cache: &dyn ReportCache<V>,
    key: &ReportKey,
    build: impl Future<Output = Result<V, E>>,
) -> Result<(Arc<V>, CacheStatus), E> {
    let generation = match cache.get(key).await {
        CacheLookup::Hit(report) => return Ok((report, CacheStatus::Hit)),
        CacheLookup::Miss { generation } => generation,
    };
    let report = Arc::new(build.await?);
    cache.put(key.clone(), report.clone(), generation).await;
    Ok((report, CacheStatus::Miss))
}
