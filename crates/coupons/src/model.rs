use opsd_core::{LocationId, TeamId};
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OfferId(pub Uuid);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReservationId(pub Uuid);

opsd_core::wire_enum! {
    #[strum(serialize_all = "lowercase")]
    pub enum ReservationState {
        Active,
        Redeemed,
        Cancelled,
        /// The expired state: capacity was released.
        Expired,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub id: OfferId,
    pub team_id: TeamId,
    pub location_id: LocationId,
    pub name: String,
    pub capacity: i32,
    /// Capacity held by active reservations.
    pub held: i32,
    pub created_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub id: ReservationId,
    pub offer_id: OfferId,
    pub guest_id: String,
    pub state: ReservationState,
    pub expires_at: OffsetDateTime,
    pub expired_at: Option<OffsetDateTime>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOffer {
    pub location_id: LocationId,
    pub name: String,
    pub capacity: i32,
}
