//! End-of-shift reports (staff) and daily manager reports.

mod model;
mod ports;
mod requests;
mod service;

pub use model::{EmployeeReview, ManagerReport, NewManagerReport, NewShiftReport, ReportShift, ShiftReport};
#[cfg(any(test, feature = "mock"))]
pub use ports::MockReportStore;
pub use ports::{ReportStore, SaveReportError};
pub use requests::{EmployeeReviewRequest, ManagerReportRequest, ShiftReportRequest};
pub use service::{ReportError, ReportRange, ReportService};
