//! End-of-shift reports (staff) and daily manager reports.

mod model;
mod ports;
mod service;

pub use model::{
    EmployeeReview, ManagerReport, NewManagerReport, NewShiftReport, ReportShift, ShiftReport, ShiftReportKey,
};
#[cfg(any(test, feature = "mock"))]
pub use ports::MockReportStore;
pub use ports::{ReportStore, SaveReportError};
pub use service::{Duplicate, ReportError, ReportRange, ReportService};
