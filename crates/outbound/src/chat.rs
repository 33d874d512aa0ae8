use crate::calls::{Target, observed};
use std::time::Duration;

use async_trait::async_trait;
use opsd_core::{OutboundUrlPolicy, TeamChat};

use crate::url_policy::OutboundTargets;

/// A Slack-compatible incoming webhook: `POST {"text": ...}`. The URL is user-supplied, so it is
/// checked again before each call and the client's resolver refuses private addresses.
pub struct SlackWebhookChat {
    client: reqwest::Client,
    targets: OutboundTargets,
}

impl SlackWebhookChat {
    pub fn new(targets: OutboundTargets, timeout: Duration) -> Self {
        Self { client: targets.guarded_client(timeout), targets }
    }
}

#[async_trait]
impl TeamChat for SlackWebhookChat {
    async fn post(&self, webhook_url: &str, text: &str) -> Result<(), String> {
        self.targets.check(webhook_url).await.map_err(|rejected| format!("refused target: {rejected}"))?;
        let request = self.client.post(webhook_url).json(&serde_json::json!({ "text": text }));
        let response = observed(Target::Chat, request)
            .await
            .map_err(|error| if error.is_timeout() { "timeout".to_owned() } else { "connection failed".to_owned() })?;
        if response.status().is_success() { Ok(()) } else { Err(format!("answered {}", response.status().as_u16())) }
    }
}

#[cfg(test)]
mod tests {
    use wiremock::matchers::{body_json, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;

    #[tokio::test]
    async fn posts_text_and_reports_failures_and_timeouts() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/ok"))
            .and(body_json(serde_json::json!({ "text": "hello" })))
            .respond_with(ResponseTemplate::new(200))
            .expect(1)
            .mount(&server)
            .await;
        Mock::given(path("/down")).respond_with(ResponseTemplate::new(500)).mount(&server).await;
        Mock::given(path("/slow"))
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(2)))
            .mount(&server)
            .await;
        let chat = SlackWebhookChat::new(OutboundTargets { allow_loopback: true }, Duration::from_millis(300));
        let counts = || ["2xx", "5xx", "timeout"].map(|outcome| crate::calls::count(Target::Chat, outcome));
        let before = counts();
        assert_eq!(chat.post(&format!("{}/ok", server.uri()), "hello").await, Ok(()));
        assert_eq!(chat.post(&format!("{}/down", server.uri()), "hello").await, Err("answered 500".into()));
        assert_eq!(chat.post(&format!("{}/slow", server.uri()), "hello").await, Err("timeout".into()));
        // Each call counted by its outcome (other tests of this process count chat calls too).
        let after = counts();
        assert!(before.iter().zip(after).all(|(before, after)| after > *before), "{before:?} -> {after:?}");
    }

    #[tokio::test]
    async fn refuses_private_targets_even_if_stored() {
        let chat = SlackWebhookChat::new(OutboundTargets { allow_loopback: false }, Duration::from_millis(300));
        assert!(chat.post("http://127.0.0.1:9/hook", "x").await.unwrap_err().starts_with("refused target"));
        assert!(chat.post("https://10.0.0.1/hook", "x").await.unwrap_err().starts_with("refused target"));
    }
}
