//! The team-chat jobs and announcements.

mod wire;

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use super::paging::{PageQuery, page_response};
use crate::errors::ApiError;
use crate::extract::{AnyCaller, CronSecret, JsonBody, QueryParams};
use crate::routes::cron::call;
use crate::state::AppState;

pub use wire::{Announcement, AnnouncementRequest};

/// Nudges the team chat about today's unfiled shift and manager reports (today where each location
/// is), each at most once.
#[utoipa::path(get, path = "/cron/report-reminder", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, description = "`ok: N reminders sent, M already nudged, K failed`", content_type = "text/plain", body = String)))]
pub async fn report_reminder(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "report-reminder").await
}

/// Stores last week's (Saturday to Friday) filing compliance per location and nudges staff and
/// managers about what is missing.
#[utoipa::path(get, path = "/cron/check-compliance", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, description = "`ok: N nudges sent, M already nudged, K failed`", content_type = "text/plain", body = String)))]
pub async fn check_compliance(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "check-compliance").await
}

/// Counts last week's Hero of the Shift mentions and posts one MVP message per location and week.
#[utoipa::path(get, path = "/cron/aggregate-heroes", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, description = "`ok: N MVP messages sent, M already nudged, K failed`", content_type = "text/plain", body = String)))]
pub async fn aggregate_heroes(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "aggregate-heroes").await
}

#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
pub struct PublishAnswer {
    status: &'static str,
    published: Option<u32>,
    /// Devices that accepted the push (not proof of display).
    pushed: Option<u32>,
}

/// Publishes due announcements exactly once and pushes them to the team's devices.
#[utoipa::path(get, path = "/cron/publish-scheduled-announcements", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, body = PublishAnswer)))]
pub async fn publish_announcements(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "publish-scheduled-announcements").await
}

/// Schedules an announcement (admin); the job publishes it at `publishAt`.
#[utoipa::path(post, path = "/api/announcements", operation_id = "create_announcement", tags = ["announcements"], request_body = AnnouncementRequest,
    security(("bearer" = []), ("session" = [])), responses((status = 201, body = Announcement)))]
pub async fn create(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<AnnouncementRequest>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Created().json(Announcement::from(state.announcements.create(&caller, &body.into()).await?)))
}

/// The team's announcements, latest first, a page at a time.
#[utoipa::path(get, path = "/api/announcements", operation_id = "list_announcements", tags = ["announcements"],
    params(PageQuery), security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = Vec<Announcement>,
        headers(("Link" = String, description = "<…>; rel=\"next\": the next page, when more items follow (RFC 8288)")))))]
pub async fn list(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.announcements.list(&caller, query.request()?).await?;
    Ok(page_response(&req, page.map(Announcement::from)))
}
