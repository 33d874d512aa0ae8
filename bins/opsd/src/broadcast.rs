//! Announcements reach a team's devices through the push service.

use std::sync::Arc;

use async_trait::async_trait;
use opsd_core::{StoreError, TeamId};
use opsd_nudges::TeamBroadcast;
use opsd_push::{Notification, PushError, PushService, SafePath};

pub struct PushBroadcast {
    pub push: Arc<PushService>,
}

#[async_trait]
impl TeamBroadcast for PushBroadcast {
    async fn push_to_team(&self, team: &TeamId, title: &str, body: &str, url: &str) -> Result<u32, StoreError> {
        let url = SafePath::parse("url", url).unwrap_or_else(|_| SafePath::root());
        let Ok(notification) = Notification::new(title.chars().take(200).collect(), body.chars().take(1000).collect(), url) else {
            return Ok(0);
        };
        match self.push.broadcast(team, &notification).await {
            Ok(summary) => Ok(summary.sent),
            // Without VAPID keys an announcement is still published; it just reaches no device.
            Err(PushError::NotConfigured) => Ok(0),
            Err(PushError::Store(error)) => Err(error),
            Err(other) => Err(StoreError::Unknown(other.to_string())),
        }
    }
}
