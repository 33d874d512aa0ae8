//! Labor optimization data and goals (service API key).

mod wire;

pub use wire::{DAYS_OF_WEEK, MAX_LABOR_PCT, MAX_SALES_ROWS, TEAM_ID};

use actix_web::{HttpResponse, web};
use opsd_optimization::ReportKey;

pub use wire::{
    DailyRow, DayGoalBody, GoalRequest, GoalsQuery, GoalsRequest, GoalsResponse, LaborRow, OptimizationQuery,
    OptimizationReport, SalesIngestRequest, SalesIngested, SalesReportRow, SalesRowRequest, Summary, WeeklySummary,
    render,
};

use crate::errors::ApiError;
use crate::extract::{ApiKey, JsonBody, Parsed, QueryParams};
use crate::state::AppState;

/// A cached report's JSON handed to the response without a copy.
struct CachedJson(std::sync::Arc<opsd_optimization::RenderedReport>);

impl AsRef<[u8]> for CachedJson {
    fn as_ref(&self) -> &[u8] {
        self.0.json.as_bytes()
    }
}

/// The week's labor optimization data. Cached for 15 minutes per team, location and week
/// (`x-cache: hit|miss`); dropped at once on sales ingestion, goal changes, schedule syncs and
/// identity events. While the store is failing (circuit open) cached answers are still served.
/// Each answer carries an `ETag`; a client that polls sends it back in `If-None-Match` and gets
/// 304 with no body while the numbers are the same.
#[utoipa::path(get, path = "/api/analytics/optimization", tags = ["analytics"], params(OptimizationQuery,
        ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    security(("apiKey" = [])),
    responses(
        (status = 200, body = OptimizationReport, headers(("x-cache" = String, description = "hit or miss"),
            ("ETag" = String, description = "the answer's version"))),
        (status = 304, description = "unchanged since the ETag sent", headers(("ETag" = String))),
    ))]
pub async fn optimization(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    _key: ApiKey,
    Parsed(key): Parsed<ReportKey>,
) -> Result<HttpResponse, ApiError> {
    let (report, cache) = state.optimization.report(key).await?;
    use actix_web::http::header;
    // The report's ETag was computed once, when it was cached.
    let unchanged = super::conditional::unchanged(&req, &report.etag);
    let mut answer = if unchanged { HttpResponse::NotModified() } else { HttpResponse::Ok() };
    answer.insert_header(super::x_cache(cache)).insert_header((header::ETAG, report.etag.as_str()));
    if unchanged {
        return Ok(answer.finish());
    }
    Ok(answer.content_type("application/json").body(actix_web::web::Bytes::from_owner(CachedJson(report))))
}

/// The per-weekday goals (0 = Saturday): a location's own, else the team default.
#[utoipa::path(get, path = "/api/analytics/goals", tags = ["analytics"], params(GoalsQuery),
    security(("apiKey" = [])), responses((status = 200, body = GoalsResponse)))]
pub async fn goals(
    state: web::Data<AppState>,
    _key: ApiKey,
    QueryParams(query): QueryParams<GoalsQuery>,
) -> Result<HttpResponse, ApiError> {
    let (team, location) = query.try_into_domain()?;
    Ok(HttpResponse::Ok().json(GoalsResponse::from(state.optimization.goals(&team, location).await?)))
}

/// Sets goals by weekday for a location, or the team defaults without `locationId`; answers the
/// scope's goals after the change.
#[utoipa::path(put, path = "/api/analytics/goals", tags = ["analytics"], request_body = GoalsRequest,
    security(("apiKey" = [])), responses((status = 200, body = GoalsResponse)))]
pub async fn set_goals(
    state: web::Data<AppState>,
    _key: ApiKey,
    JsonBody(body): JsonBody<GoalsRequest>,
) -> Result<HttpResponse, ApiError> {
    let (team, location, goals) = body.try_into_domain()?;
    Ok(HttpResponse::Ok().json(GoalsResponse::from(state.optimization.set_goals(&team, location, &goals).await?)))
}

/// Upserts sales facts by (location, date, block): up to 10,000 rows in one transaction, all or
/// nothing. The body may be up to 4 MiB.
#[utoipa::path(post, path = "/api/analytics/sales", tags = ["analytics"], request_body = SalesIngestRequest,
    security(("apiKey" = [])), responses((status = 200, body = SalesIngested)))]
pub async fn ingest_sales(
    state: web::Data<AppState>,
    _key: ApiKey,
    JsonBody(body): JsonBody<SalesIngestRequest>,
) -> Result<HttpResponse, ApiError> {
    let (team, rows) = body.try_into_domain()?;
    let written = state.optimization.ingest_sales(&team, &rows).await?;
    Ok(HttpResponse::Ok().json(SalesIngested { written }))
}
