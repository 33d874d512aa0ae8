//! Setting a team up: its locations and its settings.

mod location;
mod ports;
mod service;

pub use location::{Location, LocationKey, LocationSlug, NewLocation, TimeZoneName};
pub use ports::{LocationStore, SaveLocationError, TeamSettingsStore};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockLocationStore, MockTeamSettingsStore};
pub use service::{SlugTaken, TeamError, TeamService};
