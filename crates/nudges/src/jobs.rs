use std::collections::BTreeMap;
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use opsd_core::Week;
use opsd_core::{Clock, LocationId, StoreError, TeamChat, TeamId};
use opsd_reports::ReportShift;
use time::Date;
use time_tz::OffsetDateTimeExt;

use crate::expected::{Missing, SLOT_SHIFTS, Slot, day_slots, expected_reports, missing_reports};
use crate::heroes::top_heroes;
use crate::ports::{FilingScope, Filings, Mvp, NudgeKey, NudgeLocation, NudgeStore};

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
    /// Each day of the week: its shift slots (morning, afternoon, evening) and its manager report.
    pub days: Vec<(Date, [Slot; 4])>,
}

/// Which Saturday-to-Friday week of each location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComplianceWeek {
    /// The previous week, as the compliance job counts it.
    Last,
    /// The week so far: what is owed from today on is not yet due.
    Current,
}

#[derive(derive_new::new)]
pub struct NudgeJobs {
    store: Arc<dyn NudgeStore>,
    chat: Arc<dyn TeamChat>,
    clock: Arc<dyn Clock>,
}

/// Teams whose chats are posted to at once. One team's posts go one after another: its chat is one
/// Slack-compatible webhook, which takes about one message a second (short bursts allowed) and
/// answers more with 429; posts to different teams' webhooks do not wait for each other.
const TEAMS_AT_ONCE: usize = 4;

/// A nudge to record and post.
struct Nudge<'a> {
    location: &'a NudgeLocation,
    key: NudgeKey,
    text: String,
}

/// What became of one post.
enum Posted {
    Sent,
    Already,
    Failed,
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
    async fn nudge(&self, nudge: &Nudge<'_>) -> Result<Posted, StoreError> {
        let Nudge { location, key, text } = nudge;
        if !self.store.record_nudge(key, &location.team_id, self.clock.now()).await? {
            return Ok(Posted::Already);
        }
        let Some(url) = &location.chat_webhook_url else {
            return Ok(Posted::Failed);
        };
        match self.chat.post(url, text).await {
            Ok(()) => {
                self.store.nudge_delivered(key).await?;
                Ok(Posted::Sent)
            }
            Err(error) => {
                tracing::warn!(kind = key.kind, target = key.target, %error, "a team-chat nudge was not delivered");
                Ok(Posted::Failed)
            }
        }
    }

    /// Sends the nudges that no earlier run recorded (one statement finds those), and counts the
    /// others as already nudged.
    async fn send_nudges(&self, nudges: &[Nudge<'_>]) -> Result<NudgeTally, StoreError> {
        if nudges.is_empty() {
            return Ok(NudgeTally::default());
        }
        let keys: Vec<NudgeKey> = nudges.iter().map(|nudge| nudge.key.clone()).collect();
        let before = self.store.nudged_before(&keys).await?;
        if before.len() != nudges.len() {
            return Err(StoreError::Unknown(format!("{} answers for {} nudges", before.len(), nudges.len())));
        }
        let new: Vec<_> = nudges
            .iter()
            .zip(&before)
            .filter(|(_, before)| !**before)
            .map(|(nudge, _)| (&nudge.location.team_id, self.nudge(nudge)))
            .collect();
        let already = (nudges.len() - new.len()) as u32;
        let tally = tally_of(new).await?;
        Ok(NudgeTally { already: tally.already + already, ..tally })
    }

    /// Today's missing reports of each location (today where the location is).
    pub async fn remind(&self) -> Result<NudgeTally, StoreError> {
        let locations = self.store.locations(None).await?;
        let scopes = self.scopes_of(&locations, |today| (today, today));
        let mut filings = self.store.filings(&scopes).await?;
        let mut nudges = Vec::new();
        for (location, scope) in locations.iter().zip(&scopes) {
            let today = scope.from;
            let filed = filings.remove(&location.id).unwrap_or_default();
            for missing in
                missing_reports(&expected_reports(&filed.shift_starts), &filed.shift_reports, &filed.manager_reports)
            {
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
                nudges.push(Nudge { location, key: NudgeKey { kind, target, period: today.to_string() }, text });
            }
        }
        self.send_nudges(&nudges).await
    }

    /// Each location's dates, from today where the location is.
    fn scopes_of(&self, locations: &[NudgeLocation], dates: impl Fn(Date) -> (Date, Date)) -> Vec<FilingScope> {
        locations
            .iter()
            .map(|location| {
                let (from, to) = dates(self.local_today(location));
                FilingScope { location: location.id, timezone: location.timezone.clone(), from, to }
            })
            .collect()
    }

    /// Each location's previous week: what was expected and what was filed.
    async fn weeks(
        &self,
        locations: &[NudgeLocation],
        which: ComplianceWeek,
    ) -> Result<Vec<WeekCompliance>, StoreError> {
        let scopes = self.scopes_of(locations, |today| {
            let week = Week::containing(today);
            let week = if which == ComplianceWeek::Last { week.previous() } else { week };
            (week.start(), week.end())
        });
        let mut filings = self.store.filings(&scopes).await?;
        Ok(locations
            .iter()
            .zip(scopes)
            .map(|(location, scope)| {
                let filed = filings.remove(&location.id).unwrap_or_default();
                week_compliance(location, (scope.from, scope.to), self.local_today(location), &filed)
            })
            .collect())
    }

    /// A week's filing of each of the team's locations, as the compliance job counts it.
    pub async fn compliance(&self, team: &TeamId, which: ComplianceWeek) -> Result<Vec<WeekCompliance>, StoreError> {
        let locations = self.store.locations(Some(team)).await?;
        self.weeks(&locations, which).await
    }

    /// The previous Saturday-to-Friday week of each location: stores what was expected and filed,
    /// and nudges staff and managers about what is missing.
    pub async fn check_compliance(&self) -> Result<NudgeTally, StoreError> {
        let locations = self.store.locations(None).await?;
        let weeks = self.weeks(&locations, ComplianceWeek::Last).await?;
        self.store.save_compliance(&weeks, self.clock.now()).await?;
        let mut nudges = Vec::new();
        for (location, week) in locations.iter().zip(&weeks) {
            let WeekCompliance {
                week_start: from, expected_shift, filed_shift, expected_manager, filed_manager, ..
            } = *week;
            let period = from.to_string();
            if filed_shift < expected_shift {
                let text = format!(
                    "Weekly filing for {} (week of {from}): {filed_shift} of {expected_shift} shift reports filed. Please file the missing ones.",
                    location.name
                );
                let target = location.id.to_string();
                let key = NudgeKey { kind: "compliance_staff", target, period: period.clone() };
                nudges.push(Nudge { location, key, text });
            }
            if filed_manager < expected_manager {
                let text = format!(
                    "Managers: {filed_manager} of {expected_manager} daily manager reports were filed for {} (week of {from}).",
                    location.name
                );
                let target = location.id.to_string();
                nudges.push(Nudge { location, key: NudgeKey { kind: "compliance_manager", target, period }, text });
            }
        }
        self.send_nudges(&nudges).await
    }

    /// Counts the previous week's Hero of the Shift mentions per location and posts one MVP
    /// message per location and week.
    pub async fn aggregate_heroes(&self) -> Result<NudgeTally, StoreError> {
        let locations = self.store.locations(None).await?;
        let weeks = self.scopes_of(&locations, |today| {
            let week = Week::containing(today).previous();
            (week.start(), week.end())
        });
        let mentions = self.store.hero_mentions(&weeks).await?;
        let pending: Vec<_> = locations
            .iter()
            .zip(&weeks)
            .filter_map(|(location, week)| {
                let (names, mentions) = top_heroes(mentions.get(&location.id)?)?;
                let mvp = Mvp { location: location.id, week_start: week.from, names, mentions };
                Some((&location.team_id, self.post_mvp(location, mvp)))
            })
            .collect();
        tally_of(pending).await
    }

    /// Records the week's MVP message first (once per location and week), then posts it.
    async fn post_mvp(&self, location: &NudgeLocation, mvp: Mvp) -> Result<Posted, StoreError> {
        if !self.store.record_mvp(&mvp, self.clock.now()).await? {
            return Ok(Posted::Already);
        }
        let text = format!(
            "Hero of the Shift at {}, week of {}: {} ({} mention{}). Thank you!",
            location.name,
            mvp.week_start,
            mvp.names.join(" and "),
            mvp.mentions,
            if mvp.mentions == 1 { "" } else { "s" }
        );
        let Some(url) = &location.chat_webhook_url else {
            return Ok(Posted::Failed);
        };
        match self.chat.post(url, &text).await {
            Ok(()) => {
                self.store.mvp_posted(mvp.location, mvp.week_start).await?;
                Ok(Posted::Sent)
            }
            Err(error) => {
                tracing::warn!(location = %location.id, %error, "the MVP message was not delivered");
                Ok(Posted::Failed)
            }
        }
    }
}

/// Runs each team's posts one after another, [`TEAMS_AT_ONCE`] teams at a time, and counts them.
/// Every post runs to its end before a store error is returned: one recorded and then dropped
/// mid-post would never be sent. The posts come collected: with a closure inside the stream's
/// type, the compiler cannot prove the job's future `Send` ("implementation of `FnOnce` is not
/// general enough").
async fn tally_of<F: Future<Output = Result<Posted, StoreError>>>(
    posts: Vec<(&TeamId, F)>,
) -> Result<NudgeTally, StoreError> {
    let mut by_team: BTreeMap<&TeamId, Vec<F>> = BTreeMap::new();
    for (team, post) in posts {
        by_team.entry(team).or_default().push(post);
    }
    let turns: Vec<_> = by_team.into_values().map(in_turn).collect();
    let outcomes: Vec<Vec<_>> = stream::iter(turns).buffer_unordered(TEAMS_AT_ONCE).collect().await;
    let mut tally = NudgeTally::default();
    for outcome in outcomes.into_iter().flatten() {
        match outcome? {
            Posted::Sent => tally.sent += 1,
            Posted::Already => tally.already += 1,
            Posted::Failed => tally.failed += 1,
        }
    }
    Ok(tally)
}

async fn in_turn<F: Future>(posts: Vec<F>) -> Vec<F::Output> {
    let mut outcomes = Vec::with_capacity(posts.len());
    for post in posts {
        outcomes.push(post.await);
    }
    outcomes
}

fn week_compliance(location: &NudgeLocation, week: (Date, Date), today: Date, filed: &Filings) -> WeekCompliance {
    let expected = expected_reports(&filed.shift_starts);
    let days = day_slots(week, today, &expected, &filed.shift_reports, &filed.manager_reports);
    // The slots already tell what is missing (what is not due yet is not), in the day's order.
    let missing: Vec<Missing> = days
        .iter()
        .flat_map(|(date, slots)| {
            let shifts = SLOT_SHIFTS.into_iter().zip(slots).filter(|(_, slot)| **slot == Slot::Missing);
            let manager = (slots[3] == Slot::Missing).then_some(Missing::ManagerReport(*date));
            shifts.map(|(shift, _)| Missing::ShiftReport(*date, shift)).chain(manager)
        })
        .collect();
    let expected_shift: u32 = expected.values().map(|shifts| shifts.len() as u32).sum();
    let expected_manager = expected.len() as u32;
    let missing_shift = missing.iter().filter(|m| matches!(m, Missing::ShiftReport(..))).count() as u32;
    let missing_manager = missing.len() as u32 - missing_shift;
    let not_yet_due = |slots: std::ops::Range<usize>| -> u32 {
        days.iter().map(|(_, day)| day[slots.clone()].iter().filter(|s| **s == Slot::NotYetDue).count() as u32).sum()
    };
    WeekCompliance {
        location: location.id,
        location_name: location.name.clone(),
        week_start: week.0,
        expected_shift,
        filed_shift: expected_shift - missing_shift - not_yet_due(0..3),
        expected_manager,
        filed_manager: expected_manager - missing_manager - not_yet_due(3..4),
        missing,
        days,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use opsd_core::{LocationId, MockClock, MockTeamChat, TeamChat, TeamId};
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

    fn filed(
        shift_starts: Vec<(Date, u8)>,
        shift_reports: Vec<(Date, ReportShift)>,
        manager_reports: Vec<Date>,
    ) -> HashMap<LocationId, Filings> {
        HashMap::from([(location().id, Filings { shift_starts, shift_reports, manager_reports })])
    }

    /// No nudge was recorded by an earlier run.
    fn none_before(store: &mut MockNudgeStore) {
        store.expect_nudged_before().returning(|keys| Ok(vec![false; keys.len()]));
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
            .expect_filings()
            .withf(move |scopes| {
                scopes
                    == [FilingScope {
                        location: location().id,
                        timezone: "America/Chicago".into(),
                        from: today,
                        to: today,
                    }]
            })
            .returning(move |_| Ok(filed(vec![(today, 17)], vec![], vec![today])));
        let mut first = true;
        none_before(&mut store);
        store.expect_record_nudge().returning(move |key, _, _| {
            assert_eq!((key.kind, key.period.as_str()), ("shift_report", "2026-11-21"));
            Ok(std::mem::replace(&mut first, false))
        });
        store.expect_nudge_delivered().times(1).returning(|_| Ok(()));
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
        store.expect_filings().withf(move |scopes| scopes[0].from == from && scopes[0].to == to).returning(move |_| {
            Ok(filed(vec![(from, 9), (from, 18), (to, 12)], vec![(from, ReportShift::Morning)], vec![from, to]))
        });
        store
            .expect_save_compliance()
            .withf(move |weeks, _| {
                let week = &weeks[0];
                weeks.len() == 1
                    && (
                        week.week_start,
                        week.expected_shift,
                        week.filed_shift,
                        week.expected_manager,
                        week.filed_manager,
                    ) == (from, 3, 1, 2, 2)
            })
            .times(1)
            .returning(|_, _| Ok(()));
        none_before(&mut store);
        store
            .expect_record_nudge()
            .withf(|key, _, _| key.kind == "compliance_staff" && key.period == "2026-11-14")
            .times(1)
            .returning(|_, _, _| Ok(true));
        store.expect_nudge_delivered().returning(|_| Ok(()));
        let mut chat = MockTeamChat::new();
        chat.expect_post().withf(|_, text| text.contains("1 of 3 shift reports")).times(1).returning(|_, _| Ok(()));
        // Monday 14:00 UTC.
        let tally = jobs(store, chat, datetime!(2026-11-23 14:00 UTC)).check_compliance().await.unwrap();
        assert_eq!(tally.sent, 1);
    }

    #[tokio::test]
    async fn the_current_week_owes_nothing_from_today_on() {
        let mut store = MockNudgeStore::new();
        store.expect_locations().returning(|_| Ok(vec![location()]));
        let (saturday, sunday, monday) = (date!(2026 - 11 - 21), date!(2026 - 11 - 22), date!(2026 - 11 - 23));
        store
            .expect_filings()
            .withf(move |scopes| scopes[0].from == saturday && scopes[0].to == date!(2026 - 11 - 27))
            .returning(move |_| {
                Ok(filed(
                    vec![(saturday, 9), (sunday, 18), (monday, 9)],
                    vec![(saturday, ReportShift::Morning)],
                    vec![saturday],
                ))
            });
        // Monday 14:00 UTC: Monday's reports are not due yet.
        let jobs = jobs(store, MockTeamChat::new(), datetime!(2026-11-23 14:00 UTC));
        let weeks = jobs.compliance(&TeamId::new("org_1"), ComplianceWeek::Current).await.unwrap();
        let week = &weeks[0];
        assert_eq!(week.missing, [Missing::ShiftReport(sunday, ReportShift::Evening), Missing::ManagerReport(sunday)]);
        assert_eq!((week.expected_shift, week.filed_shift, week.expected_manager, week.filed_manager), (3, 1, 3, 1));
        assert_eq!(week.days.len(), 7);
        assert_eq!(week.days[2], (monday, [Slot::NotYetDue, Slot::NotOwed, Slot::NotOwed, Slot::NotYetDue]));
    }

    #[tokio::test]
    async fn a_failing_chat_is_counted_and_the_job_goes_on() {
        let mut store = MockNudgeStore::new();
        store
            .expect_locations()
            .returning(|_| Ok(vec![location(), NudgeLocation { id: LocationId(Uuid::from_u128(1)), ..location() }]));
        store.expect_hero_mentions().times(1).returning(|scopes| {
            assert!(scopes.iter().all(|week| week.from == date!(2026 - 11 - 14) && week.to == date!(2026 - 11 - 20)));
            let mentions: Vec<String> = vec!["Maria".into(), "maria ".into(), "Ben".into()];
            Ok(scopes.iter().map(|week| (week.location, mentions.clone())).collect())
        });
        store
            .expect_record_mvp()
            .withf(|mvp, _| {
                mvp.week_start == date!(2026 - 11 - 14) && mvp.names == ["Maria".to_owned()] && mvp.mentions == 2
            })
            .returning(|_, _| Ok(true));
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

    #[tokio::test]
    async fn every_location_is_read_in_one_call_and_a_failing_nudge_lets_the_others_finish() {
        let locations: Vec<NudgeLocation> =
            (0..10).map(|n| NudgeLocation { id: LocationId(Uuid::from_u128(n)), ..location() }).collect();
        let mut store = MockNudgeStore::new();
        let listed = locations.clone();
        store.expect_locations().returning(move |_| Ok(listed.clone()));
        let day = date!(2026 - 11 - 14);
        store.expect_filings().times(1).returning(move |scopes| {
            assert_eq!(scopes.len(), 10);
            Ok(scopes
                .iter()
                .map(|scope| {
                    (
                        scope.location,
                        Filings { manager_reports: vec![day], shift_starts: vec![(day, 9)], ..Filings::default() },
                    )
                })
                .collect())
        });
        store.expect_save_compliance().withf(|weeks, _| weeks.len() == 10).times(1).returning(|_, _| Ok(()));
        // The fourth location's nudge cannot be recorded; the nine others are recorded and posted.
        let failing = LocationId(Uuid::from_u128(3)).to_string();
        none_before(&mut store);
        store.expect_record_nudge().returning(move |key, _, _| {
            if key.target == failing { Err(StoreError::Unavailable("connection reset".into())) } else { Ok(true) }
        });
        store.expect_nudge_delivered().times(9).returning(|_| Ok(()));
        let mut chat = MockTeamChat::new();
        chat.expect_post().times(9).returning(|_, _| Ok(()));
        let outcome = jobs(store, chat, datetime!(2026-11-23 14:00 UTC)).check_compliance().await;
        assert!(matches!(outcome, Err(StoreError::Unavailable(_))), "{outcome:?}");
    }

    /// A chat that takes 20 ms a post and remembers the most posts it had at once, in all and to
    /// one webhook.
    #[derive(Default)]
    struct SlowChat {
        in_flight: std::sync::Mutex<HashMap<String, usize>>,
        most: std::sync::Mutex<(usize, usize)>,
    }

    #[async_trait::async_trait]
    impl TeamChat for SlowChat {
        async fn post(&self, webhook_url: &str, _: &str) -> Result<(), String> {
            {
                let mut in_flight = self.in_flight.lock().unwrap();
                *in_flight.entry(webhook_url.to_owned()).or_default() += 1;
                let mut most = self.most.lock().unwrap();
                most.0 = most.0.max(in_flight.values().sum());
                most.1 = most.1.max(in_flight[webhook_url]);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            *self.in_flight.lock().unwrap().get_mut(webhook_url).unwrap() -= 1;
            Ok(())
        }
    }

    #[tokio::test]
    async fn one_teams_nudges_are_posted_one_after_another_and_teams_side_by_side() {
        let locations: Vec<NudgeLocation> = (0..12)
            .map(|n| {
                let team = format!("org_{}", n % 3);
                NudgeLocation {
                    id: LocationId(Uuid::from_u128(n)),
                    team_id: TeamId::new(&team),
                    chat_webhook_url: Some(format!("https://hooks.example/{team}")),
                    ..location()
                }
            })
            .collect();
        let mut store = MockNudgeStore::new();
        store.expect_locations().returning(move |_| Ok(locations.clone()));
        let day = date!(2026 - 11 - 14);
        store.expect_filings().returning(move |scopes| {
            Ok(scopes
                .iter()
                .map(|scope| (scope.location, Filings { shift_starts: vec![(day, 9)], ..Filings::default() }))
                .collect())
        });
        store.expect_save_compliance().returning(|_, _| Ok(()));
        none_before(&mut store);
        store.expect_record_nudge().returning(|_, _, _| Ok(true));
        store.expect_nudge_delivered().returning(|_| Ok(()));
        let chat = Arc::new(SlowChat::default());
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| datetime!(2026-11-23 14:00 UTC));
        let jobs = NudgeJobs::new(Arc::new(store), chat.clone(), Arc::new(clock));
        // Each location misses its morning report and its manager report: 24 nudges, 8 per team.
        assert_eq!(jobs.check_compliance().await.unwrap(), NudgeTally { sent: 24, already: 0, failed: 0 });
        let (in_all, to_one_webhook) = *chat.most.lock().unwrap();
        assert_eq!(to_one_webhook, 1, "a team's webhook gets one post at a time");
        assert_eq!(in_all, 3, "the three teams' webhooks are posted to side by side");
    }

    #[tokio::test]
    async fn nudges_an_earlier_run_recorded_are_counted_and_neither_recorded_nor_posted_again() {
        let mut store = MockNudgeStore::new();
        let two = vec![location(), NudgeLocation { id: LocationId(Uuid::from_u128(1)), ..location() }];
        store.expect_locations().returning(move |_| Ok(two.clone()));
        let day = date!(2026 - 11 - 14);
        store.expect_filings().returning(move |scopes| {
            let filings = Filings { shift_starts: vec![(day, 9)], manager_reports: vec![day], ..Filings::default() };
            Ok(scopes.iter().map(|scope| (scope.location, filings.clone())).collect())
        });
        store.expect_save_compliance().returning(|_, _| Ok(()));
        store
            .expect_nudged_before()
            .withf(|keys| {
                keys.len() == 2 && keys.iter().all(|key| key.kind == "compliance_staff" && key.period == "2026-11-14")
            })
            .returning(|_| Ok(vec![true, false]));
        let second = LocationId(Uuid::from_u128(1)).to_string();
        store.expect_record_nudge().withf(move |key, _, _| key.target == second).times(1).returning(|_, _, _| Ok(true));
        store.expect_nudge_delivered().times(1).returning(|_| Ok(()));
        let mut chat = MockTeamChat::new();
        chat.expect_post().times(1).returning(|_, _| Ok(()));
        let tally = jobs(store, chat, datetime!(2026-11-23 14:00 UTC)).check_compliance().await.unwrap();
        assert_eq!(tally, NudgeTally { sent: 1, already: 1, failed: 0 });
    }
}
