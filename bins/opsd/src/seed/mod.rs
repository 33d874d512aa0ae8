//! `opsd seed-demo [--locations N] [--weeks N]`: a demo team with locations, sales, scheduled shifts,
//! time punches and goals, so the first request already shows real numbers: the optimization report,
//! the variance and the forecast; and what its people did (see `activity`), so every console page
//! does too. Idempotent: a second run changes nothing and prints the same ids. The default is one
//! location and the year (52 weeks) before this week, and this week up to yesterday with its schedule
//! to the end of the week.
//!
//! Sales follow a weekday pattern (Friday and Saturday busiest), a season (a summer peak), a slow
//! growth and a deterministic noise of ±8%. The published schedules follow the sales a manager could
//! expect, with a misjudged count now and then (see `schedule`); a week that runs short of people
//! gives someone a sixth day, and overtime. Punches follow the shifts a few minutes early or late,
//! with unpaid meal breaks on long shifts and paid rest breaks on short ones; one in forty is left
//! unapproved.

mod activity;
mod schedule;

use anyhow::Context;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use opsd_core::{Decimal, LocationId, TeamId};
use opsd_optimization::{AnalyticsStore, Block, DayGoal, SalesRow, Week};
use opsd_postgres::schema::{locations, teams};
use opsd_postgres::{Db, PgAnalyticsStore, upsert_punches, upsert_shifts};
use opsd_scheduling::{Break, ProviderPunch, ScheduledShift, ShiftInput, StoredPunch};
use time::{Duration, OffsetDateTime, Time};
use time_tz::{OffsetDateTimeExt, PrimitiveDateTimeExt};

pub const DEMO_TEAM: &str = "org_demo";
/// The first demo location, the same on every run.
pub const DEMO_LOCATION: uuid::Uuid = location_id(0);
const DEMO_TIMEZONE: &str = "America/Chicago";
/// The team's sales per labor hour goal, which its managers staff to, and its labor-% goal: the
/// same budget at the demo's mean wage of about $18.
const SPLH_GOAL: i64 = 60;
const LABOR_PCT_GOAL: i64 = 30;
/// Each block's food sales on an ordinary day; late night is served by dinner's people.
const LUNCH_FOOD: i32 = 1400;
const DINNER_FOOD: i32 = 2600;
const LATE_NIGHT_FOOD: i32 = 500;

#[derive(Debug, Clone, Copy)]
pub struct DemoSize {
    pub locations: u32,
    pub weeks: u32,
}

impl Default for DemoSize {
    fn default() -> Self {
        Self { locations: 1, weeks: 52 }
    }
}

#[derive(Debug)]
pub struct DemoTeam {
    pub team_id: String,
    pub location_id: uuid::Uuid,
    pub location_slug: String,
    pub week_of: time::Date,
}

const fn location_id(index: u32) -> uuid::Uuid {
    uuid::Uuid::from_u128(0x0000_0000_0000_7000_8000_0000_0000_d000 + index as u128)
}

/// A deterministic number in `0..modulo` from a key (FNV-1a), for the demo's noise.
fn jitter(key: &str, modulo: u64) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3))
        % modulo
}

/// A location's size against an ordinary one, in percent.
fn location_size(location: u32) -> i64 {
    85 + i64::from(location % 7) * 5
}

/// How busy a day can be expected to be against an ordinary one: weekday, season, growth and the
/// location's size.
fn expected_busyness(location: u32, date: time::Date, weeks_back: u32) -> f64 {
    let weekday = match date.weekday() {
        time::Weekday::Friday | time::Weekday::Saturday => 135,
        time::Weekday::Sunday => 115,
        time::Weekday::Monday | time::Weekday::Tuesday => 82,
        _ => 95,
    };
    let day_of_year = f64::from(date.ordinal());
    let season = 100.0 + 15.0 * ((day_of_year - 100.0) / 365.0 * std::f64::consts::TAU).sin();
    let growth = 100.0 - 0.1 * f64::from(weeks_back);
    f64::from(weekday) * season * growth * location_size(location) as f64 / 1e8
}

/// How busy a block turned out: what could be expected, and a deterministic noise of ±8%.
fn busyness(location: u32, date: time::Date, weeks_back: u32, block: Block) -> Decimal {
    let noise = 92 + jitter(&format!("{location}-{date}-{block:?}"), 17) as i64;
    let factor = expected_busyness(location, date, weeks_back) * noise as f64 / 100.0;
    Decimal::from_f64_retain(factor).unwrap_or(Decimal::ONE).round_dp(4)
}

/// A block's sales from its food: beverage at 35% of food, and $40 of other sales.
fn block_sales(food: f64) -> f64 {
    food * 1.35 + 40.0
}

/// The punch an employee made for a shift: a few minutes off its times, with its breaks.
fn punch_for(shift: &ScheduledShift, id: &str) -> ProviderPunch {
    let (start, end) = (shift.input.start_at, shift.input.end_at);
    let early = Duration::minutes(jitter(&format!("{id}-in"), 10) as i64);
    let late = Duration::minutes(jitter(&format!("{id}-out"), 20) as i64 - 5);
    let middle = start + (end - start) / 2;
    let long = end - start >= Duration::hours(7);
    ProviderPunch {
        id: id.to_owned(),
        user_id: Some(shift.input.employee_key.clone()),
        role_id: None,
        clocked_in: start - early,
        clocked_out: Some(end + late),
        approved: jitter(&format!("{id}-approved"), 40) != 0,
        deleted: false,
        hourly_wage_cents: Some((shift.input.hourly_wage * Decimal::ONE_HUNDRED).try_into().unwrap_or(0)),
        breaks: vec![Break {
            start: middle,
            end: Some(middle + Duration::minutes(if long { 30 } else { 10 })),
            paid: !long,
        }],
    }
}

fn slug(index: u32) -> String {
    if index == 0 { "demo-downtown".into() } else { format!("demo-{index:03}") }
}

pub async fn seed_demo(db: &Db, size: DemoSize) -> anyhow::Result<DemoTeam> {
    let team = TeamId::new(DEMO_TEAM);
    let zone = time_tz::timezones::get_by_name(DEMO_TIMEZONE).expect("a known zone");
    let now = OffsetDateTime::now_utc();
    // Where the demo's locations are: the days before this one have happened.
    let today = now.to_timezone(zone).date();
    let this_week = Week::containing(today);
    let last_week = this_week.previous();
    let store = PgAnalyticsStore::new(db.clone());
    let mut conn = db.conn().await?;
    diesel::insert_into(teams::table)
        .values(teams::id.eq(DEMO_TEAM))
        .on_conflict_do_nothing()
        .execute(&mut conn)
        .await
        .context("seeding the demo team")?;
    let team_goals: Vec<DayGoal> = (0..7)
        .map(|day| DayGoal {
            day_of_week: day,
            sales_goal: Decimal::from(if day <= 1 { 5200 } else { 3800 }),
            labor_pct_target: Decimal::from(LABOR_PCT_GOAL),
            splh_target: Decimal::from(SPLH_GOAL),
        })
        .collect();
    store.set_goals(&team, None, &team_goals).await.context("seeding goals")?;

    let mut first_location = None;
    for index in 0..size.locations {
        diesel::insert_into(locations::table)
            .values((
                locations::id.eq(location_id(index)),
                locations::team_id.eq(DEMO_TEAM),
                locations::name.eq(if index == 0 { "Demo Downtown".to_owned() } else { format!("Demo {index:03}") }),
                locations::slug.eq(slug(index)),
                locations::timezone.eq(DEMO_TIMEZONE),
                locations::scheduler_location_id.eq(format!("{}", 1000 + index)),
            ))
            .on_conflict_do_nothing()
            .execute(&mut conn)
            .await
            .context("seeding a demo location")?;
        // The slug identifies a demo location across runs, whatever id an earlier version gave it.
        let id: uuid::Uuid = locations::table
            .filter(locations::slug.eq(slug(index)).and(locations::team_id.eq(DEMO_TEAM)))
            .select(locations::id)
            .first(&mut conn)
            .await
            .with_context(|| format!("the slug {} belongs to another team", slug(index)))?;
        first_location.get_or_insert(id);

        let mut sales = Vec::new();
        let mut shifts = Vec::new();
        let mut punches = Vec::new();
        let mut week = this_week;
        for weeks_back in 0..=size.weeks {
            for date in week.days() {
                // Today and the rest of this week are scheduled, not yet worked or sold.
                let happened = date < today;
                for (block, base) in
                    [(Block::Lunch, LUNCH_FOOD), (Block::Dinner, DINNER_FOOD), (Block::LateNight, LATE_NIGHT_FOOD)]
                        .into_iter()
                        .filter(|_| happened)
                {
                    let food = Decimal::from(base) * busyness(index, date, weeks_back, block);
                    sales.push(SalesRow {
                        location_id: LocationId(id),
                        date,
                        block,
                        food: food.round_dp(2),
                        beverage: (food * Decimal::new(35, 2)).round_dp(2),
                        other: Decimal::from(40),
                        guests: Some(base / 25),
                    });
                }
            }
            let expected: Vec<(f64, f64)> = week
                .days()
                .into_iter()
                .map(|date| {
                    let busy = expected_busyness(index, date, weeks_back);
                    (
                        block_sales(LUNCH_FOOD as f64 * busy),
                        block_sales(DINNER_FOOD as f64 * busy) + block_sales(LATE_NIGHT_FOOD as f64 * busy),
                    )
                })
                .collect();
            let plan = schedule::week_schedule(
                index,
                location_size(index),
                &week.start().to_string(),
                &expected,
                SPLH_GOAL as f64,
            );
            for (date, day) in week.days().into_iter().zip(plan) {
                let happened = date < today;
                for (n, assignment) in day.into_iter().enumerate() {
                    let slot = assignment.slot;
                    let local = date.with_time(Time::from_hms(slot.start_hour, slot.start_minute, 0).expect("a time"));
                    let start_at = local.assume_timezone(zone).take_first().context("a local start time")?;
                    let employee = format!("{index}-{}", assignment.employee);
                    let input = ShiftInput {
                        provider_shift_id: format!("demo-{index}-{date}-{n}"),
                        employee_name: format!("Demo Employee {employee}"),
                        employee_key: format!("demo-{employee}"),
                        role: slot.role.into(),
                        department: slot.department,
                        start_at: start_at.to_offset(time::UtcOffset::UTC),
                        end_at: (start_at + Duration::minutes(slot.minutes)).to_offset(time::UtcOffset::UTC),
                        unpaid_break_minutes: if slot.minutes >= 7 * 60 { 30 } else { 0 },
                        hourly_wage: Decimal::new(assignment.wage_cents, 2),
                        is_draft: false,
                    };
                    let shift = ScheduledShift::place(input, zone).context("placing a demo shift")?;
                    if happened {
                        let punch = punch_for(&shift, &format!("demo-{index}-{date}-{n}"));
                        let mut stored = StoredPunch::place(&punch, slot.department, zone);
                        stored.employee_key = shift.input.employee_key.clone();
                        punches.push(stored);
                    }
                    shifts.push(shift);
                }
            }
            week = week.previous();
        }
        for chunk in sales.chunks(10_000) {
            store.ingest_sales(&team, chunk).await.map_err(|e| anyhow::anyhow!("seeding sales: {e}"))?;
        }
        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            upsert_shifts(conn, LocationId(id), &shifts, now).await?;
            upsert_punches(conn, LocationId(id), &punches, now).await
        })
        .await
        .context("seeding shifts and punches")?;
        activity::reports(&mut conn, index, id, today).await?;
        if index == 0 {
            activity::incidents(&mut conn, id, now).await?;
            activity::failed_guest_event(&mut conn, id, now).await?;
        }
    }
    Ok(DemoTeam {
        team_id: DEMO_TEAM.into(),
        location_id: first_location.expect("at least one location"),
        location_slug: slug(0),
        week_of: last_week.start(),
    })
}
