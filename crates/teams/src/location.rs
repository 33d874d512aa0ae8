use opsd_core::{FieldError, LocationId, TeamId, TextLength, ValidationErrors};
use time::OffsetDateTime;

/// `[a-z0-9-]{1,64}`, unique across all teams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationSlug(String);

impl LocationSlug {
    /// The whole rule, as the API document states it.
    pub const PATTERN: &str = "^[a-z0-9-]{1,64}$";

    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        let valid = (1..=64).contains(&raw.len())
            && raw.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if valid { Ok(Self(raw.to_owned())) } else { Err(FieldError::new("slug", "must match [a-z0-9-]{1,64}")) }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An IANA time zone name the service knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeZoneName(String);

impl TimeZoneName {
    /// Every name `parse` accepts.
    pub fn names() -> impl Iterator<Item = &'static str> {
        time_tz::timezones::iter().map(time_tz::TimeZone::name)
    }

    pub fn parse(raw: &str) -> Result<Self, FieldError> {
        match time_tz::timezones::get_by_name(raw) {
            Some(_) if !raw.is_empty() => Ok(Self(raw.to_owned())),
            _ => Err(FieldError::new("timezone", "must be an IANA time zone name such as America/Chicago")),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn tz(&self) -> &'static time_tz::Tz {
        time_tz::timezones::get_by_name(&self.0).expect("validated on parse")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLocation {
    pub name: String,
    pub slug: LocationSlug,
    pub timezone: TimeZoneName,
    pub scheduler_location_id: Option<String>,
}

impl NewLocation {
    pub const NAME: TextLength = TextLength::new(1, 200);
    pub const SCHEDULER_ID: TextLength = TextLength::new(0, 64);

    pub fn parse(
        name: &str,
        slug: &str,
        timezone: &str,
        scheduler_location_id: Option<&str>,
    ) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let name = name.trim();
        if !Self::NAME.fits(name) {
            errors.push("name", Self::NAME.message());
        }
        let slug = errors.check(LocationSlug::parse(slug));
        let timezone = errors.check(TimeZoneName::parse(timezone));
        let scheduler_location_id = scheduler_location_id.map(str::trim).filter(|id| !id.is_empty());
        if scheduler_location_id.is_some_and(|id| !Self::SCHEDULER_ID.fits(id)) {
            errors.push("schedulerLocationId", Self::SCHEDULER_ID.message());
        }
        errors.into_result()?;
        Ok(Self {
            name: name.to_owned(),
            slug: slug.expect("checked"),
            timezone: timezone.expect("checked"),
            scheduler_location_id: scheduler_location_id.map(str::to_owned),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub id: LocationId,
    pub team_id: TeamId,
    pub name: String,
    pub slug: LocationSlug,
    pub timezone: TimeZoneName,
    pub scheduler_location_id: Option<String>,
    pub created_at: OffsetDateTime,
}

/// Where a location stands in the team's list: by name, then id.
pub type LocationKey = (String, uuid::Uuid);

impl Location {
    pub fn key(&self) -> LocationKey {
        (self.name.clone(), self.id.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lowercase_digits_and_dashes() {
        assert!(LocationSlug::parse("downtown-2").is_ok());
        for bad in ["", "Downtown", "down town", "down_town", "ü", &"a".repeat(65)] {
            assert!(LocationSlug::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_zones_are_iana_names() {
        assert!(TimeZoneName::parse("America/Chicago").is_ok());
        assert!(TimeZoneName::parse("UTC").is_ok());
        assert!(TimeZoneName::parse("Mars/Olympus").is_err());
        assert!(TimeZoneName::parse("").is_err());
    }

    #[test]
    fn a_new_location_reports_every_broken_field() {
        let errors = NewLocation::parse(" ", "Bad Slug", "Nowhere", None).unwrap_err();
        let fields: Vec<&str> = errors.errors().iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["name", "slug", "timezone"]);
    }

    #[test]
    fn a_blank_scheduler_id_means_none() {
        let location = NewLocation::parse("Downtown", "downtown", "UTC", Some("  ")).unwrap();
        assert_eq!(location.scheduler_location_id, None);
    }
}
