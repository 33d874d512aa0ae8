use std::sync::Arc;

use opsd_core::{Caller, MAX_LIMIT, OutboundUrlPolicy, Page, PageRequest, ValidationErrors};

use crate::location::{Location, LocationKey, NewLocation};
use crate::ports::{LocationStore, SaveLocationError, TeamSettingsStore};

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the slug is taken")]
pub struct SlugTaken;

pub type TeamError = opsd_core::ServiceError<SlugTaken>;

#[derive(derive_new::new)]
pub struct TeamService {
    locations: Arc<dyn LocationStore>,
    settings: Arc<dyn TeamSettingsStore>,
    urls: Arc<dyn OutboundUrlPolicy>,
}

impl TeamService {
    pub async fn create_location(&self, caller: &Caller, location: NewLocation) -> Result<Location, TeamError> {
        let team = caller.admin_team()?;
        self.locations.create(team, &location).await.map_err(|error| match error {
            SaveLocationError::SlugTaken => TeamError::Domain(SlugTaken),
            SaveLocationError::Store(error) => TeamError::Store(error),
        })
    }

    pub async fn locations_page(
        &self,
        caller: &Caller,
        page: PageRequest<LocationKey>,
    ) -> Result<Page<Location>, TeamError> {
        let rows = self.locations.list(caller.team_id()?, &page).await?;
        Ok(Page::of(rows, &page, Location::key))
    }

    /// Every location of the team, by name (the console's and the assistant's choices).
    pub async fn list_locations(&self, caller: &Caller) -> Result<Vec<Location>, TeamError> {
        let team = caller.team_id()?;
        let mut page = PageRequest { limit: MAX_LIMIT, after: None };
        let mut all = Vec::new();
        loop {
            let mut rows = self.locations.list(team, &page).await?;
            let more = rows.len() > page.limit as usize;
            rows.truncate(page.limit as usize);
            page.after = rows.last().map(Location::key);
            all.extend(rows);
            if !more {
                return Ok(all);
            }
        }
    }

    pub async fn chat_webhook_url(&self, caller: &Caller) -> Result<Option<String>, TeamError> {
        Ok(self.settings.chat_webhook_url(caller.team_id()?).await?)
    }

    /// Sets (or with `None` clears) the team-chat incoming-webhook URL, an outbound URL under the
    /// SSRF rule.
    pub async fn set_chat_webhook_url(&self, caller: &Caller, url: Option<&str>) -> Result<(), TeamError> {
        let team = caller.admin_team()?;
        if let Some(url) = url {
            if url.len() > 2048 {
                return Err(ValidationErrors::single("chatWebhookUrl", "must be at most 2048 characters").into());
            }
            self.urls.check(url).await.map_err(|rejected| ValidationErrors::single("chatWebhookUrl", rejected.0))?;
        }
        Ok(self.settings.set_chat_webhook_url(team, url.map(str::to_owned)).await?)
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::eq;
    use opsd_core::Forbidden;
    use opsd_core::{MockOutboundUrlPolicy, Role, TeamId, UrlRejected};

    use super::*;
    use crate::ports::{MockLocationStore, MockTeamSettingsStore};

    fn caller(role: Role) -> Caller {
        Caller::in_team("user_1", "org_1", role)
    }

    fn service(
        locations: MockLocationStore,
        settings: MockTeamSettingsStore,
        urls: MockOutboundUrlPolicy,
    ) -> TeamService {
        TeamService::new(Arc::new(locations), Arc::new(settings), Arc::new(urls))
    }

    #[tokio::test]
    async fn members_cannot_create_locations_and_nothing_is_saved() {
        let mut locations = MockLocationStore::new();
        locations.expect_create().never();
        let service = service(locations, MockTeamSettingsStore::new(), MockOutboundUrlPolicy::new());
        let new = NewLocation::parse("Downtown", "downtown", "UTC", None).unwrap();
        let error = service.create_location(&caller(Role::Member), new).await.unwrap_err();
        assert!(matches!(error, TeamError::Forbidden(Forbidden::NotAdmin)));
    }

    #[tokio::test]
    async fn a_taken_slug_is_reported_as_such() {
        let mut locations = MockLocationStore::new();
        locations.expect_create().times(1).returning(|_, _| Err(SaveLocationError::SlugTaken));
        let service = service(locations, MockTeamSettingsStore::new(), MockOutboundUrlPolicy::new());
        let new = NewLocation::parse("Downtown", "downtown", "UTC", None).unwrap();
        let error = service.create_location(&caller(Role::Admin), new).await.unwrap_err();
        assert!(matches!(error, TeamError::Domain(SlugTaken)));
    }

    #[tokio::test]
    async fn a_rejected_chat_url_is_a_validation_error_and_is_not_saved() {
        let mut urls = MockOutboundUrlPolicy::new();
        urls.expect_check().returning(|_| Err(UrlRejected("must be https".into())));
        let mut settings = MockTeamSettingsStore::new();
        settings.expect_set_chat_webhook_url().never();
        let service = service(MockLocationStore::new(), settings, urls);
        let error = service.set_chat_webhook_url(&caller(Role::Admin), Some("http://10.0.0.1/")).await.unwrap_err();
        let TeamError::Invalid(errors) = error else { panic!("expected a validation error") };
        assert_eq!(errors.errors()[0].field, "chatWebhookUrl");
    }

    #[tokio::test]
    async fn an_accepted_chat_url_is_saved_for_the_callers_team() {
        let mut urls = MockOutboundUrlPolicy::new();
        urls.expect_check().returning(|_| Ok(()));
        let mut settings = MockTeamSettingsStore::new();
        settings
            .expect_set_chat_webhook_url()
            .with(eq(TeamId::new("org_1")), eq(Some("https://hooks.example/x".to_owned())))
            .times(1)
            .returning(|_, _| Ok(()));
        let service = service(MockLocationStore::new(), settings, urls);
        service.set_chat_webhook_url(&caller(Role::Admin), Some("https://hooks.example/x")).await.unwrap();
    }
}
