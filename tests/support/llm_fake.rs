//! What an OpenAI-compatible provider streams: `data:` events of chat completion chunks.

use serde_json::{Value, json};

/// The events as a server-sent event stream, closed by `[DONE]` when `done`.
pub fn sse(events: &[Value], done: bool) -> String {
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    body
}

/// An answer streamed in `parts`, then a `stop`.
pub fn text_events(parts: &[&str]) -> Vec<Value> {
    let mut events: Vec<Value> = parts
        .iter()
        .map(|p| json!({ "choices": [{ "index": 0, "delta": { "content": p }, "finish_reason": null }] }))
        .collect();
    events.push(json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] }));
    events
}
