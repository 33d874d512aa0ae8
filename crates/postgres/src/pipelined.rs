//! A transaction whose `BEGIN` travels with its first statements: a short write saves a round trip.
//! Same statements as `conn.transaction(..)`, in the same order.
//!
//! Why it is safe:
//! - `BEGIN` goes by the simple protocol, which tokio-postgres queues at the future's first poll;
//!   it is polled first, so the statements, queued at their own first poll or after a `Parse`
//!   round trip, always reach the server after it. (`COMMIT` cannot travel the same way: a statement
//!   still to be parsed would be executed after it.)
//! - The connection is marked as inside a transaction before `BEGIN` is queued, and unmarked by
//!   diesel's own commit or rollback. A request dropped halfway leaves the mark, and the pool
//!   discards the connection instead of lending out someone's open transaction.

use diesel::QueryResult;
use diesel::connection::{TransactionDepthChange, TransactionManagerStatus};
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, SimpleAsyncConnection, TransactionManager};

/// An open transaction on `conn`. Finish it with [`Open::finish`]; one dropped unfinished leaves its
/// connection to be discarded by the pool.
#[must_use = "an open transaction is finished by `finish`"]
pub(crate) struct Open<'c> {
    conn: &'c mut AsyncPgConnection,
}

/// Begins a transaction and runs `first` in the same round trip. When `first` fails the
/// transaction is rolled back and its error returned.
pub(crate) async fn begin_with<'c, T>(
    conn: &'c mut AsyncPgConnection,
    first: impl AsyncFnOnce(&AsyncPgConnection) -> QueryResult<T>,
) -> QueryResult<(Open<'c>, T)> {
    mark_begun(conn)?;
    let result = {
        let (mut control, shared): (&AsyncPgConnection, &AsyncPgConnection) = (conn, conn);
        let (begun, first) = futures::join!(control.batch_execute("BEGIN"), first(shared));
        begun.and(first)
    };
    let open = Open { conn };
    match result {
        Ok(value) => Ok((open, value)),
        Err(error) => open.finish(Err(error)).await,
    }
}

impl Open<'_> {
    /// The transaction's connection.
    pub(crate) fn conn(&mut self) -> &mut AsyncPgConnection {
        self.conn
    }

    /// Commits an outcome, or rolls back an error and returns it.
    pub(crate) async fn finish<T, E: From<diesel::result::Error>>(self, outcome: Result<T, E>) -> Result<T, E> {
        match outcome {
            Ok(value) => self.commit().await.map(|()| value).map_err(E::from),
            Err(error) => {
                // The statement's error says what went wrong; a failed rollback discards the connection.
                let _ = self.rollback().await;
                Err(error)
            }
        }
    }

    /// diesel's commit: when `COMMIT` fails, it rolls back, and a connection it cannot restore is
    /// marked broken and discarded.
    async fn commit(self) -> QueryResult<()> {
        AnsiTransactionManager::commit_transaction(self.conn).await
    }

    /// diesel's rollback, likewise.
    async fn rollback(self) -> QueryResult<()> {
        AnsiTransactionManager::rollback_transaction(self.conn).await
    }
}

/// Marks the connection as inside a transaction; refuses one that already is.
fn mark_begun(conn: &mut AsyncPgConnection) -> QueryResult<()> {
    match AnsiTransactionManager::transaction_manager_status_mut(conn) {
        TransactionManagerStatus::Valid(status) if status.transaction_depth().is_none() => {
            status.change_transaction_depth(TransactionDepthChange::IncreaseDepth)
        }
        TransactionManagerStatus::Valid(_) => Err(diesel::result::Error::AlreadyInTransaction),
        TransactionManagerStatus::InError => Err(diesel::result::Error::BrokenTransactionManager),
    }
}

#[cfg(test)]
mod tests {
    use diesel_async::pooled_connection::PoolableConnection;
    use diesel_async::{AsyncConnection, RunQueryDsl};

    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn only_an_unfinished_transaction_leaves_its_connection_to_be_discarded() {
        let database = opsd_test_db::TestDatabase::new().await;
        let mut conn = AsyncPgConnection::establish(database.url()).await.unwrap();
        conn.batch_execute("CREATE TABLE t (n int PRIMARY KEY)").await.unwrap();
        let insert =
            async |mut conn: &AsyncPgConnection| diesel::sql_query("INSERT INTO t VALUES (1)").execute(&mut conn).await;

        let (open, _) = begin_with(&mut conn, insert).await.unwrap();
        open.rollback().await.unwrap();
        assert!(!conn.is_broken(), "rolled back");
        let (open, _) = begin_with(&mut conn, insert).await.unwrap();
        open.commit().await.unwrap();
        assert!(!conn.is_broken(), "committed");
        // The row is there now, so the first statement fails: its error, rolled back, reusable.
        let failed = begin_with(&mut conn, insert).await.map(|_| ());
        assert!(matches!(failed, Err(diesel::result::Error::DatabaseError(..))), "{failed:?}");
        assert!(!conn.is_broken(), "rolled back after the error");

        let (open, _) = begin_with(&mut conn, async |_| Ok(())).await.unwrap();
        drop(open);
        assert!(conn.is_broken(), "a request dropped halfway: the pool must not lend this connection again");
    }
}
