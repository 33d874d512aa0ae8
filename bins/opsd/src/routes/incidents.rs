//! Incidents and the contacts they name.

mod wire;

use actix_web::{HttpRequest, HttpResponse, web};
use opsd_incidents::{ContactId, IncidentId};
use uuid::Uuid;

pub use wire::{
    Comment, CommentRequest, Contact, ContactMode, ContactRequest, Incident, IncidentDetail, IncidentQuery,
    IncidentRequest, Page, StatusChange, StatusRequest,
};

use super::paging::{PageQuery, page_response};
use crate::errors::ApiError;
use crate::extract::{AnyCaller, JsonBody, QueryParams};
use crate::state::AppState;

/// Reports an incident at one of the team's locations; it starts `reported`.
#[utoipa::path(post, path = "/api/incidents", tags = ["incidents"], request_body = IncidentRequest,
    security(("bearer" = []), ("session" = [])),
    responses((status = 201, body = Incident, headers(("Location" = String, description = "the incident's address")))))]
pub async fn report(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<IncidentRequest>,
) -> Result<HttpResponse, ApiError> {
    let incident = state.incidents.report(&caller, body.try_into_domain()?).await?;
    let location = format!("/api/incidents/{}", incident.id.0);
    Ok(HttpResponse::Created().insert_header(("Location", location)).json(Incident::from(incident)))
}

/// The team's incidents, newest first, a page at a time.
#[utoipa::path(get, path = "/api/incidents", operation_id = "list_incidents", tags = ["incidents"], params(IncidentQuery),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Page<Incident>)))]
pub async fn list(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<IncidentQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.incidents.list(&caller, query.into_domain()).await?;
    Ok(HttpResponse::Ok().json(Page::from(page)))
}

/// One incident with its comments and status history. Another team's incident is 404.
#[utoipa::path(get, path = "/api/incidents/{id}", operation_id = "get_incident", tags = ["incidents"],
    params(("id" = Uuid, Path), ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    security(("bearer" = []), ("session" = [])), responses(
        (status = 200, body = IncidentDetail, headers(("ETag" = String, description = "the answer's version"))),
        (status = 304, description = "unchanged since the ETag sent in If-None-Match", headers(("ETag" = String))),
    ))]
pub async fn get(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let detail = IncidentDetail::from(state.incidents.get(&caller, IncidentId(*id)).await?);
    Ok(super::conditional::json_with_etag(&req, HttpResponse::Ok(), &detail))
}

/// Changes the status; any status may follow any other, and the same status again changes nothing.
#[utoipa::path(patch, path = "/api/incidents/{id}", tags = ["incidents"], params(("id" = Uuid, Path)),
    request_body = StatusRequest, security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = Incident)))]
pub async fn change_status(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
    JsonBody(body): JsonBody<StatusRequest>,
) -> Result<HttpResponse, ApiError> {
    let incident = state.incidents.change_status(&caller, IncidentId(*id), body.status).await?;
    Ok(HttpResponse::Ok().json(Incident::from(incident)))
}

/// Adds a comment to an incident.
#[utoipa::path(post, path = "/api/incidents/{id}/comments", tags = ["incidents"], params(("id" = Uuid, Path)),
    request_body = CommentRequest, security(("bearer" = []), ("session" = [])),
    responses((status = 201, body = Comment)))]
pub async fn comment(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
    JsonBody(body): JsonBody<CommentRequest>,
) -> Result<HttpResponse, ApiError> {
    let comment = state.incidents.comment(&caller, IncidentId(*id), &body.content).await?;
    Ok(HttpResponse::Created().json(Comment::from(comment)))
}

/// Adds a contact to the team.
#[utoipa::path(post, path = "/api/contacts", tags = ["incidents"], request_body = ContactRequest,
    security(("bearer" = []), ("session" = [])), responses((status = 201, body = Contact)))]
pub async fn add_contact(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<ContactRequest>,
) -> Result<HttpResponse, ApiError> {
    let contact = state.incidents.add_contact(&caller, body.try_into_domain()?).await?;
    let location = format!("/api/contacts/{}", contact.id.0);
    Ok(HttpResponse::Created().insert_header(("Location", location)).json(Contact::from(contact)))
}

/// The team's live contacts, by name, a page at a time.
#[utoipa::path(get, path = "/api/contacts", tags = ["incidents"], params(PageQuery),
    security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = Vec<Contact>, headers(("Link" = String, description = "<…>; rel=\"next\": the next page, when more items follow (RFC 8288)")))))]
pub async fn contacts(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = state.incidents.contacts(&caller, query.request()?).await?;
    Ok(page_response(&req, page.map(Contact::from)))
}

/// Soft-deletes a contact (admin). The prune job removes it after `CONTACT_RETENTION_DAYS`.
#[utoipa::path(delete, path = "/api/contacts/{id}", tags = ["incidents"], params(("id" = Uuid, Path)),
    security(("bearer" = []), ("session" = [])), responses((status = 204, description = "deleted")))]
pub async fn remove_contact(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    state.incidents.remove_contact(&caller, ContactId(*id)).await?;
    Ok(HttpResponse::NoContent().finish())
}
