//! Outbound HTTP adapters (reqwest) for the domain ports.

mod calls;
mod chat;
mod chat_completions;
mod jwks;
mod seven_shifts;
mod url_policy;
mod web_push;

pub use calls::register_metrics;
pub use chat::SlackWebhookChat;
pub use chat_completions::{ChatCompletions, ChatCompletionsConfig};
pub use jwks::HttpJwksFetcher;
pub use seven_shifts::{SevenShifts, SevenShiftsConfig};
pub use url_policy::{OutboundTargets, is_public_address};
pub use web_push::{VapidKeyError, VapidKeys, VapidPushSender};
