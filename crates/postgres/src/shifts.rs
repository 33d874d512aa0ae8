use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::LocationId;
use opsd_scheduling::ScheduledShift;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::schema::schedule_shifts;

/// Upserts shifts of one location by the provider's shift id, inside the caller's transaction.
/// Returns the rows written.
pub async fn upsert_shifts(
    conn: &mut AsyncPgConnection,
    location: LocationId,
    shifts: &[ScheduledShift],
    synced_at: OffsetDateTime,
) -> Result<usize, diesel::result::Error> {
    let mut written = 0;
    // 16 columns a row: stay well under PostgreSQL's 65,535 bind parameters per statement.
    for chunk in shifts.chunks(2_000) {
        let rows: Vec<_> = chunk
            .iter()
            .map(|shift| {
                (
                    schedule_shifts::id.eq(Uuid::now_v7()),
                    schedule_shifts::location_id.eq(location.0),
                    schedule_shifts::provider_shift_id.eq(&shift.input.provider_shift_id),
                    schedule_shifts::business_date.eq(shift.business_date),
                    schedule_shifts::employee_name.eq(&shift.input.employee_name),
                    schedule_shifts::employee_key.eq(&shift.input.employee_key),
                    schedule_shifts::role.eq(&shift.input.role),
                    schedule_shifts::department.eq(shift.input.department.as_str()),
                    schedule_shifts::daypart.eq(shift.daypart.as_str()),
                    schedule_shifts::start_at.eq(shift.input.start_at),
                    schedule_shifts::end_at.eq(shift.input.end_at),
                    schedule_shifts::unpaid_break_minutes.eq(shift.input.unpaid_break_minutes as i32),
                    schedule_shifts::hours_worked.eq(shift.hours_worked),
                    schedule_shifts::hourly_wage.eq(shift.input.hourly_wage),
                    schedule_shifts::is_draft.eq(shift.input.is_draft),
                    schedule_shifts::synced_at.eq(synced_at),
                )
            })
            .collect();
        written += diesel::insert_into(schedule_shifts::table)
            .values(rows)
            .on_conflict((schedule_shifts::location_id, schedule_shifts::provider_shift_id))
            .do_update()
            .set((
                schedule_shifts::business_date.eq(excluded(schedule_shifts::business_date)),
                schedule_shifts::employee_name.eq(excluded(schedule_shifts::employee_name)),
                schedule_shifts::employee_key.eq(excluded(schedule_shifts::employee_key)),
                schedule_shifts::role.eq(excluded(schedule_shifts::role)),
                schedule_shifts::department.eq(excluded(schedule_shifts::department)),
                schedule_shifts::daypart.eq(excluded(schedule_shifts::daypart)),
                schedule_shifts::start_at.eq(excluded(schedule_shifts::start_at)),
                schedule_shifts::end_at.eq(excluded(schedule_shifts::end_at)),
                schedule_shifts::unpaid_break_minutes.eq(excluded(schedule_shifts::unpaid_break_minutes)),
                schedule_shifts::hours_worked.eq(excluded(schedule_shifts::hours_worked)),
                schedule_shifts::hourly_wage.eq(excluded(schedule_shifts::hourly_wage)),
                schedule_shifts::is_draft.eq(excluded(schedule_shifts::is_draft)),
                schedule_shifts::synced_at.eq(excluded(schedule_shifts::synced_at)),
            ))
            .execute(conn)
            .await?;
    }
    Ok(written)
}
