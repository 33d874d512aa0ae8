use opsd_core::{LocationId, TeamId, ValidationErrors};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OfferId(pub Uuid);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReservationId(pub Uuid);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReservationState {
    Active,
    Redeemed,
    Cancelled,
    /// The expired state: capacity was released.
    Expired,
}

impl ReservationState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationState::Active => "active",
            ReservationState::Redeemed => "redeemed",
            ReservationState::Cancelled => "cancelled",
            ReservationState::Expired => "expired",
        }
    }

    pub fn parse(stored: &str) -> Option<Self> {
        [Self::Active, Self::Redeemed, Self::Cancelled, Self::Expired].into_iter().find(|s| s.as_str() == stored)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    #[cfg_attr(feature = "openapi", schema(value_type = Uuid))]
    pub id: OfferId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub team_id: TeamId,
    #[cfg_attr(feature = "openapi", schema(value_type = Uuid))]
    pub location_id: LocationId,
    pub name: String,
    pub capacity: i32,
    /// Capacity held by active reservations.
    pub held: i32,
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    #[cfg_attr(feature = "openapi", schema(value_type = Uuid))]
    pub id: ReservationId,
    #[cfg_attr(feature = "openapi", schema(value_type = Uuid))]
    pub offer_id: OfferId,
    pub guest_id: String,
    pub state: ReservationState,
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub expires_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub expired_at: Option<OffsetDateTime>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OfferRequest {
    pub location_id: Uuid,
    /// 1 to 200 characters.
    pub name: String,
    /// 0 to 1,000,000 reservations at once.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1000000))]
    pub capacity: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOffer {
    pub location_id: LocationId,
    pub name: String,
    pub capacity: i32,
}

impl OfferRequest {
    pub fn parse(&self) -> Result<NewOffer, ValidationErrors> {
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
