//! Weekly labor optimization: sales, labor cost, labor percentage and sales per labor hour against
//! per-weekday goals. The arithmetic is pure (`kpi`); the service adds the cache and the circuit
//! breaker around the analytics store.

mod breaker;
mod goals;
mod kpi;
mod model;
mod ports;
mod report;
mod service;

pub use breaker::{CircuitBreaker, CircuitOpen, DEFAULT_OPEN_FOR, Permit};
pub use goals::{DayGoal, effective_goals};
pub use kpi::{NO_SALES, build_report, labor_pct};
pub use model::{Block, Department, LaborFact, SalesFact, SalesRow, StoredGoal, Week, WeekData};
pub use ports::{AnalyticsStore, CacheLookup, IngestError, ReportCache, ReportKey, through_cache};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockAnalyticsStore, MockReportCache};
pub use report::{
    DailyRow, LaborRow, OptimizationReport, RenderedReport, ReportRenderer, SalesRow as SalesReportRow, Summary,
    WeeklySummary,
};
pub use service::{CacheStatus, OptimizationError, OptimizationService};
