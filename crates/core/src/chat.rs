use async_trait::async_trait;

/// Posts a message to a team's chat through its incoming-webhook URL.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait TeamChat: Send + Sync {
    /// Errors are the provider's outcome in a few words, for counting and the log.
    async fn post(&self, webhook_url: &str, text: &str) -> Result<(), String>;
}
