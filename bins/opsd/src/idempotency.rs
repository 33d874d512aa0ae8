//! `Idempotency-Key` on every POST that creates something: the first answer to a key is kept and
//! replayed to the same caller's retries of the same request (`crates/idempotency`).

use actix_web::HttpMessage;
use actix_web::body::{BoxBody, MessageBody, to_bytes};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpResponse, ResponseError, web};
use futures::StreamExt;
use opsd_idempotency::{Claim, Fingerprint, IdempotencyKey, KeyScope, StoredAnswer};

use crate::errors::ApiError;
use crate::extract::idempotency_scope;
use crate::state::AppState;

pub static IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
/// On a replayed answer: `true`.
pub static REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// POSTs that create nothing of the caller's, or dedupe on their own: signed deliveries carry
/// their own ids (webhooks, coupon automation), and the assistant's answer is a stream.
pub const NOT_KEYED: [&str; 3] = ["/api/webhooks/", "/api/automation/", "/api/assistant/"];

pub async fn idempotent_creates(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let keyed = req.method() == Method::POST
        && req.headers().contains_key(&IDEMPOTENCY_KEY)
        && !NOT_KEYED.iter().any(|prefix| req.path().starts_with(prefix));
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let (true, Some(state)) = (keyed, state) else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let raw = req.headers().get(&IDEMPOTENCY_KEY).and_then(|value| value.to_str().ok()).unwrap_or_default();
    let Ok(key) = IdempotencyKey::parse(raw) else {
        let error = ApiError::invalid("Idempotency-Key", opsd_idempotency::MalformedKey.to_string());
        return Ok(req.error_response(error));
    };
    let scope = match idempotency_scope(req.request(), &state).await {
        Ok(Some(scope)) => scope,
        Ok(None) => return next.call(req).await.map(ServiceResponse::map_into_boxed_body),
        Err(error) => return Ok(req.error_response(error)),
    };
    let body = match read_body(&mut req).await {
        Ok(body) => body,
        Err(error) => return Ok(req.error_response(error)),
    };
    let target = req.uri().path_and_query().map_or(req.path(), |target| target.as_str()).to_owned();
    let fingerprint = Fingerprint::of(req.method().as_str(), &target, &body);
    req.set_payload(actix_web::dev::Payload::from(body));

    match state.idempotency.begin(&scope, &key, &fingerprint).await {
        Err(error) => Ok(req.error_response(ApiError::from(error))),
        Ok(Claim::Mismatch) => Ok(req.error_response(ApiError::IdempotencyMismatch)),
        Ok(Claim::InProgress) => Ok(req.error_response(ApiError::IdempotencyInProgress)),
        Ok(Claim::OutcomeUnknown) => Ok(req.error_response(ApiError::IdempotencyOutcomeUnknown)),
        Ok(Claim::Replay(answer)) => {
            let (request, _) = req.into_parts();
            Ok(ServiceResponse::new(request, replay(answer)))
        }
        Ok(Claim::Run) => {
            let response = match next.call(req).await {
                Ok(response) => response,
                Err(error) => {
                    // It may have taken effect before it failed: its key keeps a bare 500.
                    let _ = state.idempotency.finish(&scope, &key, &failed()).await;
                    return Err(error);
                }
            };
            let (request, response) = response.into_parts();
            let status = response.status();
            let headers = response.headers().clone();
            let body = match to_bytes(response.into_body()).await {
                Ok(body) => body,
                Err(_) => {
                    let _ = state.idempotency.finish(&scope, &key, &failed()).await;
                    let error = ApiError::Internal("the answer's body could not be read".into());
                    return Ok(ServiceResponse::new(request, error.error_response()));
                }
            };
            let text = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let answer = StoredAnswer {
                status: status.as_u16(),
                content_type: text(&header::CONTENT_TYPE),
                location: text(&header::LOCATION),
                body: body.to_vec(),
            };
            if let Err(error) = state.idempotency.finish(&scope, &key, &answer).await {
                // The database went away just after the request: keep trying while the key is held,
                // so a retry that finds it in progress gets this answer later.
                tracing::warn!(%error, "an idempotent answer could not be kept yet");
                actix_web::rt::spawn(keep_later(state.clone(), scope, key, answer));
            }
            let mut rebuilt = HttpResponse::with_body(status, BoxBody::new(body));
            *rebuilt.headers_mut() = headers;
            Ok(ServiceResponse::new(request, rebuilt))
        }
    }
}

/// The body, up to the largest any route takes (the route's own extractor applies its limit):
/// routing has not happened yet, so the route's own `PayloadConfig` cannot be read here.
async fn read_body(req: &mut ServiceRequest) -> Result<web::Bytes, ApiError> {
    let limit = crate::extract::json::BODY_LIMIT.max(crate::extract::json::SALES_BODY_LIMIT);
    let mut payload = req.take_payload();
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| ApiError::MalformedJson("the body could not be read".into()))?;
        if body.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

async fn keep_later(state: web::Data<AppState>, scope: KeyScope, key: IdempotencyKey, answer: StoredAnswer) {
    let deadline = tokio::time::Instant::now() + opsd_idempotency::LEASE;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(KEEP_RETRY_PERIOD).await;
        match state.idempotency.finish(&scope, &key, &answer).await {
            Ok(()) => return,
            Err(error) => tracing::debug!(%error, "an idempotent answer still could not be kept"),
        }
    }
    tracing::warn!(key = key.as_str(), "an idempotent answer was not kept: a retry is told its outcome is unknown");
}

const KEEP_RETRY_PERIOD: std::time::Duration = std::time::Duration::from_secs(1);

/// What a request that ended without a readable answer keeps under its key.
fn failed() -> StoredAnswer {
    StoredAnswer { status: 500, content_type: None, location: None, body: Vec::new() }
}

fn replay(answer: StoredAnswer) -> HttpResponse {
    let mut response = HttpResponse::build(StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK));
    for (name, value) in [(header::CONTENT_TYPE, answer.content_type), (header::LOCATION, answer.location)] {
        if let Some(value) = value.and_then(|value| HeaderValue::from_str(&value).ok()) {
            response.insert_header((name, value));
        }
    }
    response.insert_header((REPLAYED.clone(), HeaderValue::from_static("true")));
    response.body(answer.body)
}
