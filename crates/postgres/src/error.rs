use diesel::result::{DatabaseErrorKind, Error};
use opsd_core::StoreError;

/// Translates a driver error; the driver's text stays in the log side of `StoreError`.
pub fn store_error(error: Error) -> StoreError {
    match &error {
        Error::DatabaseError(DatabaseErrorKind::ClosedConnection, _) => StoreError::Unavailable(error.to_string()),
        _ => StoreError::Unknown(error.to_string()),
    }
}

pub(crate) fn is_unique_violation(error: &Error, constraint: &str) -> bool {
    matches!(error, Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info)
        if info.constraint_name() == Some(constraint))
}

/// A transaction's failure: the driver's, or a business outcome that rolls it back.
pub(crate) enum TxError<E> {
    Db(Error),
    Domain(E),
}

impl<E> From<Error> for TxError<E> {
    fn from(error: Error) -> Self {
        TxError::Db(error)
    }
}

/// Turns a corrupt stored value into a store failure.
pub(crate) fn corrupt(what: &str, value: &str) -> opsd_core::StoreError {
    opsd_core::StoreError::Unknown(format!("stored {what} is not valid: {value:?}"))
}
