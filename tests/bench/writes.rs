//! The write paths against the release server on a fresh database, each against its yardstick: a
//! `pgbench` script (`bench/yardsticks/`) that performs the same reads, inserts and updates in one
//! transaction with prepared statements, on the same machine and with the same 32 clients.

use std::sync::Arc;
use std::time::Duration;

use opsd_tests::push_fake::{VAPID_PRIVATE_KEY, VAPID_PUBLIC_KEY};
use opsd_tests::served::{Binary, Opsd};
use opsd_tests::{APP_ORIGIN, COUPON_WEBHOOK_SECRET, IDENTITY_WEBHOOK_SECRET, TestDatabase, TokenMinter, sign_webhook};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::load::{self, Figures, MakeRequest, Slot};

pub const CONNECTIONS: usize = 32;
pub const TEAM: &str = "org_bench";
/// Users with a push-subscription token each, taken in turn: the route allows 30 subscriptions a
/// minute per user, so 3,000 users carry 90,000 requests a minute without a refusal.
const PUSH_USERS: u64 = 3_000;
const SALES_ROWS: usize = 10_000;
const SHIFTS: [&str; 3] = ["morning", "afternoon", "evening"];
const BLOCKS: [&str; 3] = ["Lunch", "Dinner", "LateNight"];
/// A receiving device's keys (RFC 8291's example).
const P256DH: &str = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";

/// The `n`-th of 20 seeded locations.
pub fn location(n: u64) -> String {
    format!("00000000-0000-7000-8000-1000000000{:02}", n % 20)
}

/// The incident seeded for one load connection (or pgbench client), so status changes never wait on
/// each other's row lock.
pub fn incident(connection: usize) -> String {
    format!("00000000-0000-7000-8000-{connection:012}")
}

/// A fresh database with a team, 20 locations, an incident per connection and the push users.
pub async fn seeded_database() -> TestDatabase {
    let database = TestDatabase::new().await;
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!(
            "INSERT INTO teams (id) VALUES ('{TEAM}');
             INSERT INTO locations (id, team_id, name, slug, timezone)
               SELECT ('00000000-0000-7000-8000-1000000000' || lpad(n::text, 2, '0'))::uuid, '{TEAM}', 'L' || n, 'bench-' || n,
                      'America/Chicago' FROM generate_series(0, 19) n;
             INSERT INTO incidents (id, team_id, location_id, type, severity, status, notes, reported_by, created_at, updated_at)
               SELECT ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid, '{TEAM}', '{}', 'Injury', 'high',
                      'reported', 'Bench', 'user_bench', now(), now() FROM generate_series(0, {CONNECTIONS}) n;
             INSERT INTO users (id) SELECT 'user_push_' || n FROM generate_series(0, {PUSH_USERS}) n;",
            location(0)
        ))
        .await
        .unwrap();
    database
}

/// `opsd serve` (release, beside this binary) on `url`, configured as the test suite's server is.
pub async fn serve(url: &str, extra: &[(&'static str, String)]) -> Opsd {
    let opsd = std::env::current_exe().unwrap().with_file_name("opsd");
    let mut env = vec![
        ("RUST_LOG", "error".to_owned()),
        ("APP_ORIGIN", APP_ORIGIN.to_owned()),
        ("IDENTITY_WEBHOOK_SECRET", IDENTITY_WEBHOOK_SECRET.to_owned()),
        ("COUPON_WEBHOOK_SECRET", COUPON_WEBHOOK_SECRET.to_owned()),
        ("NEXT_PUBLIC_VAPID_PUBLIC_KEY", VAPID_PUBLIC_KEY.to_owned()),
        ("VAPID_PRIVATE_KEY", VAPID_PRIVATE_KEY.to_owned()),
        ("VAPID_SUBJECT", "mailto:ops@bench.example".to_owned()),
    ];
    env.extend(extra.iter().cloned());
    Binary(opsd).serve(url, &env).await
}

/// One write route: its load and its yardstick.
pub struct WriteRoute {
    pub name: &'static str,
    pub expected: u16,
    pub make: MakeRequest,
    /// The file stem under `bench/yardsticks/`.
    pub yardstick: &'static str,
    /// What a real client has done before it makes this write, sent once before the measurement.
    pub before: Option<Prelude>,
}

/// Requests sent before a route's measurement: `make` with `Slot::seq` from 0 to `count`, each
/// answered `expected`.
pub struct Prelude {
    pub count: u64,
    pub expected: u16,
    pub make: MakeRequest,
}

impl Prelude {
    pub async fn send(&self, client: &reqwest::Client) {
        use futures::StreamExt;
        let answers = futures::stream::iter(0..self.count)
            .map(|seq| (self.make)(client, Slot { connection: 0, n: seq, seq }).send())
            .buffer_unordered(CONNECTIONS);
        answers
            .for_each(|answer| async move {
                let status = answer.expect("a prelude request is answered").status();
                assert_eq!(status.as_u16(), self.expected, "a prelude request's status");
            })
            .await;
    }
}

fn today() -> time::Date {
    OffsetDateTime::now_utc().date()
}

/// A JSON body, sent as is.
fn json(request: reqwest::RequestBuilder, body: impl Into<reqwest::Body>) -> reqwest::RequestBuilder {
    request.header("content-type", "application/json").body(body)
}

/// A signed delivery: `prefix` is `svix-` (identity) or `webhook-` (Standard Webhooks).
fn signed(
    request: reqwest::RequestBuilder,
    prefix: &str,
    secret: &str,
    id: &str,
    body: String,
) -> reqwest::RequestBuilder {
    let at = OffsetDateTime::now_utc().unix_timestamp();
    let signature = sign_webhook(secret, id, at, body.as_bytes());
    let request = request
        .header(format!("{prefix}id"), id)
        .header(format!("{prefix}timestamp"), at.to_string())
        .header(format!("{prefix}signature"), signature);
    json(request, body)
}

/// The routes of issue 18's fourth item, each request writing something new. Reports take their
/// dates from the request's sequence number plus `first`, so runs on one database never collide.
pub fn routes(base: &str, run: &str, first: u64) -> Vec<WriteRoute> {
    let member = TokenMinter.member("user_bench", TEAM);
    let admin = TokenMinter.admin("user_bench", TEAM);
    let push_tokens: Arc<Vec<String>> =
        Arc::new((0..PUSH_USERS).map(|u| TokenMinter.member(&format!("user_push_{u}"), TEAM)).collect());
    let url = |path: &str| format!("{base}{path}");
    // A browser subscribes once the app has loaded, so its session has been seen: each push user
    // loads the team's locations first. The measurement is then of the subscription, not of each
    // user's first sign-in ever (which creates the membership).
    let (locations, sign_in_tokens) = (url("/api/locations"), push_tokens.clone());
    let push_sign_ins = Prelude {
        count: PUSH_USERS,
        expected: 200,
        make: Arc::new(move |client, slot: Slot| {
            client.get(&locations).header("cookie", format!("__session={}", sign_in_tokens[slot.seq as usize]))
        }),
    };
    let (incidents, comment, status) = (url("/api/incidents"), base.to_owned(), base.to_owned());
    let (shift, manager, subscribe) =
        (url("/api/reports/shift"), url("/api/reports/manager"), url("/api/push/subscribe"));
    let (sales, identity, guest) =
        (url("/api/analytics/sales"), url("/api/webhooks/identity"), url("/api/automation/coupons"));
    let run = run.to_owned();
    let (run_identity, run_guest) = (run.clone(), run);
    let (member_a, member_b, member_c, member_d) = (member.clone(), member.clone(), member.clone(), member);
    vec![
        WriteRoute {
            name: "incident + new contact",
            expected: 201,
            yardstick: "incident_create",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                let body = format!(
                    r#"{{"locationId":"{}","type":"Injury","severity":"high","notes":"Cut on the slicer","contactMode":"new","contactName":"Guest {}","contactPhone":"+1 555 010 2030"}}"#,
                    location(slot.seq),
                    slot.seq
                );
                json(client.post(&incidents).bearer_auth(&member_a), body)
            }),
        },
        WriteRoute {
            name: "incident comment",
            expected: 201,
            yardstick: "incident_comment",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                let url = format!("{comment}/api/incidents/{}/comments", incident(slot.connection));
                json(client.post(url).bearer_auth(&member_b), r#"{"content":"Manager notified"}"#)
            }),
        },
        WriteRoute {
            name: "incident status change",
            expected: 200,
            yardstick: "incident_status",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                let to = if slot.n.is_multiple_of(2) { "investigating" } else { "resolved" };
                let url = format!("{status}/api/incidents/{}", incident(slot.connection));
                json(client.patch(url).bearer_auth(&member_c), format!(r#"{{"status":"{to}"}}"#))
            }),
        },
        WriteRoute {
            name: "shift report",
            expected: 201,
            yardstick: "shift_report",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                // (location, shift, date) is new for every request: 20 x 3 a day, going back a day at a time.
                let seq = first + slot.seq;
                let date = today() - time::Duration::days(1 + (seq / 60) as i64);
                let body = format!(
                    r#"{{"locationId":"{}","date":"{date}","shift":"{}","actualSales":2450.5,"goalSales":2300,"hero":"Maria"}}"#,
                    location(seq),
                    SHIFTS[(seq / 20 % 3) as usize]
                );
                json(client.post(&shift).bearer_auth(&member_d), body)
            }),
        },
        WriteRoute {
            name: "manager report",
            expected: 201,
            yardstick: "manager_report",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                let seq = first + slot.seq;
                let date = today() - time::Duration::days(1 + (seq / 20) as i64);
                let body = format!(
                    r#"{{"locationId":"{}","date":"{date}","totalSales":8120.75,"employeeReviews":[{{"employeeName":"Maria","employeeKey":"7s-1","rating":5,"notes":"great close"}}]}}"#,
                    location(seq)
                );
                json(client.post(&manager).bearer_auth(&admin), body)
            }),
        },
        WriteRoute {
            name: "push subscription",
            expected: 200,
            yardstick: "push_subscribe",
            before: Some(push_sign_ins),
            make: Arc::new(move |client, slot: Slot| {
                // Concurrent requests are different users, as the yardstick's keys are, and a
                // mixed load's share of them still goes round all the users.
                let user = (slot.connection as u64 + CONNECTIONS as u64 * slot.n) % PUSH_USERS;
                let token = &push_tokens[user as usize];
                let body = format!(
                    r#"{{"endpoint":"http://127.0.0.1:9/push/{}","keys":{{"p256dh":"{P256DH}","auth":"{AUTH}"}}}}"#,
                    slot.seq
                );
                // A browser's call: the session cookie from the app's origin.
                let request =
                    client.post(&subscribe).header("cookie", format!("__session={token}")).header("origin", APP_ORIGIN);
                json(request, body)
            }),
        },
        WriteRoute {
            name: "sales, 10,000 rows",
            expected: 200,
            yardstick: "sales_ingest",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                // New (date, block) rows every request: 3,334 days per request from year 1000 on.
                let first = time::macros::date!(1000 - 01 - 01) + time::Duration::days((slot.seq / 20) as i64 * 3_334);
                let location = location(slot.seq);
                let rows: Vec<String> = (0..SALES_ROWS)
                    .map(|i| {
                        let date = first + time::Duration::days((i / 3) as i64);
                        format!(
                            r#"{{"locationId":"{location}","date":"{date}","block":"{}","food":1200.5,"beverage":310.25,"other":42}}"#,
                            BLOCKS[i % 3]
                        )
                    })
                    .collect();
                let body = format!(r#"{{"teamId":"{TEAM}","rows":[{}]}}"#, rows.join(","));
                json(client.post(&sales).bearer_auth(opsd_tests::API_KEY), body)
            }),
        },
        WriteRoute {
            name: "identity webhook",
            expected: 200,
            yardstick: "identity_webhook",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                let user = format!("user_hook_{}", slot.connection);
                // Newer every time, so each delivery is applied, not skipped as stale.
                let updated = 1_800_000_000_000u64 + slot.seq;
                let body = format!(
                    r#"{{"data":{{"id":"{user}","object":"user","first_name":"Ann","last_name":"Doe","email_addresses":[{{"id":"idn_1","email_address":"{user}@example.com","object":"email_address"}}],"primary_email_address_id":"idn_1","image_url":"https://img.example/u.png","created_at":1700000000000,"updated_at":{updated},"public_metadata":{{}}}},"instance_id":"ins_bench","object":"event","timestamp":{updated},"type":"user.updated"}}"#
                );
                let id = format!("msg_{run_identity}_{}", slot.seq);
                signed(client.post(&identity), "svix-", IDENTITY_WEBHOOK_SECRET, &id, body)
            }),
        },
        WriteRoute {
            name: "guest event",
            expected: 202,
            yardstick: "guest_event",
            before: None,
            make: Arc::new(move |client, slot: Slot| {
                let now = OffsetDateTime::now_utc().format(&Rfc3339).unwrap();
                let body = format!(
                    r#"{{"type":"feedback.submitted","eventId":"evt_{run_guest}_{seq}","occurredAt":"{now}","teamId":"{TEAM}","locationId":"{}","data":{{"feedbackId":"f{seq}","guestId":"guest-555-0101","rating":4,"comment":"the fries were cold"}}}}"#,
                    location(slot.seq),
                    seq = slot.seq
                );
                let id = format!("msg_{run_guest}_{}", slot.seq);
                signed(client.post(&guest), "webhook-", COUPON_WEBHOOK_SECRET, &id, body)
            }),
        },
    ]
}

/// A yardstick's run: `pgbench`'s transactions per second and its own p99 latency.
pub struct Yardstick {
    pub tps: f64,
    pub p99_ms: f64,
}

/// Runs a yardstick script on `url`. A fifth of the transactions are logged for the p99, so that
/// the database's own tail at 32 clients can be told apart from the route's.
pub fn yardstick(url: &str, script: &str, seconds: u64) -> Yardstick {
    let path = format!("{}/bench/yardsticks/{script}.sql", env!("CARGO_MANIFEST_DIR"));
    let logs = std::env::temp_dir().join(format!("opsd-yardstick-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir(&logs).expect("a directory for pgbench's logs");
    let output = std::process::Command::new("pgbench")
        .args([
            "-n",
            "-M",
            "prepared",
            "-c",
            &CONNECTIONS.to_string(),
            "-j",
            "2",
            "-T",
            &seconds.to_string(),
            "-f",
            &path,
            "--log",
            "--sampling-rate=0.2",
        ])
        .arg(format!("--log-prefix={}", logs.join("tx").display()))
        .args(["-D", &format!("team={TEAM}"), "-D", &format!("location={}", location(0)), "-D", "user=user_push_0"])
        .arg(url)
        .output()
        .expect("pgbench on the PATH");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pgbench {script}: {}", String::from_utf8_lossy(&output.stderr));
    let tps = text
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|tps| tps.parse().ok())
        .unwrap_or_else(|| panic!("no tps in pgbench's output: {text}"));
    let mut latencies_us = logged_latencies_us(&logs);
    std::fs::remove_dir_all(&logs).ok();
    assert!(!latencies_us.is_empty(), "pgbench {script} logged no transactions");
    latencies_us.sort_unstable();
    Yardstick { tps, p99_ms: load::percentile_ms(&latencies_us, 0.99) }
}

/// The third field of each line of pgbench's per-transaction logs: the latency in µs.
fn logged_latencies_us(dir: &std::path::Path) -> Vec<u32> {
    let mut latencies = Vec::new();
    for entry in std::fs::read_dir(dir).expect("pgbench's log directory") {
        let log = std::fs::read_to_string(entry.expect("a log file").path()).expect("a readable log");
        latencies.extend(log.lines().filter_map(|line| line.split_whitespace().nth(2)?.parse::<u32>().ok()));
    }
    latencies
}

/// Each write route for `seconds` at 32 connections, then its yardstick; prints a line each.
pub async fn measure(seconds: u64) -> Vec<(&'static str, Figures, f64)> {
    let database = seeded_database().await;
    let server = serve(database.url(), &[("GUEST_EVENT_WORKER", "false".to_owned())]).await;
    // `BENCH_ROUTES=incident_comment,shift_report` runs only those (by yardstick name).
    let only: Option<Vec<String>> =
        std::env::var("BENCH_ROUTES").ok().map(|list| list.split(',').map(str::to_owned).collect());
    let run = uuid::Uuid::new_v4().simple().to_string();
    println!(
        "write paths, {seconds} s each at {CONNECTIONS} connections; yardstick: pgbench -M prepared running the same \
         statements in one transaction (goal: at least 0.5 of it, p99 at most 20 ms):"
    );
    let mut figures = Vec::new();
    for route in routes(&server.base, &run, 0) {
        if only.as_ref().is_some_and(|only| !only.iter().any(|name| name == route.yardstick)) {
            continue;
        }
        if let Some(before) = &route.before {
            before.send(&reqwest::Client::new()).await;
        }
        let load = load::run(CONNECTIONS, Duration::from_secs(seconds), route.expected, route.make).await;
        let yardstick = yardstick(database.url(), route.yardstick, seconds);
        println!(
            "  {:<24} {:>8.0} req/s   p50 {:>6.2} ms   p99 {:>6.2} ms   errors {}   yardstick {:>7.0} tps, p99 {:>6.2} ms   ratio {:.2}",
            route.name,
            load.rate(),
            load.percentile_ms(0.5),
            load.percentile_ms(0.99),
            load.errors,
            yardstick.tps,
            yardstick.p99_ms,
            load.rate() / yardstick.tps
        );
        figures.push((route.name, load, yardstick.tps));
    }
    figures
}
