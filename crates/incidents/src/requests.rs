//! The request bodies as clients send them; `parse` turns each into validated domain values.

use opsd_core::{LocationId, ValidationErrors};
use serde::Deserialize;
use uuid::Uuid;

use crate::contact::{ContactId, NewContact};
use crate::incident::{ContactChoice, IncidentNotes, IncidentType, MediaUrls, NewIncident, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ContactMode {
    None,
    Existing,
    New,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IncidentRequest {
    pub location_id: Uuid,
    #[serde(rename = "type")]
    pub incident_type: IncidentType,
    pub severity: Severity,
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
    pub fn parse(self) -> Result<NewIncident, ValidationErrors> {
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

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    pub fn parse(self) -> Result<NewContact, ValidationErrors> {
        NewContact::parse(
            ["name", "phone", "email", "notes"],
            Some(&self.name),
            self.phone.as_deref(),
            self.email.as_deref(),
            self.notes.as_deref(),
        )
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
        let incident = request(json!({})).parse().unwrap();
        assert_eq!(incident.contact, ContactChoice::None);
        assert_eq!(incident.incident_type, IncidentType::SpillSlipHazard);
    }

    #[test]
    fn mode_none_forbids_contact_fields() {
        let errors = request(json!({ "contactName": "Ann", "contactId": Uuid::nil() })).parse().unwrap_err();
        assert_eq!(fields(errors), ["contactName", "contactId"]);
    }

    #[test]
    fn mode_existing_needs_an_id_and_nothing_else() {
        let errors = request(json!({ "contactMode": "existing" })).parse().unwrap_err();
        assert_eq!(fields(errors), ["contactId"]);
        let errors = request(json!({ "contactMode": "existing", "contactId": Uuid::nil(), "contactPhone": "5550102" }))
            .parse()
            .unwrap_err();
        assert_eq!(fields(errors), ["contactPhone"]);
    }

    #[test]
    fn mode_new_needs_a_name_and_a_way_to_reach_them() {
        let errors = request(json!({ "contactMode": "new", "contactEmail": "a@example.com" })).parse().unwrap_err();
        assert_eq!(fields(errors), ["contactName"]);
        let errors = request(json!({ "contactMode": "new", "contactName": "Ann" })).parse().unwrap_err();
        assert_eq!(fields(errors), ["contactPhone"]);
        let ok = request(json!({ "contactMode": "new", "contactName": "Ann", "contactEmail": "a@example.com" }));
        assert!(matches!(ok.parse().unwrap().contact, ContactChoice::New(_)));
    }

    #[test]
    fn every_broken_rule_is_reported_at_once() {
        let errors = request(json!({ "notes": " ", "mediaUrls": ["http://x.example/a"] })).parse().unwrap_err();
        assert_eq!(fields(errors), ["notes", "mediaUrls[0]"]);
    }
}
