//! Keyset paging (`opsd_core::PageRequest`): a row comparison of the list's sort columns with the
//! last key a client saw, which an index on those columns answers.

use diesel::dsl::sql;
use diesel::expression::BoxableExpression;
use diesel::pg::Pg;
use diesel::sql_types::{Bool, Text, Uuid as SqlUuid};
use uuid::Uuid;

/// Rows after `key` in the order (`name_column`, `id_column`), both qualified by their table.
pub(crate) fn after_name_and_id<'a, T>(
    name_column: &'static str,
    id_column: &'static str,
    key: &'a (String, Uuid),
) -> Box<dyn BoxableExpression<T, Pg, SqlType = Bool> + 'a> {
    Box::new(
        sql::<Bool>(&format!("({name_column}, {id_column}) > ("))
            .bind::<Text, _>(key.0.as_str())
            .sql(", ")
            .bind::<SqlUuid, _>(key.1)
            .sql(")"),
    )
}
