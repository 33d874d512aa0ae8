use std::sync::Arc;

use opsd_core::{Caller, Clock, Forbidden, LocationId, StoreError, TeamId, UserId, ValidationErrors};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::ports::{AnnouncementStore, TeamBroadcast};

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnnouncementRequest {
    /// 1 to 200 characters.
    pub title: String,
    /// 1 to 2000 characters.
    pub body: String,
    /// When to publish it (RFC 3339); the job publishes it at the first run at or after this.
    pub publish_at: String,
    /// Only this location's; default the whole team.
    pub location_id: Option<Uuid>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAnnouncement {
    pub team_id: TeamId,
    pub location_id: Option<LocationId>,
    pub title: String,
    pub body: String,
    pub publish_at: OffsetDateTime,
    pub created_by: UserId,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Announcement {
    pub id: Uuid,
    #[serde(skip)]
    pub team_id: TeamId,
    pub title: String,
    pub body: String,
    #[serde(with = "time::serde::rfc3339")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub publish_at: OffsetDateTime,
    /// Null until the job publishes it.
    #[serde(with = "time::serde::rfc3339::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub published_at: Option<OffsetDateTime>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Uuid>))]
    pub location_id: Option<LocationId>,
}

#[derive(Debug, thiserror::Error)]
pub enum AnnouncementError {
    #[error(transparent)]
    Forbidden(#[from] Forbidden),
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct AnnouncementService {
    store: Arc<dyn AnnouncementStore>,
    broadcast: Arc<dyn TeamBroadcast>,
    clock: Arc<dyn Clock>,
}

impl AnnouncementService {
    pub fn new(store: Arc<dyn AnnouncementStore>, broadcast: Arc<dyn TeamBroadcast>, clock: Arc<dyn Clock>) -> Self {
        Self { store, broadcast, clock }
    }

    pub async fn create(&self, caller: &Caller, request: &AnnouncementRequest) -> Result<Announcement, AnnouncementError> {
        let team = caller.admin_team()?;
        let mut errors = ValidationErrors::new();
        let (title, body) = (request.title.trim(), request.body.trim());
        if title.is_empty() || title.chars().count() > 200 {
            errors.push("title", "must be 1 to 200 characters");
        }
        if body.is_empty() || body.chars().count() > 2000 {
            errors.push("body", "must be 1 to 2000 characters");
        }
        let publish_at = OffsetDateTime::parse(&request.publish_at, &Rfc3339).ok();
        if publish_at.is_none() {
            errors.push("publishAt", "must be an RFC 3339 timestamp");
        }
        errors.into_result()?;
        let new = NewAnnouncement {
            team_id: team.clone(),
            location_id: request.location_id.map(LocationId),
            title: title.to_owned(),
            body: body.to_owned(),
            publish_at: publish_at.expect("checked"),
            created_by: caller.user_id.clone(),
        };
        self.store
            .create(&new, self.clock.now())
            .await?
            .ok_or_else(|| ValidationErrors::single("locationId", "is not a location of your team").into())
    }

    pub async fn list(&self, caller: &Caller) -> Result<Vec<Announcement>, AnnouncementError> {
        Ok(self.store.list(caller.team_id()?).await?)
    }

    /// Publishes due announcements (each exactly once), then pushes them to the team's devices;
    /// a failing push never unpublishes. Returns (published, devices reached).
    pub async fn publish_due(&self) -> Result<(u32, u32), StoreError> {
        let published = self.store.publish_due(self.clock.now(), 100).await?;
        let mut reached = 0;
        for announcement in &published {
            let url = format!("/announcements/{}", announcement.id);
            match self.broadcast.push_to_team(&announcement.team_id, &announcement.title, &announcement.body, &url).await {
                Ok(devices) => reached += devices,
                Err(error) => tracing::warn!(announcement = %announcement.id, %error, "pushing an announcement failed"),
            }
        }
        Ok((published.len() as u32, reached))
    }
}
