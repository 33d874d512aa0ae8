use std::sync::Arc;

use opsd_core::Week;
use opsd_core::{Clock, LocationId, StoreError, TeamChat, TeamId};
use opsd_reports::ReportShift;
use time::Date;
use time_tz::OffsetDateTimeExt;

use crate::expected::{Missing, expected_reports, missing_reports};
use crate::heroes::top_heroes;
use crate::ports::{NudgeLocation, NudgeStore};

/// What a nudging job did, for its plain-text answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NudgeTally {
    pub sent: u32,
    pub already: u32,
    pub failed: u32,
}

/// A location's filing of one week: what the schedule made due, what was filed, what is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeekCompliance {
    pub location: LocationId,
    pub location_name: String,
    pub week_start: Date,
    pub expected_shift: u32,
    pub filed_shift: u32,
    pub expected_manager: u32,
    pub filed_manager: u32,
    pub missing: Vec<Missing>,
}

#[derive(derive_new::new)]
pub struct NudgeJobs {
    store: Arc<dyn NudgeStore>,
    chat: Arc<dyn TeamChat>,
    clock: Arc<dyn Clock>,
}

fn shift_name(shift: ReportShift) -> &'static str {
    shift.as_str()
}

impl NudgeJobs {
    fn local_today(&self, location: &NudgeLocation) -> Date {
        let zone = time_tz::timezones::get_by_name(&location.timezone).unwrap_or(time_tz::timezones::db::UTC);
        self.clock.now().to_timezone(zone).date()
    }

    /// Records the nudge first (once per kind, target and period), then posts it; a provider that
    /// fails or hangs is counted and does not stop the job.
    async fn nudge(
        &self,
        location: &NudgeLocation,
        kind: &str,
        target: &str,
        period: &str,
        text: &str,
        tally: &mut NudgeTally,
    ) -> Result<(), StoreError> {
        if !self.store.record_nudge(kind, target, period, &location.team_id, self.clock.now()).await? {
            tally.already += 1;
            return Ok(());
        }
        let Some(url) = &location.chat_webhook_url else {
            tally.failed += 1;
            return Ok(());
        };
        match self.chat.post(url, text).await {
            Ok(()) => {
                self.store.nudge_delivered(kind, target, period).await?;
                tally.sent += 1;
            }
            Err(error) => {
                tracing::warn!(kind, target, %error, "a team-chat nudge was not delivered");
                tally.failed += 1;
            }
        }
        Ok(())
    }

    /// Today's missing reports of each location (today where the location is).
    pub async fn remind(&self) -> Result<NudgeTally, StoreError> {
        let mut tally = NudgeTally::default();
        for location in self.store.locations(None).await? {
            let today = self.local_today(&location);
            for missing in self.missing(&location, today, today).await? {
                let (kind, target, text) = match missing {
                    Missing::ShiftReport(date, shift) => (
                        "shift_report",
                        format!("{}:{}", location.id, shift_name(shift)),
                        format!(
                            "Reminder: the {} shift report for {} ({date}) has not been filed yet.",
                            shift_name(shift),
                            location.name
                        ),
                    ),
                    Missing::ManagerReport(date) => (
                        "manager_report",
                        location.id.to_string(),
                        format!(
                            "Reminder for managers: the daily manager report for {} ({date}) has not been filed yet.",
                            location.name
                        ),
                    ),
                };
                self.nudge(&location, kind, &target, &today.to_string(), &text, &mut tally).await?;
            }
        }
        Ok(tally)
    }

    /// A location's previous Saturday-to-Friday week: what was expected and what was filed.
    async fn last_week(&self, location: &NudgeLocation) -> Result<WeekCompliance, StoreError> {
        let week = Week::containing(self.local_today(location)).previous();
        let (from, to) = (week.start(), week.end());
        let starts = self.store.shift_starts(location.id, &location.timezone, from, to).await?;
        let expected = expected_reports(&starts);
        let filed_shift = self.store.filed_shift_reports(location.id, from, to).await?;
        let filed_manager = self.store.filed_manager_reports(location.id, from, to).await?;
        let missing = missing_reports(&expected, &filed_shift, &filed_manager);
        let expected_shift: u32 = expected.values().map(|shifts| shifts.len() as u32).sum();
        let expected_manager = expected.len() as u32;
        let missing_shift = missing.iter().filter(|m| matches!(m, Missing::ShiftReport(..))).count() as u32;
        let missing_manager = missing.len() as u32 - missing_shift;
        Ok(WeekCompliance {
            location: location.id,
            location_name: location.name.clone(),
            week_start: from,
            expected_shift,
            filed_shift: expected_shift - missing_shift,
            expected_manager,
            filed_manager: expected_manager - missing_manager,
            missing,
        })
    }

    /// Last week's filing of each of the team's locations, as the compliance job counts it.
    pub async fn compliance(&self, team: &TeamId) -> Result<Vec<WeekCompliance>, StoreError> {
        let mut weeks = Vec::new();
        for location in self.store.locations(Some(team)).await?.iter() {
            weeks.push(self.last_week(location).await?);
        }
        Ok(weeks)
    }

    /// The previous Saturday-to-Friday week of each location: stores what was expected and filed,
    /// and nudges staff and managers about what is missing.
    pub async fn check_compliance(&self) -> Result<NudgeTally, StoreError> {
        let mut tally = NudgeTally::default();
        for location in self.store.locations(None).await? {
            let WeekCompliance {
                week_start: from, expected_shift, filed_shift, expected_manager, filed_manager, ..
            } = self.last_week(&location).await?;
            let (missing_shift, missing_manager) = (expected_shift - filed_shift, expected_manager - filed_manager);
            self.store
                .save_compliance(
                    location.id,
                    from,
                    expected_shift,
                    expected_shift - missing_shift,
                    expected_manager,
                    expected_manager - missing_manager,
                    self.clock.now(),
                )
                .await?;
            let period = from.to_string();
            if missing_shift > 0 {
                let text = format!(
                    "Weekly filing for {} (week of {from}): {} of {expected_shift} shift reports filed. Please file the missing ones.",
                    location.name,
                    expected_shift - missing_shift
                );
                self.nudge(&location, "compliance_staff", &location.id.to_string(), &period, &text, &mut tally).await?;
            }
            if missing_manager > 0 {
                let text = format!(
                    "Managers: {} of {expected_manager} daily manager reports were filed for {} (week of {from}).",
                    expected_manager - missing_manager,
                    location.name
                );
                self.nudge(&location, "compliance_manager", &location.id.to_string(), &period, &text, &mut tally)
                    .await?;
            }
        }
        Ok(tally)
    }

    /// Counts the previous week's Hero of the Shift mentions per location and posts one MVP
    /// message per location and week.
    pub async fn aggregate_heroes(&self) -> Result<NudgeTally, StoreError> {
        let mut tally = NudgeTally::default();
        for location in self.store.locations(None).await? {
            let week = Week::containing(self.local_today(&location)).previous();
            let mentions = self.store.hero_mentions(location.id, week.start(), week.end()).await?;
            let Some((names, count)) = top_heroes(&mentions) else { continue };
            if !self.store.record_mvp(location.id, week.start(), names.clone(), count, self.clock.now()).await? {
                tally.already += 1;
                continue;
            }
            let text = format!(
                "Hero of the Shift at {}, week of {}: {} ({count} mention{}). Thank you!",
                location.name,
                week.start(),
                names.join(" and "),
                if count == 1 { "" } else { "s" }
            );
            let Some(url) = &location.chat_webhook_url else {
                tally.failed += 1;
                continue;
            };
            match self.chat.post(url, &text).await {
                Ok(()) => {
                    self.store.mvp_posted(location.id, week.start()).await?;
                    tally.sent += 1;
                }
                Err(error) => {
                    tracing::warn!(location = %location.id, %error, "the MVP message was not delivered");
                    tally.failed += 1;
                }
            }
        }
        Ok(tally)
    }

    async fn missing(&self, location: &NudgeLocation, from: Date, to: Date) -> Result<Vec<Missing>, StoreError> {
        let starts = self.store.shift_starts(location.id, &location.timezone, from, to).await?;
        let expected = expected_reports(&starts);
        let filed_shift = self.store.filed_shift_reports(location.id, from, to).await?;
        let filed_manager = self.store.filed_manager_reports(location.id, from, to).await?;
        Ok(missing_reports(&expected, &filed_shift, &filed_manager))
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::{always, eq};
    use opsd_core::{LocationId, MockClock, MockTeamChat, TeamId};
    use time::macros::{date, datetime};
    use uuid::Uuid;

    use super::*;
    use crate::ports::MockNudgeStore;

    fn location() -> NudgeLocation {
        NudgeLocation {
            id: LocationId(Uuid::nil()),
            team_id: TeamId::new("org_1"),
            name: "Downtown".into(),
            timezone: "America/Chicago".into(),
            chat_webhook_url: Some("https://hooks.example/x".into()),
        }
    }

    fn jobs(store: MockNudgeStore, chat: MockTeamChat, now: time::OffsetDateTime) -> NudgeJobs {
        let mut clock = MockClock::new();
        clock.expect_now().returning(move || now);
        NudgeJobs::new(Arc::new(store), Arc::new(chat), Arc::new(clock))
    }

    #[tokio::test]
    async fn the_reminder_uses_the_locations_today_and_never_nudges_twice() {
        let mut store = MockNudgeStore::new();
        store.expect_locations().returning(|_| Ok(vec![location()]));
        // 02:00 UTC on the 22nd is still the 21st in Chicago.
        let today = date!(2026 - 11 - 21);
        store
            .expect_shift_starts()
            .with(always(), eq("America/Chicago"), eq(today), eq(today))
            .returning(move |_, _, _, _| Ok(vec![(today, 17)]));
        store.expect_filed_shift_reports().returning(|_, _, _| Ok(vec![]));
        store.expect_filed_manager_reports().returning(move |_, _, _| Ok(vec![today]));
        let mut first = true;
        store.expect_record_nudge().returning(move |kind, _, period, _, _| {
            assert_eq!((kind, period), ("shift_report", "2026-11-21"));
            Ok(std::mem::replace(&mut first, false))
        });
        store.expect_nudge_delivered().times(1).returning(|_, _, _| Ok(()));
        let mut chat = MockTeamChat::new();
        chat.expect_post()
            .withf(|_, text| text.contains("evening shift report for Downtown"))
            .times(1)
            .returning(|_, _| Ok(()));
        let jobs = jobs(store, chat, datetime!(2026-11-22 02:00 UTC));
        assert_eq!(jobs.remind().await.unwrap(), NudgeTally { sent: 1, already: 0, failed: 0 });
        assert_eq!(jobs.remind().await.unwrap(), NudgeTally { sent: 0, already: 1, failed: 0 });
    }

    #[tokio::test]
    async fn compliance_checks_the_previous_saturday_to_friday_week() {
        let mut store = MockNudgeStore::new();
        store.expect_locations().returning(|_| Ok(vec![location()]));
        let (from, to) = (date!(2026 - 11 - 14), date!(2026 - 11 - 20));
        store
            .expect_shift_starts()
            .with(always(), always(), eq(from), eq(to))
            .returning(move |_, _, _, _| Ok(vec![(from, 9), (from, 18), (to, 12)]));
        store.expect_filed_shift_reports().returning(move |_, _, _| Ok(vec![(from, ReportShift::Morning)]));
        store.expect_filed_manager_reports().returning(move |_, _, _| Ok(vec![from, to]));
        store
            .expect_save_compliance()
            .with(always(), eq(from), eq(3), eq(1), eq(2), eq(2), always())
            .times(1)
            .returning(|_, _, _, _, _, _, _| Ok(()));
        store
            .expect_record_nudge()
            .withf(|kind, _, period, _, _| kind == "compliance_staff" && period == "2026-11-14")
            .times(1)
            .returning(|_, _, _, _, _| Ok(true));
        store.expect_nudge_delivered().returning(|_, _, _| Ok(()));
        let mut chat = MockTeamChat::new();
        chat.expect_post().withf(|_, text| text.contains("1 of 3 shift reports")).times(1).returning(|_, _| Ok(()));
        // Monday 14:00 UTC.
        let tally = jobs(store, chat, datetime!(2026-11-23 14:00 UTC)).check_compliance().await.unwrap();
        assert_eq!(tally.sent, 1);
    }

    #[tokio::test]
    async fn a_failing_chat_is_counted_and_the_job_goes_on() {
        let mut store = MockNudgeStore::new();
        store
            .expect_locations()
            .returning(|_| Ok(vec![location(), NudgeLocation { id: LocationId(Uuid::from_u128(1)), ..location() }]));
        store.expect_hero_mentions().returning(|_, _, _| Ok(vec!["Maria".into(), "maria ".into(), "Ben".into()]));
        store
            .expect_record_mvp()
            .withf(|_, week, names, count, _| {
                *week == date!(2026 - 11 - 14) && names == &["Maria".to_owned()] && *count == 2
            })
            .returning(|_, _, _, _, _| Ok(true));
        store.expect_mvp_posted().times(1).returning(|_, _| Ok(()));
        let mut chat = MockTeamChat::new();
        let mut calls = 0;
        chat.expect_post().returning(move |_, _| {
            calls += 1;
            if calls == 1 { Err("timeout".into()) } else { Ok(()) }
        });
        let tally = jobs(store, chat, datetime!(2026-11-23 14:00 UTC)).aggregate_heroes().await.unwrap();
        assert_eq!(tally, NudgeTally { sent: 1, already: 0, failed: 1 });
    }
}
