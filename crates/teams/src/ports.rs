use async_trait::async_trait;
use opsd_core::{LocationId, StoreError, TeamId};

use crate::location::{Location, NewLocation};

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
    async fn list(&self, team: &TeamId) -> Result<Vec<Location>, StoreError>;
    /// A location of this team; another team's is `None`, as if it did not exist.
    async fn find(&self, team: &TeamId, id: LocationId) -> Result<Option<Location>, StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait TeamSettingsStore: Send + Sync {
    async fn set_chat_webhook_url(&self, team: &TeamId, url: Option<String>) -> Result<(), StoreError>;
    async fn chat_webhook_url(&self, team: &TeamId) -> Result<Option<String>, StoreError>;
}
