//! Shift reports (staff) and manager reports (admins).

mod wire;

pub use wire::{HERO, MAX_REVIEWS, RATINGS, REVIEW_KEY, REVIEW_NAME, REVIEW_NOTES};

use actix_web::{HttpRequest, HttpResponse, web};

pub use wire::{
    EmployeeReviewBody, EmployeeReviewRequest, ManagerReport, ManagerReportRequest, ReportQuery, ShiftReport,
    ShiftReportRequest,
};

use super::paging::page_response;
use crate::errors::ApiError;
use crate::extract::{AnyCaller, JsonBody, QueryParams};
use crate::state::AppState;

/// Files an end-of-shift report; one per location, date and shift (a second is 409 naming the first).
#[utoipa::path(post, path = "/api/reports/shift", tags = ["reports"], request_body = ShiftReportRequest,
    security(("bearer" = []), ("session" = [])), responses((status = 201, body = ShiftReport)))]
pub async fn submit_shift(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<ShiftReportRequest>,
) -> Result<HttpResponse, ApiError> {
    let report = body.try_into_domain(state.reports.latest_date())?;
    Ok(HttpResponse::Created().json(ShiftReport::from(state.reports.submit_shift(&caller, report).await?)))
}

/// Files a manager's daily report (admin); one per location and date.
#[utoipa::path(post, path = "/api/reports/manager", tags = ["reports"], request_body = ManagerReportRequest,
    security(("bearer" = []), ("session" = [])), responses((status = 201, body = ManagerReport)))]
pub async fn submit_manager(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<ManagerReportRequest>,
) -> Result<HttpResponse, ApiError> {
    let report = body.try_into_domain(state.reports.latest_date())?;
    Ok(HttpResponse::Created().json(ManagerReport::from(state.reports.submit_manager(&caller, report).await?)))
}

/// A location's shift reports in a date range, by date and shift.
#[utoipa::path(get, path = "/api/reports/shift", tags = ["reports"], params(ReportQuery),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Vec<ShiftReport>,
        headers(("Link" = String, description = "<…>; rel=\"next\": the next page, when more items follow (RFC 8288)")))))]
pub async fn shift_reports(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<ReportQuery>,
) -> Result<HttpResponse, ApiError> {
    let (range, page) = query.into_domain()?;
    let reports = state.reports.shift_reports(&caller, range, page).await?;
    Ok(page_response(&req, reports.map(ShiftReport::from)))
}

/// A location's manager reports in a date range, by date.
#[utoipa::path(get, path = "/api/reports/manager", tags = ["reports"], params(ReportQuery),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Vec<ManagerReport>,
        headers(("Link" = String, description = "<…>; rel=\"next\": the next page, when more items follow (RFC 8288)")))))]
pub async fn manager_reports(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<ReportQuery>,
) -> Result<HttpResponse, ApiError> {
    let (range, page) = query.into_domain()?;
    let reports = state.reports.manager_reports(&caller, range, page).await?;
    Ok(page_response(&req, reports.map(ManagerReport::from)))
}
