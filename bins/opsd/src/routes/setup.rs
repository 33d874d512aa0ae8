//! Setting a team up: locations and team settings.

use actix_web::{HttpRequest, HttpResponse, web};
use opsd_teams::{Location, NewLocation};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use super::paging::{PageQuery, page_response};
use crate::errors::ApiError;
use crate::extract::{AnyCaller, JsonBody, QueryParams};
use crate::state::AppState;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NewLocationRequest {
    /// 1 to 200 characters.
    name: String,
    /// `[a-z0-9-]{1,64}`, unique across all teams.
    slug: String,
    /// An IANA time zone name, such as `America/Chicago`.
    timezone: String,
    /// The workforce-scheduling provider's id of this location.
    scheduler_location_id: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocationView {
    id: Uuid,
    team_id: String,
    name: String,
    slug: String,
    timezone: String,
    scheduler_location_id: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
}

impl From<Location> for LocationView {
    fn from(location: Location) -> Self {
        Self {
            id: location.id.0,
            team_id: location.team_id.to_string(),
            name: location.name,
            slug: location.slug.as_str().to_owned(),
            timezone: location.timezone.as_str().to_owned(),
            scheduler_location_id: location.scheduler_location_id,
            created_at: location.created_at,
        }
    }
}

/// Creates a location of the caller's team (admin).
#[utoipa::path(post, path = "/api/locations", tags = ["setup"], request_body = NewLocationRequest,
    security(("bearer" = []), ("session" = [])),
    responses(
        (status = 201, body = LocationView),
        (status = 400, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 401, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 403, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 409, description = "the slug is taken", body = crate::errors::Problem, content_type = "application/problem+json"),
    ))]
pub async fn create_location(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<NewLocationRequest>,
) -> Result<HttpResponse, ApiError> {
    let new = NewLocation::parse(&body.name, &body.slug, &body.timezone, body.scheduler_location_id.as_deref())?;
    let location = state.teams.create_location(&caller, new).await?;
    Ok(HttpResponse::Created()
        .insert_header(("Location", format!("/api/locations/{}", location.id)))
        .json(LocationView::from(location)))
}

/// Lists the caller's team's locations, by name, a page at a time.
#[utoipa::path(get, path = "/api/locations", tags = ["setup"], params(PageQuery),
    security(("bearer" = []), ("session" = [])),
    responses(
        (status = 200, body = Vec<LocationView>,
            headers(("Link" = String, description = "<…>; rel=\"next\": the next page, when more items follow (RFC 8288)"))),
        (status = 401, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 403, body = crate::errors::Problem, content_type = "application/problem+json"),
    ))]
pub async fn list_locations(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.teams.locations_page(&caller, query.request()?).await?;
    Ok(page_response(&req, page.map(LocationView::from)))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TeamSettingsRequest {
    /// A Slack-compatible incoming-webhook URL for team-chat nudges (`https`, public address), or
    /// null to clear it.
    chat_webhook_url: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamSettingsView {
    /// Whether a team-chat webhook is set; the URL itself is a secret and is not echoed.
    chat_webhook_configured: bool,
}

/// Sets the team's settings (admin).
#[utoipa::path(put, path = "/api/team/settings", tags = ["setup"], request_body = TeamSettingsRequest,
    security(("bearer" = []), ("session" = [])),
    responses(
        (status = 200, body = TeamSettingsView),
        (status = 400, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 401, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 403, body = crate::errors::Problem, content_type = "application/problem+json"),
    ))]
pub async fn put_team_settings(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<TeamSettingsRequest>,
) -> Result<HttpResponse, ApiError> {
    let url = body.chat_webhook_url.as_deref().map(str::trim).filter(|u| !u.is_empty());
    state.teams.set_chat_webhook_url(&caller, url).await?;
    Ok(HttpResponse::Ok().json(TeamSettingsView { chat_webhook_configured: url.is_some() }))
}

/// Reads the team's settings.
#[utoipa::path(get, path = "/api/team/settings", tags = ["setup"], security(("bearer" = []), ("session" = [])),
    responses(
        (status = 200, body = TeamSettingsView),
        (status = 401, body = crate::errors::Problem, content_type = "application/problem+json"),
        (status = 403, body = crate::errors::Problem, content_type = "application/problem+json"),
    ))]
pub async fn get_team_settings(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
) -> Result<HttpResponse, ApiError> {
    let configured = state.teams.chat_webhook_url(&caller).await?.is_some();
    Ok(HttpResponse::Ok().json(TeamSettingsView { chat_webhook_configured: configured }))
}
