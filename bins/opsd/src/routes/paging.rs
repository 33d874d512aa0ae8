//! Lists that can grow: `limit` and an opaque `cursor` in the query, the page's items as the body
//! (an array, as before paging), and the next page's address in an RFC 8288 `Link` header.

use actix_web::{HttpRequest, HttpResponse};
use opsd_core::{Page, PageRequest};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::IntoParams;

use crate::errors::ApiError;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Items per page: 1 to 500, default 100.
    pub limit: Option<u32>,
    /// Where the page starts: take it from the previous page's `Link: <…>; rel="next"`.
    pub cursor: Option<String>,
}

impl PageQuery {
    pub fn request<K: DeserializeOwned>(&self) -> Result<PageRequest<K>, ApiError> {
        Ok(PageRequest::parse(self.limit, self.cursor.as_deref())?)
    }
}

/// 200 with the page's items; when another page follows, `Link` to it: the same path and query
/// with the next cursor.
pub fn page_response<T: Serialize>(req: &HttpRequest, page: Page<T>) -> HttpResponse {
    let mut response = HttpResponse::Ok();
    if let Some(cursor) = &page.next_cursor {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(
                url::form_urlencoded::parse(req.query_string().as_bytes()).filter(|(name, _)| name != "cursor"),
            )
            .append_pair("cursor", cursor)
            .finish();
        response.insert_header(("Link", format!("<{}?{query}>; rel=\"next\"", req.path())));
    }
    response.json(page.items)
}
