use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId};
use opsd_teams::{
    Location, LocationKey, LocationSlug, LocationStore, NewLocation, SaveLocationError, TeamSettingsStore, TimeZoneName,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::error::is_unique_violation;
use crate::paging::after_name_and_id;
use crate::schema::{locations, teams};
use crate::{Db, store_error};

#[derive(Queryable, Selectable)]
#[diesel(table_name = locations)]
#[diesel(check_for_backend(diesel::pg::Pg))]
struct LocationRow {
    id: Uuid,
    team_id: String,
    name: String,
    slug: String,
    timezone: String,
    scheduler_location_id: Option<String>,
    created_at: OffsetDateTime,
}

impl LocationRow {
    fn into_location(self) -> Result<Location, StoreError> {
        let slug = LocationSlug::parse(&self.slug).map_err(|e| StoreError::Unknown(format!("stored slug: {e:?}")))?;
        let timezone =
            TimeZoneName::parse(&self.timezone).map_err(|e| StoreError::Unknown(format!("stored timezone: {e:?}")))?;
        Ok(Location {
            id: LocationId(self.id),
            team_id: TeamId::new(self.team_id),
            name: self.name,
            slug,
            timezone,
            scheduler_location_id: self.scheduler_location_id,
            created_at: self.created_at,
        })
    }
}

pub struct PgLocationStore {
    db: Db,
}

impl PgLocationStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl LocationStore for PgLocationStore {
    async fn create(&self, team: &TeamId, location: &NewLocation) -> Result<Location, SaveLocationError> {
        let mut conn = self.db.conn().await?;
        let row: LocationRow = diesel::insert_into(locations::table)
            .values((
                locations::id.eq(Uuid::now_v7()),
                locations::team_id.eq(team.as_str()),
                locations::name.eq(&location.name),
                locations::slug.eq(location.slug.as_str()),
                locations::timezone.eq(location.timezone.as_str()),
                locations::scheduler_location_id.eq(location.scheduler_location_id.as_deref()),
            ))
            .returning(LocationRow::as_returning())
            .get_result(&mut conn)
            .await
            .map_err(|error| {
                if is_unique_violation(&error, "locations_slug_key") {
                    SaveLocationError::SlugTaken
                } else {
                    SaveLocationError::Store(store_error(error))
                }
            })?;
        Ok(row.into_location()?)
    }

    async fn list(&self, team: &TeamId, page: &PageRequest<LocationKey>) -> Result<Vec<Location>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = locations::table.filter(locations::team_id.eq(team.as_str())).into_boxed();
        if let Some(after) = &page.after {
            query = query.filter(after_name_and_id("locations.name", "locations.id", after));
        }
        let rows: Vec<LocationRow> = query
            .order((locations::name, locations::id))
            .limit(page.rows_to_read())
            .select(LocationRow::as_select())
            .load(&mut conn)
            .await
            .map_err(store_error)?;
        rows.into_iter().map(LocationRow::into_location).collect()
    }

    async fn find(&self, team: &TeamId, id: LocationId) -> Result<Option<Location>, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Option<LocationRow> = locations::table
            .filter(locations::id.eq(id.0).and(locations::team_id.eq(team.as_str())))
            .select(LocationRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(store_error)?;
        row.map(LocationRow::into_location).transpose()
    }
}

pub struct PgTeamSettingsStore {
    db: Db,
}

impl PgTeamSettingsStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl TeamSettingsStore for PgTeamSettingsStore {
    async fn set_chat_webhook_url(&self, team: &TeamId, url: Option<String>) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::insert_into(teams::table)
            .values((teams::id.eq(team.as_str()), teams::chat_webhook_url.eq(&url)))
            .on_conflict(teams::id)
            .do_update()
            .set((teams::chat_webhook_url.eq(&url), teams::updated_at.eq(diesel::dsl::now)))
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn chat_webhook_url(&self, team: &TeamId) -> Result<Option<String>, StoreError> {
        let mut conn = self.db.conn().await?;
        let url: Option<Option<String>> = teams::table
            .find(team.as_str())
            .select(teams::chat_webhook_url)
            .first(&mut conn)
            .await
            .optional()
            .map_err(store_error)?;
        Ok(url.flatten())
    }
}
