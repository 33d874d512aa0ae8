use actix_web::{HttpResponse, web};

use opsd_jobs::JobAnswer;
use serde::Serialize;
use utoipa::ToSchema;

use crate::errors::ApiError;
use crate::extract::CronSecret;
use crate::state::AppState;

/// Keeps the database connection warm with `SELECT 1`. Public: it does nothing sensitive and writes
/// nothing, so anonymous calls cannot grow any table.
#[utoipa::path(get, path = "/cron/keep-alive", tags = ["jobs"], responses(
    (status = 200, description = "`ok`", content_type = "text/plain", body = String),
    (status = 503, description = "the database does not answer", body = crate::errors::Problem, content_type = "application/problem+json"),
))]
pub async fn keep_alive(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state.db.ping().await?;
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("ok"))
}

/// Deletes contacts soft-deleted more than `CONTACT_RETENTION_DAYS` (default 30) ago; incidents
/// that named them keep existing without the contact.
#[utoipa::path(get, path = "/cron/prune-soft-deleted-contacts", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, description = "`{\"status\":\"ok\",\"pruned\":N}`, or `{\"status\":\"skipped\"}` while another run holds the lock", body = PruneAnswer)))]
pub async fn prune_soft_deleted_contacts(
    state: web::Data<AppState>,
    _cron: CronSecret,
) -> Result<HttpResponse, ApiError> {
    call(&state, "prune-soft-deleted-contacts").await
}

/// Deletes `Idempotency-Key` answers kept more than 24 hours.
#[utoipa::path(get, path = "/cron/prune-idempotency-keys", tags = ["jobs"], security(("cronSecret" = [])),
    responses((status = 200, description = "`{\"status\":\"ok\",\"pruned\":N}`, or `{\"status\":\"skipped\"}` while another run holds the lock", body = PruneAnswer)))]
pub async fn prune_idempotency_keys(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    call(&state, "prune-idempotency-keys").await
}

/// What the prune jobs answer.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
pub struct PruneAnswer {
    /// `ok`, or `skipped` while another run holds the lock.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pruned: Option<u64>,
}

/// The one handler of every job: runs it through the runner and renders its answer, text as
/// `text/plain`, JSON as JSON (500 when the run raised its health gate).
pub(crate) async fn call(state: &AppState, job: &str) -> Result<HttpResponse, ApiError> {
    let started = std::time::Instant::now();
    let span = tracing::info_span!("job", otel.name = %format!("job {job}"), job_name = job);
    let called = tracing::Instrument::instrument(state.jobs.call(state.cron.get(job)), span).await;
    state.metrics.job_called(job, called.as_ref().ok().map(|(status, _)| *status), started.elapsed());
    Ok(match called?.1 {
        JobAnswer::Text(text) => HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(text),
        JobAnswer::Json { body, healthy: true } => HttpResponse::Ok().json(body),
        JobAnswer::Json { body, healthy: false } => HttpResponse::InternalServerError().json(body),
    })
}
