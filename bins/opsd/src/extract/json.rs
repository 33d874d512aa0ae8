use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use futures::future::LocalBoxFuture;
use opsd_core::ValidationErrors;
use serde::de::DeserializeOwned;

use crate::errors::ApiError;

/// Largest accepted body; larger ones are 413.
pub const BODY_LIMIT: usize = 256 * 1024;
/// Sales batches of up to 10,000 rows (`POST /api/analytics/sales`, the one route with a larger
/// limit) need more than the general 256 KiB.
pub const SALES_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// A JSON body deserialized strictly: a JSON content type is required (415), the body is at most
/// 256 KiB (413), syntax errors are `malformed_json`, and wrong types, missing or unknown fields
/// are `validation_failed` naming the field.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for JsonBody<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let is_json = matches!(req.mime_type(), Ok(Some(mime))
            if mime.subtype() == "json" || mime.suffix().is_some_and(|s| s == "json"));
        let body = RawBody::from_request(req, payload);
        Box::pin(async move {
            if !is_json {
                return Err(ApiError::UnsupportedMediaType);
            }
            parse(&body.await?.0).map(JsonBody)
        })
    }
}

/// The body's raw bytes, at most 256 KiB (413 beyond), for handlers that verify a signature
/// before parsing.
pub struct RawBody(pub web::Bytes);

impl FromRequest for RawBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            body.await.map(RawBody).map_err(|error| {
                if error.as_response_error().status_code() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge
                } else {
                    ApiError::MalformedJson("the body could not be read".into())
                }
            })
        })
    }
}

pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if contains_nul_escape(bytes) {
        return Err(ApiError::invalid("body", "must not contain NUL characters"));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        classify(bytes, &path, &inner)
    })?;
    deserializer.end().map_err(|error| ApiError::MalformedJson(syntax_message(&error)))?;
    Ok(value)
}

/// Whether a JSON text holds `\u0000` (a NUL no text column can store). A backslash escaped by
/// another backslash does not start an escape, so the backslashes before `u0000` are counted.
fn contains_nul_escape(bytes: &[u8]) -> bool {
    bytes.windows(6).enumerate().any(|(at, window)| {
        window == b"\\u0000" && bytes[..at].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0
    })
}

fn classify(bytes: &[u8], path: &str, error: &serde_json::Error) -> ApiError {
    use serde_json::error::Category;
    match error.classify() {
        // serde_json reports a non-string where a string enum belongs (`["high"]`, `null`, `true`, `3`)
        // as a syntax error ("expected value"); the text is valid JSON, so it is a wrong type.
        Category::Syntax if is_json(bytes) => ApiError::Validation(ValidationErrors::single(
            field_path(path),
            "invalid type: expected one of the allowed strings",
        )),
        Category::Syntax | Category::Eof | Category::Io => ApiError::MalformedJson(syntax_message(error)),
        Category::Data => {
            let message = strip_position(&error.to_string());
            let path = field_path(path);
            // The path already ends at an unknown field, but stops at the parent of a missing one.
            let field = match named_field(&message) {
                Some(name) if !path.ends_with(name) => join(&path, name),
                _ => path,
            };
            ApiError::Validation(ValidationErrors::single(field, message))
        }
    }
}

/// Whether the bytes are one well-formed JSON value (checked only on the error path).
fn is_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

fn syntax_message(error: &serde_json::Error) -> String {
    format!("{} at line {} column {}", strip_position(&error.to_string()), error.line(), error.column())
}

/// serde_json appends " at line L column C"; the position is meaningless for a field error.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// "unknown field `serverity`" and "missing field `notes`" name a field below the path.
fn named_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("missing field `"))?;
    rest.split('`').next()
}

fn field_path(path: &str) -> String {
    if path == "." { String::new() } else { path.to_owned() }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() { name.to_owned() } else { format!("{parent}.{name}") }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Body {
        severity: String,
        media_urls: Option<Vec<String>>,
    }

    fn field(error: ApiError) -> String {
        match error {
            ApiError::Validation(errors) => errors.errors()[0].field.clone(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn a_nul_character_is_refused_but_an_escaped_backslash_is_not_one() {
        assert!(matches!(parse::<Body>(br#"{"severity":"a\u0000b"}"#), Err(ApiError::Validation(_))));
        assert!(parse::<Body>(br#"{"severity":"a\\u0000b"}"#).is_ok(), "a backslash, then the text u0000");
    }

    #[test]
    fn an_unknown_field_is_named() {
        let error = parse::<Body>(br#"{"serverity":"low"}"#).unwrap_err();
        assert_eq!(field(error), "serverity");
    }

    #[test]
    fn a_missing_field_is_named() {
        assert_eq!(field(parse::<Body>(b"{}").unwrap_err()), "severity");
    }

    #[test]
    fn a_wrong_type_names_its_path() {
        let error = parse::<Body>(br#"{"severity":"low","mediaUrls":[1]}"#).unwrap_err();
        assert_eq!(field(error), "mediaUrls[0]");
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Level {
        Low,
        High,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct WithEnum {
        level: Level,
        nested: Option<Vec<Level>>,
    }

    #[test]
    fn a_wrong_json_type_on_an_enum_field_is_a_validation_error_naming_it() {
        for body in
            [r#"{"level":["high"]}"#, r#"{"level":null}"#, r#"{"level":true}"#, r#"{"level":3}"#, r#"{"level":{}}"#]
        {
            assert_eq!(field(parse::<WithEnum>(body.as_bytes()).unwrap_err()), "level", "{body}");
        }
        assert_eq!(field(parse::<WithEnum>(br#"{"level":"low","nested":["high",7]}"#).unwrap_err()), "nested[1]");
        assert_eq!(field(parse::<WithEnum>(br#"{"level":"medium"}"#).unwrap_err()), "level");
        assert!(matches!(parse::<WithEnum>(br#"{"level": }"#), Err(ApiError::MalformedJson(_))));
    }

    #[test]
    fn syntax_errors_and_trailing_garbage_are_malformed() {
        assert!(matches!(parse::<Body>(b"{\"severity\":"), Err(ApiError::MalformedJson(_))));
        assert!(matches!(parse::<Body>(br#"{"severity":"low"} x"#), Err(ApiError::MalformedJson(_))));
        assert!(matches!(parse::<Body>(b""), Err(ApiError::MalformedJson(_))));
    }
}
