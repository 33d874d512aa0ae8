//! End-of-shift reports (staff) and daily manager reports.

mod model;
mod ports;
mod requests;
mod service;

pub use model::{EmployeeReview, ManagerReport, NewManagerReport, NewShiftReport, ReportShift, ShiftReport};
pub use ports::{ReportStore, SaveReportError};
#[cfg(any(test, feature = "mock"))]
pub use ports::MockReportStore;
pub use requests::{EmployeeReviewRequest, ManagerReportRequest, ShiftReportRequest};
pub use service::{ReportError, ReportRange, ReportService};
