use serde::Serialize;
use serde_json::Value;

/// The chunks of the UI message stream protocol (v1) this service sends: only types every AI SDK
/// client from v5 on accepts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum UiChunk {
    Start {
        #[serde(rename = "messageId")]
        message_id: String,
    },
    StartStep,
    FinishStep,
    TextStart {
        id: String,
    },
    TextDelta {
        id: String,
        delta: String,
    },
    TextEnd {
        id: String,
    },
    ToolInputAvailable {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        input: Value,
        #[serde(rename = "providerExecuted")]
        provider_executed: bool,
    },
    ToolOutputAvailable {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        output: Value,
        #[serde(rename = "providerExecuted")]
        provider_executed: bool,
    },
    ToolOutputError {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "errorText")]
        error_text: String,
        #[serde(rename = "providerExecuted")]
        provider_executed: bool,
    },
    Error {
        #[serde(rename = "errorText")]
        error_text: String,
    },
    Finish {
        #[serde(rename = "finishReason")]
        finish_reason: &'static str,
    },
}

impl UiChunk {
    /// One server-sent event: `data: <json>` and the blank line that ends it.
    pub fn to_sse(&self) -> String {
        format!("data: {}\n\n", serde_json::to_string(self).expect("a chunk serializes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_serialize_as_the_protocol_names_them() {
        assert_eq!(UiChunk::StartStep.to_sse(), "data: {\"type\":\"start-step\"}\n\n");
        let delta = UiChunk::TextDelta { id: "t1".into(), delta: "Hi".into() };
        assert_eq!(
            serde_json::to_value(delta).unwrap(),
            serde_json::json!({ "type": "text-delta", "id": "t1", "delta": "Hi" })
        );
        let tool = UiChunk::ToolInputAvailable {
            tool_call_id: "c1".into(),
            tool_name: "open_incidents".into(),
            input: serde_json::json!({}),
            provider_executed: true,
        };
        assert_eq!(serde_json::to_value(tool).unwrap()["toolCallId"], "c1");
        let finish = UiChunk::Finish { finish_reason: "stop" };
        assert_eq!(
            serde_json::to_value(finish).unwrap(),
            serde_json::json!({ "type": "finish", "finishReason": "stop" })
        );
    }
}
