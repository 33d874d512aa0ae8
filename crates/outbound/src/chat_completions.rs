//! An OpenAI-compatible streaming chat-completions endpoint behind the language-model port.
//! Provider errors are classified by status and shape only; their text never leaves this adapter.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use opsd_assistant::{LanguageModel, ModelError, ModelEvent, ModelMessage, ModelRequest, ModelStream, ToolCall};
use serde_json::{Value, json};

#[derive(Debug, Clone)]
pub struct ChatCompletionsConfig {
    /// Includes the version, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended.
    pub base_url: String,
    pub api_key: String,
    pub model: String,
    pub connect_timeout: Duration,
}

pub struct ChatCompletions {
    config: ChatCompletionsConfig,
    client: reqwest::Client,
}

impl ChatCompletions {
    pub fn new(config: ChatCompletionsConfig) -> Self {
        let client = reqwest::Client::builder().connect_timeout(config.connect_timeout).build().expect("a reqwest client");
        Self { config, client }
    }
}

fn message_json(message: &ModelMessage) -> Value {
    match message {
        ModelMessage::System(text) => json!({ "role": "system", "content": text }),
        ModelMessage::User(text) => json!({ "role": "user", "content": text }),
        ModelMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => json!({ "role": "assistant", "content": text }),
        ModelMessage::Assistant { text, tool_calls } => json!({
            "role": "assistant",
            "content": if text.is_empty() { Value::Null } else { json!(text) },
            "tool_calls": tool_calls.iter().map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } })).collect::<Vec<_>>(),
        }),
        ModelMessage::Tool { call_id, content } => json!({ "role": "tool", "tool_call_id": call_id, "content": content }),
    }
}

/// Classifies a refused request by its status and the shape of its body.
fn classify(status: u16, body: &str) -> ModelError {
    let too_long = ["context_length", "maximum context", "too long", "max_tokens"].iter().any(|hint| body.contains(hint));
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
            "messages": request.messages.iter().map(message_json).collect::<Vec<_>>(),
            "tools": request.tools.iter().map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } })).collect::<Vec<_>>(),
        });
        let url = format!("{}/chat/completions", self.config.base_url.trim_end_matches('/'));
        let response = self
            .client
            .post(url)
            .bearer_auth(&self.config.api_key)
            .json(&body)
            .send()
            .await
            .map_err(|_| ModelError::Network)?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let text = response.text().await.unwrap_or_default();
            tracing::warn!(status, "the language model refused the request");
            return Err(classify(status, &text));
        }
        let mut bytes = response.bytes_stream();
        Ok(async_stream::stream! {
            let mut buffer = String::new();
            let mut calls: BTreeMap<u64, PartialCall> = BTreeMap::new();
            let mut finished = false;
            loop {
                let Some(chunk) = bytes.next().await else {
                    if !finished {
                        yield Err(ModelError::Network);
                    }
                    return;
                };
                let Ok(chunk) = chunk else {
                    yield Err(ModelError::Network);
                    return;
                };
                buffer.push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
                while let Some(end) = buffer.find("\n\n") {
                    let event: String = buffer.drain(..end + 2).collect();
                    for line in event.lines() {
                        let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
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
}
