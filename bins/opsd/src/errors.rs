//! The one place that decides an HTTP status and renders an error body: RFC 9457 problem details
//! with a stable `code`. Details of unexpected failures go to the log, never to the client.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use opsd_core::{FieldError, Forbidden, ServiceError, StoreError, ValidationErrors};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("invalid request")]
    Validation(ValidationErrors),
    #[error("malformed JSON")]
    MalformedJson(String),
    #[error("missing or invalid credentials")]
    Unauthorized,
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    #[error("not found")]
    NotFound,
    #[error("method not allowed")]
    MethodNotAllowed(std::sync::Arc<str>),
    #[error("conflict: {detail}")]
    Conflict { detail: &'static str, existing_id: Option<String> },
    #[error("delivery conflict")]
    DeliveryConflict,
    #[error("idempotency key reused for another request")]
    IdempotencyMismatch,
    #[error("a request under this idempotency key is in progress")]
    IdempotencyInProgress,
    #[error("the request under this idempotency key stopped without an answer")]
    IdempotencyOutcomeUnknown,
    #[error("rate limited")]
    RateLimited { retry_after_seconds: u64, quota: opsd_core::Quota },
    #[error("circuit open")]
    CircuitOpen { retry_after_seconds: u64 },
    #[error("payload too large")]
    PayloadTooLarge,
    #[error("unsupported media type")]
    UnsupportedMediaType,
    #[error("not configured: {0}")]
    NotConfigured(&'static str),
    /// The week planner's refusals, each with its own code: 409 for a history too short, 422 for
    /// what the location lacks or what the body names that does not exist.
    #[error("cannot plan: {code}")]
    CannotPlan { status: StatusCode, code: &'static str, detail: String },
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("internal error: {0}")]
    Internal(String),
}

/// An RFC 9457 problem details body.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// Always `about:blank`: `code` names the problem.
    #[serde(rename = "type")]
    pub problem_type: &'static str,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// A stable machine word: validation_failed, malformed_json, unauthorized, forbidden,
    /// not_found, conflict, delivery_conflict, idempotency_mismatch, idempotency_in_progress, idempotency_outcome_unknown, rate_limited, circuit_open, payload_too_large,
    /// unsupported_media_type, method_not_allowed, not_configured, unavailable, internal; the week
    /// planner's insufficient_history, no_staff, no_wage, unknown_employee, not_ready,
    /// publish_in_progress, week_passed, not_linked and provider_failed.
    pub code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<ProblemField>>,
    /// For a `conflict` with an existing record: its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemField {
    pub field: String,
    pub message: String,
}

impl ApiError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation(ValidationErrors::single(field, message))
    }

    fn code(&self) -> &'static str {
        match self {
            ApiError::Validation(_) => "validation_failed",
            ApiError::MalformedJson(_) => "malformed_json",
            ApiError::Unauthorized => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound => "not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::Conflict { .. } => "conflict",
            ApiError::DeliveryConflict => "delivery_conflict",
            ApiError::IdempotencyMismatch => "idempotency_mismatch",
            ApiError::IdempotencyInProgress => "idempotency_in_progress",
            ApiError::IdempotencyOutcomeUnknown => "idempotency_outcome_unknown",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::CircuitOpen { .. } => "circuit_open",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::NotConfigured(_) => "not_configured",
            ApiError::CannotPlan { code, .. } => code,
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal",
        }
    }

    fn detail(&self) -> String {
        match self {
            ApiError::Validation(_) => "The request breaks one or more rules; see errors.".into(),
            ApiError::MalformedJson(reason) => format!("The body is not valid JSON: {reason}"),
            ApiError::Unauthorized => "Missing or invalid credentials.".into(),
            ApiError::Forbidden(why) => (*why).into(),
            ApiError::NotFound => "No such resource.".into(),
            ApiError::MethodNotAllowed(allow) => format!("Allowed methods: {allow}."),
            ApiError::Conflict { detail, .. } => (*detail).into(),
            ApiError::DeliveryConflict => "This delivery id was already received with a different body.".into(),
            ApiError::IdempotencyMismatch => {
                "This Idempotency-Key was used for another request (method, path or body); use a new key.".into()
            }
            ApiError::IdempotencyInProgress => {
                "A request with this Idempotency-Key is still in progress; retry after it has its answer.".into()
            }
            ApiError::IdempotencyOutcomeUnknown => "The request with this Idempotency-Key stopped without an answer \
                 (its server failed): it may or may not have taken effect. Look, then use a new key."
                .into(),
            ApiError::RateLimited { .. } => "Too many requests; retry later.".into(),
            ApiError::CircuitOpen { .. } => "The data store is failing; retry later.".into(),
            ApiError::PayloadTooLarge => "The body is larger than 256 KiB.".into(),
            ApiError::UnsupportedMediaType => "The body must be sent as application/json.".into(),
            ApiError::NotConfigured(what) => format!("{what} is not configured on this server."),
            ApiError::CannotPlan { detail, .. } => detail.clone(),
            ApiError::Unavailable(_) => "The service is temporarily unavailable; retry later.".into(),
            ApiError::Internal(_) => "An unexpected error occurred.".into(),
        }
    }

    fn fields(&self) -> Option<Vec<ProblemField>> {
        match self {
            ApiError::Validation(errors) => Some(
                errors
                    .errors()
                    .iter()
                    .map(|FieldError { field, message }| ProblemField {
                        field: field.clone(),
                        message: message.clone(),
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) | ApiError::MalformedJson(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict { .. }
            | ApiError::DeliveryConflict
            | ApiError::IdempotencyInProgress
            | ApiError::IdempotencyOutcomeUnknown => StatusCode::CONFLICT,
            ApiError::IdempotencyMismatch => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::CircuitOpen { .. } | ApiError::NotConfigured(_) | ApiError::Unavailable(_) => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::CannotPlan { status, .. } => *status,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        match self {
            ApiError::Internal(detail) => tracing::error!(detail, "internal error"),
            ApiError::Unavailable(detail) => tracing::warn!(detail, "store unavailable"),
            _ => tracing::debug!(code = self.code(), "request refused"),
        }
        let problem = Problem {
            problem_type: "about:blank",
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: self.detail(),
            code: self.code(),
            errors: self.fields(),
            existing_id: match self {
                ApiError::Conflict { existing_id, .. } => existing_id.clone(),
                _ => None,
            },
        };
        let mut response = HttpResponse::build(status);
        response.insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json")));
        match self {
            ApiError::Unauthorized => {
                response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            ApiError::MethodNotAllowed(allow) => {
                response.insert_header((header::ALLOW, allow.as_ref()));
            }
            ApiError::RateLimited { retry_after_seconds, .. } | ApiError::CircuitOpen { retry_after_seconds } => {
                response.insert_header((header::RETRY_AFTER, retry_after_seconds.to_string()));
            }
            _ => {}
        }
        let mut response = response.body(serde_json::to_string(&problem).expect("a problem serializes"));
        if let ApiError::RateLimited { quota, .. } = self {
            crate::rate_limit_fields::insert(response.headers_mut(), quota);
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(detail) => ApiError::Unavailable(detail),
            StoreError::Unknown(detail) => ApiError::Internal(detail),
        }
    }
}

impl From<ValidationErrors> for ApiError {
    fn from(errors: ValidationErrors) -> Self {
        ApiError::Validation(errors)
    }
}

/// Every domain service's answer, mapped once; what only one domain can say maps through its own
/// `From` below.
impl<E: std::error::Error + Into<ApiError>> From<ServiceError<E>> for ApiError {
    fn from(error: ServiceError<E>) -> Self {
        match error {
            ServiceError::Forbidden(forbidden) => forbidden.into(),
            ServiceError::Invalid(errors) => errors.into(),
            ServiceError::NotFound => ApiError::NotFound,
            ServiceError::RateLimited(limited) => {
                ApiError::RateLimited { retry_after_seconds: limited.retry_after_seconds, quota: limited.quota }
            }
            ServiceError::Store(error) => error.into(),
            ServiceError::Domain(refusal) => refusal.into(),
        }
    }
}

impl From<std::convert::Infallible> for ApiError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl From<opsd_reports::Duplicate> for ApiError {
    fn from(existing: opsd_reports::Duplicate) -> Self {
        ApiError::Conflict {
            detail: "That report is already filed: one a day per location (and shift, for shift reports).",
            existing_id: Some(existing.0.to_string()),
        }
    }
}

impl From<opsd_teams::SlugTaken> for ApiError {
    fn from(_: opsd_teams::SlugTaken) -> Self {
        ApiError::Conflict { detail: "The slug is taken.", existing_id: None }
    }
}

impl From<opsd_coupons::NotRedeemable> for ApiError {
    fn from(_: opsd_coupons::NotRedeemable) -> Self {
        ApiError::Conflict {
            detail: "The reservation is no longer active (expired, redeemed or cancelled).",
            existing_id: None,
        }
    }
}

impl From<opsd_optimization::CircuitOpen> for ApiError {
    fn from(open: opsd_optimization::CircuitOpen) -> Self {
        ApiError::CircuitOpen { retry_after_seconds: open.retry_after_seconds }
    }
}

impl From<opsd_push::PushRefusal> for ApiError {
    fn from(refusal: opsd_push::PushRefusal) -> Self {
        match refusal {
            opsd_push::PushRefusal::NotConfigured => ApiError::NotConfigured("Web push (VAPID keys)"),
            opsd_push::PushRefusal::ForeignTarget => {
                ApiError::Forbidden("Sending to another user needs the admin role and a target in your team.")
            }
        }
    }
}

/// An error's message (lower case, as Rust's are) as a sentence a person reads.
pub fn sentence(error: &dyn std::fmt::Display) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| format!("{}{}.", first.to_uppercase(), chars.as_str()))
}

impl From<opsd_planning::week_plan::PlanRefusal> for ApiError {
    fn from(refusal: opsd_planning::week_plan::PlanRefusal) -> Self {
        use opsd_planning::week_plan::PlanRefusal;
        let (status, code) = match &refusal {
            PlanRefusal::InsufficientHistory => (StatusCode::CONFLICT, "insufficient_history"),
            PlanRefusal::NoStaff => (StatusCode::UNPROCESSABLE_ENTITY, "no_staff"),
            PlanRefusal::NoWage => (StatusCode::UNPROCESSABLE_ENTITY, "no_wage"),
            PlanRefusal::UnknownEmployees(_) => (StatusCode::UNPROCESSABLE_ENTITY, "unknown_employee"),
            PlanRefusal::NotReady => (StatusCode::CONFLICT, "not_ready"),
            PlanRefusal::PublishInProgress => (StatusCode::CONFLICT, "publish_in_progress"),
            PlanRefusal::WeekPassed => (StatusCode::CONFLICT, "week_passed"),
            PlanRefusal::NotLinked => (StatusCode::UNPROCESSABLE_ENTITY, "not_linked"),
            PlanRefusal::SchedulerNotConfigured => return ApiError::NotConfigured("7shifts (SCHEDULER_API_TOKEN)"),
            PlanRefusal::ProviderFailed(_) => (StatusCode::BAD_GATEWAY, "provider_failed"),
        };
        ApiError::CannotPlan { status, code, detail: sentence(&refusal) }
    }
}

impl From<Forbidden> for ApiError {
    fn from(forbidden: Forbidden) -> Self {
        match forbidden {
            Forbidden::NoTeam => ApiError::Forbidden("The token names no current team."),
            Forbidden::NotAdmin => ApiError::Forbidden("This needs the admin role of the team."),
        }
    }
}
