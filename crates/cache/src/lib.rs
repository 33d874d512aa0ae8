//! The in-process report cache (moka): shared by all requests of an instance, 15 minutes per
//! entry, dropped per team on invalidation. A per-team generation makes sure a report loaded
//! before an invalidation is not stored after it. Each thread keeps copies of its hits in front of
//! moka (`front`).

mod front;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use moka::future::Cache;
use opsd_core::TeamId;
use opsd_optimization::{CacheLookup, RenderedReport, ReportCache, ReportKey};

pub const TIME_TO_LIVE: Duration = Duration::from_secs(15 * 60);

/// Keys come from authenticated callers only, and a hit's hashing is a good part of its cost, so
/// foldhash (per-instance seeds) rather than SipHash.
type KeyHasher = foldhash::fast::RandomState;

/// A cached report and when its entry expires.
struct Stored<V> {
    value: Arc<V>,
    expires: Instant,
}

impl<V> Clone for Stored<V> {
    fn clone(&self) -> Self {
        Self { value: self.value.clone(), expires: self.expires }
    }
}

/// Tells the threads' copies of one cache apart from another's.
static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// One kind of report (`V`) per key.
#[derive(Clone)]
pub struct MokaReportCache<V: Send + Sync + 'static = RenderedReport> {
    id: usize,
    time_to_live: Duration,
    entries: Cache<ReportKey, Stored<V>, KeyHasher>,
    generations: Arc<Mutex<HashMap<TeamId, u64>>>,
    /// Bumped by `invalidate(None)`, which invalidates every team at once.
    epoch: Arc<Mutex<u64>>,
    /// Invalidations so far, of any team; a thread's copy taken before the latest one is not used.
    invalidations: Arc<AtomicU64>,
    lookups: Arc<Lookups>,
}

/// Hits and misses so far, for `/metrics`.
#[derive(Default)]
struct Lookups {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<V: Send + Sync + 'static> MokaReportCache<V> {
    pub fn new(time_to_live: Duration, max_entries: u64) -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            time_to_live,
            entries: Cache::builder()
                .time_to_live(time_to_live)
                .max_capacity(max_entries)
                .support_invalidation_closures()
                .build_with_hasher(KeyHasher::default()),
            generations: Arc::new(Mutex::new(HashMap::new())),
            epoch: Arc::new(Mutex::new(0)),
            invalidations: Arc::new(AtomicU64::new(0)),
            lookups: Arc::default(),
        }
    }

    /// Lookups so far: (hits, misses).
    pub fn lookups(&self) -> (u64, u64) {
        (self.lookups.hits.load(Ordering::Relaxed), self.lookups.misses.load(Ordering::Relaxed))
    }

    fn counted(&self, lookup: CacheLookup<V>) -> CacheLookup<V> {
        let counter = match lookup {
            CacheLookup::Hit(_) => &self.lookups.hits,
            CacheLookup::Miss { .. } => &self.lookups.misses,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        lookup
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
        // After moka's entries are gone: a copy taken from one of them was looked up before this.
        self.invalidations.fetch_add(1, Ordering::AcqRel);
    }
}

#[async_trait]
impl<V: Send + Sync + 'static> ReportCache<V> for MokaReportCache<V> {
    async fn get(&self, key: &ReportKey) -> CacheLookup<V> {
        // Read before the lookup, so an invalidation during it leaves the copy unused.
        let version = self.invalidations.load(Ordering::Acquire);
        let now = Instant::now();
        if let Some(report) = front::get(self.id, key, version, now) {
            return self.counted(CacheLookup::Hit(report));
        }
        self.counted(match self.entries.get(key).await {
            Some(stored) => {
                front::put(self.id, key, stored.value.clone(), version, now, stored.expires);
                CacheLookup::Hit(stored.value)
            }
            // Read after the lookup but before the caller's load: an invalidation from here on
            // changes it, and `put` then drops the load's result.
            None => CacheLookup::Miss { generation: self.generation(&key.team) },
        })
    }

    async fn put(&self, key: ReportKey, report: Arc<V>, generation: u64) {
        if self.generation(&key.team) == generation {
            let expires = Instant::now() + self.time_to_live;
            self.entries.insert(key, Stored { value: report, expires }).await;
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

    async fn miss<V: Send + Sync + 'static>(cache: &MokaReportCache<V>, key: &ReportKey) -> u64 {
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
        assert_eq!(cache.lookups(), (2, 3), "two hits, three misses");
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

    async fn hit<V: Send + Sync + 'static>(cache: &MokaReportCache<V>, key: &ReportKey) -> Arc<V> {
        match cache.get(key).await {
            CacheLookup::Hit(report) => report,
            CacheLookup::Miss { .. } => panic!("expected a hit"),
        }
    }

    async fn stored<V: Send + Sync + 'static>(cache: &MokaReportCache<V>, key: &ReportKey, value: V) -> Arc<V> {
        let generation = miss(cache, key).await;
        let value = Arc::new(value);
        cache.put(key.clone(), value.clone(), generation).await;
        value
    }

    #[tokio::test]
    async fn entries_expire_after_their_time_to_live() {
        let cache = MokaReportCache::new(Duration::from_millis(50), 100);
        let generation = miss(&cache, &key("org_1")).await;
        cache.put(key("org_1"), report(), generation).await;
        hit(&cache, &key("org_1")).await;
        assert_eq!(front::len(cache.id), 1, "the hit is copied for this thread");
        tokio::time::sleep(Duration::from_millis(120)).await;
        miss(&cache, &key("org_1")).await;
    }

    #[tokio::test]
    async fn a_thread_s_copy_is_not_used_after_another_thread_invalidates() {
        let cache = MokaReportCache::new(TIME_TO_LIVE, 100);
        stored(&cache, &key("org_1"), 1_u32).await;
        hit(&cache, &key("org_1")).await;
        assert_eq!(front::len(cache.id), 1);
        let elsewhere = cache.clone();
        std::thread::spawn(move || elsewhere.invalidate(Some(&TeamId::new("org_1")))).join().unwrap();
        miss(&cache, &key("org_1")).await;
        // Any invalidation, of any team, retires this thread's copies.
        stored(&cache, &key("org_2"), 2_u32).await;
        hit(&cache, &key("org_2")).await;
        let elsewhere = cache.clone();
        std::thread::spawn(move || elsewhere.invalidate(None)).join().unwrap();
        miss(&cache, &key("org_2")).await;
    }

    #[tokio::test]
    async fn a_copy_is_refreshed_from_moka_after_a_second() {
        let cache = MokaReportCache::new(TIME_TO_LIVE, 100);
        let first = stored(&cache, &key("org_1"), 1_u32).await;
        assert!(Arc::ptr_eq(&hit(&cache, &key("org_1")).await, &first));
        // Moka lets it go (as a capacity eviction would): the copy answers until it is refreshed.
        cache.entries.invalidate(&key("org_1")).await;
        assert!(Arc::ptr_eq(&hit(&cache, &key("org_1")).await, &first));
        tokio::time::sleep(front::REFRESH + Duration::from_millis(50)).await;
        miss(&cache, &key("org_1")).await;
    }

    #[tokio::test]
    async fn caches_of_different_reports_keep_their_own_copies() {
        let numbers = MokaReportCache::new(TIME_TO_LIVE, 100);
        let words = MokaReportCache::new(TIME_TO_LIVE, 100);
        stored(&numbers, &key("org_1"), 7_u32).await;
        stored(&words, &key("org_1"), "seven").await;
        for _ in 0..2 {
            assert_eq!(*hit(&numbers, &key("org_1")).await, 7);
            assert_eq!(*hit(&words, &key("org_1")).await, "seven");
        }
    }

    #[tokio::test]
    async fn a_thread_keeps_at_most_its_capacity_of_copies() {
        let cache = MokaReportCache::new(TIME_TO_LIVE, 1_000);
        let keys: Vec<ReportKey> = (0..front::CAPACITY * 2 + 3).map(|n| key(&format!("org_{n}"))).collect();
        for (n, key) in keys.iter().enumerate() {
            stored(&cache, key, n).await;
        }
        for _ in 0..2 {
            for (n, key) in keys.iter().enumerate() {
                assert_eq!(*hit(&cache, key).await, n, "each key answers its own report");
                assert!(front::len(cache.id) <= front::CAPACITY);
            }
        }
    }

    /// `OPTIMIZATION_CACHE_CAPACITY=0`, as `just bench` measures the uncached report.
    #[tokio::test]
    async fn a_cache_without_capacity_keeps_no_copies() {
        let cache = MokaReportCache::new(TIME_TO_LIVE, 0);
        stored(&cache, &key("org_1"), 1_u32).await;
        let _ = cache.get(&key("org_1")).await;
        assert_eq!(front::len(cache.id), 0);
    }
}
