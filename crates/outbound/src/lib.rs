//! Outbound HTTP adapters (reqwest) for the domain ports.

mod chat_completions;
mod chat;
mod jwks;
mod seven_shifts;
mod web_push;
mod url_policy;

pub use chat_completions::{ChatCompletions, ChatCompletionsConfig};
pub use chat::SlackWebhookChat;
pub use jwks::HttpJwksFetcher;
pub use seven_shifts::{SevenShifts, SevenShiftsConfig};
pub use web_push::{VapidKeyError, VapidKeys, VapidPushSender};
pub use url_policy::{OutboundTargets, is_public_address};
