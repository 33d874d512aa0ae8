//! The incident pages (team members): open incidents by location, severity and age; one
//! incident with its comments and status history; a status change as a form.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use maud::html;
use opsd_incidents::{IncidentId, ListIncidents, Status};
use serde::Deserialize;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::console::access::{Need, allow};
use crate::console::page::{layout, ok, refusal, unavailable};
use crate::state::AppState;

fn age(since: OffsetDateTime) -> String {
    let elapsed = OffsetDateTime::now_utc() - since;
    match (elapsed.whole_days(), elapsed.whole_hours()) {
        (days, _) if days >= 1 => format!("{days} d"),
        (_, hours) if hours >= 1 => format!("{hours} h"),
        _ => format!("{} min", elapsed.whole_minutes().max(0)),
    }
}

pub async fn list(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let caller = match allow(&req, Need::Member).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let query = ListIncidents { location_id: None, status: None, limit: Some(100), cursor: None };
    let (page, locations) = match tokio::try_join!(
        async { state.incidents.list(&caller, query).await.map_err(crate::ApiError::from) },
        async { state.teams.list_locations(&caller).await.map_err(crate::ApiError::from) },
    ) {
        Ok(found) => found,
        Err(error) => return unavailable("The incidents are", error),
    };
    let location_name =
        |id| locations.iter().find(|l| l.id == id).map(|l| l.name.clone()).unwrap_or_else(|| "(removed)".into());
    let open: Vec<_> = page.items.iter().filter(|i| i.status != Status::Resolved).collect();
    let body = html! {
        h1 { "Open incidents" }
        p { (open.len()) " open of the latest " (page.items.len()) "." }
        div class="card" {
            table {
                thead { tr { th { "Location" } th { "Type" } th { "Severity" } th { "Status" } th class="num" { "Age" } th { span class="sr-only" { "Open" } } } }
                tbody {
                    @for incident in &open {
                        tr data-incident=(incident.id.0) {
                            td { (location_name(incident.location_id)) }
                            td { (incident.incident_type.as_str()) }
                            td class={ "severity-" (incident.severity.as_str()) } { (incident.severity.as_str()) }
                            td data-status=(incident.status.as_str()) { (incident.status.as_str()) }
                            td class="num" { (age(incident.created_at)) }
                            td { a href={ "/console/incidents/" (incident.id.0) } { "Open" } }
                        }
                    }
                }
            }
        }
    };
    ok(layout("incidents", "Incidents", body))
}

pub async fn detail(req: HttpRequest, state: web::Data<AppState>, id: web::Path<Uuid>) -> HttpResponse {
    let caller = match allow(&req, Need::Member).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let detail = match state.incidents.get(&caller, IncidentId(*id)).await {
        Ok(detail) => detail,
        Err(opsd_core::ServiceError::NotFound) => {
            return refusal(StatusCode::NOT_FOUND, "No such incident in your team.");
        }
        Err(error) => return unavailable("The incidents are", error),
    };
    let incident = &detail.incident;
    let body = html! {
        h1 { (incident.incident_type.as_str()) " · " span class={ "severity-" (incident.severity.as_str()) } { (incident.severity.as_str()) } }
        p { "Reported " (age(incident.created_at)) " ago. Status: " strong data-status=(incident.status.as_str()) { (incident.status.as_str()) } }
        div class="card" { p { (incident.notes) } }
        form class="pickers" method="post" action={ "/console/incidents/" (incident.id.0) "/status" } {
            label { "Change the status"
                select name="status" {
                    @for status in Status::names() {
                        option value=(status) selected[*status == incident.status.as_str()] { (status) }
                    }
                }
            }
            button type="submit" { "Save" }
        }
        h2 { "Comments" }
        @if detail.comments.is_empty() { p { "None yet." } }
        @for comment in &detail.comments {
            div class="card" { p { (comment.content) } p class="note" { (comment.author_id) ", " (age(comment.created_at)) " ago" } }
        }
        h2 { "Status history" }
        table {
            thead { tr { th { "From" } th { "To" } th { "By" } th { "When" } } }
            tbody {
                @for change in &detail.status_history {
                    tr { td { (change.from.as_str()) } td { (change.to.as_str()) } td { (change.by) } td { (age(change.at)) " ago" } }
                }
            }
        }
    };
    ok(layout("incidents", "Incident", body))
}

#[derive(Deserialize)]
pub struct StatusForm {
    status: String,
}

/// The status form: changes, then shows the incident again (POST, redirect, GET).
pub async fn change_status(
    req: HttpRequest,
    state: web::Data<AppState>,
    id: web::Path<Uuid>,
    form: web::Form<StatusForm>,
) -> HttpResponse {
    let caller = match allow(&req, Need::Member).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(status) = Status::parse(&form.status) else {
        return refusal(StatusCode::BAD_REQUEST, "That is not a status.");
    };
    match state.incidents.change_status(&caller, IncidentId(*id), status).await {
        Ok(_) => HttpResponse::SeeOther().insert_header(("location", format!("/console/incidents/{}", *id))).finish(),
        Err(opsd_core::ServiceError::NotFound) => refusal(StatusCode::NOT_FOUND, "No such incident in your team."),
        Err(error) => unavailable("The incidents are", error),
    }
}
