//! The OpenAPI 3.1 document: the paths of the route table (`routes::paths`), each described by its
//! handler's annotation, with the schemas, security schemes and tags below.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::errors::{Problem, ProblemField};
use crate::routes::{
    self, Announcement, AnnouncementRequest, ChatRequest, Comment, CommentRequest, Contact, ContactMode,
    ContactRequest, DailyRow, DayGoalBody, EmployeeReviewBody, EmployeeReviewRequest, GoalRequest, GoalsRequest,
    GoalsResponse, HealthStatus, Incident, IncidentDetail, IncidentRequest, LaborRow, LocationView, ManagerReport,
    ManagerReportRequest, MessageIn, NewLocationRequest, Offer, OfferRequest, OptimizationReport, Page, PruneAnswer,
    Readiness, Reservation, SalesIngestRequest, SalesReportRow, SalesRowRequest, ScheduleView, SendRequest,
    SendSummary, ShiftReport, ShiftReportRequest, StatusChange, StatusRequest, SubscribeRequest,
    SubscriptionKeysRequest, Summary, TeamSettingsRequest, TeamSettingsView, UnsubscribeRequest, ViewShift,
    WeeklySummary,
};
use crate::wire::{Block, Department, IncidentType, ReportShift, ReservationState, Severity, Status};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "opsd",
        description = "Operations platform for multi-location restaurant teams. Errors are RFC 9457 problem \
details (`application/problem+json`) with a stable `code`. JSON bodies are at most 256 KiB, must be sent as \
`application/json`, and unknown fields are rejected. Every response carries `x-request-id`.",
        version = "0.1.0"
    ),
    components(schemas(
        Problem, ProblemField, HealthStatus, Readiness, crate::supervisor::TaskState, PruneAnswer, Page<Incident>, LocationView, NewLocationRequest, TeamSettingsRequest, TeamSettingsView,
        IncidentRequest, Incident, IncidentDetail, Comment, StatusChange, Contact, ContactRequest, ContactMode,
        IncidentType, Severity, Status, CommentRequest, StatusRequest,
        ShiftReportRequest, ShiftReport, ManagerReportRequest, ManagerReport, EmployeeReviewRequest, EmployeeReviewBody,
        ReportShift, routes::Received,
        OptimizationReport, Summary, SalesReportRow, LaborRow, DailyRow, WeeklySummary, GoalsResponse, DayGoalBody, Block,
        GoalsRequest, GoalRequest, SalesIngestRequest, SalesRowRequest, routes::SalesIngested,
        ChatRequest, MessageIn, routes::SseEvent,
        ScheduleView, ViewShift, routes::SyncJobAnswer, Announcement, AnnouncementRequest, routes::PublishAnswer,
        SubscribeRequest, SubscriptionKeysRequest, UnsubscribeRequest, SendRequest, SendSummary, routes::Subscribed,
        routes::Unsubscribed, routes::VapidPublicKey,
        Offer, OfferRequest, Reservation, ReservationState, routes::Accepted, routes::JobStatusBody, routes::SweepReportSchema,
        routes::VarianceReport, routes::VarianceDay, routes::VarianceSpan, routes::VarianceLine, routes::DepartmentVariance,
        routes::ForecastReport, routes::ForecastDay, routes::BlockForecast, routes::Backtest, Department,
        routes::AvailabilityRequest, routes::AvailabilityView, routes::EmployeeAvailability, routes::ProposalRequest,
        routes::ScheduleProposal, routes::ProposalWeek, routes::ProposalShift, routes::ProposalCoverage,
        routes::ProposalSolver, routes::BindingRuleView, routes::ScheduleChangeView, routes::ShiftSlot, routes::DraftsPublished,
        routes::PlanningRules, routes::PlanningRulesView, routes::ShiftTime, routes::ShiftTimesRequest,
        routes::PlannedShiftTime, routes::ShiftTimesView,
    )),
    modifiers(&SecuritySchemes),
    tags(
        (name = "operations", description = "Health, metrics and the API document"),
        (name = "jobs", description = "Scheduled jobs called by the external cron scheduler"),
        (name = "setup", description = "Setting a team up"),
        (name = "incidents", description = "Incidents and contacts"),
        (name = "reports", description = "Shift and manager reports"),
        (name = "analytics", description = "Labor optimization data, goals, sales ingestion, scheduled-vs-actual variance and the sales forecast (service API key)"),
        (name = "assistant", description = "The assistant chat (Server-Sent Events)"),
        (name = "announcements", description = "Scheduled announcements"),
        (name = "schedule", description = "The legacy, deprecated, read-only schedule view (service API key)"),
        (name = "push", description = "Web push subscriptions and sending"),
        (name = "coupons", description = "Coupon offers and guest reservations"),
        (name = "planning", description = "Planning the week: availability and schedule proposals from the forecast (managers)"),
        (name = "webhooks", description = "Inbound webhooks, verified with Standard Webhooks signatures"),
    )
)]
pub struct ApiDoc;

/// The whole document: the info, schemas and schemes above, with the paths of the route table.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut document = ApiDoc::openapi();
    document.paths = crate::routes::paths();
    ProblemResponses.modify(&mut document);
    IdempotencyKeys.modify(&mut document);
    document
}

/// The document as served: `document()` with its links (written as JSON, because utoipa 5.5
/// serializes a link's `operationId` as `operation_id`).
pub fn document_json() -> serde_json::Value {
    let mut json = serde_json::to_value(document()).expect("the document serializes");
    crate::request_rules::apply(&mut json);
    for (path, method, status, links) in LINKS {
        let response = &mut json["paths"][*path][*method]["responses"][*status];
        assert!(response.is_object(), "{method} {path} documents a {status} answer");
        for (name, operation_id, parameter) in *links {
            assert!(
                json_operation_exists(&json, operation_id),
                "the link {name} names the operation {operation_id}, which exists"
            );
            let link =
                serde_json::json!({ "operationId": operation_id, "parameters": { *parameter: "$response.body#/id" } });
            json["paths"][*path][*method]["responses"][*status]["links"][*name] = link;
        }
    }
    json
}

fn json_operation_exists(json: &serde_json::Value, operation_id: &str) -> bool {
    json["paths"].as_object().into_iter().flat_map(|paths| paths.values()).any(|item| {
        item.as_object().into_iter().flat_map(|ops| ops.values()).any(|op| op["operationId"] == operation_id)
    })
}

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let bearer = |description: &str| {
            SecurityScheme::Http(
                HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(description)).build(),
            )
        };
        components.add_security_scheme("bearer", bearer("An RS256 session JWT of the identity provider."));
        components.add_security_scheme("apiKey", bearer("A service API key (API_KEY)."));
        components.add_security_scheme("cronSecret", bearer("The cron scheduler's shared secret (CRON_SECRET)."));
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "__session",
                "The identity provider's session cookie; changes must carry Origin equal to APP_ORIGIN.",
            ))),
        );
    }
}

/// Every operation may also answer a problem-details error (400, 401, 403, 404, 405, 413, 415, 429,
/// 500, 503 as the contract describes): documented once as each operation's `default` response.
struct ProblemResponses;

impl Modify for ProblemResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let problem = ResponseBuilder::new()
            .description(
                "An error, as RFC 9457 problem details. A 503 `unavailable` wrote nothing (the database \
                 could not be reached, or rolled the transaction back for a deadlock, a serialization \
                 failure or a lock timeout): the same request may be sent again.",
            )
            .content(
                "application/problem+json",
                ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build(),
            )
            .build();
        for item in openapi.paths.paths.values_mut() {
            for operation in
                [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch].into_iter().flatten()
            {
                operation.responses.responses.entry("default".into()).or_insert_with(|| problem.clone().into());
            }
        }
    }
}

/// The `Idempotency-Key` header on every POST that creates something (`idempotency.rs`).
struct IdempotencyKeys;

impl Modify for IdempotencyKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
        use utoipa::openapi::{ObjectBuilder, Required, Type};
        let parameter = ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .required(Required::False)
            .description(Some(
                "Makes a retry safe (as Stripe's API and the IETF httpapi draft): the first answer to a key \
                 (1 to 255 visible ASCII characters, a UUID say) is kept for at least 24 hours with a hash of \
                 the request; the same caller sending the same key and request again gets that answer \
                 again, with `Idempotent-Replayed: true`, and nothing happens twice. The same key with another \
                 method, path or body is 422 `idempotency_mismatch`; while the first request still runs, 409 \
                 `idempotency_in_progress`; when it stopped without an answer (its server failed), 409 \
                 `idempotency_outcome_unknown` and it never runs again. Keys belong to their caller (a user, \
                 or an API key). Every answer is kept, a 5xx too: a replayed 5xx means the outcome is unknown; \
                 look, then use a new key. Only a 429 lets the key go.",
            ))
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(255))
                    .pattern(Some("^[!-~]+$")),
            ))
            .build();
        for (path, item) in openapi.paths.paths.iter_mut() {
            if crate::idempotency::NOT_KEYED.iter().any(|prefix| path.starts_with(prefix)) {
                continue;
            }
            if let Some(post) = &mut item.post {
                post.parameters.get_or_insert_with(Vec::new).push(parameter.clone());
            }
        }
    }
}

/// How one answer leads to the next operations (OpenAPI links), for generated clients and stateful
/// fuzzing: a created incident to reading, commenting on and changing it; a created location to its
/// reports; a created offer to reading it; a reservation to redeeming it.
/// (link name, the operation it leads to, that operation's parameter taken from the answer's `id`)
type Link = (&'static str, &'static str, &'static str);

/// (path, method, status, the links of that answer)
const LINKS: &[(&str, &str, &str, &[Link])] = &[
    (
        "/api/incidents",
        "post",
        "201",
        &[
            ("GetIncident", "get_incident", "id"),
            ("CommentOnIncident", "comment", "id"),
            ("ChangeIncidentStatus", "change_status", "id"),
        ],
    ),
    (
        "/api/locations",
        "post",
        "201",
        &[("ShiftReports", "shift_reports", "locationId"), ("ManagerReports", "manager_reports", "locationId")],
    ),
    ("/api/coupons/offers", "post", "201", &[("GetOffer", "offer", "id")]),
    ("/api/contacts", "post", "201", &[("RemoveContact", "remove_contact", "id")]),
    ("/api/coupons/reservations/{id}", "get", "200", &[("RedeemReservation", "redeem", "id")]),
];
