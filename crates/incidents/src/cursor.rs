use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use opsd_core::FieldError;
use time::OffsetDateTime;
use uuid::Uuid;

/// A keyset position in newest-first order: the (created_at, id) of the last item of a page.
/// Clients see it as an opaque string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub created_at: OffsetDateTime,
    pub id: Uuid,
}

impl Cursor {
    pub fn encode(&self) -> String {
        let nanos = self.created_at.unix_timestamp_nanos();
        URL_SAFE_NO_PAD.encode(format!("{nanos}:{}", self.id))
    }

    pub fn decode(raw: &str) -> Result<Self, FieldError> {
        let invalid = || FieldError::new("cursor", "is not a cursor this service issued");
        let bytes = URL_SAFE_NO_PAD.decode(raw).map_err(|_| invalid())?;
        let text = String::from_utf8(bytes).map_err(|_| invalid())?;
        let (nanos, id) = text.split_once(':').ok_or_else(invalid)?;
        let nanos: i128 = nanos.parse().map_err(|_| invalid())?;
        Ok(Self {
            created_at: OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|_| invalid())?,
            id: Uuid::parse_str(id).map_err(|_| invalid())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let cursor =
            Cursor { created_at: OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap(), id: Uuid::now_v7() };
        assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), cursor);
        for bad in ["", "!!", "bm90IGEgY3Vyc29y", "MTox"] {
            assert!(Cursor::decode(bad).is_err(), "{bad}");
        }
    }
}
