//! The in-process report cache (moka): shared by all requests of an instance, 15 minutes per
//! entry, dropped per team on invalidation. A per-team generation makes sure a report loaded
//! before an invalidation is not stored after it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use opsd_core::TeamId;
use opsd_optimization::{CacheLookup, RenderedReport, ReportCache, ReportKey};

pub const TIME_TO_LIVE: Duration = Duration::from_secs(15 * 60);

/// Keys come from authenticated callers only, and a hit's hashing is a good part of its cost, so
/// foldhash (per-instance seeds) rather than SipHash.
type KeyHasher = foldhash::fast::RandomState;

/// One kind of report (`V`) per key.
#[derive(Clone)]
pub struct MokaReportCache<V: Send + Sync + 'static = RenderedReport> {
    entries: Cache<ReportKey, Arc<V>, KeyHasher>,
    generations: Arc<Mutex<HashMap<TeamId, u64>>>,
    /// Bumped by `clear`, which invalidates every team at once.
    epoch: Arc<Mutex<u64>>,
}

impl<V: Send + Sync + 'static> MokaReportCache<V> {
    pub fn new(time_to_live: Duration, max_entries: u64) -> Self {
        Self {
            entries: Cache::builder()
                .time_to_live(time_to_live)
                .max_capacity(max_entries)
                .support_invalidation_closures()
                .build_with_hasher(KeyHasher::default()),
            generations: Arc::new(Mutex::new(HashMap::new())),
            epoch: Arc::new(Mutex::new(0)),
        }
    }

    fn generation(&self, team: &TeamId) -> u64 {
        let epoch = *self.epoch.lock().expect("epoch lock poisoned");
        let team_generation =
            self.generations.lock().expect("generation lock poisoned").get(team).copied().unwrap_or(0);
        // Both counters only grow, so their sum changes whenever either does.
        epoch + team_generation
    }

    /// Drops one team's reports, or with `None` every report (after missed notifications).
    pub fn invalidate(&self, team: Option<&TeamId>) {
        match team {
            Some(team) => {
                *self.generations.lock().expect("generation lock poisoned").entry(team.clone()).or_insert(0) += 1;
                let team = team.clone();
                self.entries
                    .invalidate_entries_if(move |key, _| key.team == team)
                    .expect("invalidation closures are enabled");
            }
            None => {
                *self.epoch.lock().expect("epoch lock poisoned") += 1;
                self.entries.invalidate_all();
            }
        }
    }
}

#[async_trait]
impl<V: Send + Sync + 'static> ReportCache<V> for MokaReportCache<V> {
    async fn get(&self, key: &ReportKey) -> CacheLookup<V> {
        match self.entries.get(key).await {
            Some(report) => CacheLookup::Hit(report),
            // Read after the lookup but before the caller's load: an invalidation from here on
            // changes it, and `put` then drops the load's result.
            None => CacheLookup::Miss { generation: self.generation(&key.team) },
        }
    }

    async fn put(&self, key: ReportKey, report: Arc<V>, generation: u64) {
        if self.generation(&key.team) == generation {
            self.entries.insert(key, report).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use opsd_optimization::{Week, WeekData, build_report};
    use time::macros::date;

    use super::*;

    fn key(team: &str) -> ReportKey {
        ReportKey { team: TeamId::new(team), location: None, week: Week::containing(date!(2026 - 11 - 21)) }
    }

    fn report() -> Arc<RenderedReport> {
        let report = build_report(Week::containing(date!(2026 - 11 - 21)), &WeekData::default());
        Arc::new(RenderedReport::new(report, &|report: &opsd_optimization::OptimizationReport| {
            report.week_label.clone()
        }))
    }

    async fn miss(cache: &MokaReportCache<RenderedReport>, key: &ReportKey) -> u64 {
        match cache.get(key).await {
            CacheLookup::Miss { generation } => generation,
            CacheLookup::Hit(_) => panic!("expected a miss"),
        }
    }

    #[tokio::test]
    async fn a_stored_report_is_a_hit_until_its_team_is_invalidated() {
        let cache = MokaReportCache::new(TIME_TO_LIVE, 100);
        let generation = miss(&cache, &key("org_1")).await;
        cache.put(key("org_1"), report(), generation).await;
        let other = miss(&cache, &key("org_2")).await;
        cache.put(key("org_2"), report(), other).await;
        assert!(matches!(cache.get(&key("org_1")).await, CacheLookup::Hit(_)));
        cache.invalidate(Some(&TeamId::new("org_1")));
        miss(&cache, &key("org_1")).await;
        assert!(matches!(cache.get(&key("org_2")).await, CacheLookup::Hit(_)), "other teams keep theirs");
    }

    #[tokio::test]
    async fn a_report_loaded_before_an_invalidation_is_not_stored_after_it() {
        let cache = MokaReportCache::new(TIME_TO_LIVE, 100);
        let generation = miss(&cache, &key("org_1")).await;
        cache.invalidate(Some(&TeamId::new("org_1")));
        cache.put(key("org_1"), report(), generation).await;
        miss(&cache, &key("org_1")).await;
        let stale = miss(&cache, &key("org_2")).await;
        cache.invalidate(None);
        cache.put(key("org_2"), report(), stale).await;
        miss(&cache, &key("org_2")).await;
    }

    #[tokio::test]
    async fn entries_expire_after_their_time_to_live() {
        let cache = MokaReportCache::new(Duration::from_millis(50), 100);
        let generation = miss(&cache, &key("org_1")).await;
        cache.put(key("org_1"), report(), generation).await;
        tokio::time::sleep(Duration::from_millis(120)).await;
        miss(&cache, &key("org_1")).await;
    }
}
