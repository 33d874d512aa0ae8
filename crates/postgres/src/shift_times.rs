//! A location's shift times as its manager set them (`planning_shift_times`, migration 36), read with
//! the week planner's inputs and replaced as a whole.

use diesel::QueryableByName;
use diesel::pg::Pg;
use diesel::sql_types::{Int4, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::{Department, LocationId, StoreError};
use opsd_optimization::Block;
use opsd_planning::week_plan::ShiftTemplate;
use time::Time;

use crate::error::corrupt;
use crate::prepared::prepared;
use crate::store_error;

#[derive(QueryableByName)]
struct ShiftTimeRow {
    #[diesel(sql_type = Text)]
    department: String,
    #[diesel(sql_type = Text)]
    block: String,
    #[diesel(sql_type = Int4)]
    start_minute: i32,
    #[diesel(sql_type = Int4)]
    minutes: i32,
}

/// The rows of a planning table that `sql` selects for `location` (its one parameter).
pub(crate) async fn location_rows<R>(
    conn: &mut AsyncPgConnection,
    sql: &'static str,
    location: LocationId,
) -> Result<Vec<R>, StoreError>
where
    R: QueryableByName<Pg> + Send + 'static,
{
    prepared(sql).bind::<SqlUuid, _>(location.0).load(conn).await.map_err(store_error)
}

pub(crate) async fn location_shift_times(
    conn: &mut AsyncPgConnection,
    location: LocationId,
) -> Result<Vec<ShiftTemplate>, StoreError> {
    let rows: Vec<ShiftTimeRow> = location_rows(
        conn,
        "SELECT department, block, start_minute, minutes FROM planning_shift_times WHERE location_id = $1 \
         ORDER BY department, block",
        location,
    )
    .await?;
    rows.into_iter()
        .map(|row| {
            let start = u32::try_from(row.start_minute).ok().filter(|m| *m < 24 * 60);
            Ok(ShiftTemplate {
                department: Department::parse(&row.department).ok_or_else(|| corrupt("department", &row.department))?,
                block: Block::parse(&row.block).ok_or_else(|| corrupt("block", &row.block))?,
                start: start
                    .and_then(|m| Time::from_hms((m / 60) as u8, (m % 60) as u8, 0).ok())
                    .ok_or_else(|| corrupt("start_minute", &row.start_minute.to_string()))?,
                minutes: row.minutes.max(0) as u32,
            })
        })
        .collect()
}

/// In the caller's transaction.
pub(crate) async fn replace_shift_times(
    conn: &mut AsyncPgConnection,
    location: LocationId,
    times: &[ShiftTemplate],
) -> Result<(), diesel::result::Error> {
    prepared("DELETE FROM planning_shift_times WHERE location_id = $1")
        .bind::<SqlUuid, _>(location.0)
        .execute(conn)
        .await?;
    for time in times {
        prepared(
            "INSERT INTO planning_shift_times (location_id, department, block, start_minute, minutes) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind::<SqlUuid, _>(location.0)
        .bind::<Text, _>(time.department.as_str())
        .bind::<Text, _>(time.block.as_str())
        .bind::<Int4, _>(time.start_minute() as i32)
        .bind::<Int4, _>(time.minutes as i32)
        .execute(conn)
        .await?;
    }
    Ok(())
}
