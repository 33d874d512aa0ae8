//! The assistant chat, streamed in the AI SDK's UI message stream protocol.

mod wire;

pub use wire::{CONTENT, MAX_MESSAGES};

use actix_web::web::Bytes;
use actix_web::{HttpResponse, web};
use futures::StreamExt;

use crate::errors::ApiError;
use crate::extract::{BearerCaller, JsonBody};
use crate::middleware::counted;
use crate::state::AppState;

pub use wire::{ChatRequest, MessageIn, SseEvent};

/// Streams the assistant's answer as Server-Sent Events (`x-vercel-ai-ui-message-stream: v1`):
/// `data: {chunk}` events closed by `data: [DONE]`. A failed provider or tool step is an `error`
/// chunk whose `errorText` ends in a stable suffix (`[provider_auth]`, `[output_limit]`,
/// `[provider_rate_limit]`, `[provider_network]`, `[invalid_response]`, `[unknown]`); it never
/// turns into an HTTP error status. `x-thread-id` names the conversation for `threadId`.
#[utoipa::path(post, path = "/api/assistant/chat", tags = ["assistant"], request_body = ChatRequest,
    security(("bearer" = [])),
    responses((status = 200, description = "a text/event-stream of UI message chunks", content_type = "text/event-stream", body = SseEvent,
        headers(("x-thread-id" = String, description = "the conversation's id"), ("x-vercel-ai-ui-message-stream" = String, description = "v1"),
            ("RateLimit-Policy" = String, description = "draft-ietf-httpapi-ratelimit-headers: `\"assistant\";q=<calls>;w=60`"),
            ("RateLimit" = String, description = "`\"assistant\";r=<calls left>;t=<seconds until the whole quota is back>`")))))]
pub async fn chat(
    req: actix_web::HttpRequest,
    state: web::Data<AppState>,
    BearerCaller(caller): BearerCaller,
    JsonBody(body): JsonBody<ChatRequest>,
) -> Result<HttpResponse, ApiError> {
    let (thread, chunks) = counted(&req, state.assistant.chat(&caller, body.try_into_domain()).await?)?;
    // The answer is made as the body streams, after this handler has returned: in the request's
    // span, so the provider's call (and its `traceparent`) belongs to the request's trace.
    let events = tracing_futures::Instrument::instrument(
        chunks
            .map(|chunk| Ok::<_, actix_web::Error>(Bytes::from(chunk.to_sse())))
            .chain(futures::stream::once(async { Ok(Bytes::from_static(b"data: [DONE]\n\n")) })),
        tracing::Span::current(),
    );
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-vercel-ai-ui-message-stream", "v1"))
        .insert_header(("x-accel-buffering", "no"))
        .insert_header(("x-thread-id", thread.0.to_string()))
        .streaming(events))
}
