use std::collections::HashMap;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use opsd_core::{Decimal, LocationId, StoreError};
use opsd_scheduling::{PunchStore, StoredPunch, SyncCounts};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::schema::{punch_sync_state, time_punches};
use crate::{Db, store_error};

pub struct PgPunchStore {
    db: Db,
}

impl PgPunchStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = time_punches)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct PunchRow {
    provider_punch_id: String,
    employee_key: String,
    department: String,
    business_date: Date,
    clocked_in: OffsetDateTime,
    clocked_out: Option<OffsetDateTime>,
    approved: bool,
    unpaid_break_minutes: i32,
    worked_hours: Option<Decimal>,
    hourly_wage: Decimal,
}

impl PunchRow {
    fn same_as(&self, punch: &StoredPunch) -> bool {
        self.employee_key == punch.employee_key
            && self.department == punch.department.as_str()
            && self.business_date == punch.business_date
            && self.clocked_in == punch.clocked_in
            && self.clocked_out == punch.clocked_out
            && self.approved == punch.approved
            && self.unpaid_break_minutes == punch.unpaid_break_minutes
            && self.worked_hours == punch.worked_hours
            && self.hourly_wage == punch.hourly_wage
    }
}

/// Upserts punches of one location by the provider's punch id, inside the caller's transaction.
pub async fn upsert_punches(
    conn: &mut AsyncPgConnection,
    location: LocationId,
    punches: &[StoredPunch],
    synced_at: OffsetDateTime,
) -> Result<usize, diesel::result::Error> {
    let mut written = 0;
    // 12 columns a row: stay well under PostgreSQL's 65,535 bind parameters per statement.
    for chunk in punches.chunks(4_000) {
        let rows: Vec<_> = chunk
            .iter()
            .map(|punch| {
                (
                    time_punches::location_id.eq(location.0),
                    time_punches::provider_punch_id.eq(&punch.provider_punch_id),
                    time_punches::employee_key.eq(&punch.employee_key),
                    time_punches::department.eq(punch.department.as_str()),
                    time_punches::business_date.eq(punch.business_date),
                    time_punches::clocked_in.eq(punch.clocked_in),
                    time_punches::clocked_out.eq(punch.clocked_out),
                    time_punches::approved.eq(punch.approved),
                    time_punches::unpaid_break_minutes.eq(punch.unpaid_break_minutes),
                    time_punches::worked_hours.eq(punch.worked_hours),
                    time_punches::hourly_wage.eq(punch.hourly_wage),
                    time_punches::synced_at.eq(synced_at),
                )
            })
            .collect();
        written += diesel::insert_into(time_punches::table)
            .values(rows)
            .on_conflict((time_punches::location_id, time_punches::provider_punch_id))
            .do_update()
            .set((
                time_punches::employee_key.eq(excluded(time_punches::employee_key)),
                time_punches::department.eq(excluded(time_punches::department)),
                time_punches::business_date.eq(excluded(time_punches::business_date)),
                time_punches::clocked_in.eq(excluded(time_punches::clocked_in)),
                time_punches::clocked_out.eq(excluded(time_punches::clocked_out)),
                time_punches::approved.eq(excluded(time_punches::approved)),
                time_punches::unpaid_break_minutes.eq(excluded(time_punches::unpaid_break_minutes)),
                time_punches::worked_hours.eq(excluded(time_punches::worked_hours)),
                time_punches::hourly_wage.eq(excluded(time_punches::hourly_wage)),
                time_punches::synced_at.eq(excluded(time_punches::synced_at)),
            ))
            .execute(conn)
            .await?;
    }
    Ok(written)
}

#[async_trait]
impl PunchStore for PgPunchStore {
    async fn synced_through(&self) -> Result<HashMap<LocationId, OffsetDateTime>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, OffsetDateTime)> = punch_sync_state::table
            .select((punch_sync_state::location_id, punch_sync_state::synced_through))
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(rows.into_iter().map(|(id, through)| (LocationId(id), through)).collect())
    }

    async fn apply_punches(
        &self,
        location: LocationId,
        punches: Vec<StoredPunch>,
        deleted: Vec<String>,
        through: OffsetDateTime,
    ) -> Result<SyncCounts, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<SyncCounts, diesel::result::Error, _>(async |conn| {
            let ids: Vec<&str> = punches.iter().map(|p| p.provider_punch_id.as_str()).collect();
            let existing: HashMap<String, PunchRow> = time_punches::table
                .filter(time_punches::location_id.eq(location.0))
                .filter(time_punches::provider_punch_id.eq_any(&ids))
                .select(PunchRow::as_select())
                .for_update()
                .load(conn)
                .await?
                .into_iter()
                .map(|row| (row.provider_punch_id.clone(), row))
                .collect();
            let mut counts = SyncCounts::default();
            let mut changed = Vec::new();
            for punch in punches {
                match existing.get(&punch.provider_punch_id) {
                    Some(row) if row.same_as(&punch) => counts.unchanged += 1,
                    Some(_) => {
                        counts.updated += 1;
                        changed.push(punch);
                    }
                    None => {
                        counts.inserted += 1;
                        changed.push(punch);
                    }
                }
            }
            upsert_punches(conn, location, &changed, through).await?;
            if !deleted.is_empty() {
                counts.deleted = diesel::delete(
                    time_punches::table
                        .filter(time_punches::location_id.eq(location.0))
                        .filter(time_punches::provider_punch_id.eq_any(&deleted)),
                )
                .execute(conn)
                .await? as u64;
            }
            diesel::insert_into(punch_sync_state::table)
                .values((punch_sync_state::location_id.eq(location.0), punch_sync_state::synced_through.eq(through)))
                .on_conflict(punch_sync_state::location_id)
                .do_update()
                .set(punch_sync_state::synced_through.eq(through))
                .execute(conn)
                .await?;
            Ok(counts)
        })
        .await
        .map_err(store_error)
    }
}
