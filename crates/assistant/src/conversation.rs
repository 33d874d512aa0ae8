//! What a chat request asks: the messages so far and, optionally, the thread they continue.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

/// A checked chat request: 1 to 100 messages of 1 to 20,000 characters each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub messages: Vec<ChatMessage>,
    /// The caller's thread it continues.
    pub thread: Option<uuid::Uuid>,
}
