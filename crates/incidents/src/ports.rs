use async_trait::async_trait;
use opsd_core::{LocationId, PageRequest, StoreError, TeamId, UserId};
use time::OffsetDateTime;

use crate::contact::{Contact, ContactId, ContactKey, NewContact};
use crate::cursor::Cursor;
use crate::incident::{Comment, Incident, IncidentDetail, IncidentId, NewIncident, Status, StatusUpdate};

#[derive(Debug, thiserror::Error)]
pub enum CreateIncidentError {
    #[error("the location is not one of the team's")]
    LocationNotInTeam,
    #[error("the contact is not a live contact of the team")]
    ContactUnavailable,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncidentFilter {
    pub location_id: Option<LocationId>,
    pub status: Option<Status>,
}

/// Incidents, always scoped to a team: another team's incident reads as absent.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait IncidentStore: Send + Sync {
    /// Checks the location and contact and writes the incident (and a new contact) in one
    /// transaction.
    async fn create(
        &self,
        team: &TeamId,
        reporter: &UserId,
        incident: &NewIncident,
        at: OffsetDateTime,
    ) -> Result<Incident, CreateIncidentError>;
    async fn add_comment(
        &self,
        team: &TeamId,
        incident: IncidentId,
        author: &UserId,
        content: &str,
        at: OffsetDateTime,
    ) -> Result<Option<Comment>, StoreError>;
    /// Sets the status; a real change appends a history row. `None` when there is no such incident.
    async fn change_status(
        &self,
        team: &TeamId,
        incident: IncidentId,
        update: &StatusUpdate,
    ) -> Result<Option<Incident>, StoreError>;
    /// Newest first, after `after`, at most `limit`.
    async fn list(
        &self,
        team: &TeamId,
        filter: &IncidentFilter,
        limit: u32,
        after: Option<Cursor>,
    ) -> Result<Vec<Incident>, StoreError>;
    async fn get(&self, team: &TeamId, incident: IncidentId) -> Result<Option<IncidentDetail>, StoreError>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ContactStore: Send + Sync {
    async fn create(&self, team: &TeamId, contact: &NewContact, at: OffsetDateTime) -> Result<Contact, StoreError>;
    /// Live contacts by (name, id): `page.rows_to_read()` of them after `page.after`.
    async fn list(&self, team: &TeamId, page: &PageRequest<ContactKey>) -> Result<Vec<Contact>, StoreError>;
    /// `false` when there is no live contact of the team with that id.
    async fn soft_delete(&self, team: &TeamId, contact: ContactId, at: OffsetDateTime) -> Result<bool, StoreError>;
    /// Deletes contacts soft-deleted before `cutoff`; incidents keep their rows without the contact.
    async fn prune_deleted_before(&self, cutoff: OffsetDateTime) -> Result<u64, StoreError>;
}
