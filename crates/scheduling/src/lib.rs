//! The imported schedule: shifts from the workforce-scheduling provider, placed in their
//! location's local day and daypart, with their hours and the wage they had when synced; the sync
//! jobs that keep it current (shifts, roles and time punches), and the legacy read-only view of it.

mod ports;
mod punches;
mod shift;
mod sync;
mod view;

pub use opsd_planning::Break;
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockPunchStore, MockScheduleStore, MockSchedulingProvider};
pub use ports::{
    ProviderDepartment, ProviderError, ProviderPunch, ProviderRole, ProviderShift, ProviderUser, PunchStore,
    PunchWindow, RoleCounts, RoleMap, ScheduleStore, SchedulingProvider, SyncCounts, SyncLocation,
};
pub use punches::{FIRST_SYNC_DAYS, OVERLAP, StoredPunch};
pub use shift::{Daypart, ScheduledShift, ShiftError, ShiftInput};
pub use sync::{
    FailedLocation, LegacyScheduleView, RoleSyncReport, ScheduleService, ScheduleViewError, SyncReport, SyncStatus,
    department_of,
};
pub use view::{ScheduleView, ViewFilter, ViewParams, ViewShift};
