use std::sync::Arc;

use opsd_core::{Caller, Clock, ValidationErrors};

use crate::model::{NewOffer, Offer, OfferId, Reservation, ReservationId};
use crate::ports::{CouponStore, RedeemOutcome};

/// The reservation is no longer active: its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the reservation is {0}")]
pub struct NotRedeemable(pub &'static str);

pub type CouponError = opsd_core::ServiceError<NotRedeemable>;

#[derive(derive_new::new)]
pub struct CouponService {
    store: Arc<dyn CouponStore>,
    clock: Arc<dyn Clock>,
}

impl CouponService {
    pub async fn create_offer(&self, caller: &Caller, offer: NewOffer) -> Result<Offer, CouponError> {
        let team = caller.admin_team()?;
        self.store
            .create_offer(team, &offer, self.clock.now())
            .await?
            .ok_or_else(|| ValidationErrors::single("locationId", "is not a location of your team").into())
    }

    /// Reading an offer expires nothing.
    pub async fn offer(&self, caller: &Caller, id: OfferId) -> Result<Offer, CouponError> {
        self.store.offer(caller.team_id()?, id).await?.ok_or(CouponError::NotFound)
    }

    pub async fn reservation(&self, caller: &Caller, id: ReservationId) -> Result<Reservation, CouponError> {
        self.store.reservation(caller.team_id()?, id, self.clock.now()).await?.ok_or(CouponError::NotFound)
    }

    pub async fn redeem(&self, caller: &Caller, id: ReservationId) -> Result<Reservation, CouponError> {
        match self.store.redeem(caller.team_id()?, id, self.clock.now()).await? {
            RedeemOutcome::Redeemed(reservation) => Ok(reservation),
            RedeemOutcome::NotFound => Err(CouponError::NotFound),
            RedeemOutcome::Expired(_) => Err(CouponError::Domain(NotRedeemable("expired"))),
            RedeemOutcome::NotActive(reservation) => {
                Err(CouponError::Domain(NotRedeemable(reservation.state.as_str())))
            }
        }
    }
}
