//! What the demo's people did, so every console page shows something real: the last two weeks'
//! shift and manager reports, most filed and a few missing; incidents in every status with their
//! comments; and one guest event that failed, for the queue's Retry. Fixed ids: a second run adds
//! nothing.

use anyhow::Context;
use diesel::sql_types::{Date as SqlDate, Integer, Numeric, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::Decimal;
use time::{Date, Duration, OffsetDateTime};

use super::{DEMO_TEAM, jitter};

/// The demo's admin: files the manager reports and works the incidents.
const MANAGER: &str = "user_demo";
/// Days of reports before today.
const REPORT_DAYS: i64 = 14;

/// A fixed id of kind `kind` (one hex digit) and number `n`, distinct from every other seeded id.
fn id(kind: u128, location: u32, n: u128) -> uuid::Uuid {
    uuid::Uuid::from_u128(0x0000_0000_0000_7000_8000_0000_0000_0000 | kind << 40 | u128::from(location) << 20 | n)
}

/// The last two weeks' reports of a location: one in nine is left unfiled.
pub async fn reports(
    conn: &mut AsyncPgConnection,
    index: u32,
    location: uuid::Uuid,
    today: Date,
) -> anyhow::Result<()> {
    let now = OffsetDateTime::now_utc();
    for back in 1..=REPORT_DAYS {
        let date = today - Duration::days(back);
        let filed = |slot: &str| jitter(&format!("{index}-{date}-{slot}-report"), 9) != 0;
        let mut day_sales = Decimal::ZERO;
        for (n, (shift, sales, goal)) in
            [("morning", 1650, 1500), ("afternoon", 2300, 2400), ("evening", 3550, 3400)].into_iter().enumerate()
        {
            let actual = Decimal::from(sales + jitter(&format!("{index}-{date}-{shift}"), 400) as i64 - 200);
            day_sales += actual;
            if !filed(shift) {
                continue;
            }
            let hero =
                (jitter(&format!("{index}-{date}-{shift}-hero"), 3) == 0).then(|| format!("Demo Employee {index}-{n}"));
            diesel::sql_query(
                "INSERT INTO shift_reports (id, team_id, location_id, date, shift, actual_sales, goal_sales, hero, submitted_by, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
            )
            .bind::<SqlUuid, _>(id(1, index, (back as u128) << 2 | n as u128))
            .bind::<Text, _>(DEMO_TEAM)
            .bind::<SqlUuid, _>(location)
            .bind::<SqlDate, _>(date)
            .bind::<Text, _>(shift)
            .bind::<Numeric, _>(actual)
            .bind::<Numeric, _>(Decimal::from(goal))
            .bind::<diesel::sql_types::Nullable<Text>, _>(hero)
            .bind::<Text, _>(format!("demo-{index}-{n}"))
            .bind::<Timestamptz, _>(now)
            .execute(conn)
            .await
            .context("seeding a shift report")?;
        }
        if filed("manager") {
            diesel::sql_query(
                "INSERT INTO manager_reports (id, team_id, location_id, date, total_sales, submitted_by, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
            )
            .bind::<SqlUuid, _>(id(2, index, back as u128))
            .bind::<Text, _>(DEMO_TEAM)
            .bind::<SqlUuid, _>(location)
            .bind::<SqlDate, _>(date)
            .bind::<Numeric, _>(day_sales)
            .bind::<Text, _>(MANAGER)
            .bind::<Timestamptz, _>(now)
            .execute(conn)
            .await
            .context("seeding a manager report")?;
        }
    }
    Ok(())
}

/// An incident of the demo, as someone reported it and what was said since.
struct DemoIncident {
    kind: &'static str,
    severity: &'static str,
    status: &'static str,
    notes: &'static str,
    days_ago: i64,
    comments: &'static [&'static str],
}

/// Incidents of the first location, one or more in each status.
const INCIDENTS: [DemoIncident; 5] = [
    DemoIncident {
        kind: "Spill / Slip Hazard",
        severity: "medium",
        status: "reported",
        notes: "Oil on the floor by the fryer station.",
        days_ago: 0,
        comments: &[],
    },
    DemoIncident {
        kind: "Maintenance",
        severity: "high",
        status: "investigating",
        notes: "Walk-in cooler reads 44°F at opening.",
        days_ago: 2,
        comments: &[
            "Called the refrigeration contractor; visit booked for tomorrow morning.",
            "Moved dairy to the reach-in for now.",
        ],
    },
    DemoIncident {
        kind: "Complaint",
        severity: "low",
        status: "deferred",
        notes: "Guest says the patio music is too loud on Fridays.",
        days_ago: 5,
        comments: &["Will revisit with the new playlist next month."],
    },
    DemoIncident {
        kind: "Injury",
        severity: "critical",
        status: "resolved",
        notes: "Line cook cut a finger on the slicer; first aid given.",
        days_ago: 9,
        comments: &["Slicer guard replaced and the team retrained.", "Cook back on the line after two days off."],
    },
    DemoIncident {
        kind: "Stockout",
        severity: "medium",
        status: "reported",
        notes: "Out of brioche buns at 7 pm; subbed sourdough.",
        days_ago: 1,
        comments: &["Par raised from 60 to 80 for weekends."],
    },
];

/// The path an incident took to its status.
fn path_to(status: &str) -> &'static [&'static str] {
    match status {
        "investigating" => &["investigating"],
        "deferred" => &["investigating", "deferred"],
        "resolved" => &["investigating", "resolved"],
        _ => &[],
    }
}

pub async fn incidents(conn: &mut AsyncPgConnection, location: uuid::Uuid, now: OffsetDateTime) -> anyhow::Result<()> {
    for (n, DemoIncident { kind, severity, status, notes, days_ago, comments }) in INCIDENTS.into_iter().enumerate() {
        let incident = id(3, 0, n as u128);
        let reported = now - Duration::days(days_ago) - Duration::hours(3);
        let inserted = diesel::sql_query(
            "INSERT INTO incidents (id, team_id, location_id, type, severity, status, notes, reported_by, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT DO NOTHING",
        )
        .bind::<SqlUuid, _>(incident)
        .bind::<Text, _>(DEMO_TEAM)
        .bind::<SqlUuid, _>(location)
        .bind::<Text, _>(kind)
        .bind::<Text, _>(severity)
        .bind::<Text, _>(status)
        .bind::<Text, _>(notes)
        .bind::<Text, _>(format!("demo-0-{n}"))
        .bind::<Timestamptz, _>(reported)
        .execute(conn)
        .await
        .context("seeding an incident")?;
        if inserted == 0 {
            continue;
        }
        let mut from = "reported";
        for (step, to) in path_to(status).iter().enumerate() {
            diesel::sql_query(
                "INSERT INTO incident_status_changes (id, incident_id, from_status, to_status, changed_by, changed_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind::<SqlUuid, _>(id(4, 0, (n as u128) << 4 | step as u128))
            .bind::<SqlUuid, _>(incident)
            .bind::<Text, _>(from)
            .bind::<Text, _>(*to)
            .bind::<Text, _>(MANAGER)
            .bind::<Timestamptz, _>(reported + Duration::hours(2 + 20 * step as i64))
            .execute(conn)
            .await
            .context("seeding a status change")?;
            from = to;
        }
        for (k, content) in comments.iter().enumerate() {
            diesel::sql_query(
                "INSERT INTO incident_comments (id, incident_id, author_id, content, created_at) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind::<SqlUuid, _>(id(5, 0, (n as u128) << 4 | k as u128))
            .bind::<SqlUuid, _>(incident)
            .bind::<Text, _>(MANAGER)
            .bind::<Text, _>(*content)
            .bind::<Timestamptz, _>(reported + Duration::hours(1 + 18 * k as i64))
            .execute(conn)
            .await
            .context("seeding a comment")?;
        }
    }
    Ok(())
}

/// A guest's reservation event that failed eight times (its store was away), waiting for an
/// operator's Retry in the console's queue.
pub async fn failed_guest_event(
    conn: &mut AsyncPgConnection,
    location: uuid::Uuid,
    now: OffsetDateTime,
) -> anyhow::Result<()> {
    let payload = serde_json::json!({
        "type": "reservation.created", "eventId": "evt_demo_failed", "teamId": DEMO_TEAM, "locationId": location,
        "occurredAt": (now - Duration::hours(5)).format(&time::format_description::well_known::Rfc3339)?,
        "data": { "reservationId": id(6, 0, 1), "offerId": id(6, 0, 2), "guestId": "guest-demo", "expiresAt":
            (now + Duration::days(2)).format(&time::format_description::well_known::Rfc3339)? },
    });
    diesel::sql_query(
        "INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, payload, state, \
           attempts, available_at, received_at, last_error) \
         VALUES ($1, 'evt_demo_failed', 'canonical', 'reservation.created', encode(sha256(convert_to($2::text, 'UTF8')), 'hex'), \
           $3, $4, $2::jsonb, 'failed', $5, $6, $6, 'store_unavailable') ON CONFLICT DO NOTHING",
    )
    .bind::<SqlUuid, _>(id(6, 0, 0))
    .bind::<Text, _>(payload.to_string())
    .bind::<Text, _>(DEMO_TEAM)
    .bind::<SqlUuid, _>(location)
    .bind::<Integer, _>(8)
    .bind::<Timestamptz, _>(now - Duration::hours(5))
    .execute(conn)
    .await
    .context("seeding a failed guest event")?;
    Ok(())
}
