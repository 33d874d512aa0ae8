//! The jobs that nudge people in their team chat (report reminders, weekly compliance, Hero of
//! the Shift) and scheduled announcements.

mod announcements;
mod expected;
mod heroes;
mod jobs;
mod ports;

pub use announcements::{
    Announcement, AnnouncementDraft, AnnouncementError, AnnouncementKey, AnnouncementService, NewAnnouncement,
};
pub use expected::{Missing, Slot, day_slots, expected_reports, missing_reports};
pub use heroes::top_heroes;
pub use jobs::{ComplianceWeek, NudgeJobs, NudgeTally, WeekCompliance};
pub use ports::{
    AnnouncementStore, FilingScope, Filings, Mvp, NudgeKey, NudgeLocation, NudgeStore, PendingPush, UserPush,
};
#[cfg(any(test, feature = "mock"))]
pub use ports::{MockAnnouncementStore, MockNudgeStore, MockUserPush};
