use std::sync::Arc;

use opsd_core::{Caller, Clock, LocationId, PageRequest, StoreError, ValidationErrors};
use time::Duration;

use crate::contact::{Contact, ContactId, ContactKey, NewContact};
use crate::cursor::Cursor;
use crate::incident::{
    Comment, Incident, IncidentDetail, IncidentId, IncidentNotes, NewIncident, Status, StatusUpdate,
};
use crate::ports::{ContactStore, CreateIncidentError, IncidentFilter, IncidentStore};

pub type IncidentError = opsd_core::ServiceError;

/// What a listing asks for, as the query gave it.
#[derive(Debug, Clone, Default)]
pub struct ListIncidents {
    pub location_id: Option<LocationId>,
    pub status: Option<Status>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 100;

#[derive(derive_new::new)]
pub struct IncidentService {
    incidents: Arc<dyn IncidentStore>,
    contacts: Arc<dyn ContactStore>,
    clock: Arc<dyn Clock>,
}

impl IncidentService {
    pub async fn report(&self, caller: &Caller, incident: NewIncident) -> Result<Incident, IncidentError> {
        let team = caller.team_id()?;
        self.incidents.create(team, &caller.user_id, &incident, self.clock.now()).await.map_err(|error| match error {
            CreateIncidentError::LocationNotInTeam => {
                ValidationErrors::single("locationId", "is not a location of your team").into()
            }
            CreateIncidentError::ContactUnavailable => {
                ValidationErrors::single("contactId", "is not a live contact of your team").into()
            }
            CreateIncidentError::Store(error) => error.into(),
        })
    }

    pub async fn comment(
        &self,
        caller: &Caller,
        incident: IncidentId,
        content: &str,
    ) -> Result<Comment, IncidentError> {
        let team = caller.team_id()?;
        let content = IncidentNotes::parse("content", content).map_err(ValidationErrors::from)?;
        self.incidents
            .add_comment(team, incident, &caller.user_id, content.as_str(), self.clock.now())
            .await?
            .ok_or(IncidentError::NotFound)
    }

    pub async fn change_status(
        &self,
        caller: &Caller,
        incident: IncidentId,
        status: Status,
    ) -> Result<Incident, IncidentError> {
        let team = caller.team_id()?;
        let update = StatusUpdate { status, by: caller.user_id.clone(), at: self.clock.now() };
        self.incidents.change_status(team, incident, &update).await?.ok_or(IncidentError::NotFound)
    }

    pub async fn list(&self, caller: &Caller, query: ListIncidents) -> Result<Page<Incident>, IncidentError> {
        let team = caller.team_id()?;
        let mut errors = ValidationErrors::new();
        let limit = query.limit.unwrap_or(DEFAULT_PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            errors.push("limit", "must be 1 to 100");
        }
        let after = query.cursor.as_deref().and_then(|raw| errors.check(Cursor::decode(raw)));
        errors.into_result()?;
        let filter = IncidentFilter { location_id: query.location_id, status: query.status };
        let mut items = self.incidents.list(team, &filter, limit + 1, after).await?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items.last().map(|last| Cursor { created_at: last.created_at, id: last.id.0 }.encode())
        } else {
            None
        };
        Ok(Page { items, next_cursor })
    }

    pub async fn get(&self, caller: &Caller, incident: IncidentId) -> Result<IncidentDetail, IncidentError> {
        let team = caller.team_id()?;
        self.incidents.get(team, incident).await?.ok_or(IncidentError::NotFound)
    }

    pub async fn add_contact(&self, caller: &Caller, contact: NewContact) -> Result<Contact, IncidentError> {
        Ok(self.contacts.create(caller.team_id()?, &contact, self.clock.now()).await?)
    }

    pub async fn contacts(
        &self,
        caller: &Caller,
        page: PageRequest<ContactKey>,
    ) -> Result<opsd_core::Page<Contact>, IncidentError> {
        let rows = self.contacts.list(caller.team_id()?, &page).await?;
        Ok(opsd_core::Page::of(rows, &page, Contact::key))
    }

    /// Soft-deletes a contact (admin): it stays until the prune job's retention has passed.
    pub async fn remove_contact(&self, caller: &Caller, contact: ContactId) -> Result<(), IncidentError> {
        let team = caller.admin_team()?;
        if self.contacts.soft_delete(team, contact, self.clock.now()).await? {
            Ok(())
        } else {
            Err(IncidentError::NotFound)
        }
    }

    /// Deletes contacts soft-deleted more than `retention_days` ago; returns how many.
    pub async fn prune_contacts(&self, retention_days: u32) -> Result<u64, StoreError> {
        let cutoff = self.clock.now() - Duration::days(i64::from(retention_days));
        self.contacts.prune_deleted_before(cutoff).await
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::{always, eq};
    use opsd_core::Forbidden;
    use opsd_core::{MockClock, Role, TeamId, UserId};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::incident::{ContactChoice, IncidentType, MediaUrls, Severity};
    use crate::ports::{MockContactStore, MockIncidentStore};

    const NOW: i64 = 1_795_348_800;

    fn caller(role: Role) -> Caller {
        Caller::in_team("user_1", "org_1", role)
    }

    fn clock() -> Arc<MockClock> {
        Arc::new(MockClock::fixed(OffsetDateTime::from_unix_timestamp(NOW).unwrap()))
    }

    fn service(incidents: MockIncidentStore, contacts: MockContactStore) -> IncidentService {
        IncidentService::new(Arc::new(incidents), Arc::new(contacts), clock())
    }

    fn new_incident() -> NewIncident {
        NewIncident {
            location_id: LocationId(Uuid::nil()),
            incident_type: IncidentType::Injury,
            severity: Severity::Low,
            notes: IncidentNotes::parse("notes", "Cut finger").unwrap(),
            media_urls: MediaUrls::default(),
            contact: ContactChoice::None,
        }
    }

    fn incident(id: u128, seconds: i64) -> Incident {
        let at = OffsetDateTime::from_unix_timestamp(seconds).unwrap();
        Incident {
            id: IncidentId(Uuid::from_u128(id)),
            team_id: TeamId::new("org_1"),
            location_id: LocationId(Uuid::nil()),
            incident_type: IncidentType::Injury,
            severity: Severity::Low,
            status: Status::Reported,
            notes: "n".into(),
            media_urls: vec![],
            contact_id: None,
            reported_by: UserId::new("user_1"),
            created_at: at,
            updated_at: at,
        }
    }

    #[tokio::test]
    async fn a_foreign_location_is_a_validation_error_on_location_id() {
        let mut incidents = MockIncidentStore::new();
        incidents.expect_create().returning(|_, _, _, _| Err(CreateIncidentError::LocationNotInTeam));
        let error = service(incidents, MockContactStore::new()).report(&caller(Role::Member), new_incident()).await;
        let Err(IncidentError::Invalid(errors)) = error else { panic!("expected a validation error") };
        assert_eq!(errors.errors()[0].field, "locationId");
    }

    #[tokio::test]
    async fn an_unavailable_contact_is_a_validation_error_on_contact_id() {
        let mut incidents = MockIncidentStore::new();
        incidents.expect_create().returning(|_, _, _, _| Err(CreateIncidentError::ContactUnavailable));
        let error = service(incidents, MockContactStore::new()).report(&caller(Role::Member), new_incident()).await;
        let Err(IncidentError::Invalid(errors)) = error else { panic!("expected a validation error") };
        assert_eq!(errors.errors()[0].field, "contactId");
    }

    #[tokio::test]
    async fn reporting_needs_a_team_and_writes_nothing_without_one() {
        let mut incidents = MockIncidentStore::new();
        incidents.expect_create().never();
        let no_team = Caller { user_id: UserId::new("user_1"), membership: None };
        let error = service(incidents, MockContactStore::new()).report(&no_team, new_incident()).await;
        assert!(matches!(error, Err(IncidentError::Forbidden(Forbidden::NoTeam))));
    }

    #[tokio::test]
    async fn an_empty_comment_is_rejected_before_the_store() {
        let mut incidents = MockIncidentStore::new();
        incidents.expect_add_comment().never();
        let error = service(incidents, MockContactStore::new())
            .comment(&caller(Role::Member), IncidentId(Uuid::nil()), "   ")
            .await;
        assert!(matches!(error, Err(IncidentError::Invalid(_))));
    }

    #[tokio::test]
    async fn another_teams_incident_is_not_found() {
        let mut incidents = MockIncidentStore::new();
        incidents.expect_change_status().returning(|_, _, _| Ok(None));
        let error = service(incidents, MockContactStore::new())
            .change_status(&caller(Role::Member), IncidentId(Uuid::nil()), Status::Resolved)
            .await;
        assert!(matches!(error, Err(IncidentError::NotFound)));
    }

    #[tokio::test]
    async fn a_full_page_fetches_one_more_to_know_there_is_a_next() {
        let mut incidents = MockIncidentStore::new();
        incidents
            .expect_list()
            .with(always(), always(), eq(3), eq(None))
            .returning(|_, _, _, _| Ok(vec![incident(3, NOW), incident(2, NOW - 1), incident(1, NOW - 2)]));
        let page = service(incidents, MockContactStore::new())
            .list(&caller(Role::Member), ListIncidents { limit: Some(2), ..Default::default() })
            .await
            .unwrap();
        assert_eq!(page.items.len(), 2);
        let cursor = Cursor::decode(page.next_cursor.as_deref().unwrap()).unwrap();
        assert_eq!(cursor.id, Uuid::from_u128(2));
    }

    #[tokio::test]
    async fn a_bad_limit_or_cursor_is_rejected_before_the_store() {
        let mut incidents = MockIncidentStore::new();
        incidents.expect_list().never();
        let service = service(incidents, MockContactStore::new());
        for query in [
            ListIncidents { limit: Some(0), ..Default::default() },
            ListIncidents { limit: Some(101), ..Default::default() },
            ListIncidents { cursor: Some("garbage".into()), ..Default::default() },
        ] {
            assert!(matches!(service.list(&caller(Role::Member), query).await, Err(IncidentError::Invalid(_))));
        }
    }

    #[tokio::test]
    async fn only_admins_remove_contacts() {
        let mut contacts = MockContactStore::new();
        contacts.expect_soft_delete().never();
        let error = service(MockIncidentStore::new(), contacts)
            .remove_contact(&caller(Role::Member), ContactId(Uuid::nil()))
            .await;
        assert!(matches!(error, Err(IncidentError::Forbidden(Forbidden::NotAdmin))));
    }

    #[tokio::test]
    async fn pruning_cuts_off_at_now_minus_the_retention() {
        let mut contacts = MockContactStore::new();
        let cutoff = OffsetDateTime::from_unix_timestamp(NOW).unwrap() - Duration::days(30);
        contacts.expect_prune_deleted_before().with(eq(cutoff)).times(1).returning(|_| Ok(4));
        assert_eq!(service(MockIncidentStore::new(), contacts).prune_contacts(30).await.unwrap(), 4);
    }
}
