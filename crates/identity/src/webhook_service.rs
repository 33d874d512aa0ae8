use std::sync::Arc;

use opsd_core::{Clock, StoreError, TeamCacheInvalidation, ValidationErrors};
use opsd_signatures::{SignedDelivery, VerifyError, WebhookSecret};
use sha2::{Digest, Sha256};

use crate::ports::{Delivery, DeliveryOutcome, IdentityEventStore};
use crate::sign_in_cache::SignInCache;
use crate::webhook::{EventParseError, IdentityEvent, IdentityEventDecoder};

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("the signing secret is not configured")]
    NotConfigured,
    #[error("signature rejected: {0}")]
    Unverified(#[from] VerifyError),
    /// Verified, but not JSON at all.
    #[error("the body is not JSON: {0}")]
    Malformed(String),
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error("the delivery id was used with another body")]
    DeliveryConflict,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Receives the identity provider's user and organization lifecycle webhooks: verified on the raw bytes before
/// anything is parsed, recorded durably by delivery id, applied at most once.
#[derive(derive_new::new)]
pub struct IdentityWebhookService {
    secret: Option<WebhookSecret>,
    decoder: Arc<dyn IdentityEventDecoder>,
    store: Arc<dyn IdentityEventStore>,
    cache: Arc<dyn TeamCacheInvalidation>,
    /// Forgotten here as soon as the change commits; other instances hear of it from the database.
    sign_ins: Arc<SignInCache>,
    clock: Arc<dyn Clock>,
}

impl IdentityWebhookService {
    /// `Ok(true)` when the event was applied now, `Ok(false)` for a redelivery.
    pub async fn receive(&self, headers: SignedDelivery<'_>, body: &[u8]) -> Result<bool, WebhookError> {
        let secret = self.secret.as_ref().ok_or(WebhookError::NotConfigured)?;
        let now = self.clock.now();
        let delivery_id = secret.verify(headers, body, now.unix_timestamp())?;
        let (event_type, event) = self.decoder.decode(body).map_err(|error| match error {
            EventParseError::Malformed(reason) => WebhookError::Malformed(reason),
            EventParseError::Invalid(errors) => WebhookError::Invalid(errors),
        })?;
        let delivery = Delivery {
            id: delivery_id.to_owned(),
            body_sha256: hex::encode(Sha256::digest(body)),
            event_type,
            received_at: now,
        };
        match self.store.record_and_apply(&delivery, &event).await? {
            DeliveryOutcome::Applied { teams } => {
                match &event {
                    IdentityEvent::UserDeleted(user) => self.sign_ins.forget(user),
                    IdentityEvent::MembershipSet(change) | IdentityEvent::MembershipRemoved(change) => {
                        self.sign_ins.forget(&change.user_id);
                    }
                    IdentityEvent::OrganizationDeleted(_) => self.sign_ins.forget_all(),
                    IdentityEvent::UserCreated(_) | IdentityEvent::UserUpdated(_) | IdentityEvent::Unknown(_) => {}
                }
                for team in &teams {
                    self.cache.invalidate_team(team).await;
                }
                tracing::info!(delivery = %delivery.id, event = %delivery.event_type, teams = teams.len(), "identity event applied");
                Ok(true)
            }
            DeliveryOutcome::Duplicate => Ok(false),
            DeliveryOutcome::Conflict => Err(WebhookError::DeliveryConflict),
        }
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::eq;
    use opsd_core::{MockClock, MockTeamCacheInvalidation, TeamId, UserId};
    use time::OffsetDateTime;

    use super::*;
    use crate::ports::MockIdentityEventStore;
    use crate::webhook::IdentityEvent;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const NOW: i64 = 1_795_348_800;
    const BODY: &[u8] = br#"{"type":"user.deleted","data":{"id":"user_1","deleted":true}}"#;

    fn clock() -> Arc<MockClock> {
        Arc::new(MockClock::fixed(OffsetDateTime::from_unix_timestamp(NOW).unwrap()))
    }

    fn signed(body: &[u8]) -> (String, String) {
        (NOW.to_string(), WebhookSecret::parse(SECRET).unwrap().sign("msg_1", NOW, body))
    }

    /// Reads only `BODY`, as the edge's decoder would.
    fn decode(body: &[u8]) -> Result<(String, IdentityEvent), EventParseError> {
        assert_eq!(body, BODY, "only a verified body is read");
        Ok(("user.deleted".into(), IdentityEvent::UserDeleted(UserId::new("user_1"))))
    }

    fn service(store: MockIdentityEventStore, cache: MockTeamCacheInvalidation) -> IdentityWebhookService {
        service_with(store, cache, Arc::new(SignInCache::default()))
    }

    fn service_with(
        store: MockIdentityEventStore,
        cache: MockTeamCacheInvalidation,
        sign_ins: Arc<SignInCache>,
    ) -> IdentityWebhookService {
        IdentityWebhookService::new(
            Some(WebhookSecret::parse(SECRET).unwrap()),
            Arc::new(decode),
            Arc::new(store),
            Arc::new(cache),
            sign_ins,
            clock(),
        )
    }

    #[tokio::test]
    async fn an_applied_event_drops_the_cache_of_each_affected_team() {
        let mut store = MockIdentityEventStore::new();
        store
            .expect_record_and_apply()
            .withf(|delivery, event| {
                delivery.id == "msg_1"
                    && delivery.body_sha256.len() == 64
                    && *event == IdentityEvent::UserDeleted(UserId::new("user_1"))
            })
            .returning(|_, _| Ok(DeliveryOutcome::Applied { teams: vec![TeamId::new("org_1"), TeamId::new("org_2")] }));
        let mut cache = MockTeamCacheInvalidation::new();
        cache.expect_invalidate_team().with(eq(TeamId::new("org_1"))).times(1).return_const(());
        cache.expect_invalidate_team().with(eq(TeamId::new("org_2"))).times(1).return_const(());
        let (ts, sig) = signed(BODY);
        let headers = SignedDelivery { id: Some("msg_1"), timestamp: Some(&ts), signatures: Some(&sig) };
        assert!(service(store, cache).receive(headers, BODY).await.unwrap());
    }

    #[tokio::test]
    async fn an_applied_deletion_forgets_the_users_sign_ins_here_at_once() {
        let mut store = MockIdentityEventStore::new();
        store.expect_record_and_apply().returning(|_, _| Ok(DeliveryOutcome::Applied { teams: Vec::new() }));
        let sign_ins = Arc::new(SignInCache::default());
        sign_ins.set_listening(true);
        let lookup = sign_ins.get(&UserId::new("user_1"), None, None).unwrap_err();
        sign_ins.remember(lookup, crate::SignInOutcome::Active);
        let (ts, sig) = signed(BODY);
        let headers = SignedDelivery { id: Some("msg_1"), timestamp: Some(&ts), signatures: Some(&sig) };
        assert!(
            service_with(store, MockTeamCacheInvalidation::new(), sign_ins.clone())
                .receive(headers, BODY)
                .await
                .unwrap()
        );
        assert!(sign_ins.get(&UserId::new("user_1"), None, None).is_err(), "still remembered after the deletion");
    }

    #[tokio::test]
    async fn a_redelivery_changes_nothing_and_drops_no_cache() {
        let mut store = MockIdentityEventStore::new();
        store.expect_record_and_apply().returning(|_, _| Ok(DeliveryOutcome::Duplicate));
        let mut cache = MockTeamCacheInvalidation::new();
        cache.expect_invalidate_team().never();
        let (ts, sig) = signed(BODY);
        let headers = SignedDelivery { id: Some("msg_1"), timestamp: Some(&ts), signatures: Some(&sig) };
        assert!(!service(store, cache).receive(headers, BODY).await.unwrap());
    }

    #[tokio::test]
    async fn a_bad_signature_is_rejected_before_parsing_or_storing() {
        let mut store = MockIdentityEventStore::new();
        store.expect_record_and_apply().never();
        let (ts, _) = signed(BODY);
        let headers = SignedDelivery { id: Some("msg_1"), timestamp: Some(&ts), signatures: Some("v1,AAAA") };
        let error = service(store, MockTeamCacheInvalidation::new()).receive(headers, b"not even json").await;
        assert!(matches!(error, Err(WebhookError::Unverified(VerifyError::NoMatchingSignature))));
    }

    #[tokio::test]
    async fn a_conflicting_body_is_reported() {
        let mut store = MockIdentityEventStore::new();
        store.expect_record_and_apply().returning(|_, _| Ok(DeliveryOutcome::Conflict));
        let (ts, sig) = signed(BODY);
        let headers = SignedDelivery { id: Some("msg_1"), timestamp: Some(&ts), signatures: Some(&sig) };
        let error = service(store, MockTeamCacheInvalidation::new()).receive(headers, BODY).await;
        assert!(matches!(error, Err(WebhookError::DeliveryConflict)));
    }

    #[tokio::test]
    async fn without_a_secret_nothing_is_accepted() {
        let mut store = MockIdentityEventStore::new();
        store.expect_record_and_apply().never();
        let service = IdentityWebhookService::new(
            None,
            Arc::new(decode),
            Arc::new(store),
            Arc::new(MockTeamCacheInvalidation::new()),
            Arc::new(SignInCache::default()),
            clock(),
        );
        let headers = SignedDelivery { id: Some("msg_1"), timestamp: Some("1"), signatures: Some("v1,x") };
        assert!(matches!(service.receive(headers, BODY).await, Err(WebhookError::NotConfigured)));
    }
}
