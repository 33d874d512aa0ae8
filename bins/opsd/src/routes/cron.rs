use actix_web::{HttpResponse, web};

use crate::errors::ApiError;
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
