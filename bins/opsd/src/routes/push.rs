//! Web push: subscriptions (session cookie), sending (bearer token), the VAPID public key.

mod wire;

pub use wire::{AUTH_BYTES, MAX_ENDPOINT_CHARS, MAX_EXPIRATION_MS, P256DH_BYTES};

use actix_web::{HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::errors::ApiError;
use crate::extract::{BearerCaller, JsonBody, SessionCaller};
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
    security(("session" = [])), responses((status = 200, body = Subscribed)))]
pub async fn subscribe(
    state: web::Data<AppState>,
    SessionCaller(caller): SessionCaller,
    JsonBody(body): JsonBody<SubscribeRequest>,
) -> Result<HttpResponse, ApiError> {
    state.push.subscribe(&caller, body.try_into_domain()).await?;
    Ok(HttpResponse::Ok().json(Subscribed { success: true }))
}

/// Removes the caller's own subscription of the endpoint; another user's is never touched.
#[utoipa::path(delete, path = "/api/push/subscribe", tags = ["push"], request_body = UnsubscribeRequest,
    security(("session" = [])), responses((status = 200, body = Unsubscribed)))]
pub async fn unsubscribe(
    state: web::Data<AppState>,
    SessionCaller(caller): SessionCaller,
    JsonBody(body): JsonBody<UnsubscribeRequest>,
) -> Result<HttpResponse, ApiError> {
    let deleted = state.push.unsubscribe(&caller, &body.endpoint).await?;
    Ok(HttpResponse::Ok().json(Unsubscribed { success: true, deleted }))
}

/// Sends a notification to the caller's devices, or (admins) to a member of the caller's team.
/// `sent` counts what push services accepted, not what a browser showed. Rate limited to 10 a
/// minute per user; 503 `not_configured` without VAPID keys.
#[utoipa::path(post, path = "/api/push/send", tags = ["push"], request_body = SendRequest,
    security(("bearer" = [])), responses((status = 200, body = SendSummary)))]
pub async fn send(
    state: web::Data<AppState>,
    BearerCaller(caller): BearerCaller,
    JsonBody(body): JsonBody<SendRequest>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(SendSummary::from(state.push.send(&caller, body.try_into_domain()).await?)))
}

/// The VAPID public key for `PushManager.subscribe({applicationServerKey})`.
#[utoipa::path(get, path = "/api/push/vapid-public-key", tags = ["push"], responses((status = 200, body = VapidPublicKey)))]
pub async fn vapid_public_key(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let key = state.vapid_public_key.clone().ok_or(ApiError::NotConfigured("Web push (VAPID keys)"))?;
    Ok(HttpResponse::Ok().json(VapidPublicKey { public_key: key }))
}
