//! An OpenAI-compatible streaming chat-completions endpoint behind the language-model port.
//! Provider errors are classified by status and shape only; their text never leaves this adapter.

use crate::calls::{Target, observed, record};
use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use opsd_assistant::{LanguageModel, ModelError, ModelEvent, ModelMessage, ModelRequest, ModelStream, ToolCall};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct ChatCompletionsConfig {
    /// Includes the version, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub api_key: SecretString,
    pub model: String,
    pub connect_timeout: Duration,
    /// The longest wait for the provider's answer to start or for its next event
    /// (`ASSISTANT_TIMEOUT_MS`); past it the answer ends with the `[provider_network]` part.
    pub idle_timeout: Duration,
}

pub struct ChatCompletions {
    config: ChatCompletionsConfig,
    client: reqwest::Client,
}

impl ChatCompletions {
    pub fn new(config: ChatCompletionsConfig) -> Self {
        let client =
            reqwest::Client::builder().connect_timeout(config.connect_timeout).build().expect("a reqwest client");
        Self { config, client }
    }
}

fn message_json(message: &ModelMessage) -> Value {
    match message {
        ModelMessage::System(text) => json!({ "role": "system", "content": text }),
        ModelMessage::User(text) => json!({ "role": "user", "content": text }),
        ModelMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": text })
        }
        ModelMessage::Assistant { text, tool_calls } => json!({
            "role": "assistant",
            "content": if text.is_empty() { Value::Null } else { json!(text) },
            "tool_calls": tool_calls.iter().map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } })).collect::<Vec<_>>(),
        }),
        ModelMessage::Tool { call_id, content } => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
    }
}

/// Classifies a refused request by its status and the shape of its body.
fn classify(status: u16, body: &str) -> ModelError {
    let too_long =
        ["context_length", "maximum context", "too long", "max_tokens"].iter().any(|hint| body.contains(hint));
    match status {
        401 | 403 => ModelError::Auth,
        429 => ModelError::RateLimit,
        400 | 413 | 422 if too_long => ModelError::OutputLimit,
        500..=599 => ModelError::Network,
        _ => ModelError::Unknown,
    }
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[async_trait]
impl LanguageModel for ChatCompletions {
    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let body = json!({
            "model": self.config.model,
            "stream": true,
            // The last chunk then counts the tokens, for the teams' daily budgets.
            "stream_options": { "include_usage": true },
            "messages": request.messages.iter().map(message_json).collect::<Vec<_>>(),
            "tools": request.tools.iter().map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } })).collect::<Vec<_>>(),
        });
        let url = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        let idle = self.config.idle_timeout;
        let request = self.client.post(url).bearer_auth(self.config.api_key.expose_secret()).json(&body);
        let response = match tokio::time::timeout(idle, observed(Target::LanguageModel, request)).await {
            Ok(Ok(response)) => response,
            Ok(Err(_)) => return Err(ModelError::Network),
            Err(_) => {
                record(Target::LanguageModel, "timeout");
                tracing::warn!(timeout_ms = idle.as_millis() as u64, "the language model did not answer in time");
                return Err(ModelError::Network);
            }
        };
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let text = response.text().await.unwrap_or_default();
            tracing::warn!(status, "the language model refused the request");
            return Err(classify(status, &text));
        }
        // Events are parsed over bytes, so a character split across network chunks stays whole.
        let mut events = response.bytes_stream().eventsource();
        Ok(async_stream::stream! {
            let mut calls: BTreeMap<u64, PartialCall> = BTreeMap::new();
            let mut finished = false;
            loop {
                let event = match tokio::time::timeout(idle, events.next()).await {
                    Ok(Some(Ok(event))) => event,
                    Ok(None) => {
                        if !finished {
                            yield Err(ModelError::Network);
                        }
                        return;
                    }
                    Ok(Some(Err(_))) => {
                        yield Err(ModelError::Network);
                        return;
                    }
                    Err(_) => {
                        tracing::warn!(timeout_ms = idle.as_millis() as u64, "the language model's stream stalled");
                        yield Err(ModelError::Network);
                        return;
                    }
                };
                let data = event.data.trim();
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" {
                    if !finished {
                        yield Err(ModelError::InvalidResponse);
                    }
                    return;
                }
                let Ok(value) = serde_json::from_str::<Value>(data) else {
                    yield Err(ModelError::InvalidResponse);
                    return;
                };
                if value.get("error").is_some() {
                    yield Err(ModelError::Unknown);
                    return;
                }
                if let Some(total_tokens) = value["usage"]["total_tokens"].as_u64() {
                    yield Ok(ModelEvent::Usage { total_tokens });
                }
                let Some(choice) = value["choices"].get(0) else { continue };
                if let Some(text) = choice["delta"]["content"].as_str().filter(|t| !t.is_empty()) {
                    yield Ok(ModelEvent::TextDelta(text.to_owned()));
                }
                for fragment in choice["delta"]["tool_calls"].as_array().into_iter().flatten() {
                    let call = calls.entry(fragment["index"].as_u64().unwrap_or(0)).or_default();
                    if let Some(id) = fragment["id"].as_str() {
                        call.id = id.to_owned();
                    }
                    if let Some(name) = fragment["function"]["name"].as_str() {
                        call.name.push_str(name);
                    }
                    if let Some(arguments) = fragment["function"]["arguments"].as_str() {
                        call.arguments.push_str(arguments);
                    }
                }
                if let Some(reason) = choice["finish_reason"].as_str() {
                    for (_, call) in std::mem::take(&mut calls) {
                        yield Ok(ModelEvent::ToolCall(ToolCall { id: call.id, name: call.name, arguments: call.arguments }));
                    }
                    finished = true;
                    yield Ok(ModelEvent::Finished { reason: reason.to_owned() });
                }
            }
        }
        .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_classified_without_their_text() {
        assert_eq!(classify(401, "bad key sk-123"), ModelError::Auth);
        assert_eq!(classify(429, ""), ModelError::RateLimit);
        assert_eq!(classify(400, r#"{"error":{"code":"context_length_exceeded"}}"#), ModelError::OutputLimit);
        assert_eq!(classify(400, r#"{"error":{"code":"invalid_value"}}"#), ModelError::Unknown);
        assert_eq!(classify(503, ""), ModelError::Network);
    }

    /// A provider on loopback that answers the headers, then writes `parts` with a pause between
    /// them, then holds the connection open without a word.
    async fn provider(parts: Vec<Vec<u8>>, pause: Duration) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = vec![0u8; 65536];
            let _ = socket.read(&mut request).await;
            socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n").await.unwrap();
            for part in parts {
                socket.write_all(&part).await.unwrap();
                socket.flush().await.unwrap();
                tokio::time::sleep(pause).await;
            }
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        format!("http://{address}/v1")
    }

    fn model(base_url: String, idle: Duration) -> ChatCompletions {
        ChatCompletions::new(ChatCompletionsConfig {
            base_url,
            api_key: SecretString::from("k"),
            model: "m".into(),
            connect_timeout: Duration::from_secs(1),
            idle_timeout: idle,
        })
    }

    fn request() -> ModelRequest {
        ModelRequest { messages: vec![ModelMessage::User("hi".into())], tools: Vec::new() }
    }

    #[tokio::test]
    async fn a_stalled_stream_ends_with_a_network_error_after_the_idle_timeout() {
        let first = br#"data: {"choices":[{"index":0,"delta":{"content":"Hal"},"finish_reason":null}]}"#.to_vec();
        let base = provider(vec![[first, b"\n\n".to_vec()].concat()], Duration::ZERO).await;
        let started = std::time::Instant::now();
        let events: Vec<_> = model(base, Duration::from_millis(300)).stream(request()).await.unwrap().collect().await;
        assert_eq!(events, [Ok(ModelEvent::TextDelta("Hal".into())), Err(ModelError::Network)]);
        assert!(started.elapsed() < Duration::from_secs(3), "bounded by the idle timeout, not the provider");
    }

    #[tokio::test]
    async fn a_character_split_across_writes_stays_whole() {
        let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\u{e9} \u{1F35F}\"},\"finish_reason\":\"stop\"}]}\n\n".as_bytes().to_vec();
        // Cut inside the two-byte é and inside the four-byte emoji.
        let e_at = event.windows(2).position(|w| w == [0xC3, 0xA9]).unwrap() + 1;
        let fries_at = event.windows(1).position(|w| w[0] == 0xF0).unwrap() + 2;
        let parts = vec![
            event[..e_at].to_vec(),
            event[e_at..fries_at].to_vec(),
            event[fries_at..].to_vec(),
            b"data: [DONE]\n\n".to_vec(),
        ];
        let base = provider(parts, Duration::from_millis(50)).await;
        let events: Vec<_> = model(base, Duration::from_secs(5)).stream(request()).await.unwrap().collect().await;
        assert_eq!(events[0], Ok(ModelEvent::TextDelta("caf\u{e9} \u{1F35F}".into())));
        assert_eq!(events[1], Ok(ModelEvent::Finished { reason: "stop".into() }));
    }

    #[tokio::test]
    async fn a_provider_that_never_answers_is_a_network_error_after_the_idle_timeout() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (_socket, _) = listener.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let answer = model(base, Duration::from_millis(300)).stream(request()).await;
        assert!(matches!(answer, Err(ModelError::Network)));
    }
}
