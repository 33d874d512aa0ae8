use async_trait::async_trait;
use futures::stream::BoxStream;
use opsd_core::{Caller, StoreError, TeamId, UserId};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::conversation::{ChatMessage, Role};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThreadId(pub Uuid);

/// Why a provider step failed; each maps to the stable suffix of the error part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("the provider refused the credentials")]
    Auth,
    #[error("the context or the output is too long")]
    OutputLimit,
    #[error("the provider is rate limiting")]
    RateLimit,
    #[error("the provider could not be reached")]
    Network,
    #[error("the provider's answer was not understood")]
    InvalidResponse,
    #[error("the provider failed")]
    Unknown,
}

impl ModelError {
    pub fn suffix(&self) -> &'static str {
        match self {
            ModelError::Auth => "provider_auth",
            ModelError::OutputLimit => "output_limit",
            ModelError::RateLimit => "provider_rate_limit",
            ModelError::Network => "provider_network",
            ModelError::InvalidResponse => "invalid_response",
            ModelError::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The model's arguments as it sent them (JSON text).
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ModelMessage {
    System(String),
    User(String),
    Assistant { text: String, tool_calls: Vec<ToolCall> },
    Tool { call_id: String, content: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub messages: Vec<ModelMessage>,
    pub tools: Vec<ToolDefinition>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    TextDelta(String),
    /// A complete tool call (the adapter assembles streamed fragments).
    ToolCall(ToolCall),
    /// The step ended; `length` means the output limit was hit.
    Finished {
        reason: String,
    },
    /// Tokens the provider counted for this step (prompt and completion).
    Usage {
        total_tokens: u64,
    },
}

pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A chat-completions model that streams.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait LanguageModel: Send + Sync {
    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError>;
}

/// Read-only tools, scoped to the caller's team.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait Tools: Send + Sync {
    fn definitions(&self) -> Vec<ToolDefinition>;
    /// The tool's output; an error is a sentence for the model and the client, never internals.
    async fn call(&self, caller: &Caller, name: &str, arguments: Value) -> Result<Value, String>;
}

#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait ThreadStore: Send + Sync {
    async fn create(&self, user: &UserId, team: &TeamId, at: OffsetDateTime) -> Result<ThreadId, StoreError>;
    /// The owner of the thread, or `None` when there is no such thread.
    async fn owner(&self, thread: ThreadId) -> Result<Option<UserId>, StoreError>;
    async fn append(&self, thread: ThreadId, role: Role, content: &str, at: OffsetDateTime) -> Result<(), StoreError>;
    /// The thread's last `limit` stored turns, oldest first.
    async fn recent_turns(&self, thread: ThreadId, limit: usize) -> Result<Vec<ChatMessage>, StoreError>;
}

/// Tokens each team's assistant answers used per UTC day, for the daily budget.
#[cfg_attr(any(test, feature = "mock"), mockall::automock)]
#[async_trait]
pub trait UsageStore: Send + Sync {
    async fn used(&self, team: &TeamId, day: time::Date) -> Result<u64, StoreError>;
    async fn add(&self, team: &TeamId, day: time::Date, tokens: u64) -> Result<(), StoreError>;
}
