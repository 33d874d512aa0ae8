use std::convert::Infallible;

use crate::{Forbidden, RateLimited, StoreError, ValidationErrors};

/// Why a use case did not happen, in the words every domain service shares; `E` is what only one
/// domain can say (a taken slug, a reservation no longer redeemable). The edge maps each variant to
/// one status in one place.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError<E: std::error::Error = Infallible> {
    #[error(transparent)]
    Forbidden(#[from] Forbidden),
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error("not found")]
    NotFound,
    #[error("rate limited")]
    RateLimited(RateLimited),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Domain(E),
}
