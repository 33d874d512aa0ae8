use async_trait::async_trait;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Date as SqlDate, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::{Decimal, LocationId, PageRequest, StoreError, TeamId, UserId};
use opsd_reports::{
    EmployeeReview, ManagerReport, NewManagerReport, NewShiftReport, ReportShift, ReportStore, SaveReportError,
    ShiftReport, ShiftReportKey,
};
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::error::corrupt;
use crate::schema::{locations, manager_reports, shift_reports};
use crate::{Db, store_error};

/// The shifts as the day runs: a shift's place in it orders and pages a location's reports.
macro_rules! shifts {
    () => {
        "ARRAY['morning', 'afternoon', 'evening']"
    };
}
const SHIFT_RANK: &str = concat!("array_position(", shifts!(), ", shift_reports.shift)");

#[derive(Queryable, Selectable)]
#[diesel(table_name = shift_reports)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct ShiftReportRow {
    id: Uuid,
    location_id: Uuid,
    date: Date,
    shift: String,
    actual_sales: Decimal,
    goal_sales: Decimal,
    hero: Option<String>,
    submitted_by: String,
    created_at: OffsetDateTime,
}

impl TryFrom<ShiftReportRow> for ShiftReport {
    type Error = StoreError;

    fn try_from(row: ShiftReportRow) -> Result<Self, StoreError> {
        Ok(ShiftReport {
            id: row.id,
            location_id: LocationId(row.location_id),
            date: row.date,
            shift: ReportShift::parse(&row.shift).ok_or_else(|| corrupt("shift", &row.shift))?,
            actual_sales: row.actual_sales.normalize(),
            goal_sales: row.goal_sales.normalize(),
            hero: row.hero,
            submitted_by: UserId::new(row.submitted_by),
            created_at: row.created_at,
        })
    }
}

/// An employee review as the `employee_reviews` JSON column stores it.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredReview {
    employee_name: String,
    employee_key: Option<String>,
    rating: u8,
    notes: Option<String>,
}

impl From<&EmployeeReview> for StoredReview {
    fn from(review: &EmployeeReview) -> Self {
        Self {
            employee_name: review.employee_name.clone(),
            employee_key: review.employee_key.clone(),
            rating: review.rating,
            notes: review.notes.clone(),
        }
    }
}

impl From<StoredReview> for EmployeeReview {
    fn from(review: StoredReview) -> Self {
        Self {
            employee_name: review.employee_name,
            employee_key: review.employee_key,
            rating: review.rating,
            notes: review.notes,
        }
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = manager_reports)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct ManagerReportRow {
    id: Uuid,
    location_id: Uuid,
    date: Date,
    total_sales: Decimal,
    employee_reviews: serde_json::Value,
    submitted_by: String,
    created_at: OffsetDateTime,
}

impl TryFrom<ManagerReportRow> for ManagerReport {
    type Error = StoreError;

    fn try_from(row: ManagerReportRow) -> Result<Self, StoreError> {
        let stored: Vec<StoredReview> = serde_json::from_value(row.employee_reviews.clone())
            .map_err(|_| corrupt("employee reviews", &row.employee_reviews.to_string()))?;
        let employee_reviews = stored.into_iter().map(EmployeeReview::from).collect();
        Ok(ManagerReport {
            id: row.id,
            location_id: LocationId(row.location_id),
            date: row.date,
            total_sales: row.total_sales.normalize(),
            employee_reviews,
            submitted_by: UserId::new(row.submitted_by),
            created_at: row.created_at,
        })
    }
}

pub struct PgReportStore {
    db: Db,
}

impl PgReportStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

async fn location_in_team(
    conn: &mut AsyncPgConnection,
    team: &TeamId,
    location: LocationId,
) -> Result<bool, StoreError> {
    let found: Option<Uuid> = locations::table
        .filter(locations::id.eq(location.0).and(locations::team_id.eq(team.as_str())))
        .select(locations::id)
        .first(conn)
        .await
        .optional()
        .map_err(store_error)?;
    Ok(found.is_some())
}

#[async_trait]
impl ReportStore for PgReportStore {
    async fn create_shift_report(
        &self,
        team: &TeamId,
        report: &NewShiftReport,
        by: &UserId,
        at: OffsetDateTime,
    ) -> Result<ShiftReport, SaveReportError> {
        let mut conn = self.db.conn().await?;
        if !location_in_team(&mut conn, team, report.location_id).await? {
            return Err(SaveReportError::LocationNotInTeam);
        }
        let inserted: Option<ShiftReportRow> = diesel::insert_into(shift_reports::table)
            .values((
                shift_reports::id.eq(Uuid::now_v7()),
                shift_reports::team_id.eq(team.as_str()),
                shift_reports::location_id.eq(report.location_id.0),
                shift_reports::date.eq(report.date),
                shift_reports::shift.eq(report.shift.as_str()),
                shift_reports::actual_sales.eq(report.actual_sales),
                shift_reports::goal_sales.eq(report.goal_sales),
                shift_reports::hero.eq(&report.hero),
                shift_reports::submitted_by.eq(by.as_str()),
                shift_reports::created_at.eq(at),
            ))
            .on_conflict_do_nothing()
            .returning(ShiftReportRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(store_error)?;
        match inserted {
            Some(row) => Ok(ShiftReport::try_from(row)?),
            None => {
                let existing: Uuid = shift_reports::table
                    .filter(shift_reports::location_id.eq(report.location_id.0))
                    .filter(shift_reports::date.eq(report.date))
                    .filter(shift_reports::shift.eq(report.shift.as_str()))
                    .select(shift_reports::id)
                    .first(&mut conn)
                    .await
                    .map_err(store_error)?;
                Err(SaveReportError::Duplicate(existing))
            }
        }
    }

    async fn create_manager_report(
        &self,
        team: &TeamId,
        report: &NewManagerReport,
        by: &UserId,
        at: OffsetDateTime,
    ) -> Result<ManagerReport, SaveReportError> {
        let mut conn = self.db.conn().await?;
        if !location_in_team(&mut conn, team, report.location_id).await? {
            return Err(SaveReportError::LocationNotInTeam);
        }
        let stored: Vec<StoredReview> = report.employee_reviews.iter().map(StoredReview::from).collect();
        let reviews = serde_json::to_value(stored).map_err(|e| StoreError::Unknown(e.to_string()))?;
        let inserted: Option<ManagerReportRow> = diesel::insert_into(manager_reports::table)
            .values((
                manager_reports::id.eq(Uuid::now_v7()),
                manager_reports::team_id.eq(team.as_str()),
                manager_reports::location_id.eq(report.location_id.0),
                manager_reports::date.eq(report.date),
                manager_reports::total_sales.eq(report.total_sales),
                manager_reports::employee_reviews.eq(reviews),
                manager_reports::submitted_by.eq(by.as_str()),
                manager_reports::created_at.eq(at),
            ))
            .on_conflict_do_nothing()
            .returning(ManagerReportRow::as_returning())
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(store_error)?;
        match inserted {
            Some(row) => Ok(ManagerReport::try_from(row)?),
            None => {
                let existing: Uuid = manager_reports::table
                    .filter(manager_reports::location_id.eq(report.location_id.0))
                    .filter(manager_reports::date.eq(report.date))
                    .select(manager_reports::id)
                    .first(&mut conn)
                    .await
                    .map_err(store_error)?;
                Err(SaveReportError::Duplicate(existing))
            }
        }
    }

    async fn shift_reports(
        &self,
        team: &TeamId,
        location: LocationId,
        from: Date,
        to: Date,
        page: &PageRequest<ShiftReportKey>,
    ) -> Result<Option<Vec<ShiftReport>>, StoreError> {
        let mut conn = self.db.conn().await?;
        if !location_in_team(&mut conn, team, location).await? {
            return Ok(None);
        }
        let mut query = shift_reports::table
            .filter(shift_reports::location_id.eq(location.0))
            .filter(shift_reports::date.between(from, to))
            .into_boxed();
        if let Some((date, shift)) = &page.after {
            query = query.filter(
                sql::<Bool>(&format!("(shift_reports.date, {SHIFT_RANK}) > ("))
                    .bind::<SqlDate, _>(*date)
                    .sql(concat!(", array_position(", shifts!(), ", "))
                    .bind::<Text, _>(shift.as_str())
                    .sql("))"),
            );
        }
        let rows: Vec<ShiftReportRow> = query
            .order(shift_reports::date)
            .then_order_by(sql::<Integer>(SHIFT_RANK))
            .limit(page.rows_to_read())
            .select(ShiftReportRow::as_select())
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(ShiftReport::try_from).collect::<Result<_, _>>().map(Some)
    }

    async fn manager_reports(
        &self,
        team: &TeamId,
        location: LocationId,
        from: Date,
        to: Date,
        page: &PageRequest<Date>,
    ) -> Result<Option<Vec<ManagerReport>>, StoreError> {
        let mut conn = self.db.conn().await?;
        if !location_in_team(&mut conn, team, location).await? {
            return Ok(None);
        }
        let mut query = manager_reports::table
            .filter(manager_reports::location_id.eq(location.0))
            .filter(manager_reports::date.between(from, to))
            .into_boxed();
        if let Some(after) = page.after {
            query = query.filter(manager_reports::date.gt(after));
        }
        let rows: Vec<ManagerReportRow> = query
            .order(manager_reports::date)
            .limit(page.rows_to_read())
            .select(ManagerReportRow::as_select())
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(ManagerReport::try_from).collect::<Result<_, _>>().map(Some)
    }
}
