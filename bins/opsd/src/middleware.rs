//! Request ids and request metrics for every route.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use actix_web::App;
use actix_web::HttpMessage;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::{Next, from_fn};
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
    let span = tracing::info_span!(
        "request",
        // By its method and route pattern, when exported (a span's name cannot change once it has
        // children, and routing comes after this).
        otel.name = tracing::field::Empty,
        otel.kind = "server",
        request_id = %id,
        method = %req.method(),
        path = %req.path(),
        trace_id = tracing::field::Empty,
        span_id = tracing::field::Empty,
    );
    if crate::telemetry::traces_exported() {
        if let Some(metrics) = req.app_data::<actix_web::web::Data<HttpMetrics>>() {
            span.record("otel.name", format!("{} {}", req.method(), metrics.pattern_of(req.path())));
        }
        continue_trace(&span, req.headers());
    }
    async move {
        let started = Instant::now();
        let header = HeaderValue::from_str(&id).expect("a sane id is a header value");
        let mut response = match next.call(req).await {
            Ok(response) => response.map_into_boxed_body(),
            Err(error) => {
                tracing::error!(status = error.as_response_error().status_code().as_u16(), "request failed");
                return Err(Tagged { error, id: header }.into());
            }
        };
        let status = response.status();
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        if status.is_server_error() {
            tracing::error!(status = status.as_u16(), elapsed_ms, "request finished");
        } else {
            tracing::info!(status = status.as_u16(), elapsed_ms, "request finished");
        }
        response.headers_mut().insert(REQUEST_ID.clone(), header);
        Ok(response)
    }
    .instrument(span)
    .await
}

/// Makes `span` a child of the caller's W3C `traceparent`, when it sent one, and writes its ids
/// into the span's fields, so that every log line of the request names them.
fn continue_trace(span: &tracing::Span, headers: &actix_web::http::header::HeaderMap) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    struct Headers<'a>(&'a actix_web::http::header::HeaderMap);
    impl opentelemetry::propagation::Extractor for Headers<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(|value| value.to_str().ok())
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(|name| name.as_str()).collect()
        }
    }
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&Headers(headers)));
    let _ = span.set_parent(parent);
    let context = span.context();
    let own = context.span().span_context().clone();
    if own.is_valid() {
        span.record("trace_id", tracing::field::display(own.trace_id()));
        span.record("span_id", tracing::field::display(own.span_id()));
    }
}

/// Every layer an answer passes through, innermost first: panics caught, `Idempotency-Key`
/// answers kept and replayed, security headers, metrics, the request id.
pub fn layered<T>(
    app: App<T>,
    cors_origins: Vec<String>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<BoxBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
>
where
    T: ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse<BoxBody>,
            Error = actix_web::Error,
            InitError = (),
        > + 'static,
{
    app.wrap(from_fn(catch_panics))
        .wrap(from_fn(rate_limit_fields))
        .wrap(actix_web::middleware::Condition::new(!cors_origins.is_empty(), cors(&cors_origins)))
        .wrap(from_fn(crate::idempotency::idempotent_creates))
        .wrap(from_fn(security_headers))
        .wrap(from_fn(record_metrics))
        .wrap(from_fn(request_id))
}

/// Cross-origin calls from `CORS_ALLOWED_ORIGINS` only: preflights answered with the methods and
/// request headers the API takes, the headers clients read exposed, and no credentials (cookies stay
/// first-party: a browser on another origin calls with a bearer token). Any other origin gets no
/// `Access-Control-Allow-Origin`, so its browser refuses the answer.
fn cors(origins: &[String]) -> actix_cors::Cors {
    use actix_web::http::{Method, header};
    let cors = origins.iter().fold(actix_cors::Cors::default(), |cors, origin| cors.allowed_origin(origin));
    cors.allowed_methods([Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_NONE_MATCH,
            crate::idempotency::IDEMPOTENCY_KEY.clone(),
            header::HeaderName::from_static("traceparent"),
            header::HeaderName::from_static("tracestate"),
            REQUEST_ID.clone(),
        ])
        .expose_headers([
            REQUEST_ID.clone(),
            crate::idempotency::REPLAYED.clone(),
            header::ETAG,
            header::LINK,
            header::LOCATION,
            header::RETRY_AFTER,
            header::HeaderName::from_static("ratelimit"),
            header::HeaderName::from_static("ratelimit-policy"),
            header::HeaderName::from_static("deprecation"),
            header::HeaderName::from_static("sunset"),
        ])
        .max_age(3600)
}

/// Headers every answer carries: `X-Content-Type-Options: nosniff`; `Cache-Control: no-store` on
/// answers to requests that carry credentials (a bearer token or a cookie), unless the handler chose
/// its own caching; and a `Content-Security-Policy` that allows only this origin on any HTML.
pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    use actix_web::http::header;
    let credentialed = req.headers().contains_key(header::AUTHORIZATION) || req.headers().contains_key(header::COOKIE);
    let mut response = next.call(req).await?;
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if credentialed && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    let is_html =
        headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"));
    if is_html && !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
            ),
        );
    }
    Ok(response)
}

/// `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers) on every answer of a
/// rate-limited route, from the quota its handler put in the request's extensions: a success, a
/// refusal after the call was counted, or the 429 itself.
pub async fn rate_limit_fields(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut response = next.call(req).await?;
    let quota = response.request().extensions().get::<opsd_core::Quota>().copied();
    if let Some(quota) = quota {
        crate::rate_limit_fields::insert(response.headers_mut(), &quota);
    }
    Ok(response)
}

/// A rate-limited call's outcome; its quota is kept for `rate_limit_fields`, whatever the outcome.
pub fn counted<T, E>(req: &actix_web::HttpRequest, limited: opsd_core::Limited<Result<T, E>>) -> Result<T, E> {
    req.extensions_mut().insert(limited.quota);
    limited.value
}

/// The innermost layer: a panicking handler answers 500 `internal` like any unexpected failure,
/// instead of dropping the connection. The panic's message goes to the log only, and
/// `http_panics_total` counts it; the layers outside it count and tag the answer like any other.
pub async fn catch_panics(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let metrics = req.app_data::<actix_web::web::Data<HttpMetrics>>().cloned();
    match AssertUnwindSafe(next.call(req)).catch_unwind().await {
        Ok(response) => Ok(response?.map_into_boxed_body()),
        Err(panic) => {
            let message =
                panic.downcast_ref::<&str>().copied().or_else(|| panic.downcast_ref::<String>().map(String::as_str));
            tracing::error!(panic = message.unwrap_or("(no message)"), "a handler panicked");
            if let Some(metrics) = metrics {
                metrics.panics.inc();
            }
            Err(crate::errors::ApiError::Internal("a handler panicked".into()).into())
        }
    }
}

/// An error that left the handlers (a panic), answered with the request's id like any answer.
#[derive(Debug)]
struct Tagged {
    error: actix_web::Error,
    id: HeaderValue,
}

impl std::fmt::Display for Tagged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl actix_web::ResponseError for Tagged {
    fn status_code(&self) -> actix_web::http::StatusCode {
        self.error.as_response_error().status_code()
    }

    fn error_response(&self) -> actix_web::HttpResponse<BoxBody> {
        let mut response = self.error.error_response();
        response.headers_mut().insert(REQUEST_ID.clone(), self.id.clone());
        response
    }
}

/// The `method` label: the methods the service answers, every other one counted as `other`, so a
/// client cannot grow the label space.
fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Prometheus metrics of the HTTP surface.
#[derive(Clone)]
pub struct HttpMetrics {
    pub registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    panics: prometheus::IntCounter,
    /// The route table's patterns in routing order, for requests whose answer carries no
    /// [`RoutePattern`] (a handler's panic leaves no answer to read it from).
    routes: std::sync::Arc<Vec<actix_web::dev::ResourceDef>>,
    /// `/metrics` is served on its own address (`METRICS_BIND_ADDR`), not the API's.
    pub served_apart: bool,
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
        let panics = prometheus::IntCounter::new("http_panics_total", "Handlers that panicked (answered 500)")
            .expect("a valid counter");
        registry.register(Box::new(requests.clone())).expect("registered once");
        registry.register(Box::new(latency.clone())).expect("registered once");
        registry.register(Box::new(panics.clone())).expect("registered once");
        Self { registry, requests, latency, panics, routes: Default::default(), served_apart: false }
    }

    pub fn with_routes<'p>(mut self, patterns: impl IntoIterator<Item = &'p str>) -> Self {
        self.routes = std::sync::Arc::new(patterns.into_iter().map(actix_web::dev::ResourceDef::new).collect());
        self
    }

    /// The pattern of the first route that matches `path`, as actix routes it.
    pub(crate) fn pattern_of(&self, path: &str) -> &str {
        self.routes.iter().find(|route| route.is_match(path)).map_or("unmatched", |route| route.pattern().unwrap_or(""))
    }

    pub fn observe(&self, method: &str, route: &str, status: &str, seconds: f64) {
        let labels = [method, route, status];
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
    let method = method_label(req.method());
    // A clone shares the path's bytes; the request itself cannot be cloned before routing.
    let uri = req.uri().clone();
    let started = Instant::now();
    let response = next.call(req).await;
    if let Some(metrics) = metrics {
        // The route pattern, not the path, so ids do not explode the label space. The route table
        // gives each resource its pattern; matching the path again would try every resource before it.
        let (route, status) = match &response {
            Ok(response) => (
                response.request().app_data::<RoutePattern>().map_or_else(|| metrics.pattern_of(uri.path()), |p| &p.0),
                response.status(),
            ),
            Err(error) => (metrics.pattern_of(uri.path()), error.as_response_error().status_code()),
        };
        metrics.observe(method, route, status.as_str(), started.elapsed().as_secs_f64());
    }
    response
}

/// A resource's path pattern, given to it by the route table for the metrics' `route` label.
pub struct RoutePattern(pub std::sync::Arc<str>);

#[cfg(test)]
mod tests {
    use actix_web::middleware::from_fn;
    use actix_web::{App, test, web};

    use super::*;

    #[actix_web::test]
    async fn a_panicking_handler_answers_a_500_problem_with_its_request_id_and_is_counted() {
        let metrics = web::Data::new(HttpMetrics::new().with_routes(["/boom"]));
        let app = test::init_service(
            App::new()
                .app_data(metrics.clone())
                .wrap(from_fn(catch_panics))
                .wrap(from_fn(record_metrics))
                .wrap(from_fn(request_id))
                .route(
                    "/boom",
                    web::get().to(|| async {
                        if true {
                            panic!("secret detail")
                        }
                        "unreachable"
                    }),
                ),
        )
        .await;
        let request = test::TestRequest::get().uri("/boom").insert_header(("x-request-id", "req-42")).to_request();
        let Err(error) = test::try_call_service(&app, request).await else {
            panic!("the panic is answered as an error")
        };
        let response = error.error_response();
        assert_eq!(response.status(), 500);
        assert_eq!(response.headers().get("x-request-id").unwrap(), "req-42");
        let body = actix_web::body::to_bytes(response.into_body()).await.unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert!(text.contains(r#""code":"internal""#), "{text}");
        assert!(!text.contains("secret detail"));
        assert_eq!(metrics.panics.get(), 1);
        assert_eq!(metrics.requests.with_label_values(&["GET", "/boom", "500"]).get(), 1);
    }

    #[actix_web::test]
    async fn every_answer_is_nosniff_credentialed_ones_are_not_stored_and_html_has_a_policy() {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(security_headers))
                .route("/json", web::get().to(|| async { actix_web::HttpResponse::Ok().json(1) }))
                .route(
                    "/stream",
                    web::get().to(|| async {
                        actix_web::HttpResponse::Ok().insert_header(("cache-control", "no-cache")).finish()
                    }),
                )
                .route(
                    "/page",
                    web::get().to(|| async {
                        actix_web::HttpResponse::Ok().content_type("text/html; charset=utf-8").body("<p>hi</p>")
                    }),
                ),
        )
        .await;
        let anonymous = test::call_service(&app, test::TestRequest::get().uri("/json").to_request()).await;
        assert_eq!(anonymous.headers().get("x-content-type-options").unwrap(), "nosniff");
        assert!(anonymous.headers().get("cache-control").is_none());
        let bearer = test::call_service(
            &app,
            test::TestRequest::get().uri("/json").insert_header(("authorization", "Bearer x")).to_request(),
        )
        .await;
        assert_eq!(bearer.headers().get("cache-control").unwrap(), "no-store");
        let cookie = test::call_service(
            &app,
            test::TestRequest::get().uri("/page").insert_header(("cookie", "__session=x")).to_request(),
        )
        .await;
        assert_eq!(cookie.headers().get("cache-control").unwrap(), "no-store");
        assert!(
            cookie
                .headers()
                .get("content-security-policy")
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("default-src 'self'")
        );
        let stream = test::call_service(
            &app,
            test::TestRequest::get().uri("/stream").insert_header(("authorization", "Bearer x")).to_request(),
        )
        .await;
        assert_eq!(stream.headers().get("cache-control").unwrap(), "no-cache", "a handler's own choice stands");
    }

    #[actix_web::test]
    async fn invented_methods_are_counted_as_other_and_unknown_paths_as_unmatched() {
        let metrics = web::Data::new(HttpMetrics::new().with_routes(["/boom"]));
        let app = test::init_service(
            App::new()
                .app_data(metrics.clone())
                .wrap(from_fn(record_metrics))
                .route("/a", web::get().to(|| async { "a" })),
        )
        .await;
        let invented = actix_web::http::Method::from_bytes(b"BREW").unwrap();
        test::call_service(&app, test::TestRequest::default().method(invented).uri("/a").to_request()).await;
        test::call_service(&app, test::TestRequest::get().uri("/nowhere/123").to_request()).await;
        let families = metrics.registry.gather();
        let labels: Vec<String> = families
            .iter()
            .filter(|f| f.name() == "http_requests_total")
            .flat_map(|f| {
                f.get_metric()
                    .iter()
                    .map(|m| m.get_label().iter().map(|l| l.value().to_owned()).collect::<Vec<_>>().join(" "))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(labels.iter().all(|l| !l.contains("BREW") && !l.contains("/nowhere")), "{labels:?}");
        assert!(labels.iter().any(|l| l.starts_with("other")), "{labels:?}");
        assert!(labels.iter().any(|l| l.contains("unmatched")), "{labels:?}");
    }
}
