//! The planning store: a week's scheduled and worked labor for the variance report, and the sales
//! history and recent labor a forecast is made from. Each read is a fixed number of statements,
//! pipelined on one connection: one round trip whatever the data size.

use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{Date as SqlDate, Nullable, Numeric, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use opsd_core::{Decimal, Department, LocationId, StoreError, TeamId, Week};
use opsd_optimization::Block;
use opsd_planning::{ForecastData, LaborLine, PlanningStore, ScheduledLabor, VarianceData, WorkedLabor};
use time::{Date, Duration};

use crate::analytics::{ScopeGoalRow, goals_in_scope, scope_and_goals_query};
use crate::error::corrupt;
use crate::prepared::prepared;
use crate::{Db, store_error};

/// A read as two statements: one location's rows (`$2` the location), or the team's daily totals
/// kept by triggers (migrations 000012 and 000029; `$2` unused), so a team-wide report reads a fixed
/// number of rows a day however many locations and punches the team has, and its statements never
/// name the big tables (planning a statement that does probes their indexes, whose cost grows
/// with them, even when the branch is pruned). Both take `$1` team, `$3`..`$4` dates.
struct Scoped {
    location: &'static str,
    team: &'static str,
}

/// Published shifts per (date, department), by the labor rule (migration 000016).
const SCHEDULED: Scoped = Scoped {
    location: "\
        SELECT s.business_date AS date, s.department, \
               sum(labor_hours(s.is_draft, s.hours_worked)) AS hours, \
               sum(labor_cost(s.is_draft, s.hours_worked, s.hourly_wage)) AS cost \
        FROM schedule_shifts s JOIN locations l ON l.id = s.location_id \
        WHERE l.team_id = $1 AND s.location_id = $2 \
          AND s.business_date BETWEEN $3 AND $4 AND labor_hours(s.is_draft, s.hours_worked) IS NOT NULL \
        GROUP BY 1, 2",
    team: "\
        SELECT t.business_date AS date, t.department, t.hours, t.cost FROM team_daily_labor t \
        WHERE t.team_id = $1 AND $2::uuid IS NULL AND t.shifts > 0 AND t.business_date BETWEEN $3 AND $4",
};

/// Worked labor per (date, department), with its overtime counted across the team's locations
/// (the overtime rule, migration 000029).
const WORKED: Scoped = Scoped {
    location: "\
        SELECT p.business_date AS date, p.department, sum(p.hours) AS hours, \
               sum(p.overtime_hours) AS overtime_hours, sum(p.cost) AS cost \
        FROM punch_labor p \
        WHERE p.team_id = $1 AND p.location_id = $2 AND p.business_date BETWEEN $3 AND $4 \
        GROUP BY 1, 2",
    team: "\
        SELECT t.business_date AS date, t.department, t.hours, t.overtime_hours, t.cost FROM team_daily_worked t \
        WHERE t.team_id = $1 AND $2::uuid IS NULL AND t.punches > 0 AND t.business_date BETWEEN $3 AND $4",
};

/// Sales per day.
const DAILY_SALES: Scoped = Scoped {
    location: "\
        SELECT f.date, sum(f.food + f.beverage + f.other) AS sales \
        FROM sales_facts f JOIN locations l ON l.id = f.location_id \
        WHERE l.team_id = $1 AND f.location_id = $2 AND f.date BETWEEN $3 AND $4 \
        GROUP BY 1",
    team: "\
        SELECT t.date, sum(t.food + t.beverage + t.other) AS sales FROM team_daily_sales t \
        WHERE t.team_id = $1 AND $2::uuid IS NULL AND t.facts > 0 AND t.date BETWEEN $3 AND $4 \
        GROUP BY 1",
};

/// Sales per (date, block) from `$3` to the day before `$4`.
const SALES_HISTORY: Scoped = Scoped {
    location: "\
        SELECT f.date, f.block, sum(f.food + f.beverage + f.other) AS sales \
        FROM sales_facts f JOIN locations l ON l.id = f.location_id \
        WHERE l.team_id = $1 AND f.location_id = $2 AND f.date >= $3 AND f.date < $4 \
        GROUP BY 1, 2",
    team: "\
        SELECT t.date, t.block, t.food + t.beverage + t.other AS sales FROM team_daily_sales t \
        WHERE t.team_id = $1 AND $2::uuid IS NULL AND t.facts > 0 AND t.date >= $3 AND t.date < $4",
};

/// Worked (without the overtime premium) and scheduled hours and cost from `$3` to the day before
/// `$4`.
const RECENT_LABOR: Scoped = Scoped {
    location: "\
        SELECT w.hours AS worked_hours, w.cost AS worked_cost, s.hours AS scheduled_hours, s.cost AS scheduled_cost \
        FROM (SELECT sum(p.hours) AS hours, sum(p.base_cost) AS cost FROM punch_labor p \
              WHERE p.team_id = $1 AND p.location_id = $2 AND p.business_date >= $3 AND p.business_date < $4) w, \
             (SELECT sum(labor_hours(s.is_draft, s.hours_worked)) AS hours, \
                     sum(labor_cost(s.is_draft, s.hours_worked, s.hourly_wage)) AS cost \
              FROM schedule_shifts s JOIN locations l ON l.id = s.location_id \
              WHERE l.team_id = $1 AND s.location_id = $2 \
                AND s.business_date >= $3 AND s.business_date < $4) s",
    team: "\
        SELECT w.hours AS worked_hours, w.cost AS worked_cost, s.hours AS scheduled_hours, s.cost AS scheduled_cost \
        FROM (SELECT sum(t.hours) AS hours, sum(t.base_cost) AS cost FROM team_daily_worked t \
              WHERE t.team_id = $1 AND $2::uuid IS NULL AND t.business_date >= $3 AND t.business_date < $4) w, \
             (SELECT sum(t.hours) AS hours, sum(t.cost) AS cost FROM team_daily_labor t \
              WHERE t.team_id = $1 AND t.business_date >= $3 AND t.business_date < $4) s",
};

/// A day's labor of a department, scheduled or worked.
#[derive(QueryableByName)]
struct LaborRow {
    #[diesel(sql_type = SqlDate)]
    date: Date,
    #[diesel(sql_type = Text)]
    department: String,
    #[diesel(sql_type = Nullable<Numeric>)]
    hours: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    cost: Option<Decimal>,
}

#[derive(QueryableByName)]
struct WorkedRow {
    #[diesel(embed)]
    labor: LaborRow,
    #[diesel(sql_type = Nullable<Numeric>)]
    overtime_hours: Option<Decimal>,
}

#[derive(QueryableByName)]
struct DailySalesRow {
    #[diesel(sql_type = SqlDate)]
    date: Date,
    #[diesel(sql_type = Nullable<Numeric>)]
    sales: Option<Decimal>,
}

#[derive(QueryableByName)]
struct BlockSalesRow {
    #[diesel(sql_type = SqlDate)]
    date: Date,
    #[diesel(sql_type = Text)]
    block: String,
    #[diesel(sql_type = Nullable<Numeric>)]
    sales: Option<Decimal>,
}

#[derive(QueryableByName)]
struct RecentLaborRow {
    #[diesel(sql_type = Nullable<Numeric>)]
    worked_hours: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    worked_cost: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    scheduled_hours: Option<Decimal>,
    #[diesel(sql_type = Nullable<Numeric>)]
    scheduled_cost: Option<Decimal>,
}

fn department(raw: &str) -> Result<Department, StoreError> {
    Department::parse(raw).ok_or_else(|| corrupt("department", raw))
}

/// The scope's statement of a read and its date range: `$1` team, `$2` location or NULL, `$3`..`$4`
/// dates.
macro_rules! ranged {
    ($scoped:expr, $team:expr, $location:expr, $from:expr, $to:expr) => {
        prepared(if $location.is_some() { $scoped.location } else { $scoped.team })
            .bind::<Text, _>($team.as_str())
            .bind::<Nullable<SqlUuid>, _>($location.map(|l: LocationId| l.0))
            .bind::<SqlDate, _>($from)
            .bind::<SqlDate, _>($to)
    };
}

pub struct PgPlanningStore {
    db: Db,
}

impl PgPlanningStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl PlanningStore for PgPlanningStore {
    async fn variance_week(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
    ) -> Result<Option<VarianceData>, StoreError> {
        let team = team.clone();
        let (scope, scheduled, worked, sales) = self
            .db
            .read(async move |conn| {
                let team = &team;
                let mut shared: &diesel_async::AsyncPgConnection = conn;
                futures::try_join!(
                    scope_and_goals_query!(team, location).load::<ScopeGoalRow>(&mut shared),
                    ranged!(SCHEDULED, team, location, week.start(), week.end()).load::<LaborRow>(&mut shared),
                    ranged!(WORKED, team, location, week.start(), week.end()).load::<WorkedRow>(&mut shared),
                    ranged!(DAILY_SALES, team, location, week.start(), week.end()).load::<DailySalesRow>(&mut shared),
                )
                .map_err(store_error)
            })
            .await?;
        if goals_in_scope(scope).is_none() {
            return Ok(None);
        }
        Ok(Some(VarianceData {
            scheduled: scheduled
                .into_iter()
                .map(|row| {
                    Ok(ScheduledLabor {
                        date: row.date,
                        department: department(&row.department)?,
                        hours: row.hours.unwrap_or_default(),
                        cost: row.cost.unwrap_or_default().round_dp(2),
                    })
                })
                .collect::<Result<_, StoreError>>()?,
            worked: worked
                .into_iter()
                .map(|row| {
                    Ok(WorkedLabor {
                        date: row.labor.date,
                        department: department(&row.labor.department)?,
                        hours: row.labor.hours.unwrap_or_default(),
                        overtime_hours: row.overtime_hours.unwrap_or_default(),
                        cost: row.labor.cost.unwrap_or_default(),
                    })
                })
                .collect::<Result<_, StoreError>>()?,
            sales: sales.into_iter().map(|row| (row.date, row.sales.unwrap_or_default())).collect(),
        }))
    }

    async fn forecast_data(
        &self,
        team: &TeamId,
        location: Option<LocationId>,
        week: Week,
        since: Date,
    ) -> Result<Option<ForecastData>, StoreError> {
        let start = week.start();
        let team = team.clone();
        let (scope, sales, labor) = self
            .db
            .read(async move |conn| {
                let team = &team;
                let mut shared: &diesel_async::AsyncPgConnection = conn;
                futures::try_join!(
                    scope_and_goals_query!(team, location).load::<ScopeGoalRow>(&mut shared),
                    ranged!(SALES_HISTORY, team, location, since, start).load::<BlockSalesRow>(&mut shared),
                    ranged!(RECENT_LABOR, team, location, start - Duration::weeks(4), start)
                        .load::<RecentLaborRow>(&mut shared),
                )
                .map_err(store_error)
            })
            .await?;
        let Some(goals) = goals_in_scope(scope) else {
            return Ok(None);
        };
        let labor = labor.into_iter().next();
        let line = |hours: Option<Decimal>, cost: Option<Decimal>| LaborLine {
            hours: hours.unwrap_or_default(),
            cost: cost.unwrap_or_default(),
        };
        Ok(Some(ForecastData {
            sales: sales
                .into_iter()
                .map(|row| {
                    let block = Block::parse(&row.block).ok_or_else(|| corrupt("block", &row.block))?;
                    Ok((row.date, block, row.sales.unwrap_or_default()))
                })
                .collect::<Result<_, StoreError>>()?,
            goals,
            worked: labor.as_ref().map_or_else(LaborLine::default, |l| line(l.worked_hours, l.worked_cost)),
            scheduled: labor.as_ref().map_or_else(LaborLine::default, |l| line(l.scheduled_hours, l.scheduled_cost)),
        }))
    }
}
