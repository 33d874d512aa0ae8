//! Logging: an `EnvFilter` (RUST_LOG, default `info`) and JSON lines when `LOG_FORMAT=json`. Every
//! line of a request carries its request id through the request's span.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

pub fn init(default_filter: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|format| format.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_span_events(FmtSpan::NONE);
    let installed = if json {
        builder.json().flatten_event(true).with_current_span(true).with_span_list(false).try_init()
    } else {
        builder.try_init()
    };
    // A second init (tests start several servers in one process) keeps the first subscriber.
    drop(installed);
}

/// Tests stay silent unless `TEST_LOG` is set.
pub fn init_for_tests() {
    if std::env::var_os("TEST_LOG").is_some() {
        init("info");
    }
}
