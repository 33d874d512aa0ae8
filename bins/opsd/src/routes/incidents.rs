//! Incidents and the contacts they name.

use actix_web::{HttpResponse, web};
use opsd_core::LocationId;
use opsd_incidents::{
    Comment, Contact, ContactId, ContactRequest, Incident, IncidentDetail, IncidentError, IncidentId, IncidentRequest,
    ListIncidents, Page, Status,
};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::errors::ApiError;
use crate::extract::{AnyCaller, JsonBody, QueryParams};
use crate::state::AppState;

impl From<IncidentError> for ApiError {
    fn from(error: IncidentError) -> Self {
        match error {
            IncidentError::Forbidden(forbidden) => forbidden.into(),
            IncidentError::Invalid(errors) => errors.into(),
            IncidentError::NotFound => ApiError::NotFound,
            IncidentError::Store(error) => error.into(),
        }
    }
}

/// Reports an incident at one of the team's locations; it starts `reported`.
#[utoipa::path(post, path = "/api/incidents", tag = "incidents", request_body = IncidentRequest,
    security(("bearer" = []), ("session" = [])),
    responses((status = 201, body = Incident, headers(("Location" = String, description = "the incident's address")))))]
pub async fn report(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<IncidentRequest>,
) -> Result<HttpResponse, ApiError> {
    let incident = state.incidents.report(&caller, body.parse()?).await?;
    Ok(HttpResponse::Created().insert_header(("Location", format!("/api/incidents/{}", incident.id.0))).json(incident))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct IncidentQuery {
    location_id: Option<Uuid>,
    #[param(inline)]
    status: Option<Status>,
    /// 1 to 100, default 50.
    limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    cursor: Option<String>,
}

/// The team's incidents, newest first, a page at a time.
#[utoipa::path(get, path = "/api/incidents", tag = "incidents", params(IncidentQuery),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Page<Incident>)))]
pub async fn list(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<IncidentQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state
        .incidents
        .list(
            &caller,
            ListIncidents {
                location_id: query.location_id.map(LocationId),
                status: query.status,
                limit: query.limit,
                cursor: query.cursor,
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// One incident with its comments and status history. Another team's incident is 404.
#[utoipa::path(get, path = "/api/incidents/{id}", tag = "incidents", params(("id" = Uuid, Path)),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = IncidentDetail)))]
pub async fn get(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.incidents.get(&caller, IncidentId(*id)).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {
    status: Status,
}

/// Changes the status; any status may follow any other, and the same status again changes nothing.
#[utoipa::path(patch, path = "/api/incidents/{id}", tag = "incidents", params(("id" = Uuid, Path)),
    request_body = StatusRequest, security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = Incident)))]
pub async fn change_status(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
    JsonBody(body): JsonBody<StatusRequest>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.incidents.change_status(&caller, IncidentId(*id), body.status).await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentRequest {
    /// 1 to 5000 characters, not only whitespace.
    content: String,
}

/// Adds a comment to an incident.
#[utoipa::path(post, path = "/api/incidents/{id}/comments", tag = "incidents", params(("id" = Uuid, Path)),
    request_body = CommentRequest, security(("bearer" = []), ("session" = [])),
    responses((status = 201, body = Comment)))]
pub async fn comment(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
    JsonBody(body): JsonBody<CommentRequest>,
) -> Result<HttpResponse, ApiError> {
    let comment = state.incidents.comment(&caller, IncidentId(*id), &body.content).await?;
    Ok(HttpResponse::Created().json(comment))
}

/// Adds a contact to the team.
#[utoipa::path(post, path = "/api/contacts", tag = "incidents", request_body = ContactRequest,
    security(("bearer" = []), ("session" = [])), responses((status = 201, body = Contact)))]
pub async fn add_contact(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<ContactRequest>,
) -> Result<HttpResponse, ApiError> {
    let contact = state.incidents.add_contact(&caller, body.parse()?).await?;
    Ok(HttpResponse::Created().insert_header(("Location", format!("/api/contacts/{}", contact.id.0))).json(contact))
}

/// The team's live contacts, by name.
#[utoipa::path(get, path = "/api/contacts", tag = "incidents", security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = Vec<Contact>)))]
pub async fn contacts(state: web::Data<AppState>, AnyCaller(caller): AnyCaller) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(state.incidents.contacts(&caller).await?))
}

/// Soft-deletes a contact (admin). The prune job removes it after `CONTACT_RETENTION_DAYS`.
#[utoipa::path(delete, path = "/api/contacts/{id}", tag = "incidents", params(("id" = Uuid, Path)),
    security(("bearer" = []), ("session" = [])), responses((status = 204, description = "deleted")))]
pub async fn remove_contact(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    state.incidents.remove_contact(&caller, ContactId(*id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
