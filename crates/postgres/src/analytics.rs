use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::dsl::sum;
use diesel::prelude::*;
use diesel::sql_types::{Array, Bool, Date as SqlDate, Int2, Nullable, Numeric, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures::TryFutureExt;
use opsd_core::{Decimal, LocationId, StoreError, TeamId};
use opsd_optimization::{
    AnalyticsStore, Block, DayGoal, Department, IngestError, LaborFact, SalesFact, SalesRow, StoredGoal, Week, WeekData,
};
use time::Date;
use uuid::Uuid;

use crate::error::{TxError, corrupt};
use crate::prepared::prepared;
use crate::schema::{locations, sales_facts, schedule_shifts, team_daily_labor, team_daily_sales};
use crate::{Db, store_error};

#[derive(QueryableByName)]
pub(crate) struct ScopeGoalRow {
    #[diesel(sql_type = Bool)]
    ok: bool,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    location_id: Option<Uuid>,
    #[diesel(sql_type = Nullable<Int2>)]
    day_of_week: Option<i16>,
    #[diesel(sql_type = Nullable<Numeric>)]
    sales_goal: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    labor_pct_target: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    splh_target: Option<Decimal>,
}

/// The scope check and the goals in one statement: a single row with `ok` false when the team is
/// unknown or the location not the team's.
pub(crate) const SCOPE_AND_GOALS: &str = "\
    WITH scope AS ( \
      SELECT EXISTS (SELECT 1 FROM teams WHERE id = $1) \
         AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM locations WHERE id = $2 AND team_id = $1)) AS ok) \
    SELECT scope.ok, g.location_id, g.day_of_week, g.sales_goal, g.labor_pct_target, g.splh_target \
    FROM scope LEFT JOIN labor_goals g \
      ON scope.ok AND g.team_id = $1 AND (g.location_id IS NULL OR g.location_id = $2)";

/// `SCOPE_AND_GOALS` bound to a team and an optional location (a macro: the bound query's type is
/// diesel's to name).
macro_rules! scope_and_goals_query {
    ($team:expr, $location:expr) => {
        prepared($crate::analytics::SCOPE_AND_GOALS)
            .bind::<diesel::sql_types::Text, _>($team.as_str())
            .bind::<diesel::sql_types::Nullable<diesel::sql_types::Uuid>, _>($location.map(|l: opsd_core::LocationId| l.0))
    };
}
pub(crate) use scope_and_goals_query;

/// The week's sales of the team's locations (or one), summed per (date, block). Built with the
/// query builder so each connection prepares it once and reuses the plan.
macro_rules! sales_query {
    ($location:expr, $team:expr, $week:expr) => {
        sales_facts::table
            .inner_join(locations::table)
            .filter(locations::team_id.eq($team.as_str()))
            .filter($location)
            .filter(sales_facts::date.between($week.start(), $week.end()))
            .group_by((sales_facts::date, sales_facts::block))
            .select((
                sales_facts::date,
                sales_facts::block,
                sum(sales_facts::food),
                sum(sales_facts::beverage),
                sum(sales_facts::other),
                sum(sales_facts::guests),
            ))
    };
}

diesel::define_sql_function! {
    /// The labor rule (migration 000016): a draft's hours are NULL.
    fn labor_hours(is_draft: Bool, hours_worked: Numeric) -> Nullable<Numeric>;
}

diesel::define_sql_function! {
    /// The labor rule (migration 000016): a draft's cost is NULL.
    fn labor_cost(is_draft: Bool, hours_worked: Numeric, hourly_wage: Numeric) -> Nullable<Numeric>;
}

/// The week's labor, summed per (date, department), by the labor rule's SQL functions (migration
/// 000016: drafts are not labor).
macro_rules! labor_query {
    ($location:expr, $team:expr, $week:expr) => {
        schedule_shifts::table
            .inner_join(locations::table)
            .filter(locations::team_id.eq($team.as_str()))
            .filter($location)
            .filter(schedule_shifts::business_date.between($week.start(), $week.end()))
            .filter(labor_hours(schedule_shifts::is_draft, schedule_shifts::hours_worked).is_not_null())
            .group_by((schedule_shifts::business_date, schedule_shifts::department))
            .select((
                schedule_shifts::business_date,
                schedule_shifts::department,
                sum(labor_hours(schedule_shifts::is_draft, schedule_shifts::hours_worked)),
                sum(labor_cost(schedule_shifts::is_draft, schedule_shifts::hours_worked, schedule_shifts::hourly_wage)),
            ))
    };
}

/// Sales summed per (date, block): food, beverage, other and guests (None when no row had guests).
type SummedSales = (Date, String, Option<Decimal>, Option<Decimal>, Option<Decimal>, Option<i64>);

/// Labor summed per (date, department): hours and cost.
type LaborRow = (Date, String, Option<Decimal>, Option<Decimal>);

/// A team's daily sales total with the count of facts that had guests.
type TeamSalesRow = (Date, String, Option<Decimal>, Option<Decimal>, Option<Decimal>, Option<i64>, i32);

fn summed(row: TeamSalesRow) -> SummedSales {
    let (date, block, food, beverage, other, guests, guest_facts) = row;
    (date, block, food, beverage, other, guests.filter(|_| guest_facts > 0))
}

pub struct PgAnalyticsStore {
    db: Db,
}

impl PgAnalyticsStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// The week's data on a given connection: three statements, whatever the number of rows.
    pub async fn week_on(
        conn: &mut AsyncPgConnection,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
    ) -> Result<Option<WeekData>, StoreError> {
        // The three statements are independent: pipelined on the connection, one round trip. The
        // fact queries filter by the team too, so an unknown scope reads nothing and is discarded.
        let mut shared: &AsyncPgConnection = conn;
        let scope = scope_and_goals_query!(team, location).load::<ScopeGoalRow>(&mut shared);
        let (scope, sales, labor) = match location {
            Some(location) => futures::try_join!(
                scope,
                sales_query!(sales_facts::location_id.eq(location.0), team, week).load::<SummedSales>(&mut shared),
                labor_query!(schedule_shifts::location_id.eq(location.0), team, week).load::<LaborRow>(&mut shared),
            ),
            // The whole team: its daily totals, kept by triggers (migration 000012).
            None => futures::try_join!(
                scope,
                team_daily_sales::table
                    .filter(team_daily_sales::team_id.eq(team.as_str()))
                    .filter(team_daily_sales::date.between(week.start(), week.end()))
                    .filter(team_daily_sales::facts.gt(0))
                    .select((
                        team_daily_sales::date,
                        team_daily_sales::block,
                        team_daily_sales::food.nullable(),
                        team_daily_sales::beverage.nullable(),
                        team_daily_sales::other.nullable(),
                        team_daily_sales::guests.nullable(),
                        team_daily_sales::guest_facts,
                    ))
                    .load::<TeamSalesRow>(&mut shared)
                    .map_ok(|rows| rows.into_iter().map(summed).collect()),
                team_daily_labor::table
                    .filter(team_daily_labor::team_id.eq(team.as_str()))
                    .filter(team_daily_labor::business_date.between(week.start(), week.end()))
                    .filter(team_daily_labor::shifts.gt(0))
                    .select((
                        team_daily_labor::business_date,
                        team_daily_labor::department,
                        team_daily_labor::hours.nullable(),
                        team_daily_labor::cost.nullable(),
                    ))
                    .load::<LaborRow>(&mut shared),
            ),
        }
        .map_err(store_error)?;
        let Some(goals) = goals_in_scope(scope) else {
            return Ok(None);
        };
        Ok(Some(WeekData {
            sales: sales
                .into_iter()
                .map(|(date, block, food, beverage, other, guests)| {
                    Ok(SalesFact {
                        date,
                        block: Block::parse(&block).ok_or_else(|| corrupt("block", &block))?,
                        food: food.unwrap_or_default(),
                        beverage: beverage.unwrap_or_default(),
                        other: other.unwrap_or_default(),
                        guests,
                    })
                })
                .collect::<Result<_, StoreError>>()?,
            labor: labor
                .into_iter()
                .map(|(date, department, hours, cost)| {
                    Ok(LaborFact {
                        date,
                        department: Department::parse(&department).ok_or_else(|| corrupt("department", &department))?,
                        hours: hours.unwrap_or_default(),
                        cost: cost.unwrap_or_default().round_dp(2),
                    })
                })
                .collect::<Result<_, StoreError>>()?,
            goals,
        }))
    }
}

async fn scope_and_goals(
    conn: &mut AsyncPgConnection,
    team: &TeamId,
    location: Option<LocationId>,
) -> Result<Option<Vec<StoredGoal>>, StoreError> {
    let rows: Vec<ScopeGoalRow> = scope_and_goals_query!(team, location).load(conn).await.map_err(store_error)?;
    Ok(goals_in_scope(rows))
}

/// The goals of a known scope; `None` when the team is unknown or the location not the team's.
pub(crate) fn goals_in_scope(rows: Vec<ScopeGoalRow>) -> Option<Vec<StoredGoal>> {
    if !rows.as_slice().first().is_some_and(|row| row.ok) {
        return None;
    }
    Some(
        rows.into_iter()
            .filter_map(|row| {
                Some(StoredGoal {
                    location_id: row.location_id.map(LocationId),
                    day_of_week: u8::try_from(row.day_of_week?).ok()?,
                    sales_goal: row.sales_goal?,
                    labor_pct_target: row.labor_pct_target?,
                    splh_target: row.splh_target?,
                })
            })
            .collect(),
    )
}

#[async_trait]
impl AnalyticsStore for PgAnalyticsStore {
    async fn week(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
    ) -> Result<Option<WeekData>, StoreError> {
        // One round trip of three short reads: the worker's own connection (see `Db::worker_conn`).
        let mut conn = self.db.worker_conn().await?;
        Self::week_on(&mut conn, team, location, week).await
    }

    async fn goals(&self, team: &TeamId, location: Option<LocationId>) -> Result<Option<Vec<StoredGoal>>, StoreError> {
        let mut conn = self.db.conn().await?;
        scope_and_goals(&mut conn, team, location).await
    }

    async fn ingest_sales(&self, team: &TeamId, rows: &[SalesRow]) -> Result<u64, IngestError> {
        let mut conn = self.db.bulk_conn().await?;
        let location_ids: Vec<Uuid> = rows.iter().map(|r| r.location_id.0).collect();
        let written = conn
            .transaction::<u64, TxError<IngestError>, _>(async |conn| {
                #[derive(QueryableByName)]
                struct Owned {
                    #[diesel(sql_type = SqlUuid)]
                    id: Uuid,
                }
                let owned: Vec<Owned> = prepared("SELECT id FROM locations WHERE team_id = $1 AND id = ANY($2)")
                    .bind::<Text, _>(team.as_str())
                    .bind::<Array<SqlUuid>, _>(&location_ids)
                    .load(conn)
                    .await?;
                let owned: std::collections::HashSet<Uuid> = owned.into_iter().map(|o| o.id).collect();
                let foreign: Vec<usize> =
                    location_ids.iter().enumerate().filter(|(_, id)| !owned.contains(id)).map(|(i, _)| i).collect();
                if !foreign.is_empty() {
                    return Err(TxError::Domain(IngestError::ForeignLocations(foreign)));
                }
                // One statement for the whole batch, however large; planned afresh each time, as
                // its best plan depends on the batch's size, which a generic plan would not see.
                // In key order: the upsert locks each row as it writes it, and two uploads of the
                // same rows in different orders each waited for a row the other held (deadlock).
                let mut rows: Vec<&SalesRow> = rows.iter().collect();
                rows.sort_unstable_by_key(|r| (r.location_id, r.date, r.block));
                let written = diesel::sql_query(
                    "INSERT INTO sales_facts (location_id, date, block, food, beverage, other, guests, updated_at) \
                     SELECT *, now() FROM unnest($1::uuid[], $2::date[], $3::text[], $4::numeric[], $5::numeric[], \
                                                 $6::numeric[], $7::int[]) \
                     ON CONFLICT (location_id, date, block) DO UPDATE SET food = EXCLUDED.food, \
                       beverage = EXCLUDED.beverage, other = EXCLUDED.other, guests = EXCLUDED.guests, updated_at = now()",
                )
                .bind::<Array<SqlUuid>, _>(rows.iter().map(|r| r.location_id.0).collect::<Vec<_>>())
                .bind::<Array<SqlDate>, _>(rows.iter().map(|r| r.date).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(rows.iter().map(|r| r.block.as_str()).collect::<Vec<_>>())
                .bind::<Array<Numeric>, _>(rows.iter().map(|r| r.food).collect::<Vec<_>>())
                .bind::<Array<Numeric>, _>(rows.iter().map(|r| r.beverage).collect::<Vec<_>>())
                .bind::<Array<Numeric>, _>(rows.iter().map(|r| r.other).collect::<Vec<_>>())
                .bind::<Array<Nullable<diesel::sql_types::Int4>>, _>(rows.iter().map(|r| r.guests).collect::<Vec<_>>())
                .execute(conn)
                .await?;
                Ok(written as u64)
            })
            .await
            .map_err(|error| match error {
                TxError::Db(error) => IngestError::Store(store_error(error)),
                TxError::Domain(error) => error,
            })?;
        Ok(written)
    }

    async fn set_goals(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        goals: &[DayGoal],
    ) -> Result<Option<()>, StoreError> {
        let mut conn = self.db.conn().await?;
        let location = location.map(|l| l.0);
        conn.transaction::<Option<()>, diesel::result::Error, _>(async |conn| {
            if let Some(location) = location {
                #[derive(QueryableByName)]
                struct Found {
                    #[diesel(sql_type = Bool)]
                    found: bool,
                }
                let found: Found = prepared("SELECT EXISTS (SELECT 1 FROM locations WHERE id = $1 AND team_id = $2) AS found")
                    .bind::<SqlUuid, _>(location)
                    .bind::<Text, _>(team.as_str())
                    .get_result(conn)
                    .await?;
                if !found.found {
                    return Ok(None);
                }
            }
            prepared("INSERT INTO teams (id) VALUES ($1) ON CONFLICT DO NOTHING")
                .bind::<Text, _>(team.as_str())
                .execute(conn)
                .await?;
            let conflict = if location.is_some() {
                "(location_id, day_of_week) WHERE location_id IS NOT NULL"
            } else {
                "(team_id, day_of_week) WHERE location_id IS NULL"
            };
            // By weekday: two settings of the week in different orders would each hold a day
            // the other waits for (deadlock).
            let mut goals: Vec<&DayGoal> = goals.iter().collect();
            goals.sort_unstable_by_key(|goal| goal.day_of_week);
            for goal in goals {
                diesel::sql_query(format!(
                    "INSERT INTO labor_goals (team_id, location_id, day_of_week, sales_goal, labor_pct_target, splh_target) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT {conflict} DO UPDATE SET sales_goal = EXCLUDED.sales_goal, \
                     labor_pct_target = EXCLUDED.labor_pct_target, splh_target = EXCLUDED.splh_target, updated_at = now()"
                ))
                .bind::<Text, _>(team.as_str())
                .bind::<Nullable<SqlUuid>, _>(location)
                .bind::<Int2, _>(i16::from(goal.day_of_week))
                .bind::<Numeric, _>(goal.sales_goal)
                .bind::<Numeric, _>(goal.labor_pct_target)
                .bind::<Numeric, _>(goal.splh_target)
                .execute(conn)
                .await?;
            }
            Ok(Some(()))
        })
        .await
        .map_err(store_error)
    }
}
