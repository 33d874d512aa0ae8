//! Coupon offers and reservations, the expiry job, and the coupon-automation receiver.

mod wire;

pub use wire::{CAPACITY, OFFER_NAME};

use actix_web::{HttpRequest, HttpResponse, web};
use opsd_coupons::{IntakeError, OfferId, ReservationId};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::errors::ApiError;
use crate::extract::{AnyCaller, CronSecret, JsonBody, RawBody};
use crate::routes::webhooks::signed_delivery;
use crate::state::AppState;

pub use wire::{Offer, OfferRequest, Reservation, decode_guest_event};

/// Creates an offer with capacity at one of the team's locations (admin).
#[utoipa::path(post, path = "/api/coupons/offers", tags = ["coupons"], request_body = OfferRequest,
    security(("bearer" = []), ("session" = [])), responses((status = 201, body = Offer)))]
pub async fn create_offer(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    JsonBody(body): JsonBody<OfferRequest>,
) -> Result<HttpResponse, ApiError> {
    let offer = state.coupons.create_offer(&caller, body.try_into_domain()?).await?;
    let location = format!("/api/coupons/offers/{}", offer.id.0);
    Ok(HttpResponse::Created().insert_header(("Location", location)).json(Offer::from(offer)))
}

/// An offer with its capacity and what active reservations hold. Reading it expires nothing.
#[utoipa::path(get, path = "/api/coupons/offers/{id}", tags = ["coupons"], params(("id" = Uuid, Path)),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Offer)))]
pub async fn offer(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(Offer::from(state.coupons.offer(&caller, OfferId(*id)).await?)))
}

/// A reservation; a due one is expired first (its capacity released).
#[utoipa::path(get, path = "/api/coupons/reservations/{id}", tags = ["coupons"], params(("id" = Uuid, Path)),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Reservation)))]
pub async fn reservation(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(Reservation::from(state.coupons.reservation(&caller, ReservationId(*id)).await?)))
}

/// Redeems an active reservation. A due one is expired instead, and the answer is 409.
#[utoipa::path(post, path = "/api/coupons/reservations/{id}/redeem", tags = ["coupons"], params(("id" = Uuid, Path)),
    security(("bearer" = []), ("session" = [])), responses((status = 200, body = Reservation)))]
pub async fn redeem(
    state: web::Data<AppState>,
    AnyCaller(caller): AnyCaller,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(Reservation::from(state.coupons.redeem(&caller, ReservationId(*id)).await?)))
}

#[derive(Serialize, ToSchema)]
pub struct JobStatusBody {
    /// `disabled` (the sweep is not admitted: nothing ran) or `skipped` (another run holds the lock).
    status: &'static str,
}

/// Releases due coupon reservations in claims of at most 100. Disabled until
/// `COUPON_EXPIRY_ENABLED=true`: then it answers 200 `{"status":"disabled"}`, which is not
/// evidence that expiry ran. A run whose reconciliation delta is nonzero or whose oldest lag
/// exceeds 120 s records its diagnostics, then answers 500 with `"status":"failed"`.
#[utoipa::path(get, path = "/cron/expire-coupons", tags = ["jobs"], security(("cronSecret" = [])),
    responses(
        (status = 200, description = "a completed run, or disabled/skipped", body = SweepReportSchema),
        (status = 500, description = "the health gate is raised; the diagnostics were recorded", body = SweepReportSchema),
    ))]
pub async fn expire_coupons(state: web::Data<AppState>, _cron: CronSecret) -> Result<HttpResponse, ApiError> {
    crate::routes::cron::call(&state, "expire-coupons").await
}

/// The sweep's answer: `{"status": "disabled" | "skipped"}` when nothing ran, else the run's
/// record with every count (`status` `ok`, or `failed` with 500).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
#[schema(as = SweepReport)]
pub struct SweepReportSchema {
    status: String,
    correlation_id: Option<Uuid>,
    duration_ms: Option<u64>,
    expired: Option<u64>,
    ignored: Option<u64>,
    accepted_events: Option<u64>,
    duplicate_events: Option<u64>,
    reconciliation_delta: Option<i64>,
    oldest_expiry_lag_seconds: Option<f64>,
}

impl From<IntakeError> for ApiError {
    fn from(error: IntakeError) -> Self {
        match error {
            IntakeError::NotConfigured => ApiError::NotConfigured("COUPON_WEBHOOK_SECRET"),
            IntakeError::Unverified(reason) => {
                tracing::info!(%reason, "coupon automation signature rejected");
                ApiError::Unauthorized
            }
            IntakeError::Invalid(errors) => errors.into(),
            IntakeError::Conflict => ApiError::DeliveryConflict,
            IntakeError::Store(error) => error.into(),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    accepted: bool,
    duplicate: bool,
    /// The stable identity: the producer's `eventId`, or `legacy:<sha256 of the body>`.
    event_id: String,
}

/// The coupon-automation producer's guest events (Standard Webhooks signature with
/// `COUPON_WEBHOOK_SECRET`). Canonical messages carry `eventId`; the legacy rating body does not and
/// is identified by the SHA-256 of its bytes. A new event is 202; a repeat is 200 with
/// `duplicate: true`; the same `eventId` with another payload is 409. Receiving authorizes nothing:
/// a worker reloads the records and decides.
#[utoipa::path(post, path = "/api/automation/coupons", tags = ["webhooks"],
    params(
        ("webhook-id" = String, Header, description = "delivery id (also hook-id or svix-id)"),
        ("webhook-timestamp" = String, Header, description = "unix seconds"),
        ("webhook-signature" = String, Header, description = "space-separated v1,<base64> list"),
    ),
    request_body(content = serde_json::Value, description = "a canonical guest event {type, eventId, occurredAt, teamId, locationId, data} or the legacy {type: \"rating\", rating, teamId, locationId, guestId, comment?}"),
    responses((status = 202, body = Accepted), (status = 200, description = "a repeat", body = Accepted)))]
pub async fn automation(
    state: web::Data<AppState>,
    req: HttpRequest,
    RawBody(body): RawBody,
) -> Result<HttpResponse, ApiError> {
    let outcome = state.guest_events.receive(signed_delivery(&req), &body).await?;
    let answer = Accepted { accepted: true, duplicate: outcome.duplicate, event_id: outcome.event_id };
    if outcome.duplicate {
        Ok(HttpResponse::Ok().json(answer))
    } else {
        state.guest_event_wake.notify_one();
        Ok(HttpResponse::Accepted().json(answer))
    }
}
