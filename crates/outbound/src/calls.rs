//! Every outbound call: a span of its own (a client span of the caller's trace, whose W3C
//! `traceparent` it carries to the third party), and counted by target and outcome for `/metrics`
//! (the counter is registered once by the binary, [`register_metrics`]; calls made before that
//! are counted all the same).

use std::sync::LazyLock;

use tracing::Instrument;

use prometheus::{IntCounterVec, Opts, Registry};

static CALLS: LazyLock<IntCounterVec> = LazyLock::new(|| {
    IntCounterVec::new(
        Opts::new(
            "opsd_outbound_calls_total",
            "Calls to third parties by target and outcome (2xx, 4xx, 5xx, timeout, error)",
        ),
        &["target", "outcome"],
    )
    .expect("a valid counter")
});

/// Who a call goes to: a bounded set, never a URL.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Chat,
    LanguageModel,
    Jwks,
    SevenShifts,
    Push,
}

impl Target {
    fn label(self) -> &'static str {
        match self {
            Target::Chat => "chat",
            Target::LanguageModel => "llm",
            Target::Jwks => "jwks",
            Target::SevenShifts => "7shifts",
            Target::Push => "push",
        }
    }
}

const TARGETS: [Target; 5] = [Target::Chat, Target::LanguageModel, Target::Jwks, Target::SevenShifts, Target::Push];
const OUTCOMES: [&str; 5] = ["2xx", "4xx", "5xx", "timeout", "error"];

/// Registers the counter with every series at zero, so a rate over it is defined from the start.
pub fn register_metrics(registry: &Registry) -> prometheus::Result<()> {
    for target in TARGETS {
        for outcome in OUTCOMES {
            CALLS.with_label_values(&[target.label(), outcome]).inc_by(0);
        }
    }
    registry.register(Box::new(CALLS.clone()))
}

/// Sends, in its span and with its trace's `traceparent`, and counts the call by what came back.
pub(crate) async fn observed(target: Target, request: reqwest::RequestBuilder) -> reqwest::Result<reqwest::Response> {
    let span = tracing::info_span!(
        "outbound call",
        otel.name = %format!("call {}", target.label()),
        otel.kind = "client",
        target = target.label(),
        http.response.status_code = tracing::field::Empty,
    );
    let request = request.headers(trace_headers(&span));
    let answer = request.send().instrument(span.clone()).await;
    if let Ok(response) = &answer {
        span.record("http.response.status_code", response.status().as_u16());
    }
    let outcome = match &answer {
        Ok(response) if response.status().is_success() => "2xx",
        Ok(response) if response.status().is_client_error() => "4xx",
        Ok(_) => "5xx",
        Err(error) if error.is_timeout() => "timeout",
        Err(_) => "error",
    };
    record(target, outcome);
    answer
}

/// `traceparent` (and `tracestate`) naming `span`; nothing when traces are not exported.
fn trace_headers(span: &tracing::Span) -> reqwest::header::HeaderMap {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let mut headers = reqwest::header::HeaderMap::new();
    let context = span.context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut opentelemetry_http::HeaderInjector(&mut headers));
    });
    headers
}

/// Counts a call whose outcome was decided without its answer (a deadline of the caller's own).
pub(crate) fn record(target: Target, outcome: &'static str) {
    CALLS.with_label_values(&[target.label(), outcome]).inc();
}

#[cfg(test)]
pub(crate) fn count(target: Target, outcome: &str) -> u64 {
    CALLS.with_label_values(&[target.label(), outcome]).get()
}
