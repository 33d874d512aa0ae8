//! Announcements and low-rating alerts reach a team's devices through the push service.

use std::sync::Arc;

use async_trait::async_trait;
use opsd_core::{StoreError, UserId};
use opsd_coupons::{AlertNotifier, GuestAlert};
use opsd_nudges::UserPush;
use opsd_push::{Notification, PushError, PushService, SafePath};
use opsd_teams::LocationStore;

/// An announcement's push to one member, delivered from the announcement outbox.
pub struct AnnouncementPush {
    pub push: Arc<PushService>,
}

#[async_trait]
impl UserPush for AnnouncementPush {
    async fn push(&self, user: &UserId, title: &str, body: &str, url: &str) -> Result<u32, StoreError> {
        let url = SafePath::parse("url", url).unwrap_or_else(|_| SafePath::root());
        // Announcements hold at most 200 + 2000 characters; the cut keeps any within 3 KiB.
        let Ok(notification) =
            Notification::new(title.chars().take(200).collect(), body.chars().take(900).collect(), url)
        else {
            return Ok(0);
        };
        match self.push.notify_user(user, &notification).await {
            Ok(summary) => Ok(summary.sent),
            // Without VAPID keys an announcement is still published; it just reaches no device.
            Err(PushError::Domain(opsd_push::PushRefusal::NotConfigured)) => Ok(0),
            Err(PushError::Store(error)) => Err(error),
            Err(other) => Err(StoreError::Unknown(other.to_string())),
        }
    }
}

/// Low guest ratings reach the team's admins by web push, naming the location and the rating only:
/// never the guest, the comment or a link with a token. Members, and the team chat, get nothing.
pub struct PushAlertNotifier {
    pub push: Arc<PushService>,
    pub locations: Arc<dyn LocationStore>,
}

#[async_trait]
impl AlertNotifier for PushAlertNotifier {
    async fn low_rating(&self, alert: &GuestAlert) -> Result<(), String> {
        let location = self.locations.find(&alert.team_id, alert.location_id).await.map_err(|e| e.to_string())?;
        let place = location.map_or_else(|| "one of your locations".to_owned(), |l| l.name);
        let body =
            format!("A guest rated their visit {}/5 at {place}. Review the feedback and follow up.", alert.rating);
        let notification =
            Notification::new("Low guest rating".into(), body, SafePath::root()).map_err(|e| e.to_string())?;
        let summary = self.push.notify_admins(&alert.team_id, &notification).await.map_err(|e| e.to_string())?;
        if summary.sent == 0 {
            return Err("no admin device accepted the alert".into());
        }
        Ok(())
    }
}
