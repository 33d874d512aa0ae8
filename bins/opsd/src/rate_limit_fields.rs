//! The RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), written in one place for the
//! answers that carry them: a rate-limited route's (`middleware::rate_limit_fields`) and the 429
//! itself (`errors.rs`).

use actix_web::http::header::HeaderValue;

pub fn insert(headers: &mut actix_web::http::header::HeaderMap, quota: &opsd_core::Quota) {
    use actix_web::http::header::HeaderName;
    let opsd_core::Quota { policy, limit, window_seconds, remaining, reset_seconds } = quota;
    let fields = [
        ("ratelimit-policy", format!("\"{policy}\";q={limit};w={window_seconds}")),
        ("ratelimit", format!("\"{policy}\";r={remaining};t={reset_seconds}")),
    ];
    for (name, value) in fields {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_str(&value).expect("a field value"));
    }
}
