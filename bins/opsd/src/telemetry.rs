//! Logging and traces. Logs: an `EnvFilter` (RUST_LOG, default `info`) and JSON lines when
//! `LOG_FORMAT=json`; every line of a request carries its request id through the request's span,
//! and its trace and span ids when traces are exported. Traces: OpenTelemetry over OTLP
//! (HTTP/protobuf), configured by the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`,
//! `OTEL_BSP_*`, ...); without an endpoint (or with `OTEL_SDK_DISABLED=true`) nothing is set up
//! and nothing is paid for.

use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

static TRACING: OnceLock<bool> = OnceLock::new();

/// Whether spans are exported (set once, by [`init`]).
pub fn traces_exported() -> bool {
    TRACING.get().copied().unwrap_or(false)
}

/// Flushes the spans still buffered when it is dropped (the process ends).
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Sends every finished span now.
    pub fn flush(&self) {
        if let Some(provider) = &self.provider
            && let Err(error) = provider.force_flush()
        {
            tracing::warn!(%error, "spans could not be exported");
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

pub fn init(default_filter: &str) -> Telemetry {
    let provider = match trace_provider() {
        Ok(provider) => provider,
        Err(error) => {
            eprintln!("traces are not exported: {error}");
            None
        }
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|format| format.eq_ignore_ascii_case("json"));
    let format = tracing_subscriber::fmt::layer().with_span_events(FmtSpan::NONE);
    let format = if json {
        format.json().flatten_event(true).with_current_span(true).with_span_list(false).boxed()
    } else {
        format.boxed()
    };
    let traces = provider.as_ref().map(|provider| tracing_opentelemetry::layer().with_tracer(provider.tracer("opsd")));
    // A second init (tests start several servers in one process) keeps the first subscriber.
    if tracing_subscriber::registry().with(filter).with(format).with(traces).try_init().is_ok() {
        let _ = TRACING.set(provider.is_some());
    }
    Telemetry { provider }
}

fn trace_provider() -> Result<Option<SdkTracerProvider>, opentelemetry_otlp::ExporterBuildError> {
    let set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|value| value.eq_ignore_ascii_case("true"));
    if disabled || !(set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
        return Ok(None);
    }
    // The exporter reads the endpoint, headers and timeout from the environment itself.
    let exporter =
        opentelemetry_otlp::SpanExporter::builder().with_http().with_protocol(Protocol::HttpBinary).build()?;
    let mut resource = Resource::builder();
    if !set("OTEL_SERVICE_NAME") {
        resource = resource.with_service_name("opsd");
    }
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.build()).build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opsd_postgres::trace_statements();
    opentelemetry::global::set_tracer_provider(provider.clone());
    Ok(Some(provider))
}

/// Tests stay silent unless `TEST_LOG` is set.
pub fn init_for_tests() {
    if std::env::var_os("TEST_LOG").is_some() {
        std::mem::forget(init("info"));
    }
}
