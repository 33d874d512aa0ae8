//! Conditional GET (RFC 9110 13.1.2): an answer carries an `ETag`, and a client that sends it back
//! in `If-None-Match` gets 304 with no body while the answer is the same.

use actix_web::http::header::{self, EntityTag, IfNoneMatch};
use actix_web::{HttpMessage, HttpRequest, HttpResponse, HttpResponseBuilder};
use serde::Serialize;
use sha2::Digest;

/// Whether `etag` is one the client already holds (compared weakly, as `If-None-Match` is).
pub(crate) fn unchanged(req: &HttpRequest, etag: &str) -> bool {
    req.headers().contains_key(header::IF_NONE_MATCH)
        && match (req.get_header::<IfNoneMatch>(), etag.parse::<EntityTag>()) {
            (Some(IfNoneMatch::Any), _) => true,
            (Some(IfNoneMatch::Items(tags)), Ok(etag)) => tags.iter().any(|tag| tag.weak_eq(&etag)),
            _ => false,
        }
}

/// `body` as JSON with its `ETag` (a digest of those bytes), or 304 when the client has it;
/// `answer` carries the route's own headers.
pub(crate) fn json_with_etag(
    req: &HttpRequest,
    mut answer: HttpResponseBuilder,
    body: &impl Serialize,
) -> HttpResponse {
    let json = match serde_json::to_vec(body) {
        Ok(json) => json,
        Err(error) => {
            return actix_web::ResponseError::error_response(&crate::errors::ApiError::Internal(error.to_string()));
        }
    };
    let etag = format!("\"{}\"", hex::encode(&sha2::Sha256::digest(&json)[..8]));
    if unchanged(req, &etag) {
        let mut not_modified = HttpResponse::NotModified();
        for (name, value) in answer.finish().headers() {
            not_modified.insert_header((name.clone(), value.clone()));
        }
        return not_modified.insert_header((header::ETAG, etag)).finish();
    }
    answer.insert_header((header::ETAG, etag)).content_type("application/json").body(json)
}
