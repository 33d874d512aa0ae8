use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use futures::future::{Ready, ready};
use opsd_core::ValidationErrors;
use serde::de::DeserializeOwned;

use crate::errors::ApiError;

/// Query parameters deserialized strictly; a bad one is `validation_failed` naming it.
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned> FromRequest for QueryParams<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let parsed = serde_urlencoded_from(req.query_string()).map(QueryParams);
        ready(parsed)
    }
}

/// A domain value read from a route's query: its wire form deserialized as [`QueryParams`] does,
/// then validated and converted.
pub trait FromQuery: Clone + 'static {
    type Wire: DeserializeOwned;
    fn from_wire(wire: Self::Wire) -> Result<Self, ApiError>;
}

/// A [`FromQuery`] value, remembered by each worker thread under the raw query string it came
/// from. A client that polls sends the same query string every time; a remembered one skips the
/// percent-decoding, deserializing and validation (about 2,300 of the 36,000 instructions of a
/// cached report's answer, under callgrind). Conversion is a function of the string alone, so a
/// remembered value never goes stale; only values that passed are remembered, and errors are
/// answered exactly as before.
pub struct Parsed<D>(pub D);

/// Raw query strings remembered per type and thread; a full map is emptied before the next one.
const REMEMBERED: usize = 64;
/// Longer query strings are converted every time, so the memory stays a few KB per thread.
const REMEMBERED_LEN: usize = 256;

type Remembered = HashMap<Box<str>, Box<dyn Any>, foldhash::fast::RandomState>;

thread_local! {
    static PARSED: RefCell<HashMap<TypeId, Remembered, foldhash::fast::RandomState>> = RefCell::default();
}

impl<D: FromQuery> FromRequest for Parsed<D> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let raw = req.query_string();
        let remembered =
            PARSED.with_borrow(|parsed| parsed.get(&TypeId::of::<D>())?.get(raw)?.downcast_ref::<D>().cloned());
        if let Some(value) = remembered {
            return ready(Ok(Parsed(value)));
        }
        let parsed = serde_urlencoded_from::<D::Wire>(raw).and_then(D::from_wire);
        if let Ok(value) = &parsed
            && raw.len() <= REMEMBERED_LEN
        {
            PARSED.with_borrow_mut(|parsed| {
                let remembered = parsed.entry(TypeId::of::<D>()).or_default();
                if remembered.len() >= REMEMBERED {
                    remembered.clear();
                }
                remembered.insert(raw.into(), Box::new(value.clone()));
            });
        }
        ready(parsed.map(Parsed))
    }
}

fn serde_urlencoded_from<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    // "%00" has no letters, so no case to fold.
    if query.contains("%00") {
        return Err(ApiError::invalid("query", "must not contain NUL characters"));
    }
    actix_web::web::Query::<T>::from_query(query).map(|q| q.into_inner()).map_err(|error| {
        let message = error.to_string();
        let field = message.split('`').nth(1).filter(|_| message.contains("field `")).unwrap_or("query").to_owned();
        ApiError::Validation(ValidationErrors::single(field, message.replace("Query deserialize error: ", "")))
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use actix_web::test::TestRequest;
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Wire {
        n: Option<String>,
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Number(u32);

    thread_local! {
        static CONVERSIONS: Cell<u32> = const { Cell::new(0) };
    }

    impl FromQuery for Number {
        type Wire = Wire;

        fn from_wire(wire: Wire) -> Result<Self, ApiError> {
            CONVERSIONS.set(CONVERSIONS.get() + 1);
            let n = wire.n.ok_or_else(|| ApiError::invalid("n", "is required"))?;
            n.parse().map(Number).map_err(|_| ApiError::invalid("n", "must be a number"))
        }
    }

    fn extract(query: &str) -> Result<Number, ApiError> {
        let (req, mut payload) = TestRequest::with_uri(&format!("/x?{query}")).to_http_parts();
        Parsed::<Number>::from_request(&req, &mut payload).into_inner().map(|Parsed(n)| n)
    }

    fn code(result: Result<Number, ApiError>) -> String {
        use actix_web::ResponseError;
        let error = result.expect_err("an error");
        let kind = if matches!(error, ApiError::Validation(_)) { "validation" } else { "other" };
        format!("{} {kind}", error.status_code().as_u16())
    }

    #[test]
    fn a_query_string_seen_before_is_not_converted_again_and_answers_the_same() {
        CONVERSIONS.set(0);
        assert_eq!(extract("n=7").unwrap(), Number(7));
        assert_eq!(extract("n=7").unwrap(), Number(7));
        assert_eq!(CONVERSIONS.get(), 1);
        assert_eq!(extract("n=8").unwrap(), Number(8));
        assert_eq!(CONVERSIONS.get(), 2);
        let long = format!("n={}9", "0".repeat(REMEMBERED_LEN));
        assert_eq!((extract(&long).unwrap(), extract(&long).unwrap()), (Number(9), Number(9)));
        assert_eq!(CONVERSIONS.get(), 4, "a long query string is converted every time");
    }

    #[test]
    fn errors_are_not_remembered_and_answer_as_the_plain_extractor_does() {
        CONVERSIONS.set(0);
        for _ in 0..2 {
            assert_eq!(code(extract("n=seven")), "400 validation");
            assert_eq!(code(extract("n=1&extra=2")), "400 validation");
            assert_eq!(code(extract("n=%00")), "400 validation");
        }
        assert_eq!(CONVERSIONS.get(), 2, "only n=seven reaches the conversion, once per request");
    }

    #[test]
    fn a_full_memory_starts_over_and_still_answers_every_query() {
        CONVERSIONS.set(0);
        for n in 0..(REMEMBERED as u32 * 3) {
            assert_eq!(extract(&format!("n={n}")).unwrap(), Number(n));
        }
        let remembered = PARSED.with_borrow(|parsed| parsed[&TypeId::of::<Number>()].len());
        assert!(remembered <= REMEMBERED, "{remembered} remembered");
        assert_eq!(extract(&format!("n={}", REMEMBERED as u32 * 3 - 1)).unwrap(), Number(REMEMBERED as u32 * 3 - 1));
        assert_eq!(CONVERSIONS.get(), REMEMBERED as u32 * 3, "the last one was remembered");
    }
}
