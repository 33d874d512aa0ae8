use std::collections::HashMap;

use async_trait::async_trait;
use diesel::OptionalExtension;
use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Date as SqlDate, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId, UserId};
use opsd_nudges::{
    Announcement, AnnouncementKey, AnnouncementStore, FilingScope, Filings, Mvp, NewAnnouncement, NudgeKey,
    NudgeLocation, NudgeStore, PendingPush, WeekCompliance,
};
use opsd_reports::ReportShift;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use crate::prepared::prepared;
use crate::{Db, store_error};

/// Each scope's non-draft shift starts (local hour in the scope's time zone), shift reports and
/// manager reports on its dates, one statement for every location. Each table is read per scope
/// through its `(location_id, date)` index: `OFFSET 0` keeps each lateral read a subquery of its
/// own, which the planner would otherwise flatten into a hash join over the whole table (its
/// generic plan cannot see how few dates a scope spans): a seq scan of a year of 20 locations'
/// shifts took 12 ms, the index reads 4 ms.
const FILINGS: &str = "WITH scope AS ( \
      SELECT * FROM unnest($1::uuid[], $2::text[], $3::date[], $4::date[]) AS s (location_id, timezone, date_from, date_to)) \
    SELECT s.location_id, 'start' AS kind, h.business_date AS date, \
           extract(hour FROM h.start_at AT TIME ZONE s.timezone)::int AS hour, NULL::text AS shift \
      FROM scope s CROSS JOIN LATERAL (SELECT h.business_date, h.start_at FROM schedule_shifts h \
        WHERE h.location_id = s.location_id AND h.business_date BETWEEN s.date_from AND s.date_to AND NOT h.is_draft \
        OFFSET 0) h \
    UNION ALL \
    SELECT s.location_id, 'shift_report', r.date, NULL, r.shift \
      FROM scope s CROSS JOIN LATERAL (SELECT r.date, r.shift FROM shift_reports r \
        WHERE r.location_id = s.location_id AND r.date BETWEEN s.date_from AND s.date_to OFFSET 0) r \
    UNION ALL \
    SELECT s.location_id, 'manager_report', m.date, NULL, NULL \
      FROM scope s CROSS JOIN LATERAL (SELECT m.date FROM manager_reports m \
        WHERE m.location_id = s.location_id AND m.date BETWEEN s.date_from AND s.date_to OFFSET 0) m";

/// The nudging jobs' store. Its locations and filings are report reads ([`Db::read`]): give the
/// jobs a [`Db::primary_only`], and the console's compliance page the `Db` with its replicas.
pub struct PgNudgeStore {
    db: Db,
}

impl PgNudgeStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct Inserted {
    #[diesel(sql_type = Bool)]
    inserted: bool,
}

#[async_trait]
impl NudgeStore for PgNudgeStore {
    async fn locations<'a>(&self, team: Option<&'a TeamId>) -> Result<Vec<NudgeLocation>, StoreError> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: Uuid,
            #[diesel(sql_type = Text)]
            team_id: String,
            #[diesel(sql_type = Text)]
            name: String,
            #[diesel(sql_type = Text)]
            timezone: String,
            #[diesel(sql_type = Nullable<Text>)]
            chat_webhook_url: Option<String>,
        }
        // Owned, so the read's future is Send for any lifetime (a borrowed argument's is not).
        let team = team.map(|team| team.as_str().to_owned());
        let rows: Vec<Row> = self
            .db
            .read(async move |conn| {
                prepared(
                    "SELECT l.id, l.team_id, l.name, l.timezone, t.chat_webhook_url FROM locations l \
                     JOIN teams t ON t.id = l.team_id WHERE $1::text IS NULL OR l.team_id = $1 ORDER BY l.id",
                )
                .bind::<Nullable<Text>, _>(team.as_deref())
                .load(conn)
                .await
                .map_err(store_error)
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| NudgeLocation {
                id: LocationId(r.id),
                team_id: TeamId::new(r.team_id),
                name: r.name,
                timezone: r.timezone,
                chat_webhook_url: r.chat_webhook_url,
            })
            .collect())
    }

    async fn filings(&self, scopes: &[FilingScope]) -> Result<HashMap<LocationId, Filings>, StoreError> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            location_id: Uuid,
            /// `start`, `shift_report` or `manager_report`.
            #[diesel(sql_type = Text)]
            kind: String,
            #[diesel(sql_type = SqlDate)]
            date: Date,
            /// A start's local hour.
            #[diesel(sql_type = Nullable<Int4>)]
            hour: Option<i32>,
            /// A shift report's shift.
            #[diesel(sql_type = Nullable<Text>)]
            shift: Option<String>,
        }
        if scopes.is_empty() {
            return Ok(HashMap::new());
        }
        let locations: Vec<Uuid> = scopes.iter().map(|s| s.location.0).collect();
        let timezones: Vec<String> = scopes.iter().map(|s| s.timezone.clone()).collect();
        let (from, to): (Vec<Date>, Vec<Date>) = scopes.iter().map(|s| (s.from, s.to)).unzip();
        let rows: Vec<Row> = self
            .db
            .read(async move |conn| {
                prepared(FILINGS)
                    .bind::<Array<SqlUuid>, _>(&locations)
                    .bind::<Array<Text>, _>(&timezones)
                    .bind::<Array<SqlDate>, _>(&from)
                    .bind::<Array<SqlDate>, _>(&to)
                    .load(conn)
                    .await
                    .map_err(store_error)
            })
            .await?;
        let mut filings: HashMap<LocationId, Filings> = HashMap::new();
        for row in rows {
            let of = filings.entry(LocationId(row.location_id)).or_default();
            match (row.kind.as_str(), row.hour, row.shift.as_deref().and_then(ReportShift::parse)) {
                ("start", Some(hour), _) => of.shift_starts.push((row.date, hour as u8)),
                ("shift_report", _, Some(shift)) => of.shift_reports.push((row.date, shift)),
                ("manager_report", _, _) => of.manager_reports.push(row.date),
                _ => {}
            }
        }
        Ok(filings)
    }

    async fn nudged_before(&self, nudges: &[NudgeKey]) -> Result<Vec<bool>, StoreError> {
        #[derive(QueryableByName)]
        struct Before {
            #[diesel(sql_type = Bool)]
            nudged: bool,
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<Before> = prepared(
            "SELECT EXISTS (SELECT 1 FROM nudges n WHERE (n.kind, n.target, n.period) = (k.kind, k.target, k.period)) \
                    AS nudged \
             FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k (kind, target, period, position) \
             ORDER BY k.position",
        )
        .bind::<Array<Text>, _>(nudges.iter().map(|n| n.kind).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(nudges.iter().map(|n| n.target.as_str()).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(nudges.iter().map(|n| n.period.as_str()).collect::<Vec<_>>())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(|row| row.nudged).collect())
    }

    async fn record_nudge(&self, nudge: &NudgeKey, team: &TeamId, at: OffsetDateTime) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let inserted = prepared(
            "INSERT INTO nudges (kind, target, period, team_id, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind::<Text, _>(nudge.kind)
        .bind::<Text, _>(&nudge.target)
        .bind::<Text, _>(&nudge.period)
        .bind::<Text, _>(team.as_str())
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(inserted == 1)
    }

    async fn nudge_delivered(&self, nudge: &NudgeKey) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared("UPDATE nudges SET delivered = true WHERE kind = $1 AND target = $2 AND period = $3")
            .bind::<Text, _>(nudge.kind)
            .bind::<Text, _>(&nudge.target)
            .bind::<Text, _>(&nudge.period)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn save_compliance(&self, weeks: &[WeekCompliance], at: OffsetDateTime) -> Result<(), StoreError> {
        if weeks.is_empty() {
            return Ok(());
        }
        let count = |f: fn(&WeekCompliance) -> u32| weeks.iter().map(|w| f(w) as i32).collect::<Vec<_>>();
        let mut conn = self.db.conn().await?;
        prepared(
            "INSERT INTO compliance_weeks (location_id, week_start, expected_shift_reports, filed_shift_reports, \
                                           expected_manager_reports, filed_manager_reports, computed_at) \
             SELECT *, $7 FROM unnest($1::uuid[], $2::date[], $3::int[], $4::int[], $5::int[], $6::int[]) \
             ON CONFLICT (location_id, week_start) DO UPDATE SET \
               expected_shift_reports = EXCLUDED.expected_shift_reports, filed_shift_reports = EXCLUDED.filed_shift_reports, \
               expected_manager_reports = EXCLUDED.expected_manager_reports, filed_manager_reports = EXCLUDED.filed_manager_reports, \
               computed_at = EXCLUDED.computed_at",
        )
        .bind::<Array<SqlUuid>, _>(weeks.iter().map(|w| w.location.0).collect::<Vec<_>>())
        .bind::<Array<SqlDate>, _>(weeks.iter().map(|w| w.week_start).collect::<Vec<_>>())
        .bind::<Array<Int4>, _>(count(|w| w.expected_shift))
        .bind::<Array<Int4>, _>(count(|w| w.filed_shift))
        .bind::<Array<Int4>, _>(count(|w| w.expected_manager))
        .bind::<Array<Int4>, _>(count(|w| w.filed_manager))
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn hero_mentions(&self, scopes: &[FilingScope]) -> Result<HashMap<LocationId, Vec<String>>, StoreError> {
        #[derive(QueryableByName)]
        struct Hero {
            #[diesel(sql_type = SqlUuid)]
            location_id: Uuid,
            #[diesel(sql_type = Text)]
            hero: String,
        }
        if scopes.is_empty() {
            return Ok(HashMap::new());
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<Hero> = prepared(
            // Per scope through the reports' slot key, as `FILINGS` reads them.
            "SELECT s.location_id, r.hero \
             FROM unnest($1::uuid[], $2::date[], $3::date[]) AS s (location_id, date_from, date_to) \
             CROSS JOIN LATERAL (SELECT r.hero, r.created_at, r.id FROM shift_reports r \
               WHERE r.location_id = s.location_id AND r.date BETWEEN s.date_from AND s.date_to AND r.hero IS NOT NULL \
               OFFSET 0) r \
             ORDER BY s.location_id, r.created_at, r.id",
        )
        .bind::<Array<SqlUuid>, _>(scopes.iter().map(|s| s.location.0).collect::<Vec<_>>())
        .bind::<Array<SqlDate>, _>(scopes.iter().map(|s| s.from).collect::<Vec<_>>())
        .bind::<Array<SqlDate>, _>(scopes.iter().map(|s| s.to).collect::<Vec<_>>())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        let mut mentions: HashMap<LocationId, Vec<String>> = HashMap::new();
        for row in rows {
            mentions.entry(LocationId(row.location_id)).or_default().push(row.hero);
        }
        Ok(mentions)
    }

    async fn record_mvp(&self, mvp: &Mvp, at: OffsetDateTime) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let inserted: Option<Inserted> = prepared(
            "INSERT INTO mvp_awards (location_id, week_start, names, mentions, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT DO NOTHING RETURNING true AS inserted",
        )
        .bind::<SqlUuid, _>(mvp.location.0)
        .bind::<SqlDate, _>(mvp.week_start)
        .bind::<Array<Text>, _>(&mvp.names)
        .bind::<Int4, _>(mvp.mentions as i32)
        .bind::<Timestamptz, _>(at)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        Ok(inserted.is_some_and(|row| row.inserted))
    }

    async fn mvp_posted(&self, location: LocationId, week_start: Date) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared("UPDATE mvp_awards SET posted = true WHERE location_id = $1 AND week_start = $2")
            .bind::<SqlUuid, _>(location.0)
            .bind::<SqlDate, _>(week_start)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }
}

#[derive(QueryableByName)]
struct AnnouncementRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = Text)]
    title: String,
    #[diesel(sql_type = Text)]
    body: String,
    #[diesel(sql_type = Timestamptz)]
    publish_at: OffsetDateTime,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    published_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    location_id: Option<Uuid>,
}

impl From<AnnouncementRow> for Announcement {
    fn from(row: AnnouncementRow) -> Self {
        Announcement {
            id: row.id,
            team_id: TeamId::new(row.team_id),
            title: row.title,
            body: row.body,
            publish_at: row.publish_at,
            published_at: row.published_at,
            location_id: row.location_id.map(LocationId),
        }
    }
}

const ANNOUNCEMENT_COLUMNS: &str = "id, team_id, title, body, publish_at, published_at, location_id";

pub struct PgAnnouncementStore {
    db: Db,
}

impl PgAnnouncementStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl AnnouncementStore for PgAnnouncementStore {
    async fn create(
        &self,
        announcement: &NewAnnouncement,
        at: OffsetDateTime,
    ) -> Result<Option<Announcement>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<AnnouncementRow> = diesel::sql_query(format!(
            "INSERT INTO announcements (id, team_id, location_id, title, body, publish_at, created_by, created_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8 \
             WHERE $3::uuid IS NULL OR EXISTS (SELECT 1 FROM locations WHERE id = $3 AND team_id = $2) \
             RETURNING {ANNOUNCEMENT_COLUMNS}"
        ))
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<Text, _>(announcement.team_id.as_str())
        .bind::<Nullable<SqlUuid>, _>(announcement.location_id.map(|l| l.0))
        .bind::<Text, _>(&announcement.title)
        .bind::<Text, _>(&announcement.body)
        .bind::<Timestamptz, _>(announcement.publish_at)
        .bind::<Text, _>(announcement.created_by.as_str())
        .bind::<Timestamptz, _>(at)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        Ok(row.map(Announcement::from))
    }

    async fn list(&self, team: &TeamId, page: &PageRequest<AnnouncementKey>) -> Result<Vec<Announcement>, StoreError> {
        let mut conn = self.db.conn().await?;
        let (publish_at, id) = page.after.unzip();
        let rows: Vec<AnnouncementRow> = diesel::sql_query(format!(
            "SELECT {ANNOUNCEMENT_COLUMNS} FROM announcements \
             WHERE team_id = $1 AND ($2::timestamptz IS NULL OR (publish_at, id) < ($2, $3)) \
             ORDER BY publish_at DESC, id DESC LIMIT $4"
        ))
        .bind::<Text, _>(team.as_str())
        .bind::<Nullable<Timestamptz>, _>(publish_at)
        .bind::<Nullable<SqlUuid>, _>(id)
        .bind::<diesel::sql_types::BigInt, _>(page.rows_to_read())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(Announcement::from).collect())
    }

    async fn publish_due(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Announcement>, StoreError> {
        let mut conn = self.db.conn().await?;
        // One statement: publishing and queueing the members' pushes commit together.
        let rows: Vec<AnnouncementRow> = diesel::sql_query(format!(
            "WITH published AS ( \
               UPDATE announcements SET published_at = $1 WHERE id IN ( \
                 SELECT id FROM announcements WHERE published_at IS NULL AND publish_at <= $1 \
                 ORDER BY publish_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) \
               RETURNING {ANNOUNCEMENT_COLUMNS}), \
             queued AS ( \
               INSERT INTO announcement_pushes (announcement_id, user_id, available_at, created_at) \
               SELECT p.id, m.user_id, now(), $1 FROM published p \
               JOIN memberships m ON m.team_id = p.team_id JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL \
               ON CONFLICT DO NOTHING) \
             SELECT {ANNOUNCEMENT_COLUMNS} FROM published"
        ))
        .bind::<Timestamptz, _>(now)
        .bind::<diesel::sql_types::BigInt, _>(i64::from(limit))
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows.into_iter().map(Announcement::from).collect())
    }

    async fn claim_pushes(&self, lease: std::time::Duration, limit: u32) -> Result<Vec<PendingPush>, StoreError> {
        #[derive(QueryableByName)]
        struct Claimed {
            #[diesel(sql_type = SqlUuid)]
            announcement_id: Uuid,
            #[diesel(sql_type = Text)]
            user_id: String,
            #[diesel(sql_type = Text)]
            title: String,
            #[diesel(sql_type = Text)]
            body: String,
            #[diesel(sql_type = diesel::sql_types::Integer)]
            attempts: i32,
        }
        let mut conn = self.db.conn().await?;
        let rows: Vec<Claimed> = prepared(
            "UPDATE announcement_pushes q SET available_at = now() + $1 * interval '1 millisecond', \
               attempts = q.attempts + 1 \
             FROM announcements a \
             WHERE a.id = q.announcement_id AND (q.announcement_id, q.user_id) IN ( \
               SELECT announcement_id, user_id FROM announcement_pushes \
               WHERE state = 'pending' AND available_at <= now() \
               ORDER BY available_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
             RETURNING q.announcement_id, q.user_id, a.title, a.body, q.attempts",
        )
        .bind::<diesel::sql_types::BigInt, _>(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX))
        .bind::<diesel::sql_types::BigInt, _>(i64::from(limit))
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(rows
            .into_iter()
            .map(|r| PendingPush {
                announcement_id: r.announcement_id,
                user_id: UserId::new(r.user_id),
                title: r.title,
                body: r.body,
                attempts: u32::try_from(r.attempts).unwrap_or(u32::MAX),
            })
            .collect())
    }

    async fn push_delivered(&self, push: &PendingPush, devices: u32) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "UPDATE announcement_pushes SET state = 'done', devices = $3, last_error = NULL \
             WHERE announcement_id = $1 AND user_id = $2",
        )
        .bind::<SqlUuid, _>(push.announcement_id)
        .bind::<Text, _>(push.user_id.as_str())
        .bind::<diesel::sql_types::Integer, _>(i32::try_from(devices).unwrap_or(i32::MAX))
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn push_failed(
        &self,
        push: &PendingPush,
        retry_at: Option<OffsetDateTime>,
        error: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "UPDATE announcement_pushes SET last_error = $3, \
               state = CASE WHEN $4::timestamptz IS NULL THEN 'failed' ELSE 'pending' END, \
               available_at = COALESCE($4, available_at) \
             WHERE announcement_id = $1 AND user_id = $2",
        )
        .bind::<SqlUuid, _>(push.announcement_id)
        .bind::<Text, _>(push.user_id.as_str())
        .bind::<Text, _>(error)
        .bind::<Nullable<Timestamptz>, _>(retry_at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }
}
