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
