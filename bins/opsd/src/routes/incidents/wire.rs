//! The incident and contact bodies as clients send and receive them. Requests parse into the
//! domain's validated values (`try_into_domain`); responses are built from the domain's records.

use opsd_core::{LocationId, ValidationErrors};
use opsd_incidents::{self as domain, ContactChoice, ContactId, IncidentNotes, MediaUrls, NewContact, NewIncident};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::wire;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContactMode {
    None,
    Existing,
    New,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IncidentRequest {
    pub location_id: Uuid,
    #[serde(rename = "type")]
    #[schema(value_type = wire::IncidentType)]
    pub incident_type: domain::IncidentType,
    #[schema(value_type = wire::Severity)]
    pub severity: domain::Severity,
    /// 1 to 5000 characters, not only whitespace.
    pub notes: String,
    /// At most 10 absolute https URLs of blob storage.
    pub media_urls: Option<Vec<String>>,
    /// Defaults to `none`, which forbids the other contact fields.
    pub contact_mode: Option<ContactMode>,
    /// With `existing`: a live contact of the team.
    pub contact_id: Option<Uuid>,
    /// With `new`: 1 to 200 characters.
    pub contact_name: Option<String>,
    /// With `new`: a phone or an e-mail address is required.
    pub contact_phone: Option<String>,
    pub contact_email: Option<String>,
    pub contact_notes: Option<String>,
}

const CONTACT_FIELDS: [&str; 4] = ["contactName", "contactPhone", "contactEmail", "contactNotes"];

impl IncidentRequest {
    pub fn try_into_domain(self) -> Result<NewIncident, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let notes = errors.check(IncidentNotes::parse("notes", &self.notes));
        let media_urls = errors.check(MediaUrls::parse(self.media_urls.clone().unwrap_or_default()));
        let contact = self.contact_choice(&mut errors);
        errors.into_result()?;
        Ok(NewIncident {
            location_id: LocationId(self.location_id),
            incident_type: self.incident_type,
            severity: self.severity,
            notes: notes.expect("checked"),
            media_urls: media_urls.expect("checked"),
            contact: contact.expect("checked"),
        })
    }

    fn contact_choice(&self, errors: &mut ValidationErrors) -> Option<ContactChoice> {
        let new_fields = [
            ("contactName", self.contact_name.is_some()),
            ("contactPhone", self.contact_phone.is_some()),
            ("contactEmail", self.contact_email.is_some()),
            ("contactNotes", self.contact_notes.is_some()),
        ];
        let forbid_new_fields = |errors: &mut ValidationErrors, mode: &str| {
            for (field, present) in new_fields {
                if present {
                    errors.push(field, format!("is not allowed with contactMode {mode}"));
                }
            }
        };
        match self.contact_mode.unwrap_or(ContactMode::None) {
            ContactMode::None => {
                forbid_new_fields(errors, "none");
                if self.contact_id.is_some() {
                    errors.push("contactId", "is not allowed with contactMode none");
                }
                Some(ContactChoice::None)
            }
            ContactMode::Existing => {
                forbid_new_fields(errors, "existing");
                match self.contact_id {
                    Some(id) => Some(ContactChoice::Existing(ContactId(id))),
                    None => {
                        errors.push("contactId", "is required with contactMode existing");
                        None
                    }
                }
            }
            ContactMode::New => {
                if self.contact_id.is_some() {
                    errors.push("contactId", "is not allowed with contactMode new");
                }
                let parsed = NewContact::parse(
                    CONTACT_FIELDS,
                    self.contact_name.as_deref(),
                    self.contact_phone.as_deref(),
                    self.contact_email.as_deref(),
                    self.contact_notes.as_deref(),
                );
                match parsed {
                    Ok(contact) => Some(ContactChoice::New(contact)),
                    Err(contact_errors) => {
                        for error in contact_errors.errors() {
                            errors.push(error.field.clone(), error.message.clone());
                        }
                        None
                    }
                }
            }
        }
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContactRequest {
    /// 1 to 200 characters.
    pub name: String,
    /// A phone or an e-mail address is required.
    pub phone: Option<String>,
    pub email: Option<String>,
    /// At most 2000 characters.
    pub notes: Option<String>,
}

impl ContactRequest {
    pub fn try_into_domain(self) -> Result<NewContact, ValidationErrors> {
        NewContact::parse(
            ["name", "phone", "email", "notes"],
            Some(&self.name),
            self.phone.as_deref(),
            self.email.as_deref(),
            self.notes.as_deref(),
        )
    }
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct IncidentQuery {
    pub location_id: Option<Uuid>,
    #[param(value_type = Option<wire::Status>, inline)]
    pub status: Option<domain::Status>,
    /// 1 to 100, default 50.
    pub limit: Option<u32>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

impl IncidentQuery {
    pub fn into_domain(self) -> domain::ListIncidents {
        domain::ListIncidents {
            location_id: self.location_id.map(LocationId),
            status: self.status,
            limit: self.limit,
            cursor: self.cursor,
        }
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {
    #[schema(value_type = wire::Status)]
    pub status: domain::Status,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentRequest {
    /// 1 to 5000 characters, not only whitespace.
    pub content: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Incident {
    id: Uuid,
    team_id: String,
    location_id: Uuid,
    #[serde(rename = "type")]
    #[schema(value_type = wire::IncidentType)]
    incident_type: domain::IncidentType,
    #[schema(value_type = wire::Severity)]
    severity: domain::Severity,
    #[schema(value_type = wire::Status)]
    status: domain::Status,
    notes: String,
    media_urls: Vec<String>,
    contact_id: Option<Uuid>,
    reported_by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    updated_at: OffsetDateTime,
}

impl From<domain::Incident> for Incident {
    fn from(incident: domain::Incident) -> Self {
        Self {
            id: incident.id.0,
            team_id: incident.team_id.to_string(),
            location_id: incident.location_id.0,
            incident_type: incident.incident_type,
            severity: incident.severity,
            status: incident.status,
            notes: incident.notes,
            media_urls: incident.media_urls,
            contact_id: incident.contact_id.map(|id| id.0),
            reported_by: incident.reported_by.to_string(),
            created_at: incident.created_at,
            updated_at: incident.updated_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    id: Uuid,
    incident_id: Uuid,
    author_id: String,
    content: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
}

impl From<domain::Comment> for Comment {
    fn from(comment: domain::Comment) -> Self {
        Self {
            id: comment.id,
            incident_id: comment.incident_id.0,
            author_id: comment.author_id.to_string(),
            content: comment.content,
            created_at: comment.created_at,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct StatusChange {
    #[schema(value_type = wire::Status)]
    from: domain::Status,
    #[schema(value_type = wire::Status)]
    to: domain::Status,
    by: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    at: OffsetDateTime,
}

/// An incident with its comments and status history, oldest first.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncidentDetail {
    #[serde(flatten)]
    incident: Incident,
    comments: Vec<Comment>,
    status_history: Vec<StatusChange>,
}

impl From<domain::IncidentDetail> for IncidentDetail {
    fn from(detail: domain::IncidentDetail) -> Self {
        Self {
            incident: detail.incident.into(),
            comments: detail.comments.into_iter().map(Into::into).collect(),
            status_history: detail
                .status_history
                .into_iter()
                .map(|change| StatusChange {
                    from: change.from,
                    to: change.to,
                    by: change.by.to_string(),
                    at: change.at,
                })
                .collect(),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    items: Vec<T>,
    /// Pass as `cursor` for the next page; absent on the last page.
    next_cursor: Option<String>,
}

impl From<domain::Page<domain::Incident>> for Page<Incident> {
    fn from(page: domain::Page<domain::Incident>) -> Self {
        Self { items: page.items.into_iter().map(Into::into).collect(), next_cursor: page.next_cursor }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    id: Uuid,
    team_id: String,
    name: String,
    phone: Option<String>,
    email: Option<String>,
    notes: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created_at: OffsetDateTime,
}

impl From<domain::Contact> for Contact {
    fn from(contact: domain::Contact) -> Self {
        Self {
            id: contact.id.0,
            team_id: contact.team_id.to_string(),
            name: contact.name,
            phone: contact.phone,
            email: contact.email,
            notes: contact.notes,
            created_at: contact.created_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(extra: serde_json::Value) -> IncidentRequest {
        let mut body = json!({
            "locationId": "0190b1e4-0000-7000-8000-000000000001",
            "type": "Spill / Slip Hazard", "severity": "high", "notes": "Wet floor by the walk-in",
        });
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(body).unwrap()
    }

    fn fields(errors: ValidationErrors) -> Vec<String> {
        errors.errors().iter().map(|e| e.field.clone()).collect()
    }

    #[test]
    fn a_plain_report_has_no_contact() {
        let incident = request(json!({})).try_into_domain().unwrap();
        assert_eq!(incident.contact, ContactChoice::None);
        assert_eq!(incident.incident_type, domain::IncidentType::SpillSlipHazard);
    }

    #[test]
    fn mode_none_forbids_contact_fields() {
        let errors = request(json!({ "contactName": "Ann", "contactId": Uuid::nil() })).try_into_domain().unwrap_err();
        assert_eq!(fields(errors), ["contactName", "contactId"]);
    }

    #[test]
    fn mode_existing_needs_an_id_and_nothing_else() {
        let errors = request(json!({ "contactMode": "existing" })).try_into_domain().unwrap_err();
        assert_eq!(fields(errors), ["contactId"]);
        let errors = request(json!({ "contactMode": "existing", "contactId": Uuid::nil(), "contactPhone": "5550102" }))
            .try_into_domain()
            .unwrap_err();
        assert_eq!(fields(errors), ["contactPhone"]);
    }

    #[test]
    fn mode_new_needs_a_name_and_a_way_to_reach_them() {
        let errors =
            request(json!({ "contactMode": "new", "contactEmail": "a@example.com" })).try_into_domain().unwrap_err();
        assert_eq!(fields(errors), ["contactName"]);
        let errors = request(json!({ "contactMode": "new", "contactName": "Ann" })).try_into_domain().unwrap_err();
        assert_eq!(fields(errors), ["contactPhone"]);
        let ok = request(json!({ "contactMode": "new", "contactName": "Ann", "contactEmail": "a@example.com" }));
        assert!(matches!(ok.try_into_domain().unwrap().contact, ContactChoice::New(_)));
    }

    #[test]
    fn every_broken_rule_is_reported_at_once() {
        let errors =
            request(json!({ "notes": " ", "mediaUrls": ["http://x.example/a"] })).try_into_domain().unwrap_err();
        assert_eq!(fields(errors), ["notes", "mediaUrls[0]"]);
    }
}
