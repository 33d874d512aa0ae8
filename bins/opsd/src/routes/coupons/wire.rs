//! The coupon bodies as clients send and receive them, and the guest events as the coupon-automation
//! producer sends them (read leniently: fields it does not use are ignored).

use opsd_core::{LocationId, TeamId, TextLength, ValidationErrors};
use opsd_coupons::{
    self as domain, CanonicalEvent, Feedback, GuestEvent, LegacyRating, NewOffer, OfferId, ReservationId,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::wire;

pub const OFFER_NAME: TextLength = TextLength::new(1, 200);
pub const CAPACITY: std::ops::RangeInclusive<i64> = 0..=1_000_000;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OfferRequest {
    location_id: Uuid,
    /// 1 to 200 characters.
    name: String,
    /// 0 to 1,000,000 reservations at once.
    capacity: i64,
}

impl OfferRequest {
    pub fn try_into_domain(self) -> Result<NewOffer, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let name = self.name.trim();
        if !OFFER_NAME.fits(name) {
            errors.push("name", OFFER_NAME.message());
        }
        if !CAPACITY.contains(&self.capacity) {
            errors.push("capacity", "must be 0 to 1000000");
        }
        errors.into_result()?;
        Ok(NewOffer {
            location_id: LocationId(self.location_id),
            name: name.to_owned(),
            capacity: self.capacity as i32,
        })
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    id: Uuid,
    team_id: String,
    location_id: Uuid,
    name: String,
    capacity: i32,
    /// Capacity held by active reservations.
    held: i32,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
}

impl From<domain::Offer> for Offer {
    fn from(offer: domain::Offer) -> Self {
        Self {
            id: offer.id.0,
            team_id: offer.team_id.to_string(),
            location_id: offer.location_id.0,
            name: offer.name,
            capacity: offer.capacity,
            held: offer.held,
            created_at: offer.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    id: Uuid,
    offer_id: Uuid,
    guest_id: String,
    #[schema(value_type = wire::ReservationState)]
    state: domain::ReservationState,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    expires_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expired_at: Option<OffsetDateTime>,
}

impl From<domain::Reservation> for Reservation {
    fn from(reservation: domain::Reservation) -> Self {
        Self {
            id: reservation.id.0,
            offer_id: reservation.offer_id.0,
            guest_id: reservation.guest_id,
            state: reservation.state,
            expires_at: reservation.expires_at,
            expired_at: reservation.expired_at,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(rename = "type")]
    event_type: String,
    event_id: Option<String>,
    #[serde(default, with = "time::serde::rfc3339::option")]
    occurred_at: Option<OffsetDateTime>,
    team_id: String,
    location_id: Uuid,
    data: Option<serde_json::Value>,
    rating: Option<i64>,
    guest_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedData {
    reservation_id: Uuid,
    offer_id: Uuid,
    guest_id: String,
    #[serde(with = "time::serde::rfc3339")]
    expires_at: OffsetDateTime,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RedeemedData {
    reservation_id: Uuid,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FeedbackData {
    feedback_id: String,
    guest_id: String,
    reservation_id: Option<Uuid>,
    rating: i64,
    comment: Option<String>,
}

fn invalid(field: &str, message: impl Into<String>) -> ValidationErrors {
    ValidationErrors::single(field, message)
}

fn rating(field: &str, value: i64) -> Result<u8, ValidationErrors> {
    if (1..=5).contains(&value) { Ok(value as u8) } else { Err(invalid(field, "must be an integer from 1 to 5")) }
}

fn text_id(field: &str, value: String) -> Result<String, ValidationErrors> {
    if (1..=200).contains(&value.len()) { Ok(value) } else { Err(invalid(field, "must be 1 to 200 characters")) }
}

/// A guest event from the producer's JSON (`GuestEventDecoder`).
pub fn decode_guest_event(body: &[u8]) -> Result<GuestEvent, ValidationErrors> {
    let envelope: Envelope =
        serde_json::from_slice(body).map_err(|e| invalid("body", format!("not a guest event: {e}")))?;
    let team_id = TeamId::new(text_id("teamId", envelope.team_id)?);
    let location_id = LocationId(envelope.location_id);
    let Some(event_id) = envelope.event_id else {
        if envelope.event_type != "rating" {
            return Err(invalid("eventId", "is required except on the legacy rating body"));
        }
        let rating = rating("rating", envelope.rating.ok_or_else(|| invalid("rating", "is required"))?)?;
        let guest_id = text_id("guestId", envelope.guest_id.ok_or_else(|| invalid("guestId", "is required"))?)?;
        return Ok(GuestEvent::Legacy { team_id, location_id, rating: LegacyRating { rating, guest_id } });
    };
    let event_id = text_id("eventId", event_id)?;
    let occurred_at = envelope.occurred_at.ok_or_else(|| invalid("occurredAt", "is required"))?;
    let data = envelope.data.ok_or_else(|| invalid("data", "is required"))?;
    let data_error = |e: serde_json::Error| invalid("data", e.to_string());
    let event = match envelope.event_type.as_str() {
        "reservation.created" => {
            let d: CreatedData = serde_json::from_value(data).map_err(data_error)?;
            CanonicalEvent::ReservationCreated {
                reservation_id: ReservationId(d.reservation_id),
                offer_id: OfferId(d.offer_id),
                guest_id: text_id("data.guestId", d.guest_id)?,
                expires_at: d.expires_at,
            }
        }
        "reservation.redeemed" => {
            let d: RedeemedData = serde_json::from_value(data).map_err(data_error)?;
            CanonicalEvent::ReservationRedeemed { reservation_id: ReservationId(d.reservation_id) }
        }
        "feedback.submitted" => {
            let d: FeedbackData = serde_json::from_value(data).map_err(data_error)?;
            CanonicalEvent::FeedbackSubmitted(Feedback {
                feedback_id: text_id("data.feedbackId", d.feedback_id)?,
                guest_id: text_id("data.guestId", d.guest_id)?,
                reservation_id: d.reservation_id.map(ReservationId),
                rating: rating("data.rating", d.rating)?,
                comment: d.comment.filter(|c| c.chars().count() <= 2000),
            })
        }
        other => return Err(invalid("type", format!("unknown guest event type {other:?}"))),
    };
    Ok(GuestEvent::Canonical { event_id, occurred_at, team_id, location_id, event })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(name: &str, capacity: i64) -> OfferRequest {
        OfferRequest { location_id: Uuid::nil(), name: name.into(), capacity }
    }

    #[test]
    fn an_offer_needs_a_name_and_a_sane_capacity() {
        let parsed = offer("  Free dessert ", 0).try_into_domain().unwrap();
        assert_eq!(parsed.name, "Free dessert");
        let errors = offer(" ", 1_000_001).try_into_domain().unwrap_err();
        let fields: Vec<&str> = errors.errors().iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "capacity"]);
    }

    #[test]
    fn canonical_events_parse_by_type() {
        let body = br#"{"type":"feedback.submitted","eventId":"evt_1","occurredAt":"2026-11-21T14:00:00Z","teamId":"org_1",
            "locationId":"00000000-0000-7000-8000-000000000001","data":{"feedbackId":"fb_1","guestId":"g_1","rating":2}}"#;
        let GuestEvent::Canonical { event, event_id, .. } = decode_guest_event(body).unwrap() else {
            panic!("canonical")
        };
        assert_eq!(event_id, "evt_1");
        assert!(matches!(event, CanonicalEvent::FeedbackSubmitted(Feedback { rating: 2, .. })));
    }

    #[test]
    fn the_legacy_body_has_no_event_id() {
        let body = br#"{"type":"rating","rating":1,"teamId":"org_1","locationId":"00000000-0000-7000-8000-000000000001","guestId":"g_1"}"#;
        assert!(matches!(
            decode_guest_event(body).unwrap(),
            GuestEvent::Legacy { rating: LegacyRating { rating: 1, .. }, .. }
        ));
    }

    #[test]
    fn bad_events_name_their_field() {
        let field = |body: &[u8]| decode_guest_event(body).unwrap_err().errors()[0].field.clone();
        assert_eq!(field(br#"{"type":"rating","rating":9,"teamId":"t","locationId":"00000000-0000-7000-8000-000000000001","guestId":"g"}"#), "rating");
        assert_eq!(field(br#"{"type":"reservation.created","teamId":"t","locationId":"00000000-0000-7000-8000-000000000001","data":{}}"#), "eventId");
        assert_eq!(field(br#"{"type":"party","eventId":"e","occurredAt":"2026-11-21T14:00:00Z","teamId":"t","locationId":"00000000-0000-7000-8000-000000000001","data":{}}"#), "type");
    }
}
