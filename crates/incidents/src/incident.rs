use opsd_core::{FieldError, LocationId, TeamId, TextLength, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::contact::{ContactId, NewContact};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IncidentId(pub Uuid);

opsd_core::wire_enum! {
    pub enum IncidentType {
        Injury,
        #[strum(serialize = "Near Miss")]
        NearMiss,
        #[strum(serialize = "Spill / Slip Hazard")]
        SpillSlipHazard,
        Complaint,
        Maintenance,
        Stockout,
    }
}

impl IncidentType {
    pub const ALL: [IncidentType; 6] = [
        IncidentType::Injury,
        IncidentType::NearMiss,
        IncidentType::SpillSlipHazard,
        IncidentType::Complaint,
        IncidentType::Maintenance,
        IncidentType::Stockout,
    ];
}

opsd_core::wire_enum! {
    #[strum(serialize_all = "lowercase")]
    pub enum Severity {
        Low,
        Medium,
        High,
        Critical,
    }
}

opsd_core::wire_enum! {
    /// Any status may follow any other; a new incident is `reported`.
    #[strum(serialize_all = "lowercase")]
    pub enum Status {
        Reported,
        Investigating,
        Deferred,
        Resolved,
    }
}

/// 1 to 5000 characters (Unicode scalar values), not only whitespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentNotes(String);

impl IncidentNotes {
    pub const LENGTH: TextLength = TextLength::new(1, 5000);

    pub fn parse(field: &str, raw: &str) -> Result<Self, FieldError> {
        if raw.trim().is_empty() {
            return Err(FieldError::new(field, "must not be empty or only whitespace"));
        }
        if !Self::LENGTH.fits(raw) {
            return Err(FieldError::new(field, "must be at most 5000 characters"));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_inner(self) -> String {
        self.0
    }
}

/// At most 10 absolute `https` URLs of at most 2048 characters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MediaUrls(Vec<String>);

impl MediaUrls {
    pub const MAX_URLS: usize = 10;
    pub const MAX_URL_CHARS: usize = 2048;

    pub fn parse(raw: Vec<String>) -> Result<Self, FieldError> {
        if raw.len() > Self::MAX_URLS {
            return Err(FieldError::new("mediaUrls", "must hold at most 10 URLs"));
        }
        for (index, value) in raw.iter().enumerate() {
            let field = format!("mediaUrls[{index}]");
            if value.len() > Self::MAX_URL_CHARS {
                return Err(FieldError::new(field, "must be at most 2048 characters"));
            }
            let parsed =
                url::Url::parse(value).map_err(|_| FieldError::new(field.clone(), "must be an absolute URL"))?;
            if parsed.scheme() != "https" || parsed.host_str().is_none() {
                return Err(FieldError::new(field, "must be an https URL"));
            }
        }
        Ok(Self(raw))
    }

    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

/// A validated incident report. The contact choice is resolved by the store in the incident's
/// transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct NewIncident {
    pub location_id: LocationId,
    pub incident_type: IncidentType,
    pub severity: Severity,
    pub notes: IncidentNotes,
    pub media_urls: MediaUrls,
    pub contact: ContactChoice,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ContactChoice {
    None,
    Existing(ContactId),
    New(NewContact),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Incident {
    pub id: IncidentId,
    pub team_id: TeamId,
    pub location_id: LocationId,
    pub incident_type: IncidentType,
    pub severity: Severity,
    pub status: Status,
    pub notes: String,
    pub media_urls: Vec<String>,
    pub contact_id: Option<ContactId>,
    pub reported_by: UserId,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Comment {
    pub id: Uuid,
    pub incident_id: IncidentId,
    pub author_id: UserId,
    pub content: String,
    pub created_at: OffsetDateTime,
}

/// A status a user sets: it appends a history row when it changes the incident's status.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusUpdate {
    pub status: Status,
    pub by: UserId,
    pub at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StatusChange {
    pub from: Status,
    pub to: Status,
    pub by: UserId,
    pub at: OffsetDateTime,
}

/// An incident with its comments and status history, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct IncidentDetail {
    pub incident: Incident,
    pub comments: Vec<Comment>,
    pub status_history: Vec<StatusChange>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_count_characters_not_bytes() {
        assert!(IncidentNotes::parse("notes", &"é".repeat(5000)).is_ok());
        assert!(IncidentNotes::parse("notes", &"a".repeat(5001)).is_err());
        assert!(IncidentNotes::parse("notes", " \n\t ").is_err());
        assert!(IncidentNotes::parse("notes", "").is_err());
    }

    #[test]
    fn media_urls_are_at_most_ten_https_urls() {
        assert!(MediaUrls::parse(vec!["https://blob.example/a.jpg".into(); 10]).is_ok());
        assert_eq!(MediaUrls::parse(vec!["https://blob.example/a.jpg".into(); 11]).unwrap_err().field, "mediaUrls");
        let error =
            MediaUrls::parse(vec!["https://ok.example/".into(), "http://blob.example/a.jpg".into()]).unwrap_err();
        assert_eq!(error.field, "mediaUrls[1]");
        assert!(MediaUrls::parse(vec!["/relative.jpg".into()]).is_err());
        assert!(MediaUrls::parse(vec![format!("https://b.example/{}", "a".repeat(2048))]).is_err());
    }

    #[test]
    fn enum_names_round_trip_exactly() {
        for t in IncidentType::ALL {
            assert_eq!(IncidentType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
        assert_eq!(IncidentType::parse("injury"), None);
        assert_eq!(Status::parse("resolved"), Some(Status::Resolved));
        assert_eq!(Severity::parse("CRITICAL"), None);
    }
}
