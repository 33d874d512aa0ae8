//! Web push: subscriptions (session cookie), sending (bearer token), the VAPID public key.

mod wire;

pub use wire::{AUTH_BYTES, MAX_ENDPOINT_CHARS, MAX_EXPIRATION_MS, P256DH_BYTES};

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::errors::ApiError;
use crate::extract::{BearerCaller, JsonBody, SessionCaller};
use crate::middleware::counted;
use crate::state::AppState;

pub use wire::{SendRequest, SendSummary, SubscribeRequest, SubscriptionKeysRequest, UnsubscribeRequest};

#[derive(Serialize, ToSchema)]
pub struct Subscribed {
    success: bool,
}

#[derive(Serialize, ToSchema)]
pub struct Unsubscribed {
    success: bool,
    /// Whether a subscription of yours with that endpoint existed.
    deleted: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VapidPublicKey {
    /// base64url, for the browser's `applicationServerKey`.
    public_key: String,
}

/// Creates or updates the caller's subscription for this device. Rate limited to 30 a minute per user.
#[utoipa::path(post, path = "/api/push/subscribe", tags = ["push"], request_body = SubscribeRequest,
    security(("session" = [])), responses((status = 200, body = Subscribed, headers(("RateLimit-Policy" = String, description = "draft-ietf-httpapi-ratelimit-headers: `\"push-subscribe\";q=30;w=60`"), ("RateLimit" = String, description = "`\"push-subscribe\";r=<calls left>;t=<seconds until the whole quota is back>`")))))]
pub async fn subscribe(
    state: web::Data<AppState>,
    req: HttpRequest,
    SessionCaller(caller): SessionCaller,
    JsonBody(body): JsonBody<SubscribeRequest>,
) -> Result<HttpResponse, ApiError> {
    counted(&req, state.push.subscribe(&caller, body.try_into_domain()).await?)?;
    Ok(HttpResponse::Ok().json(Subscribed { success: true }))
}

/// Removes the caller's own subscription of the endpoint; another user's is never touched.
#[utoipa::path(delete, path = "/api/push/subscribe", tags = ["push"], request_body = UnsubscribeRequest,
    security(("session" = [])), responses((status = 200, body = Unsubscribed, headers(("RateLimit-Policy" = String, description = "draft-ietf-httpapi-ratelimit-headers: `\"push-subscribe\";q=30;w=60`"), ("RateLimit" = String, description = "`\"push-subscribe\";r=<calls left>;t=<seconds until the whole quota is back>`")))))]
pub async fn unsubscribe(
    state: web::Data<AppState>,
    req: HttpRequest,
    SessionCaller(caller): SessionCaller,
    JsonBody(body): JsonBody<UnsubscribeRequest>,
) -> Result<HttpResponse, ApiError> {
    let deleted = counted(&req, state.push.unsubscribe(&caller, &body.endpoint).await?)?;
    Ok(HttpResponse::Ok().json(Unsubscribed { success: true, deleted }))
}

/// Sends a notification to the caller's devices, or (admins) to a member of the caller's team.
/// `sent` counts what push services accepted, not what a browser showed. Rate limited to 10 a
/// minute per user; 503 `not_configured` without VAPID keys.
#[utoipa::path(post, path = "/api/push/send", tags = ["push"], request_body = SendRequest,
    security(("bearer" = [])), responses((status = 200, body = SendSummary, headers(("RateLimit-Policy" = String, description = "draft-ietf-httpapi-ratelimit-headers: `\"push-send\";q=10;w=60`"), ("RateLimit" = String, description = "`\"push-send\";r=<calls left>;t=<seconds until the whole quota is back>`")))))]
pub async fn send(
    state: web::Data<AppState>,
    req: HttpRequest,
    BearerCaller(caller): BearerCaller,
    JsonBody(body): JsonBody<SendRequest>,
) -> Result<HttpResponse, ApiError> {
    let summary = counted(&req, state.push.send(&caller, body.try_into_domain()).await?)?;
    Ok(HttpResponse::Ok().json(SendSummary::from(summary)))
}

/// The VAPID public key for `PushManager.subscribe({applicationServerKey})`.
#[utoipa::path(get, path = "/api/push/vapid-public-key", tags = ["push"], responses((status = 200, body = VapidPublicKey)))]
pub async fn vapid_public_key(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let key = state.vapid_public_key.clone().ok_or(ApiError::NotConfigured("Web push (VAPID keys)"))?;
    Ok(HttpResponse::Ok().json(VapidPublicKey { public_key: key }))
}
