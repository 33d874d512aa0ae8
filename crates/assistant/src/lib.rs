//! The assistant chat: a language model that may call read-only, team-scoped tools, answering in
//! the AI SDK's UI message stream protocol.

mod chunks;
mod conversation;
mod ports;
mod service;

pub use chunks::UiChunk;
pub use conversation::{ChatMessage, Conversation, Role};
pub use ports::{
    LanguageModel, ModelError, ModelEvent, ModelMessage, ModelRequest, ModelStream, ThreadId, ThreadStore, ToolCall,
    ToolDefinition, Tools, UsageStore,
};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockLanguageModel, MockThreadStore, MockTools, MockUsageStore};
pub use service::{
    AssistantLimits, AssistantPorts, AssistantService, ChatError, MAX_STEPS, REPLAYED_CHARS, REPLAYED_TURNS,
};
