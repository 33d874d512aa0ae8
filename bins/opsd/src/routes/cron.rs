use actix_web::{HttpResponse, web};

use opsd_jobs::{JobOutcome, JobRun, JobStatus};

use crate::errors::ApiError;
use crate::extract::CronSecret;
use crate::state::AppState;

/// Keeps the database connection warm with `SELECT 1`. Public: it does nothing sensitive and writes
/// nothing, so anonymous calls cannot grow any table.
#[utoipa::path(get, path = "/cron/keep-alive", tag = "jobs", responses(
    (status = 200, description = "`ok`", content_type = "text/plain", body = String),
    (status = 503, description = "the database does not answer", body = crate::errors::Problem, content_type = "application/problem+json"),
))]
pub async fn keep_alive(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state.db.ping().await?;
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("ok"))
}

/// Deletes contacts soft-deleted more than `CONTACT_RETENTION_DAYS` (default 30) ago; incidents
/// that named them keep existing without the contact.
#[utoipa::path(get, path = "/cron/prune-soft-deleted-contacts", tag = "jobs", security(("cronSecret" = [])),
    responses((status = 200, description = "`ok: N contacts pruned`, or `skipped: already running`", content_type = "text/plain", body = String)))]
pub async fn prune_soft_deleted_contacts(
    state: web::Data<AppState>,
    _cron: CronSecret,
) -> Result<HttpResponse, ApiError> {
    let retention = state.contact_retention_days;
    let run = state
        .jobs
        .run("prune-soft-deleted-contacts", |_| async {
            let pruned = state.incidents.prune_contacts(retention).await?;
            Ok::<_, ApiError>(JobOutcome {
                status: JobStatus::Ok,
                summary: serde_json::json!({ "pruned": pruned, "retentionDays": retention }),
                result: format!("ok: {pruned} contacts pruned"),
            })
        })
        .await?;
    Ok(text_job(run))
}

/// The answer of a job that reports in plain text.
pub(crate) fn text_job(run: JobRun<String>) -> HttpResponse {
    let body = match run {
        JobRun::Ran { outcome, .. } => outcome.result,
        JobRun::AlreadyRunning => "skipped: already running".to_owned(),
    };
    HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(body)
}
