//! Labor planning (service API key): scheduled-vs-actual variance and the sales forecast with the
//! hours it calls for.

mod wire;

use actix_web::{HttpResponse, web};

pub use wire::{
    Backtest, BlockForecast, DepartmentVariance, ForecastDay, ForecastReport, VarianceDay, VarianceLine,
    VarianceReport, VarianceSpan,
};

use super::conditional::json_with_etag;
use crate::errors::ApiError;
use crate::extract::{ApiKey, QueryParams};
use crate::routes::analytics::OptimizationQuery;
use crate::state::AppState;

/// The week's scheduled against actual labor per day and department (`FOH`, `BOH`, `Other`):
/// published shifts against closed, approved time punches, with FLSA weekly overtime and the labor %
/// both ways. Same query, validation and team scope as the optimization report; cached the same way
/// (`x-cache`), dropped when sales, shifts, punches or goals change.
#[utoipa::path(get, path = "/api/analytics/variance", tags = ["analytics"], params(OptimizationQuery,
        ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    security(("apiKey" = [])),
    responses(
        (status = 200, body = VarianceReport, headers(("x-cache" = String, description = "hit or miss"),
            ("ETag" = String, description = "the answer's version"))),
        (status = 304, description = "unchanged since the ETag sent in If-None-Match", headers(("ETag" = String))),
    ))]
pub async fn variance(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    _key: ApiKey,
    QueryParams(query): QueryParams<OptimizationQuery>,
) -> Result<HttpResponse, ApiError> {
    let (report, cache) = state.planning.variance(query.try_into_domain()?).await?;
    let mut answer = HttpResponse::Ok();
    answer.insert_header(super::x_cache(cache));
    Ok(json_with_etag(&req, answer, &VarianceReport::from(report.as_ref())))
}

/// The week's sales forecast per day and block, made only from the sales before `weekOf` (so a
/// past week can be checked against what happened), with the hours each day calls for by its SPLH
/// and labor % goals. The method is chosen per scope by an 8-week backtest and never scores worse
/// than the baseline (the mean of the same weekday and block over the previous 4 weeks). Under 4
/// weeks of history every number is null with `insufficient_history`.
#[utoipa::path(get, path = "/api/analytics/forecast", tags = ["analytics"], params(OptimizationQuery,
        ("If-None-Match" = Option<String>, Header, description = "an ETag of an earlier answer")),
    security(("apiKey" = [])),
    responses(
        (status = 200, body = ForecastReport, headers(("x-cache" = String, description = "hit or miss"),
            ("ETag" = String, description = "the answer's version"))),
        (status = 304, description = "unchanged since the ETag sent in If-None-Match", headers(("ETag" = String))),
    ))]
pub async fn forecast(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    _key: ApiKey,
    QueryParams(query): QueryParams<OptimizationQuery>,
) -> Result<HttpResponse, ApiError> {
    let (report, cache) = state.planning.forecast(query.try_into_domain()?).await?;
    let mut answer = HttpResponse::Ok();
    answer.insert_header(super::x_cache(cache));
    Ok(json_with_etag(&req, answer, &ForecastReport::from(report.as_ref())))
}
