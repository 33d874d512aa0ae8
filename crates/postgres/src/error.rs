use diesel::result::{DatabaseErrorKind, Error};
use opsd_core::StoreError;

/// Translates a driver error; the driver's text stays in the log side of `StoreError`.
/// A driver error as the service sees it: a fault of the database or of the way to it, or a
/// transaction that lost a race and was rolled back whole (worth a retry, answered 503), or anything
/// else (500).
pub fn store_error(error: Error) -> StoreError {
    match &error {
        Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => StoreError::Unavailable(error.to_string()),
        // SQLSTATE 25006: a primary demoted under a failover, or a replica; nothing was written.
        Error::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _) => StoreError::Unavailable(error.to_string()),
        // diesel-async reports every error without a SQLSTATE (the socket closed or failed) as
        // `UnableToSendCommand`.
        Error::DatabaseError(DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand, _) => {
            StoreError::Unavailable(error.to_string())
        }
        Error::DatabaseError(DatabaseErrorKind::Unknown, info) if is_database_fault(info.message()) => {
            StoreError::Unavailable(error.to_string())
        }
        _ => StoreError::Unknown(error.to_string()),
    }
}

/// The server's own words for a lost or refused session (SQLSTATE classes 08 and 57P, 53300), a
/// write reaching a primary that was demoted, or a replica (25006), PgBouncer's own refusals (it
/// sends them as SQLSTATE 08P01 or 53300 with its own text), a
/// statement cut by `statement_timeout` (57014), and a transaction rolled back for a deadlock
/// (40P01) or a lock it could not get in time (55P03); diesel's error kinds do not carry the
/// SQLSTATE. Our own writes take their row locks in key order, so a deadlock means some other
/// writer (an operator's SQL, say) did not: the client's retry finds the rows free.
fn is_database_fault(message: &str) -> bool {
    const FAULTS: [&str; 20] = [
        "deadlock detected",
        "canceling statement due to lock timeout",
        "could not obtain lock",
        "connection closed",
        "terminating connection",
        "server closed the connection",
        "the database system is",
        "too many connections",
        "canceling statement due to statement timeout",
        "canceling statement due to user request",
        "error communicating with database",
        "connection reset",
        "read-only transaction",
        "conflict with recovery",
        // PgBouncer's own words.
        "no more connections allowed",
        "pgbouncer cannot connect to server",
        "server conn crashed",
        "query_wait_timeout",
        "server login has been failing",
        "pooler is shutting down",
    ];
    FAULTS.iter().any(|fault| message.contains(fault))
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Info(&'static str);

    impl diesel::result::DatabaseErrorInformation for Info {
        fn message(&self) -> &str {
            self.0
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            None
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    fn unknown(message: &'static str) -> StoreError {
        store_error(Error::DatabaseError(DatabaseErrorKind::Unknown, Box::new(Info(message))))
    }

    #[test]
    fn a_lost_session_a_timeout_or_a_lost_race_is_unavailable_and_a_bug_is_not() {
        for fault in [
            "terminating connection due to administrator command",
            "connection closed",
            "FATAL: too many connections for database \"opsd\"",
            "canceling statement due to statement timeout",
            "the database system is shutting down",
            "deadlock detected",
            "canceling statement due to lock timeout",
            "could not obtain lock on row in relation \"coupon_offers\"",
            "cannot execute INSERT in a read-only transaction",
            "canceling statement due to conflict with recovery",
            "no more connections allowed (max_client_conn)",
            "pgbouncer cannot connect to server",
            "server conn crashed?",
            "query_wait_timeout",
        ] {
            assert!(matches!(unknown(fault), StoreError::Unavailable(_)), "{fault}");
        }
        assert!(matches!(unknown("column \"nope\" does not exist"), StoreError::Unknown(_)));
        let closed = store_error(Error::DatabaseError(
            DatabaseErrorKind::UnableToSendCommand,
            Box::new("connection closed".to_owned()),
        ));
        assert!(matches!(closed, StoreError::Unavailable(_)));
        // As diesel reports SQLSTATE 25006 (the soak saw it as a 500 while a demoted leader still
        // took connections).
        let read_only = store_error(Error::DatabaseError(
            DatabaseErrorKind::ReadOnlyTransaction,
            Box::new("cannot execute SELECT FOR UPDATE in a read-only transaction".to_owned()),
        ));
        assert!(matches!(read_only, StoreError::Unavailable(_)));
        let lost_race = store_error(Error::DatabaseError(
            DatabaseErrorKind::SerializationFailure,
            Box::new("could not serialize access due to concurrent update".to_owned()),
        ));
        assert!(matches!(lost_race, StoreError::Unavailable(_)));
    }
}
