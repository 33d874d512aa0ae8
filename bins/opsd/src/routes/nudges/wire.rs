//! The announcement bodies as clients send and receive them.

use opsd_core::LocationId;
use opsd_nudges::AnnouncementDraft;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnnouncementRequest {
    /// 1 to 200 characters.
    title: String,
    /// 1 to 2000 characters.
    body: String,
    /// When to publish it (RFC 3339); the job publishes it at the first run at or after this.
    publish_at: String,
    /// Only this location's; default the whole team.
    location_id: Option<Uuid>,
}

impl From<AnnouncementRequest> for AnnouncementDraft {
    fn from(request: AnnouncementRequest) -> Self {
        Self {
            title: request.title,
            body: request.body,
            publish_at: request.publish_at,
            location_id: request.location_id.map(LocationId),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Announcement {
    id: Uuid,
    title: String,
    body: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    publish_at: OffsetDateTime,
    /// Null until the job publishes it.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    published_at: Option<OffsetDateTime>,
    location_id: Option<Uuid>,
}

impl From<opsd_nudges::Announcement> for Announcement {
    fn from(announcement: opsd_nudges::Announcement) -> Self {
        Self {
            id: announcement.id,
            title: announcement.title,
            body: announcement.body,
            publish_at: announcement.publish_at,
            published_at: announcement.published_at,
            location_id: announcement.location_id.map(|id| id.0),
        }
    }
}
