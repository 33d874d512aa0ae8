//! Labor planning (service API key): scheduled-vs-actual variance and the sales forecast with the
//! hours it calls for.

mod week_wire;
mod wire;

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use opsd_core::LocationId;
use uuid::Uuid;

pub use wire::{
    Backtest, BlockForecast, DepartmentVariance, ForecastDay, ForecastReport, VarianceDay, VarianceLine,
    VarianceReport, VarianceSpan,
};

pub use week_wire::{
    AvailabilityRequest, AvailabilityView, BindingRuleView, DraftsPublished, EmployeeAvailability, PlannedShiftTime,
    PlanningRules, PlanningRulesView, ProposalCoverage, ProposalRequest, ProposalShift, ProposalSolver, ProposalWeek,
    ScheduleChangeView, ScheduleProposal, ShiftSlot, ShiftTime, ShiftTimesRequest, ShiftTimesView,
};

use self::week_wire::{LocationQuery, ProposalListQuery};
use super::conditional::json_with_etag;
use super::paging::{PageQuery, page_response};
use crate::errors::ApiError;
use crate::extract::{AnyCaller, ApiKey, JsonBody, QueryParams};
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

/// A location's availability: per employee, the weekdays and dates they cannot work, the blocks they
/// prefer and the most hours a week they work. Admins (managers) of the team; another team's location is 404.
#[utoipa::path(get, path = "/api/planning/availability", operation_id = "get_availability", tags = ["planning"],
    params(LocationQuery), security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = AvailabilityView)))]
pub async fn availability(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<LocationQuery>,
) -> Result<HttpResponse, ApiError> {
    let location = LocationId(query.location_id);
    let rows = state.week_plans.availability(&caller, location).await?;
    Ok(HttpResponse::Ok().json(AvailabilityView::new(location, rows)))
}

/// Sets the listed employees' availability at a location (the others keep theirs) and answers the
/// location's whole list. An employee key never seen in the location's shifts or punches is 422
/// `unknown_employee`; one key twice is 400.
#[utoipa::path(put, path = "/api/planning/availability", operation_id = "put_availability", tags = ["planning"],
    request_body = AvailabilityRequest, security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = AvailabilityView)))]
pub async fn put_availability(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<AvailabilityRequest>,
) -> Result<HttpResponse, ApiError> {
    let (location, rows) = body.try_into_domain()?;
    let rows = state.week_plans.put_availability(&caller, location, rows).await?;
    Ok(HttpResponse::Ok().json(AvailabilityView::new(location, rows)))
}

/// The rules the team's weeks are planned under: the team's own, else the defaults (`setByTeam`
/// false). Admins (managers) of the team.
#[utoipa::path(get, path = "/api/planning/rules", operation_id = "get_planning_rules", tags = ["planning"],
    security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = PlanningRulesView)))]
pub async fn rules(state: web::Data<AppState>, AnyCaller(caller): AnyCaller) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(PlanningRulesView::from(state.week_plans.rules(&caller).await?)))
}

/// Replaces the team's planning rules (all of them); proposals asked for from then on are planned
/// under them. A rule out of its bounds is 400 naming it, and nothing is written.
#[utoipa::path(put, path = "/api/planning/rules", operation_id = "put_planning_rules", tags = ["planning"],
    request_body = PlanningRules, security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = PlanningRulesView)))]
pub async fn put_rules(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<PlanningRules>,
) -> Result<HttpResponse, ApiError> {
    let rules = state.week_plans.put_rules(&caller, body.into_domain()).await?;
    Ok(HttpResponse::Ok().json(PlanningRulesView::from(rules)))
}

/// A location's shift types as its next week is planned: each department's shift per block, read
/// from the 8 weeks of shifts before this one (the median start and length) or set by its manager.
#[utoipa::path(get, path = "/api/planning/shift-times", operation_id = "get_shift_times", tags = ["planning"],
    params(LocationQuery), security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = ShiftTimesView)))]
pub async fn shift_times(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<LocationQuery>,
) -> Result<HttpResponse, ApiError> {
    let location = LocationId(query.location_id);
    let times = state.week_plans.shift_times(&caller, location).await?;
    Ok(HttpResponse::Ok().json(ShiftTimesView::new(location, times)))
}

/// Sets a location's shift times (replacing the ones set before; an empty list goes back to the
/// history's) and answers its shift types. A department and block twice, a start that is not
/// `HH:MM` or a length outside 1 to 16 hours is 400, and nothing is written.
#[utoipa::path(put, path = "/api/planning/shift-times", operation_id = "put_shift_times", tags = ["planning"],
    request_body = ShiftTimesRequest, security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = ShiftTimesView)))]
pub async fn put_shift_times(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<ShiftTimesRequest>,
) -> Result<HttpResponse, ApiError> {
    let (location, times) = body.try_into_domain()?;
    let times = state.week_plans.put_shift_times(&caller, location, times).await?;
    Ok(HttpResponse::Ok().json(ShiftTimesView::new(location, times)))
}

/// `Prefer: wait=N` (RFC 7240): how long a client would wait for a proposal, capped at the longest solve.
fn preferred_wait(req: &HttpRequest) -> Option<Duration> {
    let value = req.headers().get_all("prefer").filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join(",");
    value.split([',', ';']).find_map(|part| {
        let seconds = part.trim().strip_prefix("wait=")?.trim().parse::<u64>().ok()?;
        Some(Duration::from_secs(seconds.min(150)))
    })
}

/// Plans a location's week from its forecast, staff, wages, availability and the team's rules (40
/// hours a week, 10 hours between shifts, 6 days in a row, 4-hour shifts; `docs/labor-planning.md`).
/// Answers 202 with the proposal (`solving`) and its URL in `Location`; with `Prefer: wait=N`, 201 with
/// the finished proposal when it is done within N seconds. Under 4 weeks of sales history is 409
/// `insufficient_history`; nobody in the 8 weeks of shifts before the week is 422 `no_staff`; no wage
/// on them 422 `no_wage`. Fair workweek: a week starting within 14 days that has published shifts is
/// planned against them, each change costing its premium, and the proposal lists the changes.
#[utoipa::path(post, path = "/api/planning/schedule-proposals", operation_id = "create_schedule_proposal",
    tags = ["planning"], request_body = ProposalRequest,
    params(("Prefer" = Option<String>, Header, description = "`wait=N`: answer 201 with the finished proposal if it is done within N seconds")),
    security(("bearer" = []), ("session" = [])),
    responses(
        (status = 202, body = ScheduleProposal, headers(("Location" = String, description = "the proposal's URL"))),
        (status = 201, body = ScheduleProposal, headers(("Location" = String, description = "the proposal's URL"),
            ("Preference-Applied" = String, description = "`wait=N`"))),
    ))]
pub async fn propose(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<ProposalRequest>,
) -> Result<HttpResponse, ApiError> {
    let (location, week, time_limit) = body.try_into_domain()?;
    let proposal = state.week_plans.propose(&caller, location, week, time_limit).await?;
    state.proposal_wake.notify_one();
    let url = format!("/api/planning/schedule-proposals/{}", proposal.id);
    if let Some(wait) = preferred_wait(&req) {
        let deadline = tokio::time::Instant::now() + wait;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let current = ScheduleProposal::from(state.week_plans.proposal(&caller, proposal.id).await?);
            if !current.is_solving() {
                return Ok(HttpResponse::Created()
                    .insert_header((header::LOCATION, url))
                    .insert_header(("Preference-Applied", format!("wait={}", wait.as_secs())))
                    .json(current));
            }
        }
    }
    Ok(HttpResponse::Accepted().insert_header((header::LOCATION, url)).json(ScheduleProposal::from(proposal)))
}

/// One proposal: `solving`, `ready` with its shifts, coverage, figures and what bound it, or `failed`
/// with the reason. Another team's proposal is 404.
#[utoipa::path(get, path = "/api/planning/schedule-proposals/{id}", operation_id = "get_schedule_proposal",
    tags = ["planning"], params(("id" = Uuid, Path)), security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = ScheduleProposal)))]
pub async fn proposal(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(ScheduleProposal::from(state.week_plans.proposal(&caller, *id).await?)))
}

/// The team's proposals (or one location's), latest first, a page at a time, without their shifts.
#[utoipa::path(get, path = "/api/planning/schedule-proposals", operation_id = "list_schedule_proposals",
    tags = ["planning"], params(ProposalListQuery), security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = Vec<ScheduleProposal>,
        headers(("Link" = String, description = "<…>; rel=\"next\": the next page, when more items follow (RFC 8288)")))))]
pub async fn proposals(
    req: HttpRequest,
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    QueryParams(query): QueryParams<ProposalListQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = PageQuery { limit: query.limit, cursor: query.cursor }.request()?;
    let page = state.week_plans.proposals(&caller, query.location_id.map(LocationId), page).await?;
    Ok(page_response(&req, page.map(ScheduleProposal::from)))
}

/// Sends a ready proposal's shifts to 7shifts as drafts (the provider's create-shift call, at its rate
/// limit), for the manager to review and publish there; the next schedule sync reads them back as
/// drafts, which count as labor only once published. Idempotent: a repeated publish creates nothing
/// twice, and one cut off halfway resumes where it stopped. Refusals: 409 `not_ready`,
/// `publish_in_progress` or `week_passed`; 422 `not_linked` (the location has no `schedulerLocationId`);
/// 502 `provider_failed` (publish again to resume); 503 `not_configured`.
#[utoipa::path(post, path = "/api/planning/schedule-proposals/{id}/publish", operation_id = "publish_schedule_proposal",
    tags = ["planning"], params(("id" = Uuid, Path)), security(("bearer" = []), ("session" = [])),
    responses((status = 200, body = DraftsPublished)))]
pub async fn publish(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let published = state.publishes.publish(&caller, *id).await?;
    Ok(HttpResponse::Ok().json(DraftsPublished::from(published)))
}
