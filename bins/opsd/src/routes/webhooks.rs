//! Inbound webhooks, verified with Standard Webhooks signatures on the raw body.

use actix_web::{HttpRequest, HttpResponse, web};
use opsd_identity::WebhookError;
use opsd_signatures::SignedDelivery;
use serde::Serialize;
use utoipa::ToSchema;

use crate::errors::ApiError;
use crate::extract::RawBody;
use crate::state::AppState;

/// The signature headers under the Standard Webhooks names, the short `hook-` names, or the `svix-`
/// names that hosted delivery services send.
pub fn signed_delivery(req: &HttpRequest) -> SignedDelivery<'_> {
    let header = |suffix: &str| {
        ["webhook-", "hook-", "svix-"]
            .iter()
            .find_map(|prefix| req.headers().get(format!("{prefix}{suffix}")))
            .and_then(|value| value.to_str().ok())
    };
    SignedDelivery { id: header("id"), timestamp: header("timestamp"), signatures: header("signature") }
}

impl From<WebhookError> for ApiError {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::NotConfigured => ApiError::NotConfigured("IDENTITY_WEBHOOK_SECRET"),
            WebhookError::Unverified(reason) => {
                tracing::info!(%reason, "webhook signature rejected");
                ApiError::Unauthorized
            }
            WebhookError::Invalid(errors) => errors.into(),
            WebhookError::DeliveryConflict => ApiError::DeliveryConflict,
            WebhookError::Store(error) => error.into(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Received {
    received: bool,
}

/// The identity provider's user lifecycle events (`user.created`, `user.updated`, `user.deleted`).
/// Verified before parsing (401 on failure, nothing stored); a redelivery of the same id and body
/// answers 200 again without a second effect; the same id with another body is 409.
#[utoipa::path(post, path = "/api/webhooks/identity", tag = "webhooks",
    params(
        ("webhook-id" = String, Header, description = "delivery id (also accepted as hook-id or svix-id)"),
        ("webhook-timestamp" = String, Header, description = "unix seconds (also hook-timestamp, svix-timestamp)"),
        ("webhook-signature" = String, Header, description = "space-separated v1,<base64> list (also hook-signature, svix-signature)"),
    ),
    request_body(content = serde_json::Value, description = "{type, data, object?, timestamp?}"),
    responses((status = 200, body = Received)))]
pub async fn identity(state: web::Data<AppState>, req: HttpRequest, RawBody(body): RawBody) -> Result<HttpResponse, ApiError> {
    state.identity_webhooks.receive(signed_delivery(&req), &body).await?;
    Ok(HttpResponse::Ok().json(Received { received: true }))
}
