//! Request ids and request metrics for every route.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use futures::FutureExt;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};
use tracing::Instrument;

static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

fn sane(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// Gives the request its id (the inbound `x-request-id` when it is a sane token, else a new
/// UUID), runs it in a span that carries the id into every log line, and answers the id back.
pub async fn request_id(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| sane(v))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.path());
    async move {
        let started = Instant::now();
        // A panicking handler answers 500 like any unexpected failure, instead of dropping the
        // connection; the panic's message goes to the log only.
        let mut response = match AssertUnwindSafe(next.call(req)).catch_unwind().await {
            Ok(response) => response?.map_into_boxed_body(),
            Err(panic) => {
                let message = panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str));
                tracing::error!(panic = message.unwrap_or("(no message)"), "a handler panicked");
                return Err(crate::errors::ApiError::Internal("a handler panicked".into()).into());
            }
        };
        let status = response.status();
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        if status.is_server_error() {
            tracing::error!(status = status.as_u16(), elapsed_ms, "request finished");
        } else {
            tracing::info!(status = status.as_u16(), elapsed_ms, "request finished");
        }
        response
            .headers_mut()
            .insert(REQUEST_ID.clone(), HeaderValue::from_str(&id).expect("a sane id is a header value"));
        Ok(response)
    }
    .instrument(span)
    .await
}

/// Prometheus metrics of the HTTP surface.
#[derive(Clone)]
pub struct HttpMetrics {
    pub registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
}

impl HttpMetrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let labels = ["method", "route", "status"];
        let requests =
            IntCounterVec::new(Opts::new("http_requests_total", "HTTP requests by route and status"), &labels)
                .expect("a valid counter");
        let latency = HistogramVec::new(
            HistogramOpts::new("http_request_duration_seconds", "HTTP request latency by route and status")
                .buckets(vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
            &labels,
        )
        .expect("a valid histogram");
        registry.register(Box::new(requests.clone())).expect("registered once");
        registry.register(Box::new(latency.clone())).expect("registered once");
        Self { registry, requests, latency }
    }

    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let status = status.to_string();
        let labels = [method, route, status.as_str()];
        self.requests.with_label_values(&labels).inc();
        self.latency.with_label_values(&labels).observe(seconds);
    }
}

impl Default for HttpMetrics {
    fn default() -> Self {
        Self::new()
    }
}

pub async fn record_metrics(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let metrics = req.app_data::<actix_web::web::Data<HttpMetrics>>().cloned();
    let method = req.method().to_string();
    // The route pattern, not the path, so ids do not explode the label space.
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let started = Instant::now();
    let response = next.call(req).await?;
    if let Some(metrics) = metrics {
        metrics.observe(&method, &route, response.status().as_u16(), started.elapsed().as_secs_f64());
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use actix_web::middleware::from_fn;
    use actix_web::{App, test, web};

    use super::*;

    #[actix_web::test]
    async fn a_panicking_handler_answers_a_500_problem() {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(request_id))
                .route("/boom", web::get().to(|| async { if true { panic!("secret detail") } "unreachable" })),
        )
        .await;
        let response = test::try_call_service(&app, test::TestRequest::get().uri("/boom").to_request()).await;
        let error = response.err().expect("the panic becomes an error");
        let response = error.error_response();
        assert_eq!(response.status(), 500);
        let body = actix_web::body::to_bytes(response.into_body()).await.unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.contains(r#""code":"internal""#), "{text}");
        assert!(!text.contains("secret detail"));
    }
}
