use std::collections::BTreeMap;

use actix_web::{HttpResponse, web};
use prometheus::{Encoder, TextEncoder};
use serde::Serialize;
use utoipa::ToSchema;

use crate::errors::ApiError;
use crate::middleware::HttpMetrics;
use crate::state::AppState;
use crate::supervisor::{Supervisor, TaskState};

#[derive(Serialize, ToSchema)]
pub struct HealthStatus {
    status: &'static str,
}

/// The process is up.
#[utoipa::path(get, path = "/health/live", tags = ["operations"], responses((status = 200, body = HealthStatus)))]
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(HealthStatus { status: "live" })
}

#[derive(Serialize, ToSchema)]
pub struct Readiness {
    /// `ready`.
    status: &'static str,
    /// Each supervised background task (`cache-invalidation-listener`, `guest-event-worker`):
    /// `running`, or `restarting` after it stopped; readiness depends on the database only.
    background: BTreeMap<&'static str, TaskState>,
}

/// The process can serve: it is not draining after SIGTERM, and the database answers. The details
/// show the background tasks.
#[utoipa::path(get, path = "/health/ready", tags = ["operations"], responses(
    (status = 200, body = Readiness),
    (status = 503, description = "draining after SIGTERM, or the database does not answer", body = crate::errors::Problem, content_type = "application/problem+json"),
))]
pub async fn ready(state: web::Data<AppState>, supervisor: web::Data<Supervisor>) -> Result<HttpResponse, ApiError> {
    if state.draining.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(ApiError::Unavailable("draining: this instance is stopping".into()));
    }
    state.db.ping().await?;
    Ok(HttpResponse::Ok().json(Readiness { status: "ready", background: supervisor.states() }))
}

/// Prometheus text exposition: request counts and latency histograms by route and status.
#[utoipa::path(get, path = "/metrics", tags = ["operations"], responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(metrics: web::Data<HttpMetrics>, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if metrics.served_apart {
        return Err(ApiError::NotFound);
    }
    Ok(render_metrics(metrics, state).await)
}

/// `/metrics` itself: on the API's address, or alone on `METRICS_BIND_ADDR`.
pub async fn render_metrics(metrics: web::Data<HttpMetrics>, state: web::Data<AppState>) -> HttpResponse {
    state.metrics.refresh(&state).await;
    let mut buffer = Vec::new();
    TextEncoder::new().encode(&metrics.registry.gather(), &mut buffer).expect("metrics encode");
    HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(buffer)
}
