//! Keyset pages of a list that can grow: a page is the items after the last one the client saw, in
//! the list's own order, so rows added while a client walks the list never make it miss or repeat
//! one. The position is a cursor the client holds as an opaque string: the last item's sort key,
//! as base64url JSON.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ValidationErrors;

/// Items a page holds unless the client asks for another number: today's whole answer for a
/// list of this size or smaller.
pub const DEFAULT_LIMIT: u32 = 100;
pub const MAX_LIMIT: u32 = 500;

/// At most `limit` items after the one whose sort key is `after` (none: from the start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest<K> {
    pub limit: u32,
    pub after: Option<K>,
}

impl<K> Default for PageRequest<K> {
    fn default() -> Self {
        Self { limit: DEFAULT_LIMIT, after: None }
    }
}

impl<K: DeserializeOwned> PageRequest<K> {
    /// The request as a client sent it: `limit` from 1 to 500 (default 100) and a cursor this
    /// service issued for the same list.
    pub fn parse(limit: Option<u32>, cursor: Option<&str>) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            errors.push("limit", format!("must be 1 to {MAX_LIMIT}"));
        }
        let after = cursor.and_then(|raw| {
            let key = URL_SAFE_NO_PAD.decode(raw).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok());
            if key.is_none() {
                errors.push("cursor", "is not a cursor this service issued for this list");
            }
            key
        });
        errors.into_result()?;
        Ok(Self { limit, after })
    }

    /// The rows a store reads: one more than the page, which tells whether another page follows.
    pub fn rows_to_read(&self) -> i64 {
        i64::from(self.limit) + 1
    }
}

/// A page's items, and the cursor of the next page when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// The page from the rows a store read for `request` (`rows_to_read` of them at most), each
    /// item's sort key given by `key`.
    pub fn of<K: Serialize, Q>(mut rows: Vec<T>, request: &PageRequest<Q>, key: impl Fn(&T) -> K) -> Self {
        let limit = request.limit as usize;
        let next_cursor = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|last| URL_SAFE_NO_PAD.encode(serde_json::to_vec(&key(last)).expect("a sort key is JSON")))
        } else {
            None
        };
        Self { items: rows, next_cursor }
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page { items: self.items.into_iter().map(f).collect(), next_cursor: self.next_cursor }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_ends_where_the_next_begins_and_the_last_has_no_cursor() {
        let request = PageRequest::<(u32, String)>::parse(Some(2), None).unwrap();
        let page = Page::of(vec![1u32, 2, 3], &request, |n| (*n, n.to_string()));
        assert_eq!(page.items, [1, 2]);
        let next = PageRequest::<(u32, String)>::parse(None, page.next_cursor.as_deref()).unwrap();
        assert_eq!((next.limit, next.after.clone()), (DEFAULT_LIMIT, Some((2, "2".to_owned()))));
        assert_eq!(Page::of(vec![3u32], &next, |n| (*n, n.to_string())).next_cursor, None);
    }

    #[test]
    fn a_bad_limit_or_cursor_names_its_field() {
        for (limit, cursor, field) in [
            (Some(0), None, "limit"),
            (Some(501), None, "limit"),
            (None, Some("!!"), "cursor"),
            (None, Some("e30"), "cursor"),
        ] {
            let error = PageRequest::<(u32, String)>::parse(limit, cursor).unwrap_err();
            assert_eq!(error.errors()[0].field, field, "{limit:?} {cursor:?}");
        }
    }
}
