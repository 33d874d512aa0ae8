//! Raw SQL that each connection prepares once. diesel cannot tell whether the text of a
//! `sql_query` was built at run time, so it never keeps it as a prepared statement: PostgreSQL
//! would parse and plan it again on every execution (the parser was most of a status change's
//! cost). SQL fixed at compile time is safe to keep, by its text, as the query builder's own
//! queries are kept by their type.

use std::marker::PhantomData;

use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, BoxedSqlQuery, Query, QueryFragment, QueryId, SqlQuery};
use diesel::serialize::ToSql;
use diesel::sql_types::{HasSqlType, Untyped};

/// A query whose SQL is a compile-time constant: see [`prepared`]. `ST` is its rows' SQL type:
/// `Untyped` rows are read by column name (`QueryableByName`), see [`Prepared::returning`].
#[must_use = "a query does nothing until it is run"]
pub struct Prepared<'f, ST = Untyped>(BoxedSqlQuery<'f, Pg, SqlQuery>, PhantomData<fn() -> ST>);

/// `diesel::sql_query` for a `'static` text, kept prepared on each connection that runs it. Keep
/// the result's columns explicit (no `SELECT *` or `RETURNING *` at the top level): a prepared
/// statement whose result shape changes under a migration fails until the connection is replaced.
/// A statement over a batch of any size (`unnest` of arrays) stays a plain `sql_query`: after five
/// runs PostgreSQL may keep a generic plan, which cannot see how many rows the arrays hold.
pub fn prepared<'f>(sql: &'static str) -> Prepared<'f> {
    Prepared(diesel::sql_query(sql).into_boxed(), PhantomData)
}

impl<'f> Prepared<'f> {
    /// Declares the rows' SQL types, a tuple in column order: rows are then read by position
    /// (`Queryable`). Reading by name looks each column up by comparing names, for every field of
    /// every row: 7 % of the server's instructions for a team-wide report (49 rows of 10 columns).
    pub fn returning<ST>(self) -> Prepared<'f, ST> {
        Prepared(self.0, PhantomData)
    }
}

impl<'f, ST> Prepared<'f, ST> {
    /// As [`SqlQuery::bind`].
    pub fn bind<BT, V>(self, value: V) -> Self
    where
        Pg: HasSqlType<BT>,
        V: ToSql<BT, Pg> + Send + 'f,
        BT: Send + 'f,
    {
        Prepared(self.0.bind::<BT, V>(value), PhantomData)
    }
}

impl<ST> QueryFragment<Pg> for Prepared<'_, ST> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

/// Kept by its SQL text, not by type: the text is what identifies it.
impl<ST> QueryId for Prepared<'_, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<ST> Query for Prepared<'_, ST> {
    type SqlType = ST;
}
