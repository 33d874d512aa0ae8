//! Guest events as the coupon-automation producer sends them: canonical messages with a stable
//! `eventId`, or the legacy rating body without one. Their JSON shape is read at the edge
//! (`GuestEventDecoder`).

use opsd_core::{LocationId, TeamId, ValidationErrors};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

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
    FeedbackSubmitted(Feedback),
}

/// A guest's feedback, kept once per `feedback_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    pub feedback_id: String,
    pub guest_id: String,
    pub reservation_id: Option<ReservationId>,
    pub rating: u8,
    pub comment: Option<String>,
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

/// Reads a guest event's body (the producer's JSON shape is the edge's to know).
pub trait GuestEventDecoder: Send + Sync {
    fn decode(&self, body: &[u8]) -> Result<GuestEvent, ValidationErrors>;
}

impl<F: Fn(&[u8]) -> Result<GuestEvent, ValidationErrors> + Send + Sync> GuestEventDecoder for F {
    fn decode(&self, body: &[u8]) -> Result<GuestEvent, ValidationErrors> {
        self(body)
    }
}

impl GuestEvent {
    /// The event's type, as its queue row names it.
    pub fn event_type(&self) -> &'static str {
        match self {
            GuestEvent::Canonical { event: CanonicalEvent::ReservationCreated { .. }, .. } => "reservation.created",
            GuestEvent::Canonical { event: CanonicalEvent::ReservationRedeemed { .. }, .. } => "reservation.redeemed",
            GuestEvent::Canonical { event: CanonicalEvent::FeedbackSubmitted(_), .. } => "feedback.submitted",
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
}

/// SHA-256 of the canonical form of a JSON body: keys sorted, no insignificant white space, so
/// the same message re-serialized by the producer keeps its hash.
pub fn canonical_sha256(body: &[u8]) -> Result<String, ValidationErrors> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| ValidationErrors::single("body", e.to_string()))?;
    Ok(hex::encode(Sha256::digest(serde_json::to_vec(&value).expect("a JSON value serializes"))))
}

pub fn raw_sha256(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_hash_ignores_key_order_and_white_space() {
        let a = canonical_sha256(br#"{"b":1,"a":{"y":2,"x":[1,2]}}"#).unwrap();
        let b = canonical_sha256(b"{ \"a\": {\"x\": [1, 2], \"y\": 2},\n \"b\": 1 }").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, canonical_sha256(br#"{"b":2,"a":{"y":2,"x":[1,2]}}"#).unwrap());
    }
}
