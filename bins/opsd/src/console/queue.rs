//! The queue page (operators): guest events by state, the failed ones with their last error's
//! classification, and a Retry action that queues one again.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use maud::html;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::console::access::{Need, allow};
use crate::console::page::{layout, ok, refusal, unavailable, when};
use crate::state::AppState;

const FAILED_SHOWN: u32 = 100;

pub async fn page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if let Err(refused) = allow(&req, Need::Operator).await {
        return refused;
    }
    let overview = match state.guest_event_queue.overview(FAILED_SHOWN).await {
        Ok(overview) => overview,
        Err(error) => return unavailable("The guest-event queue is", error),
    };
    let body = html! {
        h1 { "Guest-event queue" }
        div class="tiles" {
            @for state_name in ["queued", "processing", "done", "failed"] {
                @let count = overview.by_state.iter().find(|(s, _)| s == state_name).map_or(0, |(_, n)| *n);
                div class="tile" data-state=(state_name) {
                    div { (state_name) }
                    div class={ "value" @if state_name == "failed" && count > 0 { " alarm" } } { (count) }
                }
            }
        }
        h2 { "Failed events" }
        @if overview.failed.is_empty() { p { "None." } }
        @else {
            div class="card" {
                table {
                    thead { tr { th { "Received" } th { "Type" } th { "Team" } th class="num" { "Attempts" } th { "Last error" } th { span class="sr-only" { "Retry" } } } }
                    tbody {
                        @for event in &overview.failed {
                            tr data-event=(event.id) {
                                td class="when" { (when(event.received_at)) }
                                td { (event.event_type) }
                                td { (event.team_id) }
                                td class="num" { (event.attempts) }
                                td { code { (event.last_error.as_deref().unwrap_or("unknown")) } }
                                td {
                                    form method="post" action={ "/console/queue/" (event.id) "/retry" } {
                                        button type="submit" { "Retry" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    ok(layout("queue", "Queue", body))
}

/// Queues a failed event again and wakes the worker (POST, redirect, GET).
pub async fn retry(req: HttpRequest, state: web::Data<AppState>, id: web::Path<Uuid>) -> HttpResponse {
    if let Err(refused) = allow(&req, Need::Operator).await {
        return refused;
    }
    match state.guest_event_queue.retry(*id, OffsetDateTime::now_utc()).await {
        Ok(true) => {
            tracing::info!(event = %*id, "a failed guest event was queued again from the console");
            state.guest_event_wake.notify_one();
            HttpResponse::SeeOther().insert_header(("location", "/console/queue")).finish()
        }
        Ok(false) => refusal(StatusCode::NOT_FOUND, "No failed event with that id."),
        Err(error) => unavailable("The guest-event queue is", error),
    }
}
