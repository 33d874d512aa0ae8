//! The HTTP surface. Every resource answers a wrong method with 405 and `Allow`, and unknown paths
//! with 404, both as problem details.

pub(crate) mod analytics;
pub(crate) mod assistant;
mod conditional;
pub(crate) mod coupons;
mod cron;
mod docs;
mod health;
mod incidents;
mod nudges;
mod paging;
mod planning;
pub(crate) mod push;
pub(crate) mod reports;
mod schedule;
mod setup;
pub(crate) mod webhooks;

use actix_web::http::Method;
use actix_web::{HttpResponse, Resource, web};
use utoipa::openapi::path::{HttpMethod, Operation, Paths};

use crate::console;
use crate::errors::ApiError;

pub use analytics::{
    DailyRow, DayGoalBody, GoalRequest, GoalsRequest, GoalsResponse, LaborRow, OptimizationReport, SalesIngestRequest,
    SalesIngested, SalesReportRow, SalesRowRequest, Summary, WeeklySummary, render as render_report,
};
pub use assistant::{ChatRequest, MessageIn, SseEvent};
pub use coupons::{Accepted, JobStatusBody, Offer, OfferRequest, Reservation, SweepReportSchema, decode_guest_event};
pub use cron::PruneAnswer;
pub use health::{HealthStatus, Readiness, render_metrics};
pub use incidents::{
    Comment, CommentRequest, Contact, ContactMode, ContactRequest, Incident, IncidentDetail, IncidentRequest, Page,
    StatusChange, StatusRequest,
};
pub use nudges::{Announcement, AnnouncementRequest, PublishAnswer};
pub use planning::{
    AvailabilityRequest, AvailabilityView, Backtest, BindingRuleView, BlockForecast, DepartmentVariance,
    DraftsPublished, EmployeeAvailability, ForecastDay, ForecastReport, PlannedShiftTime, PlanningRules,
    PlanningRulesView, ProposalCoverage, ProposalRequest, ProposalShift, ProposalSolver, ProposalWeek,
    ScheduleChangeView, ScheduleProposal, ShiftSlot, ShiftTime, ShiftTimesRequest, ShiftTimesView, VarianceDay,
    VarianceLine, VarianceReport, VarianceSpan,
};
pub use push::{
    SendRequest, SendSummary, SubscribeRequest, Subscribed, SubscriptionKeysRequest, UnsubscribeRequest, Unsubscribed,
    VapidPublicKey,
};
pub use reports::{
    EmployeeReviewBody, EmployeeReviewRequest, ManagerReport, ManagerReportRequest, ShiftReport, ShiftReportRequest,
};
pub use schedule::{ScheduleView, SyncJobAnswer, ViewShift};
pub use setup::{LocationView, NewLocationRequest, TeamSettingsRequest, TeamSettingsView};
pub use webhooks::{Received, decode_identity_event};

/// Every route, once. A documented route's path and method are those of its handler's
/// `#[utoipa::path]`, so the actix registration, the 405 `Allow` header and the API document's
/// paths all come from this list.
fn table() -> Vec<Route> {
    let mut routes = documented![
        health::live,
        health::ready,
        health::metrics,
        cron::keep_alive,
        cron::prune_soft_deleted_contacts,
        cron::prune_idempotency_keys,
        incidents::list,
        incidents::report,
        incidents::get,
        incidents::change_status,
        incidents::comment,
        incidents::contacts,
        incidents::add_contact,
        incidents::remove_contact,
        reports::shift_reports,
        reports::submit_shift,
        reports::manager_reports,
        reports::submit_manager,
        setup::list_locations,
        setup::create_location,
        setup::get_team_settings,
        setup::put_team_settings,
        analytics::optimization,
        analytics::goals,
        analytics::set_goals,
        analytics::ingest_sales,
        planning::variance,
        planning::forecast,
        planning::availability,
        planning::put_availability,
        planning::rules,
        planning::put_rules,
        planning::shift_times,
        planning::put_shift_times,
        planning::propose,
        planning::proposal,
        planning::proposals,
        planning::publish,
        coupons::create_offer,
        coupons::offer,
        coupons::reservation,
        coupons::redeem,
        coupons::expire_coupons,
        coupons::automation,
        push::subscribe,
        push::unsubscribe,
        push::send,
        push::vapid_public_key,
        schedule::sync_schedule,
        schedule::sync_roles,
        schedule::sync_punches,
        schedule::view,
        nudges::report_reminder,
        nudges::check_compliance,
        nudges::aggregate_heroes,
        nudges::publish_announcements,
        nudges::list,
        nudges::create,
        assistant::chat,
        webhooks::identity,
    ];
    routes.extend([
        Route::plain("/openapi.json", Method::GET, web::get().to(openapi_json)),
        Route::plain("/docs", Method::GET, web::get().to(docs::page)),
        Route::plain(docs::SCRIPT_PATH, Method::GET, web::get().to(docs::script)),
        Route::plain("/console", Method::GET, web::get().to(console::home)),
        Route::plain(console::STYLESHEET_PATH, Method::GET, web::get().to(console::stylesheet)),
        Route::plain("/console/week", Method::GET, web::get().to(console::week)),
        Route::plain("/console/plans", Method::GET, web::get().to(console::plans)),
        Route::plain("/console/plans", Method::POST, web::post().to(console::propose_plan)),
        Route::plain("/console/plans/{id}", Method::GET, web::get().to(console::plan)),
        Route::plain("/console/incidents", Method::GET, web::get().to(console::incidents)),
        Route::plain("/console/incidents/{id}", Method::GET, web::get().to(console::incident)),
        Route::plain("/console/incidents/{id}/status", Method::POST, web::post().to(console::incident_status)),
        Route::plain("/console/compliance", Method::GET, web::get().to(console::compliance)),
        Route::plain("/console/jobs", Method::GET, web::get().to(console::jobs)),
        Route::plain("/console/queue", Method::GET, web::get().to(console::queue)),
        Route::plain("/console/queue/{id}/retry", Method::POST, web::post().to(console::retry_guest_event)),
    ]);
    routes
}

/// The resource-level settings of a path (a larger body limit).
fn resource_settings(path: &str, resource: Resource) -> Resource {
    match path {
        "/api/analytics/sales" => resource.app_data(web::PayloadConfig::new(crate::extract::json::SALES_BODY_LIMIT)),
        _ => resource,
    }
}

/// The documented routes of handlers annotated with `#[utoipa::path]`.
macro_rules! documented {
    ($($module:ident :: $handler:ident),+ $(,)?) => {
        vec![$(pastey::paste! { Route::documented::<$module::[<__path_ $handler>], _, _>($module::$handler) }),+]
    };
}
use documented;

struct Route {
    path: String,
    method: Method,
    route: actix_web::Route,
    /// Builds the API document's operation (only `paths()` calls it, not routing); none for the
    /// document, its page and the console's pages.
    operation: Option<(HttpMethod, fn() -> Operation)>,
}

/// A handler's operation with its tags, which the macro keeps apart from it; utoipa's own framework
/// bindings (utoipa-axum, utoipa-actix-web) join them the same way.
fn tagged_operation<P: utoipa::Path + for<'t> utoipa::__dev::Tags<'t>>() -> Operation {
    let mut operation = P::operation();
    operation.tags.get_or_insert_with(Vec::new).extend(P::tags().into_iter().map(str::to_owned));
    operation
}

impl Route {
    fn documented<P, F, Args>(handler: F) -> Self
    where
        P: utoipa::Path + for<'t> utoipa::__dev::Tags<'t>,
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        let Ok([method]) = <[HttpMethod; 1]>::try_from(P::methods()) else {
            panic!("{} documents one method", P::path())
        };
        let actix = match method {
            HttpMethod::Get => Method::GET,
            HttpMethod::Post => Method::POST,
            HttpMethod::Put => Method::PUT,
            HttpMethod::Patch => Method::PATCH,
            HttpMethod::Delete => Method::DELETE,
            _ => panic!("{} documents a method the table does not serve", P::path()),
        };
        Self {
            path: P::path(),
            route: web::method(actix.clone()).to(handler),
            method: actix,
            operation: Some((method, tagged_operation::<P>)),
        }
    }

    fn plain(path: &str, method: Method, route: actix_web::Route) -> Self {
        Self { path: path.to_owned(), method, route, operation: None }
    }
}

/// The paths polled most (load balancers' health checks, dashboards' reports), tried first.
const HOT_PATHS: [&str; 3] = ["/health/live", "/health/ready", "/api/analytics/optimization"];

/// The routes grouped by path, in table order with the hot paths first and then the other static
/// ones: actix tries resources in order, each static one costing a comparison and each one with a
/// `{segment}` a regular-expression match, so the hot routes should not pay for the rest. No
/// static path here can match a dynamic pattern, so the order changes no answer.
fn resources(routes: Vec<Route>) -> Vec<(String, Vec<Route>)> {
    let mut grouped: Vec<(String, Vec<Route>)> = Vec::new();
    for route in routes {
        match grouped.iter_mut().find(|(path, _)| *path == route.path) {
            Some((_, same)) => same.push(route),
            None => grouped.push((route.path.clone(), vec![route])),
        }
    }
    grouped.sort_by_key(|(path, _)| (path.contains('{'), !HOT_PATHS.contains(&path.as_str())));
    grouped
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    for (path, routes) in resources(table()) {
        let allow: std::sync::Arc<str> = routes.iter().map(|r| r.method.as_str()).collect::<Vec<_>>().join(", ").into();
        let resource = routes.into_iter().fold(resource(&path, allow), |resource, r| resource.route(r.route));
        cfg.service(resource_settings(&path, resource));
    }
    cfg.default_service(web::to(not_found));
}

/// The resources' path patterns, in routing order.
pub fn patterns() -> Vec<String> {
    resources(table()).into_iter().map(|(path, _)| path).collect()
}

/// The API document's paths, from the same table.
pub fn paths() -> Paths {
    let mut paths = Paths::new();
    for route in table() {
        if let Some((method, operation)) = route.operation {
            paths.add_path_operation(&route.path, vec![method], operation());
        }
    }
    paths
}

/// A resource whose unmatched methods answer 405 with `Allow`, carrying its pattern for the metrics.
fn resource(path: &str, allow: std::sync::Arc<str>) -> Resource {
    web::resource(path).app_data(crate::middleware::RoutePattern(path.into())).default_service(web::to(move || {
        let allow = allow.clone();
        async move { Err::<HttpResponse, _>(ApiError::MethodNotAllowed(allow)) }
    }))
}

/// The `x-cache: hit|miss` header of a cached report, with no parsing or copying per answer.
pub(crate) fn x_cache(
    status: opsd_optimization::CacheStatus,
) -> (actix_web::http::header::HeaderName, actix_web::http::header::HeaderValue) {
    use actix_web::http::header::{HeaderName, HeaderValue};
    (HeaderName::from_static("x-cache"), HeaderValue::from_static(status.as_str()))
}

async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound)
}

async fn openapi_json() -> HttpResponse {
    static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let json = DOCUMENT.get_or_init(|| crate::openapi::document_json().to_string());
    HttpResponse::Ok().content_type("application/json").body(json.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hot_paths_come_first_and_every_static_path_before_any_pattern() {
        let paths = patterns();
        assert_eq!(&paths[..HOT_PATHS.len()], HOT_PATHS, "each hot path is a route of the table, tried first");
        let first_pattern = paths.iter().position(|path| path.contains('{')).expect("routes with a segment");
        assert!(paths[first_pattern..].iter().all(|path| path.contains('{')), "{paths:?}");
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), paths.len(), "one resource per path");
    }
}
