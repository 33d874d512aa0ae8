//! The imported schedule: shifts from the workforce-scheduling provider, placed in their
//! location's local day and daypart, with their hours and the wage they had when synced.

mod shift;

pub use shift::{Daypart, ScheduledShift, ShiftError, ShiftInput};
