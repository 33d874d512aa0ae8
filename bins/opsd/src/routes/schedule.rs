//! The 7shifts sync jobs and the legacy schedule view.

mod wire;

use actix_web::{HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::errors::ApiError;
use crate::extract::{ApiKey, CronSecret, QueryParams};
use crate::routes::cron::call;
use crate::state::AppState;

pub use wire::{ScheduleView, ScheduleViewQuery, ViewShift};

/// What a sync job answers: its report, or `{"status":"skipped"}` while another run holds the lock,
/// or `{"status":"disabled"}` without provider credentials.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct SyncJobAnswer {
    status: String,
    inserted: Option<u64>,
    updated: Option<u64>,
    deleted: Option<u64>,
    unchanged: Option<u64>,
    /// The locations left as they were, each with a short reason; empty when none failed.
    failed_locations: Option<Vec<FailedLocationAnswer>>,
}

/// A location a sync left as it was.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct FailedLocationAnswer {
    location_id: uuid::Uuid,
    slug: String,
    /// `provider_5xx`, `provider_4xx`, `provider_rate_limit`, `provider_auth`, `provider_malformed`,
    /// `timeout` or `network`.
    reason: String,
}

/// Refreshes the imported schedule from 7shifts: 14 days back to 28 ahead, one transaction per
/// location, upsert by provider shift id, vanished shifts deleted, nothing rewritten that did not
/// change. A failing location is left as it was and makes the run `partial`.
#[utoipa::path(get, path = "/cron/sync-schedule-from-7shifts", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, body = SyncJobAnswer)))]
pub async fn sync_schedule(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "sync-schedule-from-7shifts").await
}

/// Refreshes the role-to-department mapping from 7shifts roles and departments.
#[utoipa::path(get, path = "/cron/sync-7shifts-roles", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, body = SyncJobAnswer)))]
pub async fn sync_roles(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "sync-7shifts-roles").await
}

/// Syncs 7shifts time punches: per location, those modified since its last successful sync (less
/// an hour's overlap; on its first sync, those clocked in over the last 8 weeks), deleted ones
/// included and removed; upserted by the 7shifts punch id, one transaction per location. A punch
/// belongs to the local date of its clock-in; it counts as worked hours (clocked out − clocked in −
/// unpaid breaks) only when closed and approved. Wages are read in cents.
#[utoipa::path(get, path = "/cron/sync-7shifts-punches", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, body = SyncJobAnswer)))]
pub async fn sync_punches(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "sync-7shifts-punches").await
}

/// Deprecated, read-only: the imported shifts of a location, by start time. It never writes.
#[utoipa::path(get, path = "/api/schedule/{location_slug}", operation_id = "view_schedule", tags = ["schedule"],
    params(("location_slug" = String, Path), ScheduleViewQuery), security(("apiKey" = [])),
    responses((status = 200, body = ScheduleView, headers(
        ("Deprecation" = String, description = "true"),
        ("Sunset" = String, description = "The HTTP date after which the view may be gone (RFC 8594)"),
        ("Link" = String, description = "`rel=\"deprecation\"`: what to use instead"),
    ))))]
pub async fn view(
    state: web::Data<AppState>,
    _key: ApiKey,
    slug: web::Path<String>,
    QueryParams(query): QueryParams<ScheduleViewQuery>,
) -> Result<HttpResponse, ApiError> {
    // Only a well-formed slug can name a location; anything else (a NUL included) is unknown.
    opsd_teams::LocationSlug::parse(&slug).map_err(|_| ApiError::NotFound)?;
    let view = state.schedule.view(&slug, &query.into()).await?.ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok()
        .insert_header(("Deprecation", "true"))
        .insert_header(("Sunset", SCHEDULE_VIEW_SUNSET))
        .insert_header(("Link", SCHEDULE_VIEW_SUCCESSOR))
        .json(ScheduleView::from(view)))
}

/// When the legacy view may be removed (RFC 8594's HTTP date; docs/api-clients.md names it too).
pub const SCHEDULE_VIEW_SUNSET: &str = "Wed, 30 Jun 2027 23:59:59 GMT";
/// Where its deprecation is explained: the API reference this server serves.
const SCHEDULE_VIEW_SUCCESSOR: &str = "</docs#tag/schedule>; rel=\"deprecation\"; type=\"text/html\"";
