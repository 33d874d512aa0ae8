use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Array, Text, Timestamptz};
use diesel_async::{AsyncConnection, RunQueryDsl};
use opsd_core::{Decimal, Department, LocationId, StoreError, TeamId};
use opsd_scheduling::{
    Daypart, ProviderRole, RoleCounts, RoleMap, ScheduleStore, ScheduleView, ScheduledShift, SyncCounts, SyncLocation,
    ViewFilter, ViewShift,
};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::prepared::prepared;
use crate::schema::{locations, schedule_shifts};
use crate::shifts::upsert_shifts;
use crate::{Db, store_error};

#[derive(Queryable, Selectable)]
#[diesel(table_name = schedule_shifts)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct ShiftRow {
    id: Uuid,
    provider_shift_id: String,
    business_date: Date,
    employee_name: String,
    employee_key: String,
    role: String,
    department: String,
    daypart: String,
    start_at: OffsetDateTime,
    end_at: OffsetDateTime,
    unpaid_break_minutes: i32,
    hours_worked: Decimal,
    hourly_wage: Decimal,
    is_draft: bool,
}

impl ShiftRow {
    /// Whether the stored row already says what the provider says now.
    fn same_as(&self, shift: &ScheduledShift) -> bool {
        let input = &shift.input;
        self.business_date == shift.business_date
            && self.employee_name == input.employee_name
            && self.employee_key == input.employee_key
            && self.role == input.role
            && self.department == input.department.as_str()
            && self.daypart == shift.daypart.as_str()
            && self.start_at == input.start_at
            && self.end_at == input.end_at
            && self.unpaid_break_minutes == input.unpaid_break_minutes as i32
            && self.hours_worked == shift.hours_worked
            && self.hourly_wage == input.hourly_wage
            && self.is_draft == input.is_draft
    }

    fn into_view(self) -> ViewShift {
        ViewShift {
            shift_id: self.id,
            business_date: self.business_date,
            employee_name: self.employee_name,
            employee_key: self.employee_key,
            role: self.role,
            department: self.department,
            daypart: self.daypart,
            start_at: self.start_at,
            end_at: self.end_at,
            hours_worked: format!("{:.2}", self.hours_worked),
            hourly_wage: format!("{:.2}", self.hourly_wage),
            is_draft: self.is_draft,
        }
    }
}

pub struct PgScheduleStore {
    db: Db,
}

impl PgScheduleStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl ScheduleStore for PgScheduleStore {
    async fn locations_to_sync(&self) -> Result<Vec<SyncLocation>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<(Uuid, String, String, Option<String>, String)> = locations::table
            .filter(locations::scheduler_location_id.is_not_null())
            .order(locations::id)
            .select((
                locations::id,
                locations::slug,
                locations::team_id,
                locations::scheduler_location_id,
                locations::timezone,
            ))
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, slug, team, provider, timezone)| {
                Some(SyncLocation {
                    id: LocationId(id),
                    slug,
                    team_id: TeamId::new(team),
                    provider_location_id: provider?,
                    timezone,
                })
            })
            .collect())
    }

    async fn role_map(&self) -> Result<RoleMap, StoreError> {
        #[derive(QueryableByName)]
        struct Role {
            #[diesel(sql_type = Text)]
            provider_role_id: String,
            #[diesel(sql_type = Text)]
            name: String,
            #[diesel(sql_type = Text)]
            department: String,
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<Role> = prepared("SELECT provider_role_id, name, department FROM scheduler_roles")
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| (r.provider_role_id, (r.name, Department::parse(&r.department).unwrap_or(Department::Other))))
            .collect())
    }

    async fn replace_window(
        &self,
        location: LocationId,
        from: OffsetDateTime,
        to: OffsetDateTime,
        shifts: Vec<ScheduledShift>,
        at: OffsetDateTime,
    ) -> Result<SyncCounts, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<SyncCounts, diesel::result::Error, _>(async |conn| {
            let existing: Vec<ShiftRow> = schedule_shifts::table
                .filter(schedule_shifts::location_id.eq(location.0))
                .filter(schedule_shifts::start_at.ge(from).and(schedule_shifts::start_at.lt(to)))
                .select(ShiftRow::as_select())
                .for_update()
                .load(conn)
                .await?;
            let existing: HashMap<String, ShiftRow> =
                existing.into_iter().map(|r| (r.provider_shift_id.clone(), r)).collect();
            let mut counts = SyncCounts::default();
            let mut changed = Vec::new();
            let incoming: HashSet<String> = shifts.iter().map(|s| s.input.provider_shift_id.clone()).collect();
            for shift in shifts {
                match existing.get(&shift.input.provider_shift_id) {
                    Some(row) if row.same_as(&shift) => counts.unchanged += 1,
                    Some(_) => {
                        counts.updated += 1;
                        changed.push(shift);
                    }
                    None => {
                        counts.inserted += 1;
                        changed.push(shift);
                    }
                }
            }
            upsert_shifts(conn, location, &changed, at).await?;
            let vanished: Vec<String> = existing.keys().filter(|id| !incoming.contains(*id)).cloned().collect();
            if !vanished.is_empty() {
                counts.deleted = diesel::delete(
                    schedule_shifts::table
                        .filter(schedule_shifts::location_id.eq(location.0))
                        .filter(schedule_shifts::provider_shift_id.eq_any(&vanished)),
                )
                .execute(conn)
                .await? as u64;
            }
            Ok(counts)
        })
        .await
        .map_err(store_error)
    }

    async fn upsert_roles(
        &self,
        roles: Vec<(ProviderRole, Department)>,
        at: OffsetDateTime,
    ) -> Result<RoleCounts, StoreError> {
        #[derive(QueryableByName)]
        struct Outcome {
            #[diesel(sql_type = Text)]
            outcome: String,
        }
        let mut conn = self.db.conn().await?;
        // Planned afresh each time: the best plan depends on how many roles arrive, which a
        // generic plan would not see.
        let outcomes: Vec<Outcome> = diesel::sql_query(
            "WITH incoming AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) \
                               AS i(provider_role_id, provider_location_id, name, department)), \
                  before AS (SELECT s.provider_role_id, s.provider_location_id, s.name, s.department \
                             FROM scheduler_roles s JOIN incoming USING (provider_role_id)), \
                  written AS (INSERT INTO scheduler_roles (provider_role_id, provider_location_id, name, department, synced_at) \
                              SELECT provider_role_id, provider_location_id, name, department, $5 FROM incoming \
                              ON CONFLICT (provider_role_id) DO UPDATE SET provider_location_id = EXCLUDED.provider_location_id, \
                                name = EXCLUDED.name, department = EXCLUDED.department, synced_at = EXCLUDED.synced_at \
                              WHERE (scheduler_roles.provider_location_id, scheduler_roles.name, scheduler_roles.department) \
                                    IS DISTINCT FROM (EXCLUDED.provider_location_id, EXCLUDED.name, EXCLUDED.department) \
                              RETURNING provider_role_id) \
             SELECT CASE WHEN w.provider_role_id IS NULL THEN 'unchanged' \
                         WHEN b.provider_role_id IS NULL THEN 'inserted' ELSE 'updated' END AS outcome \
             FROM incoming i LEFT JOIN written w USING (provider_role_id) LEFT JOIN before b USING (provider_role_id)",
        )
        .bind::<Array<Text>, _>(roles.iter().map(|(r, _)| r.id.clone()).collect::<Vec<_>>())
        .bind::<Array<diesel::sql_types::Nullable<Text>>, _>(roles.iter().map(|(r, _)| r.location_id.clone()).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(roles.iter().map(|(r, _)| r.name.clone()).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(roles.iter().map(|(_, d)| d.as_str()).collect::<Vec<_>>())
        .bind::<Timestamptz, _>(at)
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        let count = |name: &str| outcomes.iter().filter(|o| o.outcome == name).count() as u64;
        Ok(RoleCounts { inserted: count("inserted"), updated: count("updated"), unchanged: count("unchanged") })
    }

    async fn view(&self, slug: &str, filter: ViewFilter) -> Result<Option<ScheduleView>, StoreError> {
        let (owned_slug, owned_filter) = (slug.to_owned(), filter.clone());
        let read = self
            .db
            .read(async move |conn| {
                let (slug, filter) = (owned_slug.as_str(), &owned_filter);
                let location: Option<(Uuid, String)> = locations::table
                    .filter(locations::slug.eq(slug))
                    .select((locations::id, locations::name))
                    .first(&mut *conn)
                    .await
                    .optional()
                    .map_err(store_error)?;
                let Some((location_id, location_name)) = location else { return Ok(None) };
                let scoped = || {
                    let mut query = schedule_shifts::table
                        .filter(schedule_shifts::location_id.eq(location_id))
                        .filter(schedule_shifts::business_date.between(filter.start, filter.end))
                        .into_boxed();
                    if !filter.include_draft {
                        query = query.filter(schedule_shifts::is_draft.eq(false));
                    }
                    if let Some(key) = &filter.employee_key {
                        query = query.filter(schedule_shifts::employee_key.eq(key.clone()));
                    }
                    if let Some(department) = filter.department {
                        query = query.filter(schedule_shifts::department.eq(department.as_str()));
                    }
                    if let Some(daypart) = filter.daypart {
                        query = query.filter(schedule_shifts::daypart.eq(Daypart::as_str(daypart)));
                    }
                    query
                };
                let total: i64 = scoped().count().get_result(&mut *conn).await.map_err(store_error)?;
                let rows: Vec<ShiftRow> = scoped()
                    .order((schedule_shifts::start_at, schedule_shifts::id))
                    .limit(i64::from(filter.limit))
                    .offset(i64::from(filter.offset))
                    .select(ShiftRow::as_select())
                    .load(&mut *conn)
                    .await
                    .map_err(store_error)?;
                Ok(Some((location_name, total, rows)))
            })
            .await?;
        let Some((location_name, total, rows)) = read else { return Ok(None) };
        Ok(Some(ScheduleView {
            location_slug: slug.to_owned(),
            location_name,
            start_date: filter.start,
            end_date: filter.end,
            shifts: rows.into_iter().map(ShiftRow::into_view).collect(),
            total_count: total as u64,
            limit: filter.limit,
            offset: filter.offset,
            generated_at: OffsetDateTime::now_utc(),
        }))
    }

    async fn timezone_of(&self, slug: &str) -> Result<Option<String>, StoreError> {
        let mut conn = self.db.conn().await?;
        locations::table
            .filter(locations::slug.eq(slug))
            .select(locations::timezone)
            .first(&mut conn)
            .await
            .optional()
            .map_err(store_error)
    }
}
