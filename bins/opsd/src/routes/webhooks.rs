//! Inbound webhooks, verified with Standard Webhooks signatures on the raw body.

mod wire;

pub use wire::decode_identity_event;

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
            WebhookError::Malformed(reason) => ApiError::MalformedJson(reason),
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

/// The identity provider's lifecycle events: `user.created`, `user.updated`, `user.deleted`,
/// `organizationMembership.created` and `.updated` (the user's role in the team, from `data.role`),
/// `organizationMembership.deleted` (the membership goes; a token issued before the removal cannot
/// restore it) and `organization.deleted` (every membership of the team goes; its data stays).
/// An event older than one applied (by the provider's `updated_at`) changes nothing. Other types
/// are recorded without effect. Verified before parsing (401 on failure, nothing stored); a body
/// that is not JSON is 400 `malformed_json`; a redelivery of the same id and body answers 200 again
/// without a second effect; the same id with another body is 409.
#[utoipa::path(post, path = "/api/webhooks/identity", tags = ["webhooks"],
    params(
        ("webhook-id" = String, Header, description = "delivery id (also accepted as hook-id or svix-id)"),
        ("webhook-timestamp" = String, Header, description = "unix seconds (also hook-timestamp, svix-timestamp)"),
        ("webhook-signature" = String, Header, description = "space-separated v1,<base64> list (also hook-signature, svix-signature)"),
    ),
    request_body(content = serde_json::Value, description = "{type, data, object?, timestamp?}; membership events carry data.organization.id, data.public_user_data.user_id, data.role, data.updated_at"),
    responses((status = 200, body = Received)))]
pub async fn identity(
    state: web::Data<AppState>,
    req: HttpRequest,
    RawBody(body): RawBody,
) -> Result<HttpResponse, ApiError> {
    state.identity_webhooks.receive(signed_delivery(&req), &body).await?;
    Ok(HttpResponse::Ok().json(Received { received: true }))
}
