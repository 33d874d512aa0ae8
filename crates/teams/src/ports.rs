use async_trait::async_trait;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId};

use crate::location::{Location, LocationKey, NewLocation};

#[derive(Debug, thiserror::Error)]
pub enum SaveLocationError {
    #[error("the slug is taken")]
    SlugTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait LocationStore: Send + Sync {
    async fn create(&self, team: &TeamId, location: &NewLocation) -> Result<Location, SaveLocationError>;
    /// By (name, id): `page.rows_to_read()` of them after `page.after`.
    async fn list(&self, team: &TeamId, page: &PageRequest<LocationKey>) -> Result<Vec<Location>, StoreError>;
    /// A location of this team; another team's is `None`, as if it did not exist.
    async fn find(&self, team: &TeamId, id: LocationId) -> Result<Option<Location>, StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait TeamSettingsStore: Send + Sync {
    async fn set_chat_webhook_url(&self, team: &TeamId, url: Option<String>) -> Result<(), StoreError>;
    async fn chat_webhook_url(&self, team: &TeamId) -> Result<Option<String>, StoreError>;
}
