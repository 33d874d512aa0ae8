//! The coupon bodies as clients send and receive them.

use opsd_core::{LocationId, ValidationErrors};
use opsd_coupons::{self as domain, NewOffer};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::wire;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OfferRequest {
    location_id: Uuid,
    /// 1 to 200 characters.
    name: String,
    /// 0 to 1,000,000 reservations at once.
    #[schema(minimum = 0, maximum = 1000000)]
    capacity: i64,
}

impl OfferRequest {
    pub fn try_into_domain(self) -> Result<NewOffer, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 200 {
            errors.push("name", "must be 1 to 200 characters");
        }
        if !(0..=1_000_000).contains(&self.capacity) {
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
}
