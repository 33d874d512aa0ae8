use std::sync::Arc;

use opsd_core::{
    Caller, Clock, LocationId, Page, PageRequest, StoreError, TeamId, TextLength, UserId, ValidationErrors,
};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use crate::ports::{AnnouncementStore, PendingPush, UserPush};

/// How long a claimed push is leased to the instance delivering it.
const PUSH_LEASE: std::time::Duration = std::time::Duration::from_secs(60);
/// How long a delivered push's record is retried when the database is away: well within the
/// lease, so no other instance sends it again meanwhile.
const RECORD_FOR: std::time::Duration = std::time::Duration::from_secs(40);
/// Attempts before a push is given up; the wait after a failure doubles from one minute.
const PUSH_ATTEMPTS: u32 = 5;
/// Pushes claimed at once, and batches in one run.
const PUSH_BATCH: u32 = 100;
const PUSH_BATCHES: usize = 50;

/// An announcement as an admin wrote it, checked by `AnnouncementService::create`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnouncementDraft {
    /// 1 to 200 characters.
    pub title: String,
    /// 1 to 2000 characters.
    pub body: String,
    /// RFC 3339.
    pub publish_at: String,
    pub location_id: Option<LocationId>,
}

impl AnnouncementDraft {
    pub const TITLE: TextLength = TextLength::new(1, 200);
    pub const BODY: TextLength = TextLength::new(1, 2000);
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub id: Uuid,
    pub team_id: TeamId,
    pub title: String,
    pub body: String,
    pub publish_at: OffsetDateTime,
    /// None until the job publishes it.
    pub published_at: Option<OffsetDateTime>,
    pub location_id: Option<LocationId>,
}

pub type AnnouncementError = opsd_core::ServiceError;

/// Where an announcement stands in the list, latest first: its publish time, then id.
pub type AnnouncementKey = (OffsetDateTime, Uuid);

impl Announcement {
    pub fn key(&self) -> AnnouncementKey {
        (self.publish_at, self.id)
    }
}

#[derive(derive_new::new)]
pub struct AnnouncementService {
    store: Arc<dyn AnnouncementStore>,
    push: Arc<dyn UserPush>,
    clock: Arc<dyn Clock>,
}

impl AnnouncementService {
    pub async fn create(
        &self,
        caller: &Caller,
        request: &AnnouncementDraft,
    ) -> Result<Announcement, AnnouncementError> {
        let team = caller.admin_team()?;
        let mut errors = ValidationErrors::new();
        let (title, body) = (request.title.trim(), request.body.trim());
        if !AnnouncementDraft::TITLE.fits(title) {
            errors.push("title", AnnouncementDraft::TITLE.message());
        }
        if !AnnouncementDraft::BODY.fits(body) {
            errors.push("body", AnnouncementDraft::BODY.message());
        }
        let publish_at = OffsetDateTime::parse(&request.publish_at, &Rfc3339).ok();
        if publish_at.is_none() {
            errors.push("publishAt", "must be an RFC 3339 timestamp");
        }
        errors.into_result()?;
        let new = NewAnnouncement {
            team_id: team.clone(),
            location_id: request.location_id,
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

    pub async fn list(
        &self,
        caller: &Caller,
        page: PageRequest<AnnouncementKey>,
    ) -> Result<Page<Announcement>, AnnouncementError> {
        let rows = self.store.list(caller.team_id()?, &page).await?;
        Ok(Page::of(rows, &page, Announcement::key))
    }

    /// Publishes due announcements (each exactly once) and queues a push per team member in the
    /// same transaction, then delivers the queue. Returns (published, devices reached).
    pub async fn publish_due(&self) -> Result<(u32, u32), StoreError> {
        let published = self.store.publish_due(self.clock.now(), 100).await?;
        let reached = self.deliver_pending().await?;
        Ok((published.len() as u32, reached))
    }

    /// Delivers the queued pushes that are due: this run's, those a dead instance left (after
    /// their lease) and failed ones (after their backoff). A delivered push is never sent again; a
    /// failing one is retried up to five attempts. Returns the devices reached.
    pub async fn deliver_pending(&self) -> Result<u32, StoreError> {
        let mut reached = 0;
        for _ in 0..PUSH_BATCHES {
            let batch = self.store.claim_pushes(PUSH_LEASE, PUSH_BATCH).await?;
            if batch.is_empty() {
                break;
            }
            for push in batch {
                reached += self.deliver(push).await?;
            }
        }
        Ok(reached)
    }

    /// A sent push's record: retried while the lease lasts, since a push whose record is lost is
    /// sent again after it.
    async fn record_delivered(&self, push: &PendingPush, devices: u32) -> Result<(), StoreError> {
        let deadline = tokio::time::Instant::now() + RECORD_FOR;
        loop {
            match self.store.push_delivered(push, devices).await {
                Ok(()) => return Ok(()),
                Err(error) if tokio::time::Instant::now() >= deadline => return Err(error),
                Err(error) => {
                    tracing::warn!(announcement = %push.announcement_id, %error, "a sent push is not recorded yet");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            }
        }
    }

    async fn deliver(&self, push: PendingPush) -> Result<u32, StoreError> {
        let url = format!("/announcements/{}", push.announcement_id);
        match self.push.push(&push.user_id, &push.title, &push.body, &url).await {
            Ok(devices) => {
                self.record_delivered(&push, devices).await?;
                Ok(devices)
            }
            Err(error) => {
                let retry_at = (push.attempts < PUSH_ATTEMPTS)
                    .then(|| self.clock.now() + time::Duration::minutes(1) * 2i32.pow(push.attempts.saturating_sub(1)));
                tracing::warn!(announcement = %push.announcement_id, attempts = push.attempts, %error, "pushing an announcement failed");
                self.store.push_failed(&push, retry_at, "push failed").await?;
                Ok(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use opsd_core::MockClock;

    use super::*;
    use crate::ports::{MockAnnouncementStore, MockUserPush};

    const NOW: i64 = 1_795_348_800;

    fn clock() -> Arc<MockClock> {
        Arc::new(MockClock::fixed(OffsetDateTime::from_unix_timestamp(NOW).unwrap()))
    }

    fn pending(user: &str, attempts: u32) -> PendingPush {
        PendingPush {
            announcement_id: Uuid::nil(),
            user_id: UserId::new(user),
            title: "Menu".into(),
            body: "New".into(),
            attempts,
        }
    }

    #[tokio::test]
    async fn queued_pushes_are_delivered_once_and_failures_retried_with_backoff_then_given_up() {
        let mut store = MockAnnouncementStore::new();
        store.expect_publish_due().returning(|_, _| Ok(Vec::new()));
        let mut batches = vec![vec![pending("ok", 1), pending("flaky", 2), pending("hopeless", 5)], Vec::new()];
        store.expect_claim_pushes().times(2).returning(move |_, _| Ok(batches.remove(0)));
        store
            .expect_push_delivered()
            .withf(|push, devices| push.user_id.as_str() == "ok" && *devices == 2)
            .times(1)
            .returning(|_, _| Ok(()));
        let retry = OffsetDateTime::from_unix_timestamp(NOW).unwrap() + time::Duration::minutes(2);
        store
            .expect_push_failed()
            .withf(move |push, retry_at, _| push.user_id.as_str() == "flaky" && *retry_at == Some(retry))
            .times(1)
            .returning(|_, _, _| Ok(()));
        store
            .expect_push_failed()
            .withf(|push, retry_at, _| push.user_id.as_str() == "hopeless" && retry_at.is_none())
            .times(1)
            .returning(|_, _, _| Ok(()));
        let mut push = MockUserPush::new();
        push.expect_push().returning(|user, _, _, url| {
            assert_eq!(url, format!("/announcements/{}", Uuid::nil()));
            if user.as_str() == "ok" { Ok(2) } else { Err(StoreError::Unavailable("down".into())) }
        });
        let service = AnnouncementService::new(Arc::new(store), Arc::new(push), clock());
        assert_eq!(service.publish_due().await.unwrap(), (0, 2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sent_pushs_record_is_retried_while_the_database_is_away_so_it_is_not_sent_again() {
        let mut store = MockAnnouncementStore::new();
        let mut batches = vec![vec![pending("ok", 1)], Vec::new()];
        store.expect_claim_pushes().times(2).returning(move |lease, _| {
            assert_eq!(lease, PUSH_LEASE);
            Ok(batches.remove(0))
        });
        let mut refusals = 3;
        store.expect_push_delivered().times(4).returning(move |_, _| {
            refusals -= 1;
            if refusals >= 0 { Err(StoreError::Unavailable("failover".into())) } else { Ok(()) }
        });
        store.expect_push_failed().never();
        let mut push = MockUserPush::new();
        push.expect_push().times(1).returning(|_, _, _, _| Ok(1));
        let service = AnnouncementService::new(Arc::new(store), Arc::new(push), clock());
        assert_eq!(service.deliver_pending().await.unwrap(), 1);
    }
}
