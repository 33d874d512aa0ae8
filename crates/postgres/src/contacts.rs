use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use opsd_core::{PageRequest, StoreError, TeamId};
use opsd_incidents::{Contact, ContactId, ContactKey, ContactStore, NewContact};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::paging::after_name_and_id;
use crate::schema::contacts;
use crate::{Db, store_error};

#[derive(Queryable, Selectable)]
#[diesel(table_name = contacts)]
#[diesel(check_for_backend(diesel::pg::Pg))]
pub(crate) struct ContactRow {
    id: Uuid,
    team_id: String,
    name: String,
    phone: Option<String>,
    email: Option<String>,
    notes: Option<String>,
    created_at: OffsetDateTime,
}

impl From<ContactRow> for Contact {
    fn from(row: ContactRow) -> Self {
        Contact {
            id: ContactId(row.id),
            team_id: TeamId::new(row.team_id),
            name: row.name,
            phone: row.phone,
            email: row.email,
            notes: row.notes,
            created_at: row.created_at,
        }
    }
}

/// Inserts a contact; shared with the incident transaction that creates one.
pub(crate) async fn insert_contact(
    mut conn: &diesel_async::AsyncPgConnection,
    team: &TeamId,
    contact: &NewContact,
    at: OffsetDateTime,
) -> Result<Contact, diesel::result::Error> {
    let row: ContactRow = diesel::insert_into(contacts::table)
        .values((
            contacts::id.eq(Uuid::now_v7()),
            contacts::team_id.eq(team.as_str()),
            contacts::name.eq(&contact.name),
            contacts::phone.eq(&contact.phone),
            contacts::email.eq(&contact.email),
            contacts::notes.eq(&contact.notes),
            contacts::created_at.eq(at),
        ))
        .returning(ContactRow::as_returning())
        .get_result(&mut conn)
        .await?;
    Ok(row.into())
}

pub struct PgContactStore {
    db: Db,
}

impl PgContactStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl ContactStore for PgContactStore {
    async fn create(&self, team: &TeamId, contact: &NewContact, at: OffsetDateTime) -> Result<Contact, StoreError> {
        let conn = self.db.conn().await?;
        insert_contact(&conn, team, contact, at).await.map_err(store_error)
    }

    async fn list(&self, team: &TeamId, page: &PageRequest<ContactKey>) -> Result<Vec<Contact>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = contacts::table
            .filter(contacts::team_id.eq(team.as_str()).and(contacts::deleted_at.is_null()))
            .into_boxed();
        if let Some(after) = &page.after {
            query = query.filter(after_name_and_id("contacts.name", "contacts.id", after));
        }
        let rows: Vec<ContactRow> = query
            .order((contacts::name, contacts::id))
            .limit(page.rows_to_read())
            .select(ContactRow::as_select())
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(rows.into_iter().map(Contact::from).collect())
    }

    async fn soft_delete(&self, team: &TeamId, contact: ContactId, at: OffsetDateTime) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        let updated = diesel::update(contacts::table.filter(
            contacts::id.eq(contact.0).and(contacts::team_id.eq(team.as_str())).and(contacts::deleted_at.is_null()),
        ))
        .set(contacts::deleted_at.eq(at))
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(updated == 1)
    }

    async fn prune_deleted_before(&self, cutoff: OffsetDateTime) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        let deleted = diesel::delete(contacts::table.filter(contacts::deleted_at.lt(cutoff)))
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(deleted as u64)
    }
}
