use std::sync::Arc;

use async_trait::async_trait;
use opsd_core::TeamChat;
use opsd_coupons::{AlertNotifier, GuestAlert};
use opsd_teams::{LocationStore, TeamSettingsStore};

/// Tells a team about a low guest rating in its chat, naming the location and the rating only:
/// never the guest, the comment or any link with a token.
pub struct ChatAlertNotifier {
    chat: Arc<dyn TeamChat>,
    settings: Arc<dyn TeamSettingsStore>,
    locations: Arc<dyn LocationStore>,
}

impl ChatAlertNotifier {
    pub fn new(chat: Arc<dyn TeamChat>, settings: Arc<dyn TeamSettingsStore>, locations: Arc<dyn LocationStore>) -> Self {
        Self { chat, settings, locations }
    }
}

#[async_trait]
impl AlertNotifier for ChatAlertNotifier {
    async fn low_rating(&self, alert: &GuestAlert) -> Result<(), String> {
        let url = self.settings.chat_webhook_url(&alert.team_id).await.map_err(|e| e.to_string())?;
        let Some(url) = url else { return Err("the team has no chat webhook".into()) };
        let location = self.locations.find(&alert.team_id, alert.location_id).await.map_err(|e| e.to_string())?;
        let place = location.map_or_else(|| "one of your locations".to_owned(), |l| l.name);
        let text = format!(
            "Managers: a guest rated their visit {}/5 at {place}. Please review the feedback in the app and follow up.",
            alert.rating
        );
        self.chat.post(&url, &text).await
    }
}
