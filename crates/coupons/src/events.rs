//! Guest events as the coupon-automation producer sends them: canonical messages with a stable
//! `eventId`, or the legacy rating body without one.

use opsd_core::{LocationId, TeamId, ValidationErrors};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::model::{OfferId, ReservationId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonicalEvent {
    ReservationCreated {
        reservation_id: ReservationId,
        offer_id: OfferId,
        guest_id: String,
        expires_at: OffsetDateTime,
    },
    ReservationRedeemed {
        reservation_id: ReservationId,
    },
    FeedbackSubmitted {
        feedback_id: String,
        guest_id: String,
        reservation_id: Option<ReservationId>,
        rating: u8,
        comment: Option<String>,
    },
}

/// A rating hint of the legacy path: it has no durable feedback identity, so it never alerts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyRating {
    pub rating: u8,
    pub guest_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestEvent {
    Canonical {
        event_id: String,
        occurred_at: OffsetDateTime,
        team_id: TeamId,
        location_id: LocationId,
        event: CanonicalEvent,
    },
    Legacy {
        team_id: TeamId,
        location_id: LocationId,
        rating: LegacyRating,
    },
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

impl GuestEvent {
    /// The event's type, as its queue row names it.
    pub fn event_type(&self) -> &'static str {
        match self {
            GuestEvent::Canonical { event: CanonicalEvent::ReservationCreated { .. }, .. } => "reservation.created",
            GuestEvent::Canonical { event: CanonicalEvent::ReservationRedeemed { .. }, .. } => "reservation.redeemed",
            GuestEvent::Canonical { event: CanonicalEvent::FeedbackSubmitted { .. }, .. } => "feedback.submitted",
            GuestEvent::Legacy { .. } => "rating",
        }
    }

    pub fn team_id(&self) -> &TeamId {
        match self {
            GuestEvent::Canonical { team_id, .. } | GuestEvent::Legacy { team_id, .. } => team_id,
        }
    }

    pub fn location_id(&self) -> LocationId {
        match self {
            GuestEvent::Canonical { location_id, .. } | GuestEvent::Legacy { location_id, .. } => *location_id,
        }
    }

    pub fn parse(body: &[u8]) -> Result<Self, ValidationErrors> {
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
                CanonicalEvent::FeedbackSubmitted {
                    feedback_id: text_id("data.feedbackId", d.feedback_id)?,
                    guest_id: text_id("data.guestId", d.guest_id)?,
                    reservation_id: d.reservation_id.map(ReservationId),
                    rating: rating("data.rating", d.rating)?,
                    comment: d.comment.filter(|c| c.chars().count() <= 2000),
                }
            }
            other => return Err(invalid("type", format!("unknown guest event type {other:?}"))),
        };
        Ok(GuestEvent::Canonical { event_id, occurred_at, team_id, location_id, event })
    }
}

/// SHA-256 of the canonical form of a JSON body: keys sorted, no insignificant white space, so
/// the same message re-serialized by the producer keeps its hash.
pub fn canonical_sha256(body: &[u8]) -> Result<String, ValidationErrors> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| invalid("body", e.to_string()))?;
    Ok(hex::encode(Sha256::digest(serde_json::to_vec(&value).expect("a JSON value serializes"))))
}

pub fn raw_sha256(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_events_parse_by_type() {
        let body = br#"{"type":"feedback.submitted","eventId":"evt_1","occurredAt":"2026-11-21T14:00:00Z","teamId":"org_1",
            "locationId":"00000000-0000-7000-8000-000000000001","data":{"feedbackId":"fb_1","guestId":"g_1","rating":2}}"#;
        let GuestEvent::Canonical { event, event_id, .. } = GuestEvent::parse(body).unwrap() else {
            panic!("canonical")
        };
        assert_eq!(event_id, "evt_1");
        assert!(matches!(event, CanonicalEvent::FeedbackSubmitted { rating: 2, .. }));
    }

    #[test]
    fn the_legacy_body_has_no_event_id() {
        let body = br#"{"type":"rating","rating":1,"teamId":"org_1","locationId":"00000000-0000-7000-8000-000000000001","guestId":"g_1"}"#;
        assert!(matches!(
            GuestEvent::parse(body).unwrap(),
            GuestEvent::Legacy { rating: LegacyRating { rating: 1, .. }, .. }
        ));
    }

    #[test]
    fn bad_events_name_their_field() {
        let field = |body: &[u8]| GuestEvent::parse(body).unwrap_err().errors()[0].field.clone();
        assert_eq!(field(br#"{"type":"rating","rating":9,"teamId":"t","locationId":"00000000-0000-7000-8000-000000000001","guestId":"g"}"#), "rating");
        assert_eq!(field(br#"{"type":"reservation.created","teamId":"t","locationId":"00000000-0000-7000-8000-000000000001","data":{}}"#), "eventId");
        assert_eq!(field(br#"{"type":"party","eventId":"e","occurredAt":"2026-11-21T14:00:00Z","teamId":"t","locationId":"00000000-0000-7000-8000-000000000001","data":{}}"#), "type");
    }

    #[test]
    fn the_canonical_hash_ignores_key_order_and_white_space() {
        let a = canonical_sha256(br#"{"b":1,"a":{"y":2,"x":[1,2]}}"#).unwrap();
        let b = canonical_sha256(b"{ \"a\": {\"x\": [1, 2], \"y\": 2},\n \"b\": 1 }").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, canonical_sha256(br#"{"b":2,"a":{"y":2,"x":[1,2]}}"#).unwrap());
    }
}
