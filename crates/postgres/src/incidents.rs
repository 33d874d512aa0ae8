use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::{LocationId, StoreError, TeamId, UserId};
use opsd_incidents::{
    Comment, ContactChoice, ContactId, CreateIncidentError, Cursor, Incident, IncidentDetail, IncidentFilter,
    IncidentId, IncidentStore, IncidentType, NewIncident, Severity, Status, StatusChange, StatusUpdate,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::contacts::insert_contact;
use crate::error::{TxError, corrupt};
use crate::pipelined::begin_with;
use crate::prepared::prepared;
use crate::schema::{contacts, incident_comments, incident_status_changes, incidents, locations};
use crate::{Db, store_error};

#[derive(Queryable, QueryableByName, Selectable)]
#[diesel(table_name = incidents)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct IncidentRow {
    id: Uuid,
    team_id: String,
    location_id: Uuid,
    incident_type: String,
    severity: String,
    status: String,
    notes: String,
    media_urls: Vec<String>,
    contact_id: Option<Uuid>,
    reported_by: String,
    created_at: OffsetDateTime,
    updated_at: OffsetDateTime,
}

impl TryFrom<IncidentRow> for Incident {
    type Error = StoreError;

    fn try_from(row: IncidentRow) -> Result<Self, StoreError> {
        Ok(Incident {
            id: IncidentId(row.id),
            team_id: TeamId::new(row.team_id),
            location_id: LocationId(row.location_id),
            incident_type: IncidentType::parse(&row.incident_type)
                .ok_or_else(|| corrupt("type", &row.incident_type))?,
            severity: Severity::parse(&row.severity).ok_or_else(|| corrupt("severity", &row.severity))?,
            status: parse_status(&row.status)?,
            notes: row.notes,
            media_urls: row.media_urls,
            contact_id: row.contact_id.map(ContactId),
            reported_by: UserId::new(row.reported_by),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

fn parse_status(raw: &str) -> Result<Status, StoreError> {
    Status::parse(raw).ok_or_else(|| corrupt("status", raw))
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = incident_comments)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct CommentRow {
    id: Uuid,
    incident_id: Uuid,
    author_id: String,
    content: String,
    created_at: OffsetDateTime,
}

impl From<CommentRow> for Comment {
    fn from(row: CommentRow) -> Self {
        Comment {
            id: row.id,
            incident_id: IncidentId(row.incident_id),
            author_id: UserId::new(row.author_id),
            content: row.content,
            created_at: row.created_at,
        }
    }
}

pub struct PgIncidentStore {
    db: Db,
}

impl PgIncidentStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

fn in_team(team: &TeamId, id: IncidentId) -> incidents::BoxedQuery<'static, diesel::pg::Pg> {
    incidents::table.filter(incidents::id.eq(id.0).and(incidents::team_id.eq(team.as_str().to_owned()))).into_boxed()
}

/// A status change in one statement: the row is locked, and the change recorded with the status it
/// replaced, only when the status differs; the incident as it now stands either way.
const CHANGE_STATUS: &str = "\
    WITH old AS (
        SELECT * FROM incidents WHERE id = $1 AND team_id = $2 FOR UPDATE
    ), changed AS (
        UPDATE incidents SET status = $3, updated_at = $5 FROM old
        WHERE incidents.id = old.id AND old.status <> $3
        RETURNING incidents.*
    ), recorded AS (
        INSERT INTO incident_status_changes (id, incident_id, from_status, to_status, changed_by, changed_at)
        SELECT $6, old.id, old.status, $3, $4, $5 FROM old JOIN changed ON changed.id = old.id
    )
    SELECT id, team_id, location_id, type AS incident_type, severity, status, notes, media_urls, contact_id,
           reported_by, created_at, updated_at
    FROM (SELECT * FROM changed UNION ALL SELECT * FROM old WHERE old.status = $3) answer";

impl PgIncidentStore {
    /// [`IncidentStore::change_status`] on a given connection.
    pub async fn change_status_on(
        conn: &mut AsyncPgConnection,
        team: &TeamId,
        incident: IncidentId,
        update: &StatusUpdate,
    ) -> Result<Option<Incident>, StoreError> {
        let row: Option<IncidentRow> = prepared(CHANGE_STATUS)
            .bind::<diesel::sql_types::Uuid, _>(incident.0)
            .bind::<Text, _>(team.as_str())
            .bind::<Text, _>(update.status.as_str())
            .bind::<Text, _>(update.by.as_str())
            .bind::<Timestamptz, _>(update.at)
            .bind::<diesel::sql_types::Uuid, _>(Uuid::now_v7())
            .get_result(conn)
            .await
            .optional()
            .map_err(store_error)?;
        row.map(Incident::try_from).transpose()
    }
}

#[async_trait]
impl IncidentStore for PgIncidentStore {
    async fn create(
        &self,
        team: &TeamId,
        reporter: &UserId,
        incident: &NewIncident,
        at: OffsetDateTime,
    ) -> Result<Incident, CreateIncidentError> {
        let mut conn = self.db.conn().await?;
        // BEGIN, the location check and the contact's check or insert travel together (they do not
        // wait on each other); then the incident, then COMMIT: three round trips instead of five.
        // A contact inserted for a location that is not the team's is rolled back with the rest.
        let (mut tx, (location, contact)) = begin_with(&mut conn, async |mut shared| {
            let location = locations::table
                .filter(locations::id.eq(incident.location_id.0).and(locations::team_id.eq(team.as_str())))
                .select(locations::id)
                .first::<Uuid>(&mut shared);
            let contact = async {
                match &incident.contact {
                    ContactChoice::None => Ok(Ok(None)),
                    // FOR SHARE: a soft delete racing this incident waits for it, or wins before it.
                    ContactChoice::Existing(id) => contacts::table
                        .filter(contacts::id.eq(id.0))
                        .filter(contacts::team_id.eq(team.as_str()))
                        .filter(contacts::deleted_at.is_null())
                        .select(contacts::id)
                        .for_share()
                        .first::<Uuid>(&mut { shared })
                        .await
                        .optional()
                        .map(|live| live.map(Some).ok_or(CreateIncidentError::ContactUnavailable)),
                    ContactChoice::New(contact) => {
                        insert_contact(shared, team, contact, at).await.map(|contact| Ok(Some(contact.id.0)))
                    }
                }
            };
            let (location, contact) = futures::join!(location, contact);
            Ok((location.optional(), contact))
        })
        .await
        .map_err(|error| CreateIncidentError::Store(store_error(error)))?;
        let row = match (location, contact) {
            (Err(error), _) | (Ok(Some(_)), Err(error)) => Err(TxError::Db(error)),
            (Ok(None), _) => Err(TxError::Domain(CreateIncidentError::LocationNotInTeam)),
            (Ok(Some(_)), Ok(Err(refused))) => Err(TxError::Domain(refused)),
            (Ok(Some(_)), Ok(Ok(contact_id))) => diesel::insert_into(incidents::table)
                .values((
                    incidents::id.eq(Uuid::now_v7()),
                    incidents::team_id.eq(team.as_str()),
                    incidents::location_id.eq(incident.location_id.0),
                    incidents::incident_type.eq(incident.incident_type.as_str()),
                    incidents::severity.eq(incident.severity.as_str()),
                    incidents::status.eq(Status::Reported.as_str()),
                    incidents::notes.eq(incident.notes.as_str()),
                    incidents::media_urls.eq(incident.media_urls.as_slice()),
                    incidents::contact_id.eq(contact_id),
                    incidents::reported_by.eq(reporter.as_str()),
                    incidents::created_at.eq(at),
                    incidents::updated_at.eq(at),
                ))
                .returning(IncidentRow::as_returning())
                .get_result(tx.conn())
                .await
                .map_err(TxError::Db),
        };
        let row = tx.finish(row).await.map_err(|error| match error {
            TxError::Db(error) => CreateIncidentError::Store(store_error(error)),
            TxError::Domain(error) => error,
        })?;
        Ok(Incident::try_from(row)?)
    }

    async fn add_comment(
        &self,
        team: &TeamId,
        incident: IncidentId,
        author: &UserId,
        content: &str,
        at: OffsetDateTime,
    ) -> Result<Option<Comment>, StoreError> {
        let mut conn = self.db.conn().await?;
        let exists: Option<Uuid> =
            in_team(team, incident).select(incidents::id).first(&mut conn).await.optional().map_err(store_error)?;
        if exists.is_none() {
            return Ok(None);
        }
        let row: CommentRow = diesel::insert_into(incident_comments::table)
            .values((
                incident_comments::id.eq(Uuid::now_v7()),
                incident_comments::incident_id.eq(incident.0),
                incident_comments::author_id.eq(author.as_str()),
                incident_comments::content.eq(content),
                incident_comments::created_at.eq(at),
            ))
            .returning(CommentRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(Some(row.into()))
    }

    async fn change_status(
        &self,
        team: &TeamId,
        incident: IncidentId,
        update: &StatusUpdate,
    ) -> Result<Option<Incident>, StoreError> {
        let mut conn = self.db.conn().await?;
        Self::change_status_on(&mut conn, team, incident, update).await
    }

    async fn list(
        &self,
        team: &TeamId,
        filter: &IncidentFilter,
        limit: u32,
        after: Option<Cursor>,
    ) -> Result<Vec<Incident>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = incidents::table.filter(incidents::team_id.eq(team.as_str().to_owned())).into_boxed();
        if let Some(location) = filter.location_id {
            query = query.filter(incidents::location_id.eq(location.0));
        }
        if let Some(status) = filter.status {
            query = query.filter(incidents::status.eq(status.as_str()));
        }
        if let Some(after) = after {
            query = query.filter(
                incidents::created_at
                    .lt(after.created_at)
                    .or(incidents::created_at.eq(after.created_at).and(incidents::id.lt(after.id))),
            );
        }
        let rows: Vec<IncidentRow> = query
            .order((incidents::created_at.desc(), incidents::id.desc()))
            .limit(i64::from(limit))
            .select(IncidentRow::as_select())
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(Incident::try_from).collect()
    }

    async fn get(&self, team: &TeamId, incident: IncidentId) -> Result<Option<IncidentDetail>, StoreError> {
        let mut conn = self.db.conn().await?;
        let Some(row) = in_team(team, incident)
            .select(IncidentRow::as_select())
            .first::<IncidentRow>(&mut conn)
            .await
            .optional()
            .map_err(store_error)?
        else {
            return Ok(None);
        };
        let comments: Vec<CommentRow> = incident_comments::table
            .filter(incident_comments::incident_id.eq(incident.0))
            .order((incident_comments::created_at, incident_comments::id))
            .select(CommentRow::as_select())
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        let history: Vec<(String, String, String, OffsetDateTime)> = incident_status_changes::table
            .filter(incident_status_changes::incident_id.eq(incident.0))
            .order((incident_status_changes::changed_at, incident_status_changes::id))
            .select((
                incident_status_changes::from_status,
                incident_status_changes::to_status,
                incident_status_changes::changed_by,
                incident_status_changes::changed_at,
            ))
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        let status_history = history
            .into_iter()
            .map(|(from, to, by, at)| {
                Ok(StatusChange { from: parse_status(&from)?, to: parse_status(&to)?, by: UserId::new(by), at })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Some(IncidentDetail {
            incident: Incident::try_from(row)?,
            comments: comments.into_iter().map(Comment::from).collect(),
            status_history,
        }))
    }
}
