use actix_web::{HttpResponse, web};

use opsd_jobs::{JobOutcome, JobRun, JobStatus};
use serde::Serialize;
use utoipa::ToSchema;

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
    responses((status = 200, description = "`{\"status\":\"ok\",\"pruned\":N}`, or `{\"status\":\"skipped\"}` while another run holds the lock", body = PruneAnswer)))]
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
                result: PruneAnswer { status: "ok", pruned: Some(pruned) },
            })
        })
        .await?;
    Ok(json_job(run))
}

/// What the prune job answers.
#[derive(Serialize, ToSchema)]
pub struct PruneAnswer {
    /// `ok`, or `skipped` while another run holds the lock.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pruned: Option<u64>,
}

/// The answer of a job that reports in JSON: its result, or `{"status":"skipped"}` while another
/// run holds the lock.
pub(crate) fn json_job<T: Serialize>(run: JobRun<T>) -> HttpResponse {
    match run {
        JobRun::Ran { outcome, .. } => HttpResponse::Ok().json(outcome.result),
        JobRun::AlreadyRunning => HttpResponse::Ok().json(serde_json::json!({ "status": "skipped" })),
    }
}

/// The answer of a job that reports in plain text.
pub(crate) fn text_job(run: JobRun<String>) -> HttpResponse {
    let body = match run {
        JobRun::Ran { outcome, .. } => outcome.result,
        JobRun::AlreadyRunning => "skipped: already running".to_owned(),
    };
    HttpResponse::Ok().content_type("text/plain; charset=utf-8").body(body)
}
