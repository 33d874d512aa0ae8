//! Incidents (report, comment, change status, read back) and the contacts they may name.

mod contact;
mod cursor;
mod incident;
mod ports;
mod service;

pub use contact::{Contact, ContactId, ContactKey, NewContact};
pub use cursor::Cursor;
pub use incident::{
    Comment, ContactChoice, Incident, IncidentDetail, IncidentId, IncidentNotes, IncidentType, MediaUrls, NewIncident,
    Severity, Status, StatusChange, StatusUpdate,
};
pub use ports::{ContactStore, CreateIncidentError, IncidentFilter, IncidentStore};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockContactStore, MockIncidentStore};
pub use service::{IncidentError, IncidentService, ListIncidents, Page};
