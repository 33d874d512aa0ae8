//! The week planner's store: a location's shift history and availability, and the schedule
//! proposals with their leased queue (migration 000032).

use async_trait::async_trait;
use diesel::sql_types::{
    Array, BigInt, Date as SqlDate, Double, Int2, Int4, Jsonb, Nullable, Numeric, Text, Timestamp, Timestamptz,
    Uuid as SqlUuid,
};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use opsd_core::{Decimal, Department, LocationId, PageRequest, StoreError, TeamId, Week};
use opsd_optimization::Block;
use opsd_planning::week_plan::{
    Availability, AvailabilityWrite, BindingRule, ChangeKind, ClaimedProposal, Coverage, PastPunch, PastShift,
    PlannedShift, PlanningInputs, Proposal, ProposalKey, ProposalResult, ProposalStatus, ScheduleChange, ShiftTemplate,
    SolverFigures, WeekPlanStore,
};
use opsd_rostering::Status;
use time::{Date, Duration, OffsetDateTime, PrimitiveDateTime};
use uuid::Uuid;

use crate::error::corrupt;
use crate::prepared::prepared;
use crate::shift_times::{location_rows, location_shift_times, replace_shift_times};
use crate::{Db, store_error};

pub struct PgWeekPlanStore {
    pub(crate) db: Db,
}

impl PgWeekPlanStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct TimezoneRow {
    #[diesel(sql_type = Text)]
    timezone: String,
}

#[derive(QueryableByName)]
struct PastShiftRow {
    #[diesel(sql_type = Text)]
    employee_key: String,
    #[diesel(sql_type = Text)]
    employee_name: String,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Text)]
    department: String,
    #[diesel(sql_type = Text)]
    block: String,
    #[diesel(sql_type = Timestamp)]
    start_local: PrimitiveDateTime,
    #[diesel(sql_type = Int4)]
    minutes: i32,
    #[diesel(sql_type = Numeric)]
    hourly_wage: Decimal,
}

#[derive(QueryableByName)]
struct AvailabilityRow {
    #[diesel(sql_type = Text)]
    employee_key: String,
    #[diesel(sql_type = Array<Int2>)]
    unavailable_weekdays: Vec<i16>,
    #[diesel(sql_type = Array<SqlDate>)]
    unavailable_dates: Vec<Date>,
    #[diesel(sql_type = Array<Text>)]
    preferred_blocks: Vec<String>,
    #[diesel(sql_type = Nullable<Int4>)]
    max_weekly_minutes: Option<i32>,
}

#[derive(QueryableByName)]
struct KeyRow {
    #[diesel(sql_type = Text)]
    key: String,
}

impl PastShiftRow {
    fn into_past(self) -> Result<PastShift, StoreError> {
        Ok(PastShift {
            department: department(&self.department)?,
            block: block(&self.block)?,
            employee_key: self.employee_key,
            employee_name: self.employee_name,
            role: self.role,
            start: self.start_local,
            minutes: self.minutes.max(0) as u32,
            hourly_wage: self.hourly_wage,
        })
    }
}

const PROPOSAL_COLUMNS: &str = "id, location_id, week_of, status, reason, time_limit_seconds, created_at, completed_at, \
     projected_sales, hours, labor_cost, labor_pct, splh, splh_target, labor_pct_target, solver_status, objective, \
     bound, gap, solve_seconds, binding_rules, changes";

#[derive(QueryableByName)]
struct ProposalRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    location_id: Uuid,
    #[diesel(sql_type = SqlDate)]
    week_of: Date,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Nullable<Text>)]
    reason: Option<String>,
    #[diesel(sql_type = Int4)]
    time_limit_seconds: i32,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    completed_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Numeric>)]
    projected_sales: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    hours: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    labor_cost: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    labor_pct: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    splh: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    splh_target: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    labor_pct_target: Option<Decimal>,
    #[diesel(sql_type = Nullable<Text>)]
    solver_status: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    objective: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    bound: Option<i64>,
    #[diesel(sql_type = Nullable<Double>)]
    gap: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    solve_seconds: Option<f64>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    binding_rules: Option<serde_json::Value>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    changes: Option<serde_json::Value>,
}

#[derive(QueryableByName)]
struct ShiftRow {
    #[diesel(sql_type = Text)]
    employee_key: String,
    #[diesel(sql_type = Text)]
    employee_name: String,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Text)]
    department: String,
    #[diesel(sql_type = SqlDate)]
    business_date: Date,
    #[diesel(sql_type = Text)]
    block: String,
    #[diesel(sql_type = Timestamptz)]
    start_at: OffsetDateTime,
    #[diesel(sql_type = Timestamptz)]
    end_at: OffsetDateTime,
    #[diesel(sql_type = Numeric)]
    hours: Decimal,
    #[diesel(sql_type = Numeric)]
    cost: Decimal,
}

#[derive(QueryableByName)]
struct CoverageRow {
    #[diesel(sql_type = SqlDate)]
    business_date: Date,
    #[diesel(sql_type = Text)]
    block: String,
    #[diesel(sql_type = Text)]
    department: String,
    #[diesel(sql_type = Numeric)]
    hours_needed: Decimal,
    #[diesel(sql_type = Numeric)]
    hours_planned: Decimal,
}

#[derive(QueryableByName)]
struct ClaimRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    lease_token: Uuid,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = SqlUuid)]
    location_id: Uuid,
    #[diesel(sql_type = SqlDate)]
    week_of: Date,
    #[diesel(sql_type = Int4)]
    time_limit_seconds: i32,
}

fn department(raw: &str) -> Result<Department, StoreError> {
    Department::parse(raw).ok_or_else(|| corrupt("department", raw))
}

fn block(raw: &str) -> Result<Block, StoreError> {
    Block::parse(raw).ok_or_else(|| corrupt("block", raw))
}

fn week(raw: Date) -> Result<Week, StoreError> {
    Week::starting("week_of", raw).map_err(|_| corrupt("week_of", &raw.to_string()))
}

fn solver_status(raw: &str) -> Result<Status, StoreError> {
    [Status::Optimal, Status::Feasible, Status::Infeasible, Status::Unknown]
        .into_iter()
        .find(|status| status.name() == raw)
        .ok_or_else(|| corrupt("solver_status", raw))
}

impl ProposalRow {
    fn into_proposal(self, result: Option<(Vec<PlannedShift>, Vec<Coverage>)>) -> Result<Proposal, StoreError> {
        let status = ProposalStatus::parse(&self.status).ok_or_else(|| corrupt("status", &self.status))?;
        let result =
            match (result, self.solver_status.as_deref()) {
                (Some((shifts, coverage)), Some(raw_status)) => Some(ProposalResult {
                    shifts,
                    coverage,
                    projected_sales: self.projected_sales.unwrap_or_default(),
                    hours: self.hours.unwrap_or_default(),
                    labor_cost: self.labor_cost.unwrap_or_default(),
                    labor_pct: self.labor_pct,
                    splh: self.splh,
                    splh_target: self.splh_target,
                    labor_pct_target: self.labor_pct_target,
                    solver: SolverFigures {
                        status: solver_status(raw_status)?,
                        objective: self.objective.unwrap_or_default(),
                        bound: self.bound.unwrap_or_default(),
                        gap: self.gap.unwrap_or_default(),
                        seconds: self.solve_seconds.unwrap_or_default(),
                    },
                    binding_rules: self
                        .binding_rules
                        .as_ref()
                        .and_then(|value| value.as_array())
                        .map(|rules| {
                            rules
                                .iter()
                                .map(|rule| BindingRule {
                                    rule: rule["rule"].as_str().unwrap_or_default().to_owned(),
                                    employees: rule["employees"]
                                        .as_array()
                                        .map(|keys| keys.iter().filter_map(|k| k.as_str().map(str::to_owned)).collect())
                                        .unwrap_or_default(),
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    changes: self.changes.as_ref().and_then(|v| v.as_array()).map_or(Ok(Vec::new()), |changes| {
                        changes.iter().map(change_from_json).collect::<Result<_, _>>()
                    })?,
                }),
                _ => None,
            };
        Ok(Proposal {
            id: self.id,
            location: LocationId(self.location_id),
            week: week(self.week_of)?,
            status,
            reason: self.reason,
            time_limit_seconds: self.time_limit_seconds as u32,
            created_at: self.created_at,
            completed_at: self.completed_at,
            result,
        })
    }
}

fn department_block(value: &serde_json::Value) -> Result<Option<(Department, Block)>, StoreError> {
    match value.as_array().map(Vec::as_slice) {
        Some([department_name, block_name]) => Ok(Some((
            department(department_name.as_str().unwrap_or_default())?,
            block(block_name.as_str().unwrap_or_default())?,
        ))),
        _ => Ok(None),
    }
}

fn change_from_json(value: &serde_json::Value) -> Result<ScheduleChange, StoreError> {
    let text = |key: &str| value[key].as_str().unwrap_or_default();
    Ok(ScheduleChange {
        employee_key: text("employeeKey").to_owned(),
        date: Date::parse(text("date"), &time::format_description::well_known::Iso8601::DATE)
            .map_err(|_| corrupt("change date", text("date")))?,
        kind: ChangeKind::parse(text("kind")).ok_or_else(|| corrupt("change kind", text("kind")))?,
        from: department_block(&value["from"])?,
        to: department_block(&value["to"])?,
        premium: text("premium").parse().map_err(|_| corrupt("change premium", text("premium")))?,
    })
}

fn change_to_json(change: &ScheduleChange) -> serde_json::Value {
    let pair = |pair: Option<(Department, Block)>| pair.map(|(d, b)| serde_json::json!([d.as_str(), b.as_str()]));
    serde_json::json!({
        "employeeKey": change.employee_key,
        "date": change.date.to_string(),
        "kind": change.kind.as_str(),
        "from": pair(change.from),
        "to": pair(change.to),
        "premium": change.premium.to_string(),
    })
}

/// The location's published shifts from `from` to the day before `to`, at its local times. Drafts (a
/// proposal sent to 7shifts among them) are not what was run.
async fn local_shifts(
    conn: &mut AsyncPgConnection,
    location: LocationId,
    from: Date,
    to: Date,
    timezone: &str,
) -> Result<Vec<PastShift>, StoreError> {
    let rows: Vec<PastShiftRow> = prepared(
        "SELECT s.employee_key, s.employee_name, s.role, s.department, s.daypart AS block, \
                (s.start_at AT TIME ZONE $4) AS start_local, \
                (extract(epoch FROM s.end_at - s.start_at) / 60)::int AS minutes, s.hourly_wage \
         FROM schedule_shifts s \
         WHERE s.location_id = $1 AND s.business_date >= $2 AND s.business_date < $3 AND NOT s.is_draft \
         ORDER BY s.start_at, s.id",
    )
    .bind::<SqlUuid, _>(location.0)
    .bind::<SqlDate, _>(from)
    .bind::<SqlDate, _>(to)
    .bind::<Text, _>(timezone)
    .load(conn)
    .await
    .map_err(store_error)?;
    rows.into_iter().map(PastShiftRow::into_past).collect()
}

#[derive(QueryableByName)]
struct PastPunchRow {
    #[diesel(sql_type = Text)]
    employee_key: String,
    #[diesel(sql_type = Text)]
    department: String,
    #[diesel(sql_type = Timestamp)]
    clocked_in_local: PrimitiveDateTime,
    #[diesel(sql_type = Numeric)]
    hourly_wage: Decimal,
}

/// The location's time punches from `from` to the day before `to`, at its local times, oldest first.
async fn local_punches(
    conn: &mut AsyncPgConnection,
    location: LocationId,
    from: Date,
    to: Date,
    timezone: &str,
) -> Result<Vec<PastPunch>, StoreError> {
    let rows: Vec<PastPunchRow> = prepared(
        "SELECT employee_key, department, (clocked_in AT TIME ZONE $4) AS clocked_in_local, hourly_wage \
         FROM time_punches \
         WHERE location_id = $1 AND business_date >= $2 AND business_date < $3 AND employee_key <> '' \
         ORDER BY clocked_in, provider_punch_id",
    )
    .bind::<SqlUuid, _>(location.0)
    .bind::<SqlDate, _>(from)
    .bind::<SqlDate, _>(to)
    .bind::<Text, _>(timezone)
    .load(conn)
    .await
    .map_err(store_error)?;
    rows.into_iter()
        .map(|row| {
            Ok(PastPunch {
                department: department(&row.department)?,
                employee_key: row.employee_key,
                clocked_in: row.clocked_in_local,
                hourly_wage: row.hourly_wage,
            })
        })
        .collect()
}

async fn location_availability(
    conn: &mut AsyncPgConnection,
    location: LocationId,
) -> Result<Vec<Availability>, StoreError> {
    let rows: Vec<AvailabilityRow> = location_rows(
        conn,
        "SELECT employee_key, unavailable_weekdays, unavailable_dates, preferred_blocks, max_weekly_minutes \
         FROM planning_availability WHERE location_id = $1 ORDER BY employee_key",
        location,
    )
    .await?;
    rows.into_iter()
        .map(|row| {
            Ok(Availability {
                employee_key: row.employee_key,
                unavailable_weekdays: row.unavailable_weekdays.into_iter().map(|d| d as u8).collect(),
                unavailable_dates: row.unavailable_dates,
                preferred_blocks: row.preferred_blocks.iter().map(|b| block(b)).collect::<Result<_, _>>()?,
                max_weekly_minutes: row.max_weekly_minutes.map(|m| m as u32),
            })
        })
        .collect()
}

async fn owned_timezone(
    conn: &mut AsyncPgConnection,
    team: &TeamId,
    location: LocationId,
) -> Result<Option<String>, diesel::result::Error> {
    let row: Option<TimezoneRow> = prepared("SELECT timezone FROM locations WHERE id = $1 AND team_id = $2")
        .bind::<SqlUuid, _>(location.0)
        .bind::<Text, _>(team.as_str())
        .get_result(conn)
        .await
        .optional()?;
    Ok(row.map(|row| row.timezone))
}

#[async_trait]
impl WeekPlanStore for PgWeekPlanStore {
    async fn inputs(
        &self,
        team: &TeamId,
        location: LocationId,
        since: Date,
        until: Date,
    ) -> Result<Option<PlanningInputs>, StoreError> {
        let mut conn = self.db.conn().await?;
        let Some(timezone) = owned_timezone(&mut conn, team, location).await.map_err(store_error)? else {
            return Ok(None);
        };
        let history = local_shifts(&mut conn, location, since, until, &timezone).await?;
        let punches = local_punches(&mut conn, location, since, until, &timezone).await?;
        let published = local_shifts(&mut conn, location, until, until + Duration::days(7), &timezone).await?;
        let availability = location_availability(&mut conn, location).await?;
        let shift_times = location_shift_times(&mut conn, location).await?;
        Ok(Some(PlanningInputs { timezone, history, punches, published, availability, shift_times }))
    }

    async fn availability(&self, team: &TeamId, location: LocationId) -> Result<Option<Vec<Availability>>, StoreError> {
        let mut conn = self.db.conn().await?;
        if owned_timezone(&mut conn, team, location).await.map_err(store_error)?.is_none() {
            return Ok(None);
        }
        location_availability(&mut conn, location).await.map(Some)
    }

    async fn put_availability(
        &self,
        team: &TeamId,
        location: LocationId,
        rows: &[Availability],
    ) -> Result<Option<AvailabilityWrite>, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            if owned_timezone(conn, team, location).await?.is_none() {
                return Ok(None);
            }
            let keys: Vec<&str> = rows.iter().map(|row| row.employee_key.as_str()).collect();
            let unknown: Vec<KeyRow> = prepared(
                "SELECT k AS key FROM unnest($2::text[]) k \
                 WHERE NOT EXISTS (SELECT 1 FROM schedule_shifts s WHERE s.location_id = $1 AND s.employee_key = k) \
                   AND NOT EXISTS (SELECT 1 FROM time_punches p WHERE p.location_id = $1 AND p.employee_key = k) \
                 ORDER BY k",
            )
            .bind::<SqlUuid, _>(location.0)
            .bind::<Array<Text>, _>(&keys)
            .load(conn)
            .await?;
            if !unknown.is_empty() {
                return Ok(Some(AvailabilityWrite::UnknownEmployees(unknown.into_iter().map(|r| r.key).collect())));
            }
            for row in rows {
                prepared(
                    "INSERT INTO planning_availability (location_id, employee_key, unavailable_weekdays, \
                         unavailable_dates, preferred_blocks, max_weekly_minutes, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, now()) \
                     ON CONFLICT (location_id, employee_key) DO UPDATE SET \
                         unavailable_weekdays = EXCLUDED.unavailable_weekdays, \
                         unavailable_dates = EXCLUDED.unavailable_dates, \
                         preferred_blocks = EXCLUDED.preferred_blocks, \
                         max_weekly_minutes = EXCLUDED.max_weekly_minutes, updated_at = now()",
                )
                .bind::<SqlUuid, _>(location.0)
                .bind::<Text, _>(&row.employee_key)
                .bind::<Array<Int2>, _>(row.unavailable_weekdays.iter().map(|&d| i16::from(d)).collect::<Vec<_>>())
                .bind::<Array<SqlDate>, _>(&row.unavailable_dates)
                .bind::<Array<Text>, _>(row.preferred_blocks.iter().map(|b| b.as_str()).collect::<Vec<_>>())
                .bind::<Nullable<Int4>, _>(row.max_weekly_minutes.map(|m| m as i32))
                .execute(conn)
                .await?;
            }
            Ok(Some(AvailabilityWrite::Saved))
        })
        .await
        .map_err(store_error)
    }

    async fn put_shift_times(
        &self,
        team: &TeamId,
        location: LocationId,
        times: &[ShiftTemplate],
    ) -> Result<Option<()>, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            if owned_timezone(conn, team, location).await?.is_none() {
                return Ok(None);
            }
            replace_shift_times(conn, location, times).await.map(Some)
        })
        .await
        .map_err(store_error)
    }

    async fn create_proposal(
        &self,
        team: &TeamId,
        location: LocationId,
        week: Week,
        time_limit_seconds: u32,
        requested_by: &str,
    ) -> Result<Proposal, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: ProposalRow = diesel::sql_query(format!(
            "INSERT INTO schedule_proposals (id, team_id, location_id, week_of, time_limit_seconds, requested_by, \
                 status, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 'solving', now()) RETURNING {PROPOSAL_COLUMNS}"
        ))
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<Text, _>(team.as_str())
        .bind::<SqlUuid, _>(location.0)
        .bind::<SqlDate, _>(week.start())
        .bind::<Int4, _>(time_limit_seconds as i32)
        .bind::<Text, _>(requested_by)
        .get_result(&mut conn)
        .await
        .map_err(store_error)?;
        row.into_proposal(None)
    }

    async fn claim_proposal(&self, lease: Duration) -> Result<Option<ClaimedProposal>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<ClaimRow> = prepared(
            "UPDATE schedule_proposals SET lease_token = gen_random_uuid(), attempts = attempts + 1, \
                 leased_until = now() + $1 * interval '1 millisecond' \
             WHERE id = (SELECT id FROM schedule_proposals \
                         WHERE status = 'solving' AND (leased_until IS NULL OR leased_until < now()) \
                         ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING id, lease_token, team_id, location_id, week_of, time_limit_seconds",
        )
        .bind::<BigInt, _>((lease.whole_milliseconds()) as i64)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        row.map(|row| {
            Ok(ClaimedProposal {
                id: row.id,
                lease: row.lease_token,
                team: TeamId::new(row.team_id),
                location: LocationId(row.location_id),
                week: week(row.week_of)?,
                time_limit_seconds: row.time_limit_seconds as u32,
            })
        })
        .transpose()
    }

    async fn finish_proposal(
        &self,
        id: Uuid,
        lease: Uuid,
        outcome: Result<ProposalResult, String>,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            let Ok(result) = &outcome else {
                let reason = outcome.as_ref().err().cloned().unwrap_or_default();
                let failed = prepared(
                    "UPDATE schedule_proposals SET status = 'failed', reason = $3, completed_at = $4, \
                         lease_token = NULL, leased_until = NULL \
                     WHERE id = $1 AND lease_token = $2 AND status = 'solving'",
                )
                .bind::<SqlUuid, _>(id)
                .bind::<SqlUuid, _>(lease)
                .bind::<Text, _>(reason)
                .bind::<Timestamptz, _>(at)
                .execute(conn)
                .await?;
                return Ok(failed == 1);
            };
            let binding = serde_json::Value::Array(
                result
                    .binding_rules
                    .iter()
                    .map(|rule| serde_json::json!({ "rule": rule.rule, "employees": rule.employees }))
                    .collect(),
            );
            let updated = prepared(
                "UPDATE schedule_proposals SET status = 'ready', completed_at = $3, lease_token = NULL, \
                     leased_until = NULL, projected_sales = $4, hours = $5, labor_cost = $6, labor_pct = $7, \
                     splh = $8, splh_target = $9, labor_pct_target = $10, solver_status = $11, objective = $12, \
                     bound = $13, gap = $14, solve_seconds = $15, binding_rules = $16, changes = $17 \
                 WHERE id = $1 AND lease_token = $2 AND status = 'solving'",
            )
            .bind::<SqlUuid, _>(id)
            .bind::<SqlUuid, _>(lease)
            .bind::<Timestamptz, _>(at)
            .bind::<Numeric, _>(result.projected_sales)
            .bind::<Numeric, _>(result.hours)
            .bind::<Numeric, _>(result.labor_cost)
            .bind::<Nullable<Numeric>, _>(result.labor_pct)
            .bind::<Nullable<Numeric>, _>(result.splh)
            .bind::<Nullable<Numeric>, _>(result.splh_target)
            .bind::<Nullable<Numeric>, _>(result.labor_pct_target)
            .bind::<Text, _>(result.solver.status.name())
            .bind::<BigInt, _>(result.solver.objective)
            .bind::<BigInt, _>(result.solver.bound)
            .bind::<Double, _>(result.solver.gap)
            .bind::<Double, _>(result.solver.seconds)
            .bind::<Jsonb, _>(binding)
            .bind::<Jsonb, _>(serde_json::Value::Array(result.changes.iter().map(change_to_json).collect()))
            .execute(conn)
            .await?;
            if updated == 0 {
                return Ok(false);
            }
            let shifts = &result.shifts;
            prepared(
                "INSERT INTO schedule_proposal_shifts (proposal_id, position, employee_key, employee_name, role, \
                     department, business_date, block, start_at, end_at, hours, cost) \
                 SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::date[], \
                     $8::text[], $9::timestamptz[], $10::timestamptz[], $11::numeric[], $12::numeric[])",
            )
            .bind::<SqlUuid, _>(id)
            .bind::<Array<Int4>, _>((0..shifts.len() as i32).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(shifts.iter().map(|s| s.employee_key.as_str()).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(shifts.iter().map(|s| s.employee_name.as_str()).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(shifts.iter().map(|s| s.role.as_str()).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(shifts.iter().map(|s| s.department.as_str()).collect::<Vec<_>>())
            .bind::<Array<SqlDate>, _>(shifts.iter().map(|s| s.date).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(shifts.iter().map(|s| s.block.as_str()).collect::<Vec<_>>())
            .bind::<Array<Timestamptz>, _>(shifts.iter().map(|s| s.start).collect::<Vec<_>>())
            .bind::<Array<Timestamptz>, _>(shifts.iter().map(|s| s.end).collect::<Vec<_>>())
            .bind::<Array<Numeric>, _>(shifts.iter().map(|s| s.hours).collect::<Vec<_>>())
            .bind::<Array<Numeric>, _>(shifts.iter().map(|s| s.cost).collect::<Vec<_>>())
            .execute(conn)
            .await?;
            let coverage = &result.coverage;
            prepared(
                "INSERT INTO schedule_proposal_coverage (proposal_id, position, business_date, block, department, \
                     hours_needed, hours_planned) \
                 SELECT $1, * FROM unnest($2::int[], $3::date[], $4::text[], $5::text[], $6::numeric[], $7::numeric[])",
            )
            .bind::<SqlUuid, _>(id)
            .bind::<Array<Int4>, _>((0..coverage.len() as i32).collect::<Vec<_>>())
            .bind::<Array<SqlDate>, _>(coverage.iter().map(|c| c.date).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(coverage.iter().map(|c| c.block.as_str()).collect::<Vec<_>>())
            .bind::<Array<Text>, _>(coverage.iter().map(|c| c.department.as_str()).collect::<Vec<_>>())
            .bind::<Array<Numeric>, _>(coverage.iter().map(|c| c.hours_needed).collect::<Vec<_>>())
            .bind::<Array<Numeric>, _>(coverage.iter().map(|c| c.hours_planned).collect::<Vec<_>>())
            .execute(conn)
            .await?;
            Ok(true)
        })
        .await
        .map_err(store_error)
    }

    async fn proposal(&self, team: &TeamId, id: Uuid) -> Result<Option<Proposal>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<ProposalRow> = diesel::sql_query(format!(
            "SELECT {PROPOSAL_COLUMNS} FROM schedule_proposals WHERE id = $1 AND team_id = $2"
        ))
        .bind::<SqlUuid, _>(id)
        .bind::<Text, _>(team.as_str())
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        let Some(row) = row else { return Ok(None) };
        let shifts: Vec<ShiftRow> = prepared(
            "SELECT employee_key, employee_name, role, department, business_date, block, start_at, end_at, hours, cost \
             FROM schedule_proposal_shifts WHERE proposal_id = $1 ORDER BY position",
        )
        .bind::<SqlUuid, _>(id)
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        let coverage: Vec<CoverageRow> = prepared(
            "SELECT business_date, block, department, hours_needed, hours_planned \
             FROM schedule_proposal_coverage WHERE proposal_id = $1 ORDER BY position",
        )
        .bind::<SqlUuid, _>(id)
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        let shifts = shifts
            .into_iter()
            .map(|s| {
                Ok(PlannedShift {
                    department: department(&s.department)?,
                    block: block(&s.block)?,
                    employee_key: s.employee_key,
                    employee_name: s.employee_name,
                    role: s.role,
                    date: s.business_date,
                    start: s.start_at,
                    end: s.end_at,
                    hours: s.hours,
                    cost: s.cost,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        let coverage = coverage
            .into_iter()
            .map(|c| {
                Ok(Coverage {
                    date: c.business_date,
                    block: block(&c.block)?,
                    department: department(&c.department)?,
                    hours_needed: c.hours_needed,
                    hours_planned: c.hours_planned,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        row.into_proposal(Some((shifts, coverage))).map(Some)
    }

    async fn proposals(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        page: &PageRequest<ProposalKey>,
    ) -> Result<Vec<Proposal>, StoreError> {
        let mut conn = self.db.conn().await?;
        let (created_at, id) = page.after.unzip();
        let rows: Vec<ProposalRow> = diesel::sql_query(format!(
            "SELECT {PROPOSAL_COLUMNS} FROM schedule_proposals \
             WHERE team_id = $1 AND ($2::uuid IS NULL OR location_id = $2) \
               AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4)) \
             ORDER BY created_at DESC, id DESC LIMIT $5"
        ))
        .bind::<Text, _>(team.as_str())
        .bind::<Nullable<SqlUuid>, _>(location.map(|l| l.0))
        .bind::<Nullable<Timestamptz>, _>(created_at)
        .bind::<Nullable<SqlUuid>, _>(id)
        .bind::<BigInt, _>(page.rows_to_read())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        rows.into_iter().map(|row| row.into_proposal(None)).collect()
    }
}
