use opsd_core::{FieldError, TeamId, TextLength, ValidationErrors};
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContactId(pub Uuid);

/// Someone an incident involves: a name and at least one way to reach them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewContact {
    pub name: String,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub notes: Option<String>,
}

impl NewContact {
    pub const NAME: TextLength = TextLength::new(1, 200);
    pub const NOTES: TextLength = TextLength::new(0, 2000);
    pub const PHONE_CHARS: (usize, usize) = (5, 32);
    pub const PHONE_MIN_DIGITS: usize = 5;
    /// What a phone number holds besides digits.
    pub const PHONE_SYMBOLS: &str = " +-().";
    pub const EMAIL_MAX_CHARS: usize = 254;

    /// `prefix` names the fields as the request spells them (`contactName` or `name`).
    pub fn parse(
        fields: [&str; 4],
        name: Option<&str>,
        phone: Option<&str>,
        email: Option<&str>,
        notes: Option<&str>,
    ) -> Result<Self, ValidationErrors> {
        let [name_field, phone_field, email_field, notes_field] = fields;
        let mut errors = ValidationErrors::new();
        let name = name.map(str::trim).unwrap_or_default();
        if !Self::NAME.fits(name) {
            errors.push(name_field, Self::NAME.message());
        }
        let phone = blank_to_none(phone);
        let email = blank_to_none(email);
        if let Some(phone) = phone {
            errors.check(check_phone(phone_field, phone));
        }
        if let Some(email) = email {
            errors.check(check_email(email_field, email));
        }
        if phone.is_none() && email.is_none() {
            errors.push(phone_field, "a phone or an e-mail address is required");
        }
        let notes = blank_to_none(notes);
        if notes.is_some_and(|n| !Self::NOTES.fits(n)) {
            errors.push(notes_field, Self::NOTES.message());
        }
        errors.into_result()?;
        Ok(Self {
            name: name.to_owned(),
            phone: phone.map(str::to_owned),
            email: email.map(str::to_owned),
            notes: notes.map(str::to_owned),
        })
    }
}

fn blank_to_none(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// 5 to 32 characters of digits, spaces and `+-().`, with at least 5 digits.
fn check_phone(field: &str, phone: &str) -> Result<(), FieldError> {
    let allowed = phone.chars().all(|c| c.is_ascii_digit() || NewContact::PHONE_SYMBOLS.contains(c));
    let digits = phone.chars().filter(char::is_ascii_digit).count();
    let (min, max) = NewContact::PHONE_CHARS;
    if allowed && (min..=max).contains(&phone.len()) && digits >= NewContact::PHONE_MIN_DIGITS {
        Ok(())
    } else {
        Err(FieldError::new(field, "must be a phone number"))
    }
}

/// A plausible address: one `@`, a local part, a dotted domain, no spaces, at most 254 characters.
fn check_email(field: &str, email: &str) -> Result<(), FieldError> {
    let valid = email.len() <= NewContact::EMAIL_MAX_CHARS
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        });
    if valid { Ok(()) } else { Err(FieldError::new(field, "must be an e-mail address")) }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contact {
    pub id: ContactId,
    pub team_id: TeamId,
    pub name: String,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub notes: Option<String>,
    pub created_at: OffsetDateTime,
}

/// Where a contact stands in the list: by name, then id.
pub type ContactKey = (String, uuid::Uuid);

impl Contact {
    pub fn key(&self) -> ContactKey {
        (self.name.clone(), self.id.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: [&str; 4] = ["contactName", "contactPhone", "contactEmail", "contactNotes"];

    #[test]
    fn a_contact_needs_a_name_and_a_way_to_reach_them() {
        assert!(NewContact::parse(FIELDS, Some("Ann"), Some("+1 (555) 010-2030"), None, None).is_ok());
        assert!(NewContact::parse(FIELDS, Some("Ann"), None, Some("ann@example.com"), None).is_ok());
        let errors = NewContact::parse(FIELDS, None, Some("555-0102"), None, None).unwrap_err();
        assert_eq!(errors.errors()[0].field, "contactName");
        let errors = NewContact::parse(FIELDS, Some("Ann"), Some(" "), None, None).unwrap_err();
        assert_eq!(errors.errors()[0].field, "contactPhone");
    }

    #[test]
    fn emails_and_phones_are_checked() {
        for bad in ["ann", "ann@", "@example.com", "ann@example", "a b@example.com", "ann@.com"] {
            let errors = NewContact::parse(FIELDS, Some("Ann"), None, Some(bad), None).unwrap_err();
            assert_eq!(errors.errors()[0].field, "contactEmail", "{bad}");
        }
        for bad in ["12", "call me", "1234567890123456789012345678901234"] {
            let errors = NewContact::parse(FIELDS, Some("Ann"), Some(bad), None, None).unwrap_err();
            assert_eq!(errors.errors()[0].field, "contactPhone", "{bad}");
        }
    }
}
