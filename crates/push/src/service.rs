use std::sync::Arc;

use futures::StreamExt;
use opsd_core::{Caller, Clock, Limited, OutboundUrlPolicy, Quota, RatePolicy, StoreError, UserId, ValidationErrors};

use crate::model::{Message, SendSummary, Subscription};
use crate::ports::{DeliveryResult, MemberDirectory, PushSender, RateLimiter, SubscriptionStore};

pub const SUBSCRIBE_LIMIT: RatePolicy = RatePolicy { name: "push-subscribe", per_minute: 30 };
pub const SEND_LIMIT: RatePolicy = RatePolicy { name: "push-send", per_minute: 10 };
/// Deliveries in flight at once for one send.
const CONCURRENT_DELIVERIES: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PushRefusal {
    #[error("VAPID keys are not configured")]
    NotConfigured,
    #[error("the target is not a member of the caller's team, or the caller is not its admin")]
    ForeignTarget,
}

pub type PushError = opsd_core::ServiceError<PushRefusal>;

#[derive(derive_new::new)]
pub struct PushService {
    subscriptions: Arc<dyn SubscriptionStore>,
    members: Arc<dyn MemberDirectory>,
    sender: Arc<dyn PushSender>,
    limiter: Arc<dyn RateLimiter>,
    urls: Arc<dyn OutboundUrlPolicy>,
    clock: Arc<dyn Clock>,
}

impl PushService {
    /// Counts the call against the user's limit of `policy`; a refusal is the error.
    async fn limit(&self, user: &UserId, policy: RatePolicy) -> Result<Quota, PushError> {
        let key = format!("{}:{user}", policy.name);
        self.limiter.hit(policy, &key, self.clock.now()).await?.map_err(PushError::RateLimited)
    }

    /// Takes the body's parse result, so a caller past the limit is refused before the body is judged.
    /// The outcome of a counted call comes with the caller's quota after it.
    pub async fn subscribe(
        &self,
        caller: &Caller,
        subscription: Result<Subscription, ValidationErrors>,
    ) -> Result<Limited<Result<(), PushError>>, PushError> {
        let quota = self.limit(&caller.user_id, SUBSCRIBE_LIMIT).await?;
        let value = async {
            let subscription = subscription?;
            self.urls
                .check(&subscription.endpoint)
                .await
                .map_err(|rejected| ValidationErrors::single("endpoint", rejected.0))?;
            Ok(self.subscriptions.upsert(&caller.user_id, &subscription, self.clock.now()).await?)
        }
        .await;
        Ok(Limited { value, quota })
    }

    /// Removes the caller's own subscription of the endpoint; `false` when there was none.
    pub async fn unsubscribe(
        &self,
        caller: &Caller,
        endpoint: &str,
    ) -> Result<Limited<Result<bool, PushError>>, PushError> {
        let quota = self.limit(&caller.user_id, SUBSCRIBE_LIMIT).await?;
        let value = self.subscriptions.delete(&caller.user_id, endpoint).await.map_err(PushError::from);
        Ok(Limited { value, quota })
    }

    /// Sends to the caller, or (admins) to a member of the caller's team.
    /// Takes the body's parse result, so a caller past the limit is refused before the body is judged.
    pub async fn send(
        &self,
        caller: &Caller,
        message: Result<Message, ValidationErrors>,
    ) -> Result<Limited<Result<SendSummary, PushError>>, PushError> {
        if !self.sender.is_configured() {
            return Err(PushError::Domain(PushRefusal::NotConfigured));
        }
        let quota = self.limit(&caller.user_id, SEND_LIMIT).await?;
        let value = async {
            let Message { notification, target } = message?;
            let target = match target {
                None => caller.user_id.clone(),
                Some(target) if target == caller.user_id => target,
                Some(target) => {
                    let foreign = || PushError::Domain(PushRefusal::ForeignTarget);
                    let team = caller.admin_team().map_err(|_| foreign())?;
                    if !self.members.is_member(team, &target).await? {
                        return Err(foreign());
                    }
                    target
                }
            };
            Ok(self.deliver(&target, &notification.to_json()).await?)
        }
        .await;
        Ok(Limited { value, quota })
    }

    /// Delivers a notification to every device of one user (announcements, from their outbox).
    pub async fn notify_user(
        &self,
        user: &UserId,
        notification: &crate::model::Notification,
    ) -> Result<SendSummary, PushError> {
        if !self.sender.is_configured() {
            return Err(PushError::Domain(PushRefusal::NotConfigured));
        }
        Ok(self.deliver(user, &notification.to_json()).await?)
    }

    /// Delivers a notification to every device of a team's admins only.
    pub async fn notify_admins(
        &self,
        team: &opsd_core::TeamId,
        notification: &crate::model::Notification,
    ) -> Result<SendSummary, PushError> {
        if !self.sender.is_configured() {
            return Err(PushError::Domain(PushRefusal::NotConfigured));
        }
        let admins = self.members.admins(team).await?;
        self.deliver_to_all(&admins, notification).await
    }

    async fn deliver_to_all(
        &self,
        users: &[UserId],
        notification: &crate::model::Notification,
    ) -> Result<SendSummary, PushError> {
        Ok(self.deliver_to(users, &notification.to_json()).await?)
    }

    /// Delivers a payload to every subscription of a user (also used by announcements).
    pub async fn deliver(&self, user: &UserId, payload: &[u8]) -> Result<SendSummary, StoreError> {
        self.deliver_to(std::slice::from_ref(user), payload).await
    }

    /// Every device is looked up before anything is sent, and nothing after the sending fails: an
    /// error means no push went out, so a caller may try again without anyone getting it twice.
    async fn deliver_to(&self, users: &[UserId], payload: &[u8]) -> Result<SendSummary, StoreError> {
        let now = self.clock.now();
        let mut summary = SendSummary { success: true, ..SendSummary::default() };
        let mut subscriptions = Vec::new();
        for user in users {
            summary.expired += self.subscriptions.delete_expired(user, now).await?;
            subscriptions.extend(self.subscriptions.of_user(user).await?);
        }
        let results: Vec<(uuid::Uuid, DeliveryResult)> = futures::stream::iter(subscriptions)
            .map(|stored| async move { (stored.id, self.sender.deliver(&stored.subscription, payload).await) })
            .buffer_unordered(CONCURRENT_DELIVERIES)
            .collect()
            .await;
        for (id, result) in results {
            match result {
                DeliveryResult::Accepted => summary.sent += 1,
                DeliveryResult::Gone => {
                    summary.expired += 1;
                    // The next send finds it gone again and tries once more.
                    if let Err(error) = self.subscriptions.delete_by_id(id).await {
                        tracing::warn!(subscription = %id, %error, "a gone push subscription was not deleted");
                    }
                }
                DeliveryResult::Failed(reason) => {
                    tracing::info!(subscription = %id, reason, "push delivery failed");
                    summary.failed += 1;
                }
            }
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::RateLimited;
    use opsd_core::{MockClock, MockOutboundUrlPolicy, Role};
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::model::{Notification, StoredSubscription};
    use opsd_core::MockRateLimiter;

    use crate::ports::{MockMemberDirectory, MockPushSender, MockSubscriptionStore};

    fn caller(role: Role) -> Caller {
        Caller::in_team("user_1", "org_1", role)
    }

    fn allow_all() -> MockRateLimiter {
        let mut limiter = MockRateLimiter::new();
        limiter.expect_hit().returning(|policy, _, _| Ok(Ok(Quota::per_minute(policy, policy.per_minute - 1, 60))));
        limiter
    }

    fn stored(n: u128) -> StoredSubscription {
        StoredSubscription {
            id: Uuid::from_u128(n),
            user_id: UserId::new("user_1"),
            subscription: Subscription {
                endpoint: format!("https://push.example/{n}"),
                p256dh: "k".into(),
                auth: "a".into(),
                expires_at: None,
            },
        }
    }

    fn service(
        subscriptions: MockSubscriptionStore,
        members: MockMemberDirectory,
        sender: MockPushSender,
        limiter: MockRateLimiter,
    ) -> PushService {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap());
        let mut urls = MockOutboundUrlPolicy::new();
        urls.expect_check().returning(|_| Ok(()));
        PushService::new(
            Arc::new(subscriptions),
            Arc::new(members),
            Arc::new(sender),
            Arc::new(limiter),
            Arc::new(urls),
            Arc::new(clock),
        )
    }

    fn configured_sender() -> MockPushSender {
        let mut sender = MockPushSender::new();
        sender.expect_is_configured().return_const(true);
        sender
    }

    fn request(target: Option<&str>) -> Result<Message, ValidationErrors> {
        let notification = Notification::new("Hi".into(), String::new(), crate::SafePath::root()).unwrap();
        Ok(Message { notification, target: target.map(UserId::new) })
    }

    /// What a member's send to their own devices reports.
    async fn sent_to_self(subscriptions: MockSubscriptionStore, sender: MockPushSender) -> SendSummary {
        let service = service(subscriptions, MockMemberDirectory::new(), sender, allow_all());
        service.send(&caller(Role::Member), request(None)).await.unwrap().value.unwrap()
    }

    #[tokio::test]
    async fn counts_accepted_gone_and_failed_deliveries_and_deletes_the_gone() {
        let mut subscriptions = MockSubscriptionStore::new();
        subscriptions.expect_delete_expired().returning(|_, _| Ok(2));
        subscriptions.expect_of_user().returning(|_| Ok(vec![stored(1), stored(2), stored(3)]));
        subscriptions.expect_delete_by_id().withf(|id| *id == Uuid::from_u128(2)).times(1).returning(|_| Ok(()));
        let mut sender = configured_sender();
        sender.expect_deliver().returning(|subscription, _| match subscription.endpoint.as_str() {
            "https://push.example/1" => DeliveryResult::Accepted,
            "https://push.example/2" => DeliveryResult::Gone,
            _ => DeliveryResult::Failed("500".into()),
        });
        let summary = sent_to_self(subscriptions, sender).await;
        assert_eq!(summary, SendSummary { success: true, sent: 1, failed: 1, expired: 3 });
    }

    #[tokio::test]
    async fn a_failure_after_sending_is_not_an_error_and_one_before_sends_nothing() {
        // The gone subscription's deletion fails after the pushes went out: the send still
        // succeeds, so nobody retries it into a second push.
        let mut subscriptions = MockSubscriptionStore::new();
        subscriptions.expect_delete_expired().returning(|_, _| Ok(0));
        subscriptions.expect_of_user().returning(|_| Ok(vec![stored(1), stored(2)]));
        subscriptions.expect_delete_by_id().returning(|_| Err(StoreError::Unavailable("failover".into())));
        let mut sender = configured_sender();
        sender.expect_deliver().returning(|subscription, _| match subscription.endpoint.as_str() {
            "https://push.example/1" => DeliveryResult::Accepted,
            _ => DeliveryResult::Gone,
        });
        let summary = sent_to_self(subscriptions, sender).await;
        assert_eq!(summary, SendSummary { success: true, sent: 1, failed: 0, expired: 1 });

        // The second admin's devices cannot be read: the first admin is not sent to either.
        let mut members = MockMemberDirectory::new();
        members.expect_admins().returning(|_| Ok(vec![UserId::new("admin_1"), UserId::new("admin_2")]));
        let mut subscriptions = MockSubscriptionStore::new();
        subscriptions.expect_delete_expired().returning(|_, _| Ok(0));
        subscriptions.expect_of_user().returning(|user| match user.as_str() {
            "admin_1" => Ok(vec![stored(1)]),
            _ => Err(StoreError::Unavailable("failover".into())),
        });
        let mut sender = configured_sender();
        sender.expect_deliver().never();
        let notification = Notification::new("Low rating".into(), String::new(), crate::SafePath::root()).unwrap();
        let error = service(subscriptions, members, sender, allow_all())
            .notify_admins(&opsd_core::TeamId::new("org_1"), &notification)
            .await;
        assert!(error.is_err());
    }

    #[tokio::test]
    async fn targeting_another_user_needs_admin_and_the_same_team() {
        let mut sender = configured_sender();
        sender.expect_deliver().never();
        let service_for = |member: bool| {
            let mut members = MockMemberDirectory::new();
            members.expect_is_member().returning(move |_, _| Ok(member));
            let mut sender = configured_sender();
            sender.expect_deliver().never();
            service(MockSubscriptionStore::new(), members, sender, allow_all())
        };
        let as_member = service_for(true).send(&caller(Role::Member), request(Some("user_2"))).await.unwrap().value;
        assert!(matches!(as_member, Err(PushError::Domain(PushRefusal::ForeignTarget))));
        let outside = service_for(false).send(&caller(Role::Admin), request(Some("user_9"))).await.unwrap().value;
        assert!(matches!(outside, Err(PushError::Domain(PushRefusal::ForeignTarget))));
    }

    #[tokio::test]
    async fn an_exhausted_limit_refuses_before_any_work() {
        let mut limiter = MockRateLimiter::new();
        limiter.expect_hit().returning(|policy, _, _| {
            assert_eq!(policy, SEND_LIMIT);
            Ok(Err(RateLimited { retry_after_seconds: 42, quota: Quota::per_minute(policy, 0, 42) }))
        });
        let mut subscriptions = MockSubscriptionStore::new();
        subscriptions.expect_of_user().never();
        let error = service(subscriptions, MockMemberDirectory::new(), configured_sender(), limiter)
            .send(&caller(Role::Member), request(None))
            .await;
        assert!(matches!(error, Err(PushError::RateLimited(RateLimited { retry_after_seconds: 42, .. }))));
    }

    #[tokio::test]
    async fn without_vapid_keys_sending_is_not_configured() {
        let mut sender = MockPushSender::new();
        sender.expect_is_configured().return_const(false);
        let error = service(MockSubscriptionStore::new(), MockMemberDirectory::new(), sender, MockRateLimiter::new())
            .send(&caller(Role::Member), request(None))
            .await;
        assert!(matches!(error, Err(PushError::Domain(PushRefusal::NotConfigured))));
    }
}
