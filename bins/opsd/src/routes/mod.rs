//! The HTTP surface. Every resource answers a wrong method with 405 and `Allow`, and unknown paths
//! with 404, both as problem details.

mod analytics;
mod assistant;
mod coupons;
mod cron;
mod docs;
mod health;
mod incidents;
mod nudges;
mod push;
mod reports;
mod schedule;
mod setup;
pub(crate) mod webhooks;

use actix_web::{HttpResponse, Resource, web};

use crate::errors::ApiError;

pub use analytics::{
    __path_goals, __path_ingest_sales, __path_optimization, __path_set_goals, DailyRow, DayGoalBody, GoalRequest,
    GoalsRequest, GoalsResponse, LaborRow, OptimizationReport, SalesIngestRequest, SalesIngested, SalesReportRow,
    SalesRowRequest, Summary, WeeklySummary, render as render_report,
};
pub use assistant::{__path_chat as __path_assistant_chat, ChatRequest, MessageIn};
pub use coupons::{
    __path_automation, __path_create_offer, __path_expire_coupons, __path_offer, __path_redeem, __path_reservation,
    Accepted, JobStatusBody, Offer, OfferRequest, Reservation, SweepReportSchema,
};
pub use cron::{__path_keep_alive, __path_prune_soft_deleted_contacts};
pub use health::{__path_live, __path_metrics, __path_ready};
pub use incidents::{
    __path_add_contact, __path_change_status, __path_comment, __path_contacts, __path_get as __path_get_incident,
    __path_list as __path_list_incidents, __path_remove_contact, __path_report as __path_report_incident, Comment,
    CommentRequest, Contact, ContactMode, ContactRequest, Incident, IncidentDetail, IncidentRequest, StatusChange,
    StatusRequest,
};
pub use nudges::{
    __path_aggregate_heroes, __path_check_compliance, __path_create as __path_create_announcement,
    __path_list as __path_list_announcements, __path_publish_announcements, __path_report_reminder, Announcement,
    AnnouncementRequest, PublishAnswer,
};
pub use push::{
    __path_send as __path_push_send, __path_subscribe, __path_unsubscribe, __path_vapid_public_key, SendRequest,
    SendSummary, SubscribeRequest, Subscribed, SubscriptionKeysRequest, UnsubscribeRequest, Unsubscribed,
    VapidPublicKey,
};
pub use reports::{
    __path_manager_reports, __path_shift_reports, __path_submit_manager, __path_submit_shift, EmployeeReviewBody,
    EmployeeReviewRequest, ManagerReport, ManagerReportRequest, ShiftReport, ShiftReportRequest,
};
pub use schedule::{
    __path_sync_roles, __path_sync_schedule, __path_view as __path_schedule_view, ScheduleView, SyncJobAnswer,
    ViewShift,
};
pub use setup::{
    __path_create_location, __path_get_team_settings, __path_list_locations, __path_put_team_settings, LocationView,
    NewLocationRequest, TeamSettingsRequest, TeamSettingsView,
};
pub use webhooks::{__path_identity as __path_identity_webhook, Received};

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Static paths first: actix tries resources in order, and each one with a `{segment}` costs a
    // regular-expression match (also for the metrics' route pattern), so the hot static routes
    // should not pay for them. No static path here can match a dynamic pattern.
    cfg.service(resource("/health/live", "GET").route(web::get().to(health::live)))
        .service(resource("/health/ready", "GET").route(web::get().to(health::ready)))
        .service(resource("/metrics", "GET").route(web::get().to(health::metrics)))
        .service(resource("/openapi.json", "GET").route(web::get().to(openapi_json)))
        .service(resource("/docs", "GET").route(web::get().to(docs::page)))
        .service(resource(docs::SCRIPT_PATH, "GET").route(web::get().to(docs::script)))
        .service(resource("/cron/keep-alive", "GET").route(web::get().to(cron::keep_alive)))
        .service(
            resource("/cron/prune-soft-deleted-contacts", "GET")
                .route(web::get().to(cron::prune_soft_deleted_contacts)),
        )
        .service(
            resource("/api/incidents", "GET, POST")
                .route(web::get().to(incidents::list))
                .route(web::post().to(incidents::report)),
        )
        .service(
            resource("/api/contacts", "GET, POST")
                .route(web::get().to(incidents::contacts))
                .route(web::post().to(incidents::add_contact)),
        )
        .service(
            resource("/api/reports/shift", "GET, POST")
                .route(web::get().to(reports::shift_reports))
                .route(web::post().to(reports::submit_shift)),
        )
        .service(
            resource("/api/reports/manager", "GET, POST")
                .route(web::get().to(reports::manager_reports))
                .route(web::post().to(reports::submit_manager)),
        )
        .service(
            resource("/api/locations", "GET, POST")
                .route(web::get().to(setup::list_locations))
                .route(web::post().to(setup::create_location)),
        )
        .service(
            resource("/api/team/settings", "GET, PUT")
                .route(web::get().to(setup::get_team_settings))
                .route(web::put().to(setup::put_team_settings)),
        )
        .service(resource("/api/analytics/optimization", "GET").route(web::get().to(analytics::optimization)))
        .service(
            resource("/api/analytics/goals", "GET, PUT")
                .route(web::get().to(analytics::goals))
                .route(web::put().to(analytics::set_goals)),
        )
        .service(
            resource("/api/analytics/sales", "POST")
                .app_data(web::PayloadConfig::new(analytics::SALES_BODY_LIMIT))
                .route(web::post().to(analytics::ingest_sales)),
        )
        .service(resource("/api/coupons/offers", "POST").route(web::post().to(coupons::create_offer)))
        .service(resource("/cron/expire-coupons", "GET").route(web::get().to(coupons::expire_coupons)))
        .service(resource("/api/automation/coupons", "POST").route(web::post().to(coupons::automation)))
        .service(
            resource("/api/push/subscribe", "POST, DELETE")
                .route(web::post().to(push::subscribe))
                .route(web::delete().to(push::unsubscribe)),
        )
        .service(resource("/api/push/send", "POST").route(web::post().to(push::send)))
        .service(resource("/api/push/vapid-public-key", "GET").route(web::get().to(push::vapid_public_key)))
        .service(resource("/cron/sync-schedule-from-7shifts", "GET").route(web::get().to(schedule::sync_schedule)))
        .service(resource("/cron/sync-7shifts-roles", "GET").route(web::get().to(schedule::sync_roles)))
        .service(resource("/cron/report-reminder", "GET").route(web::get().to(nudges::report_reminder)))
        .service(resource("/cron/check-compliance", "GET").route(web::get().to(nudges::check_compliance)))
        .service(resource("/cron/aggregate-heroes", "GET").route(web::get().to(nudges::aggregate_heroes)))
        .service(
            resource("/cron/publish-scheduled-announcements", "GET")
                .route(web::get().to(nudges::publish_announcements)),
        )
        .service(
            resource("/api/announcements", "GET, POST")
                .route(web::get().to(nudges::list))
                .route(web::post().to(nudges::create)),
        )
        .service(resource("/api/assistant/chat", "POST").route(web::post().to(assistant::chat)))
        .service(resource("/api/webhooks/identity", "POST").route(web::post().to(webhooks::identity)))
        .service(
            resource("/api/incidents/{id}", "GET, PATCH")
                .route(web::get().to(incidents::get))
                .route(web::patch().to(incidents::change_status)),
        )
        .service(resource("/api/incidents/{id}/comments", "POST").route(web::post().to(incidents::comment)))
        .service(resource("/api/contacts/{id}", "DELETE").route(web::delete().to(incidents::remove_contact)))
        .service(resource("/api/coupons/offers/{id}", "GET").route(web::get().to(coupons::offer)))
        .service(resource("/api/coupons/reservations/{id}", "GET").route(web::get().to(coupons::reservation)))
        .service(resource("/api/coupons/reservations/{id}/redeem", "POST").route(web::post().to(coupons::redeem)))
        .service(resource("/api/schedule/{location_slug}", "GET").route(web::get().to(schedule::view)))
        .default_service(web::to(not_found));
}

/// A resource whose unmatched methods answer 405 with `Allow`.
fn resource(path: &str, allow: &'static str) -> Resource {
    web::resource(path)
        .default_service(web::to(move || async move { Err::<HttpResponse, _>(ApiError::MethodNotAllowed(allow)) }))
}

async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound)
}

async fn openapi_json() -> HttpResponse {
    use utoipa::OpenApi;
    HttpResponse::Ok()
        .content_type("application/json")
        .body(crate::ApiDoc::openapi().to_json().expect("OpenAPI serializes"))
}
