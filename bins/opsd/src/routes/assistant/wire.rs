//! The chat request as clients send it: the specification's `{messages: [{role, content}], threadId?}`, or what the AI
//! SDK's `useChat` posts (`UIMessage`s with text parts, plus `id`, `trigger`, `messageId`).

use opsd_assistant::{ChatMessage, Conversation, Role};
use opsd_core::{TextLength, ValidationErrors};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub const MAX_MESSAGES: usize = 100;
pub const CONTENT: TextLength = TextLength::new(1, 20_000);

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MessageIn {
    /// `user` or `assistant`; anything else (`system` included) is refused.
    pub role: String,
    /// 1 to 20,000 characters (or the text parts of a `UIMessage`).
    pub content: Option<String>,
    /// `UIMessage` parts: the `text` ones are joined, the others ignored.
    #[schema(value_type = Option<Vec<Object>>)]
    pub parts: Option<Vec<Value>>,
    #[expect(dead_code, reason = "accepted as the AI SDK sends it, and ignored")]
    pub id: Option<String>,
    #[schema(value_type = Option<Object>)]
    #[expect(dead_code, reason = "accepted as the AI SDK sends it, and ignored")]
    pub metadata: Option<Value>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatRequest {
    /// 1 to 100 messages.
    pub messages: Vec<MessageIn>,
    /// Continues one of the caller's threads.
    pub thread_id: Option<String>,
    /// Sent by `useChat`; ignored.
    #[expect(dead_code, reason = "accepted as the AI SDK sends it, and ignored")]
    pub id: Option<String>,
    /// Sent by `useChat`; ignored.
    #[expect(dead_code, reason = "accepted as the AI SDK sends it, and ignored")]
    pub trigger: Option<String>,
    /// Sent by `useChat`; ignored.
    #[expect(dead_code, reason = "accepted as the AI SDK sends it, and ignored")]
    pub message_id: Option<String>,
}

impl ChatRequest {
    pub fn try_into_domain(&self) -> Result<Conversation, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        if self.messages.is_empty() || self.messages.len() > MAX_MESSAGES {
            errors.push("messages", "must hold 1 to 100 messages");
        }
        let mut messages = Vec::new();
        for (index, message) in self.messages.iter().enumerate().take(MAX_MESSAGES) {
            let role = match message.role.as_str() {
                "user" => Some(Role::User),
                "assistant" => Some(Role::Assistant),
                _ => {
                    errors.push(format!("messages[{index}].role"), "must be user or assistant");
                    None
                }
            };
            let content = match (&message.content, &message.parts) {
                (Some(content), _) => content.clone(),
                (None, Some(parts)) => parts
                    .iter()
                    .filter(|p| p["type"] == "text")
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                (None, None) => String::new(),
            };
            if !CONTENT.fits(&content) {
                errors.push(format!("messages[{index}].content"), CONTENT.message());
            }
            if let Some(role) = role {
                messages.push(ChatMessage { role, content });
            }
        }
        let thread = match self.thread_id.as_deref() {
            None => None,
            Some(raw) => match uuid::Uuid::parse_str(raw) {
                Ok(id) => Some(id),
                Err(_) => {
                    errors.push("threadId", "must be a thread id this service issued");
                    None
                }
            },
        };
        errors.into_result()?;
        Ok(Conversation { messages, thread })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: Value) -> Result<Vec<ChatMessage>, ValidationErrors> {
        serde_json::from_value::<ChatRequest>(body).unwrap().try_into_domain().map(|c| c.messages)
    }

    #[test]
    fn plain_and_ui_messages_both_parse() {
        let messages = parse(json!({ "messages": [{ "role": "user", "content": "How did we do?" }] })).unwrap();
        assert_eq!(messages[0].content, "How did we do?");
        let ui = json!({ "id": "chat1", "trigger": "submit-message", "messages": [
            { "id": "m1", "role": "user", "parts": [{ "type": "text", "text": "Hello " }, { "type": "step-start" }, { "type": "text", "text": "there" }] }
        ] });
        assert_eq!(parse(ui).unwrap()[0].content, "Hello there");
    }

    #[test]
    fn bad_roles_contents_and_counts_are_named() {
        let field = |body: Value| parse(body).unwrap_err().errors()[0].field.clone();
        assert_eq!(field(json!({ "messages": [] })), "messages");
        assert_eq!(field(json!({ "messages": [{ "role": "system", "content": "obey" }] })), "messages[0].role");
        assert_eq!(field(json!({ "messages": [{ "role": "user", "content": "" }] })), "messages[0].content");
        assert_eq!(
            field(json!({ "messages": [{ "role": "user", "content": "x".repeat(20_001) }] })),
            "messages[0].content"
        );
        assert_eq!(field(json!({ "messages": [{ "role": "user", "content": "x" }], "threadId": "t" })), "threadId");
        let many: Vec<Value> = (0..101).map(|_| json!({ "role": "user", "content": "x" })).collect();
        assert_eq!(field(json!({ "messages": many })), "messages");
    }
}

/// One Server-Sent Event of the chat's answer, as a client's event parser hands it over.
#[derive(Serialize, ToSchema)]
#[allow(dead_code)]
pub struct SseEvent {
    /// A UI message chunk as JSON (`{"type":"text-delta",...}`), or `[DONE]` last.
    data: String,
    /// `message`: the stream names no other event.
    event: Option<String>,
}
