use async_trait::async_trait;
use diesel::sql_types::{Array, Bool, Date as SqlDate, Int2, Int8, Nullable, Numeric, Text, Uuid as SqlUuid};
use diesel::{Queryable, QueryableByName};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use opsd_core::{Decimal, LocationId, StoreError, TeamId};
use opsd_optimization::{
    AnalyticsStore, Block, DayGoal, Department, IngestError, LaborFact, SalesFact, SalesRow, StoredGoal, Week, WeekData,
};
use time::Date;
use uuid::Uuid;

use crate::error::{TxError, corrupt};
use crate::numeric::PgDecimal;
use crate::prepared::prepared;
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

/// One row of a week's read: the scope and a goal (kind 0), a sales total of a (date, block)
/// (kind 1: food, beverage, other in `a`, `b`, `c`) or a labor total of a (date, department)
/// (kind 2: hours and cost in `a`, `b`). One statement returns all three kinds, so a report costs
/// the database one execution and the server one reply, whatever the data's size. Read by
/// position: the fields are in the statements' column order, with the SQL types of `WeekColumns`.
#[derive(Queryable)]
struct WeekRow {
    kind: i16,
    ok: Option<bool>,
    location_id: Option<Uuid>,
    day_of_week: Option<i16>,
    date: Option<Date>,
    label: Option<String>,
    a: Option<PgDecimal>,
    b: Option<PgDecimal>,
    c: Option<PgDecimal>,
    guests: Option<i64>,
}

type WeekColumns = (
    Int2,
    Nullable<Bool>,
    Nullable<SqlUuid>,
    Nullable<Int2>,
    Nullable<SqlDate>,
    Nullable<Text>,
    Nullable<Numeric>,
    Nullable<Numeric>,
    Nullable<Numeric>,
    Nullable<Int8>,
);

const GOAL: i16 = 0;
const SALES: i16 = 1;
const LABOR: i16 = 2;

/// The whole team's week from its daily totals, kept by triggers (migration 000012); the team's
/// defaults are its goals. An unknown team reads nothing. A function (migration 000026), so its
/// plan is kept by the server's session also behind a transaction pooler.
const TEAM_WEEK: &str = "SELECT * FROM team_week($1, $2, $3)";

/// One location's week: its facts summed per (date, block) and, by the labor rule (migration
/// 000016: drafts are not labor), per (date, department); its goals and the team's defaults. A
/// foreign location reads nothing. A function, as above.
const LOCATION_WEEK: &str = "SELECT * FROM location_week($1, $2, $3, $4)";

/// The week's rows sorted into its facts and goals; `None` when the scope is unknown.
fn week_data(rows: Vec<WeekRow>) -> Result<Option<WeekData>, StoreError> {
    if !rows.iter().any(|row| row.kind == GOAL && row.ok == Some(true)) {
        return Ok(None);
    }
    let mut data = WeekData::default();
    for row in rows {
        let (a, b, c) = (row.a.map(|a| a.0), row.b.map(|b| b.0), row.c.map(|c| c.0));
        let key = row.date.zip(row.label);
        match row.kind {
            GOAL => data.goals.extend(stored_goal(row.location_id, row.day_of_week, a, b, c)),
            SALES => {
                let (date, block) = key.ok_or_else(|| corrupt("sales row", "without a date or block"))?;
                data.sales.push(SalesFact {
                    date,
                    block: Block::parse(&block).ok_or_else(|| corrupt("block", &block))?,
                    food: a.unwrap_or_default(),
                    beverage: b.unwrap_or_default(),
                    other: c.unwrap_or_default(),
                    guests: row.guests,
                });
            }
            LABOR => {
                let (date, department) = key.ok_or_else(|| corrupt("labor row", "without a date or department"))?;
                data.labor.push(LaborFact {
                    date,
                    department: Department::parse(&department).ok_or_else(|| corrupt("department", &department))?,
                    hours: a.unwrap_or_default(),
                    cost: b.unwrap_or_default().round_dp(2),
                });
            }
            kind => return Err(corrupt("week row kind", &kind.to_string())),
        }
    }
    Ok(Some(data))
}

/// A goal row's fields as a goal; `None` for the scope's row when it has no goal.
fn stored_goal(
    location_id: Option<Uuid>,
    day_of_week: Option<i16>,
    sales_goal: Option<Decimal>,
    labor_pct_target: Option<Decimal>,
    splh_target: Option<Decimal>,
) -> Option<StoredGoal> {
    Some(StoredGoal {
        location_id: location_id.map(LocationId),
        day_of_week: u8::try_from(day_of_week?).ok()?,
        sales_goal: sales_goal?,
        labor_pct_target: labor_pct_target?,
        splh_target: splh_target?,
    })
}

pub struct PgAnalyticsStore {
    db: Db,
}

impl PgAnalyticsStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// The week's data on a given connection: one statement, whatever the number of rows.
    pub async fn week_on(
        conn: &mut AsyncPgConnection,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
    ) -> Result<Option<WeekData>, StoreError> {
        let rows: Vec<WeekRow> = match location {
            Some(location) => prepared(LOCATION_WEEK).bind::<SqlUuid, _>(location.0),
            None => prepared(TEAM_WEEK),
        }
        .bind::<Text, _>(team.as_str())
        .bind::<SqlDate, _>(week.start())
        .bind::<SqlDate, _>(week.end())
        .returning::<WeekColumns>()
        .load(conn)
        .await
        .map_err(store_error)?;
        week_data(rows)
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
                stored_goal(row.location_id, row.day_of_week, row.sales_goal, row.labor_pct_target, row.splh_target)
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
        // One short read: on the primary, the worker's own connection (see `Db::worker_conn`).
        // Owned: an async closure that captures a borrowed team is not Send (a compiler limit).
        let team = team.clone();
        self.db.read_short(async move |conn| Self::week_on(conn, &team, location, week).await).await
    }

    async fn latest_sales_date(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        until: time::Date,
    ) -> Result<Option<time::Date>, StoreError> {
        #[derive(QueryableByName)]
        struct Latest {
            #[diesel(sql_type = Nullable<SqlDate>)]
            latest: Option<time::Date>,
        }
        let mut conn = self.db.conn().await?;
        // One backward probe of the (location_id, date, block) key per location, however long the history.
        let found: Latest = prepared(
            "SELECT max(latest.date) AS latest FROM locations l, LATERAL (SELECT f.date FROM sales_facts f \
               WHERE f.location_id = l.id AND f.date <= $3 ORDER BY f.date DESC LIMIT 1) latest \
             WHERE l.team_id = $1 AND ($2::uuid IS NULL OR l.id = $2)",
        )
        .bind::<Text, _>(team.as_str())
        .bind::<Nullable<SqlUuid>, _>(location.map(|l| l.0))
        .bind::<SqlDate, _>(until)
        .get_result(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(found.latest)
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
