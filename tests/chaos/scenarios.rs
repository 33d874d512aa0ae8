//! The scenarios: each injects one fault a deployment meets and checks the service from outside.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use opsd_tests::TokenMinter;
use opsd_tests::seven_shifts_fake::{COMPANY, Fake7ShiftsServer, TOKEN, shift};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{
    API_KEY, Binary, CRON_SECRET, Opsd, Outcome, admin, client, connect, database, terminate_sessions,
};

fn env(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
}

async fn code_of(response: reqwest::Response) -> String {
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    match body["code"].as_str() {
        Some(code) => format!("{status} {code}"),
        None => status.to_string(),
    }
}

/// Scenario 1: The breaker's trial request is cancelled by its client while the analytics store hangs.
pub async fn breaker_trial_cancelled(bin: &Binary) -> Outcome {
    let db = database().await;
    let week = bin.seed(db.url()).await.week_of;
    let opsd = bin
        .serve(
            db.url(),
            &env(&[
                ("OPTIMIZATION_BREAKER_OPEN_SECONDS", "2"),
                ("OPTIMIZATION_CACHE_CAPACITY", "0"),
                ("DATABASE_STATEMENT_TIMEOUT_MS", "800"),
            ]),
        )
        .await;
    let http = client();
    let path = opsd.url(&format!("/api/analytics/optimization?teamId=org_demo&weekOf={week}"));
    let get = |timeout: Duration| http.get(&path).bearer_auth(API_KEY).timeout(timeout).send();
    if get(Duration::from_secs(5)).await.map(|r| r.status()).ok() != Some(reqwest::StatusCode::OK) {
        return Outcome::not_held("nothing yet", "the report did not answer 200 before the fault");
    }
    // The rollups locked: every uncached report hangs until statement_timeout and fails.
    let locker = connect(db.url()).await;
    locker
        .batch_execute("BEGIN; LOCK TABLE team_daily_sales, team_daily_labor IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let failing = futures::future::join_all((0..5).map(|_| get(Duration::from_secs(5)))).await;
    let mut codes = Vec::new();
    for response in failing {
        codes.push(code_of(response.unwrap()).await);
    }
    let open = code_of(get(Duration::from_secs(5)).await.unwrap()).await;
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    // The trial: its client gives up after 300 ms and closes the connection mid-request.
    let trial = get(Duration::from_millis(300)).await;
    locker.batch_execute("COMMIT").await.unwrap();
    let restored = Instant::now();
    let mut recovered = None;
    while restored.elapsed() < Duration::from_secs(5) {
        if let Ok(response) = get(Duration::from_secs(3)).await
            && response.status() == 200
        {
            recovered = Some(restored.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let injected = "analytics tables locked (reads hang past statement_timeout), 5 failures, the trial's client disconnecting after 300 ms, then the lock released";
    let held = recovered.is_some_and(|after| after <= Duration::from_secs(3)) && open == "503 circuit_open";
    let observed = format!(
        "failures {codes:?}, then {open}; trial {}; after the restore 200 again {}",
        if trial.is_err() { "cancelled" } else { "answered" },
        recovered
            .map_or("never within 5 s".to_owned(), |after| format!("after {} ms (open period 2 s)", after.as_millis()))
    );
    Outcome::new(injected, observed, held)
}

/// Scenario 2: The identity provider's JWKS endpoint goes down past the keys' refresh time.
pub async fn jwks_outage(bin: &Binary) -> Outcome {
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

    #[derive(Clone)]
    struct Jwks {
        up: Arc<AtomicBool>,
        hits: Arc<AtomicUsize>,
    }
    impl Respond for Jwks {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            self.hits.fetch_add(1, Ordering::SeqCst);
            if self.up.load(Ordering::SeqCst) {
                ResponseTemplate::new(200).set_body_raw(include_str!("../fixtures/jwks.json"), "application/json")
            } else {
                ResponseTemplate::new(503)
            }
        }
    }
    let jwks = Jwks { up: Arc::new(AtomicBool::new(true)), hits: Arc::new(AtomicUsize::new(0)) };
    let provider = MockServer::start().await;
    Mock::given(wiremock::matchers::method("GET")).respond_with(jwks.clone()).mount(&provider).await;
    let db = database().await;
    let opsd = bin
        .serve(
            db.url(),
            &env(&[
                ("IDENTITY_JWT_PUBLIC_KEY", ""),
                ("IDENTITY_JWKS_URL", &format!("{}/.well-known/jwks.json", provider.uri())),
                ("IDENTITY_JWKS_REFRESH_SECONDS", "1"),
            ]),
        )
        .await;
    let token = TokenMinter.admin("user_chaos", "org_chaos");
    let http = client();
    let call = || async {
        let started = Instant::now();
        let status = http
            .get(opsd.url("/api/locations"))
            .bearer_auth(&token)
            .send()
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0);
        (status, started.elapsed())
    };
    let mut before = Vec::new();
    for _ in 0..20 {
        before.push(call().await);
    }
    jwks.up.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let hits_before = jwks.hits.load(Ordering::SeqCst);
    let mut during = Vec::new();
    for _ in 0..40 {
        during.push(call().await);
        tokio::time::sleep(Duration::from_millis(75)).await;
    }
    let attempts = jwks.hits.load(Ordering::SeqCst) - hits_before;
    let worst = |calls: &[(u16, Duration)]| calls.iter().map(|c| c.1).max().unwrap_or_default();
    let all_ok = before.iter().chain(&during).all(|c| c.0 == 200);
    let held = all_ok && attempts <= 3 && worst(&during) <= worst(&before) + Duration::from_millis(50);
    Outcome::new(
        "the JWKS endpoint answering 503 from 1.5 s before the keys' refresh time on, for 40 requests over 3 s",
        format!(
            "{} of 60 requests 200; slowest {} ms before, {} ms during; {attempts} fetch attempts during the outage",
            before.iter().chain(&during).filter(|c| c.0 == 200).count(),
            worst(&before).as_millis(),
            worst(&during).as_millis()
        ),
        held,
    )
}

/// Scenario 3: Every session of the service's database is terminated under load, then the database
/// refuses connections for a few seconds.
pub async fn database_outage_under_load(bin: &Binary) -> Outcome {
    let db = database().await;
    let demo = bin.seed(db.url()).await;
    let opsd = Arc::new(
        bin.serve(
            db.url(),
            &env(&[("DATABASE_ACQUIRE_TIMEOUT_MS", "1000"), ("DATABASE_STATEMENT_TIMEOUT_MS", "2000")]),
        )
        .await,
    );
    let token = TokenMinter.admin("user_chaos", "org_demo");
    let stop = Arc::new(AtomicBool::new(false));
    let created = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = Arc::new(std::sync::Mutex::new(Vec::<(u16, String, Duration)>::new()));
    let mut workers = Vec::new();
    for worker in 0..6usize {
        let (opsd, token, stop, created, seen) =
            (opsd.clone(), token.clone(), stop.clone(), created.clone(), seen.clone());
        let (week, location) = (demo.week_of.clone(), demo.location_id.clone());
        workers.push(tokio::spawn(async move {
            let http = client();
            let mut n = worker;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let started = Instant::now();
                let request = match n % 5 {
                    0 => http.get(opsd.url("/health/ready")),
                    1 => http.get(opsd.url(&format!("/api/analytics/optimization?teamId=org_demo&weekOf={week}"))).bearer_auth(API_KEY),
                    2 => http.get(opsd.url(&format!("/api/incidents?locationId={location}"))).bearer_auth(&token),
                    _ => http.post(opsd.url("/api/incidents")).bearer_auth(&token).json(&json!({
                        "locationId": location, "type": "Spill / Slip Hazard", "severity": "medium", "notes": format!("chaos {n}"),
                        "contactMode": "new", "contactName": "Guest", "contactPhone": "+15550100",
                    })),
                };
                let (status, code) = match request.send().await {
                    Ok(response) => {
                        let status = response.status().as_u16();
                        let body: Value = response.json().await.unwrap_or(Value::Null);
                        if status == 201 {
                            created.lock().unwrap().push(body["id"].as_str().unwrap_or_default().to_owned());
                        }
                        (status, body["code"].as_str().unwrap_or_default().to_owned())
                    }
                    Err(_) => (0, "no answer".to_owned()),
                };
                seen.lock().unwrap().push((status, code, started.elapsed()));
            }
        }));
    }
    let admin = admin(&db).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let terminated = terminate_sessions(&admin, db.name()).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    admin.batch_execute(&format!("ALTER DATABASE \"{}\" WITH ALLOW_CONNECTIONS false", db.name())).await.unwrap();
    terminate_sessions(&admin, db.name()).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let ready_during = client().get(opsd.url("/health/ready")).send().await.map(|r| r.status().as_u16()).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    admin.batch_execute(&format!("ALTER DATABASE \"{}\" WITH ALLOW_CONNECTIONS true", db.name())).await.unwrap();
    let ready_after = opsd.wait_for("/health/ready", Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        let _ = worker.await;
    }
    // After the outage: every kind of request, one after another, on the pool's connections.
    let http = client();
    let mut after = Vec::new();
    for n in 0..20 {
        let response = if n % 2 == 0 {
            http.get(opsd.url(&format!("/api/incidents?locationId={}", demo.location_id)))
                .bearer_auth(&token)
                .send()
                .await
        } else {
            http.get(opsd.url("/health/ready")).send().await
        };
        after.push(response.map(|r| r.status().as_u16()).unwrap_or(0));
    }
    let seen = seen.lock().unwrap().clone();
    let is_other_error = |status: u16, code: &str| {
        status >= 500 && !(status == 503 && (code == "unavailable" || code == "circuit_open"))
    };
    let server_errors = seen.iter().filter(|(status, code, _)| is_other_error(*status, code)).count();
    let mut other_codes: Vec<String> =
        seen.iter().filter(|(s, c, _)| is_other_error(*s, c)).map(|(s, c, _)| format!("{s} {c}")).collect();
    other_codes.sort();
    other_codes.dedup();
    let unanswered = seen.iter().filter(|(status, _, _)| *status == 0).count();
    let slowest = seen.iter().map(|s| s.2).max().unwrap_or_default();
    let refused = seen.iter().filter(|(status, _, _)| *status == 503).count();
    let pg = connect(db.url()).await;
    let created = created.lock().unwrap().clone();
    let stored: i64 =
        pg.query_one("SELECT count(*) FROM incidents WHERE id::text = ANY($1)", &[&created]).await.unwrap().get(0);
    let orphaned: i64 = pg
        .query_one("SELECT count(*) FROM incidents i WHERE i.notes LIKE 'chaos %' AND NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = i.contact_id)", &[])
        .await
        .unwrap()
        .get(0);
    let held = server_errors == 0
        && unanswered == 0
        && slowest <= Duration::from_secs(3)
        && ready_during == 503
        && ready_after <= Duration::from_secs(2)
        && after.iter().all(|s| *s == 200)
        && stored == created.len() as i64
        && orphaned == 0;
    Outcome::new(
        format!(
            "{terminated} sessions terminated under 6 clients of reads and writes, then connections refused for 2.5 s"
        ),
        format!(
            "{} requests: {refused} answered 503 unavailable/circuit_open, {server_errors} other 5xx {other_codes:?}, {unanswered} unanswered, slowest {} ms; \
             /health/ready {ready_during} during, 200 {} ms after the restore; next 20 requests {}; {} incidents answered 201 and stored, {orphaned} without their contact",
            seen.len(),
            slowest.as_millis(),
            ready_after.as_millis(),
            if after.iter().all(|s| *s == 200) { "all 200".to_owned() } else { format!("{after:?}") },
            created.len()
        ),
        held,
    )
}

async fn job_runs(db_url: &str, job: &str) -> Vec<String> {
    connect(db_url)
        .await
        .query("SELECT status FROM job_runs WHERE job = $1 ORDER BY started_at", &[&job])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

async fn wait_exit(opsd: &mut Opsd) -> Option<std::process::ExitStatus> {
    tokio::time::timeout(Duration::from_secs(40), opsd.child.wait()).await.ok().and_then(Result::ok)
}

/// Scenario 4a: The instance is killed (SIGKILL) while a 7shifts sync waits on a stalled provider.
pub async fn killed_mid_sync(bin: &Binary) -> Outcome {
    let provider = Fake7ShiftsServer::start().await;
    let day = time::OffsetDateTime::now_utc().date();
    let at = |hour: u8| format!("{day}T{hour:02}:00:00Z");
    provider.fake.set_shifts("100", (1..=3).map(|i| shift(i, 7, 3, &at(14), &at(20), 1650, false)).collect());
    provider.fake.set_shifts("200", (4..=5).map(|i| shift(i, 8, 4, &at(14), &at(22), 1800, false)).collect());
    provider.fake.stall_location("200", Duration::from_secs(30));
    let db = database().await;
    let scheduler = env(&[
        ("SCHEDULER_API_BASE_URL", &provider.server.uri()),
        ("SCHEDULER_API_TOKEN", TOKEN),
        ("SCHEDULER_COMPANY_ID", COMPANY),
    ]);
    let mut first = bin.serve(db.url(), &scheduler).await;
    for (slug, provider_id) in [("stalled", "200"), ("healthy", "100")] {
        first.create_location(slug, Some(provider_id)).await;
    }
    let sync_url = first.url("/cron/sync-schedule-from-7shifts");
    let in_flight = tokio::spawn(async move { client().get(sync_url).bearer_auth(CRON_SECRET).send().await });
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let during = job_runs(db.url(), "sync-schedule-from-7shifts").await;
    first.kill9();
    let _ = wait_exit(&mut first).await;
    let _ = in_flight.await;
    let pg = connect(db.url()).await;
    let half: i64 = pg
        .query_one(
            "SELECT count(*) FROM schedule_shifts s JOIN locations l ON l.id = s.location_id WHERE l.slug = 'stalled'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    provider.fake.heal_location("200");
    let second = bin.serve(db.url(), &scheduler).await;
    let report: Value = second.cron("/cron/sync-schedule-from-7shifts").await;
    let runs = job_runs(db.url(), "sync-schedule-from-7shifts").await;
    let counts: Vec<(String, i64)> = pg
        .query("SELECT l.slug, count(s.*) FROM locations l LEFT JOIN schedule_shifts s ON s.location_id = l.id GROUP BY l.slug ORDER BY l.slug", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let held = during == ["running"]
        && half == 0
        && report["status"] == "ok"
        && runs == ["abandoned", "ok"]
        && counts == [("healthy".to_owned(), 3), ("stalled".to_owned(), 2)];
    Outcome::new(
        "SIGKILL 1.5 s into a sync whose provider stalls one location for 30 s",
        format!(
            "runs while killed {during:?}; stalled location held {half} shifts after the kill; the next instance's run answered {}; runs {runs:?}; shifts {counts:?}",
            report["status"]
        ),
        held,
    )
}

/// Scenario 4b: The instance is killed (SIGKILL) in the middle of a coupon expiry sweep.
pub async fn killed_mid_sweep(bin: &Binary) -> Outcome {
    const DUE: i64 = 60_000;
    let db = database().await;
    let sweep_env = env(&[("COUPON_EXPIRY_ENABLED", "true")]);
    let mut first = bin.serve(db.url(), &sweep_env).await;
    let location = first.create_location("sweep", None).await;
    let pg = connect(db.url()).await;
    pg.batch_execute(&format!(
        "INSERT INTO coupon_offers (id, team_id, location_id, name, capacity, held, created_at)
           VALUES ('00000000-0000-7000-8000-0000000000c1', 'org_chaos', '{}', 'Chaos', {DUE}, {DUE}, now());
         INSERT INTO coupon_reservations (id, offer_id, guest_id, state, expires_at, created_at)
           SELECT gen_random_uuid(), '00000000-0000-7000-8000-0000000000c1', 'g' || n, 'active', now() - interval '1 minute', now() - interval '11 minutes'
           FROM generate_series(1, {DUE}) n;",
        location["id"].as_str().unwrap()
    ))
    .await
    .unwrap();
    pg.batch_execute("VACUUM ANALYZE coupon_reservations").await.unwrap();
    let sweep_url = first.url("/cron/expire-coupons");
    let in_flight = tokio::spawn(async move { client().get(sweep_url).bearer_auth(CRON_SECRET).send().await });
    // Killed as soon as the sweep's first batches have committed.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let expired: i64 =
            pg.query_one("SELECT count(*) FROM coupon_reservations WHERE state <> 'active'", &[]).await.unwrap().get(0);
        if expired > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    first.kill9();
    let _ = wait_exit(&mut first).await;
    let _ = in_flight.await;
    let at_kill: i64 =
        pg.query_one("SELECT count(*) FROM coupon_reservations WHERE state <> 'active'", &[]).await.unwrap().get(0);
    let second = bin.serve(db.url(), &sweep_env).await;
    let report: Value = second.cron("/cron/expire-coupons").await;
    let row = pg
        .query_one(
            "SELECT (SELECT held FROM coupon_offers), (SELECT count(*) FROM coupon_reservations WHERE state = 'active'), \
                    (SELECT count(*) FROM coupon_expiry_events), (SELECT count(DISTINCT reservation_id) FROM coupon_expiry_events)",
            &[],
        )
        .await
        .unwrap();
    let (held_capacity, active, events, distinct): (i32, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let runs = job_runs(db.url(), "expire-coupons").await;
    let held = at_kill < DUE
        && report["status"] == "ok"
        && report["reconciliationDelta"] == 0
        && held_capacity == 0
        && active == 0
        && events == DUE
        && distinct == DUE
        && runs.first().map(String::as_str) == Some("abandoned");
    Outcome::new(
        format!("SIGKILL during a sweep of {DUE} due reservations, after {at_kill} had expired"),
        format!(
            "the next run answered {} with reconciliationDelta {}; capacity held {held_capacity}, active {active}, {events} expiry events for {distinct} reservations; runs {runs:?}",
            report["status"], report["reconciliationDelta"]
        ),
        held,
    )
}

/// Scenario 4c: The instance is killed (SIGKILL) while its worker pushes a low-rating alert to a push
/// service that hangs. The push may have gone out, so the alert is never sent again (at most once):
/// the event is finished by the next instance, the alert stays claimed and unnotified.
pub async fn killed_mid_guest_event(bin: &Binary) -> Outcome {
    // A push service whose first delivery hangs; later ones are accepted.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let push_port = listener.local_addr().unwrap().port();
    let deliveries = Arc::new(AtomicUsize::new(0));
    let seen = deliveries.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0u8; 65536];
                let _ = socket.read(&mut request).await;
                if n == 0 {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                let _ = socket.write_all(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n").await;
            });
        }
    });
    let (vapid_public, vapid_private) = vapid_keys(bin).await;
    let guest_env = env(&[
        ("COUPON_WEBHOOK_SECRET", opsd_tests::COUPON_WEBHOOK_SECRET),
        ("GUEST_EVENT_LEASE_SECONDS", "2"),
        ("NEXT_PUBLIC_VAPID_PUBLIC_KEY", &vapid_public),
        ("VAPID_PRIVATE_KEY", &vapid_private),
        ("APP_ORIGIN", "https://app.chaos.example"),
    ]);
    let db = database().await;
    let mut first = bin.serve(db.url(), &guest_env).await;
    let admin_token = TokenMinter.admin("user_chaos", "org_chaos");
    let http = client();
    let location = first.create_location("guests", None).await;
    // The admin's device: the keys of RFC 8291's worked example.
    let subscribed = http
        .post(first.url("/api/push/subscribe"))
        .header("cookie", format!("__session={admin_token}"))
        .header("origin", "https://app.chaos.example")
        .json(&json!({ "endpoint": format!("http://127.0.0.1:{push_port}/push/admin"), "keys": {
            "p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4", "auth": "BTBZMqHH6r4Tts7J_aSIgg" } }))
        .send()
        .await
        .unwrap()
        .status();
    let event = json!({
        "type": "feedback.submitted", "eventId": "evt_chaos_fb", "occurredAt": "2026-11-24T12:00:00Z", "teamId": "org_chaos",
        "locationId": location["id"], "data": { "feedbackId": "fb_chaos", "guestId": "g", "rating": 1 },
    });
    let body = serde_json::to_vec(&event).unwrap();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let accepted = http
        .post(first.url("/api/automation/coupons"))
        .header("content-type", "application/json")
        .header("webhook-id", "msg_chaos")
        .header("webhook-timestamp", now.to_string())
        .header(
            "webhook-signature",
            opsd_tests::sign_webhook(opsd_tests::COUPON_WEBHOOK_SECRET, "msg_chaos", now, &body),
        )
        .body(body)
        .send()
        .await
        .unwrap()
        .status();
    let started = Instant::now();
    while deliveries.load(Ordering::SeqCst) == 0 && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill9();
    let _ = wait_exit(&mut first).await;
    let pg = connect(db.url()).await;
    let state_at_kill: String =
        pg.query_one("SELECT state FROM guest_events WHERE identity = 'evt_chaos_fb'", &[]).await.unwrap().get(0);
    let _second = bin.serve(db.url(), &guest_env).await;
    let mut outcome = (String::new(), String::new(), false);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(15) {
        let row = pg
            .query_one(
                "SELECT e.state, COALESCE(e.outcome, ''), EXISTS (SELECT 1 FROM guest_alerts WHERE notified_at IS NOT NULL) \
                 FROM guest_events e WHERE e.identity = 'evt_chaos_fb'",
                &[],
            )
            .await
            .unwrap();
        outcome = (row.get(0), row.get(1), row.get(2));
        if outcome.0 == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Time for a second push, were one to be sent.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let alerts: i64 = pg.query_one("SELECT count(*) FROM guest_alerts", &[]).await.unwrap().get(0);
    let pushes = deliveries.load(Ordering::SeqCst);
    let held = subscribed == 200
        && accepted == 202
        && state_at_kill != "done"
        && outcome == ("done".into(), "feedback_recorded".into(), false)
        && alerts == 1
        && pushes == 1;
    Outcome::new(
        "SIGKILL while the worker's low-rating push hung (guest-event lease 2 s)",
        format!(
            "event {state_at_kill} at the kill; after a restart {} ({}), {alerts} alert, notified {}, {pushes} push attempts (the hung one only: never sent twice)",
            outcome.0, outcome.1, outcome.2
        ),
        held,
    )
}

async fn vapid_keys(bin: &Binary) -> (String, String) {
    let output = tokio::process::Command::new(&bin.0).arg("vapid-keys").output().await.unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let key = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).unwrap().to_owned();
    (key("NEXT_PUBLIC_VAPID_PUBLIC_KEY="), key("VAPID_PRIVATE_KEY="))
}

/// Scenario 5: Three instances start at the same moment on an empty database.
pub async fn concurrent_first_start(bin: &Binary) -> Outcome {
    let template = database().await;
    let admin = admin(&template).await;
    let name = format!("opsd_chaos_empty_{}", uuid::Uuid::new_v4().simple());
    admin.batch_execute(&format!("CREATE DATABASE {name}")).await.unwrap();
    let url = format!("{}/{name}", template.url().rsplit_once('/').unwrap().0);
    let started = futures::future::join_all((0..3).map(|_| {
        let url = url.clone();
        async move {
            match tokio::time::timeout(Duration::from_secs(60), bin.serve(&url, &[])).await {
                Ok(opsd) => {
                    let ready = opsd.wait_for("/health/ready", Duration::from_secs(30)).await;
                    Some((opsd, ready))
                }
                Err(_) => None,
            }
        }
    }))
    .await;
    let ready = started.iter().filter(|s| s.is_some()).count();
    let expected = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count() as i64;
    let pg = connect(&url).await;
    let row =
        pg.query_one("SELECT count(*), count(DISTINCT version) FROM __diesel_schema_migrations", &[]).await.unwrap();
    let (applied, distinct): (i64, i64) = (row.get(0), row.get(1));
    drop(started);
    drop(pg);
    admin.batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)")).await.unwrap();
    Outcome::new(
        "three instances started at once on an empty database",
        format!("{ready} of 3 ready; {applied} migrations recorded ({distinct} distinct) of {expected}"),
        ready == 3 && applied == expected && distinct == expected,
    )
}

/// Scenario 6: The cache-invalidation listener's connection is cut (a failover, an idle-timeout proxy).
pub async fn listen_connection_lost(bin: &Binary) -> Outcome {
    let db = database().await;
    let demo = bin.seed(db.url()).await;
    let a = bin.serve(db.url(), &[]).await;
    let b = bin.serve(db.url(), &[]).await;
    let http = client();
    let report = b.url(&format!("/api/analytics/optimization?teamId=org_demo&weekOf={}", demo.week_of));
    let cache = |response: reqwest::Response| {
        response.headers().get("x-cache").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
    };
    let admin = admin(&db).await;
    let cut: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'",
            &[&db.name()],
        )
        .await
        .unwrap()
        .get(0);
    let mut restarts = Value::Null;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        let ready: Value = http.get(b.url("/health/ready")).send().await.unwrap().json().await.unwrap_or(Value::Null);
        restarts = ready["background"]["cache-invalidation-listener"].clone();
        if restarts["restarts"].as_u64() >= Some(1) && restarts["state"] == "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first = cache(http.get(&report).bearer_auth(API_KEY).send().await.unwrap());
    let second = cache(http.get(&report).bearer_auth(API_KEY).send().await.unwrap());
    let sale = json!({ "teamId": "org_demo", "rows": [{ "locationId": demo.location_id, "date": demo.week_of, "block": "Lunch", "food": 1.0, "beverage": 0, "other": 0, "guests": 1 }] });
    let ingested = http
        .post(a.url("/api/analytics/sales"))
        .bearer_auth(API_KEY)
        .json(&sale)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_write = cache(http.get(&report).bearer_auth(API_KEY).send().await.unwrap());
    let held = cut == 2
        && restarts["state"] == "running"
        && second == "hit"
        && (200..300).contains(&ingested)
        && after_write == "miss";
    Outcome::new(
        format!("the LISTEN connections of two instances terminated ({cut})"),
        format!(
            "instance B's listener {restarts}; B's report {first} then {second}; a sales write through A ({ingested}) made B's next answer {after_write}"
        ),
        held,
    )
}

/// Scenario 7: The assistant's provider splits a character across writes, then stalls.
pub async fn assistant_provider_stalls(bin: &Binary) -> Outcome {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0u8; 65536];
                let _ = socket.read(&mut request).await;
                let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Café 🍟\"},\"finish_reason\":null}]}\n\n".as_bytes().to_vec();
                let cut = event.iter().position(|b| *b == 0xC3).unwrap() + 1;
                let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n").await;
                let _ = socket.write_all(&event[..cut]).await;
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                let _ = socket.write_all(&event[cut..]).await;
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_secs(60)).await;
            });
        }
    });
    let db = database().await;
    let opsd = bin
        .serve(
            db.url(),
            &env(&[
                ("ASSISTANT_BASE_URL", &format!("http://127.0.0.1:{port}/v1")),
                ("ASSISTANT_API_KEY", "sk-chaos"),
                ("ASSISTANT_TIMEOUT_MS", "1000"),
            ]),
        )
        .await;
    let started = Instant::now();
    let body = client()
        .post(opsd.url("/api/assistant/chat"))
        .bearer_auth(TokenMinter.member("user_chaos", "org_chaos"))
        .json(&json!({ "messages": [{ "role": "user", "content": "How did last week go?" }] }))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap_or_default();
    let took = started.elapsed();
    let whole = body.contains("Café 🍟") && !body.contains('\u{FFFD}');
    let ended = body.contains("[provider_network]") && body.ends_with("data: [DONE]\n\n");
    Outcome::new(
        "a provider that splits 'é' across two writes, then stalls for 60 s (ASSISTANT_TIMEOUT_MS=1000)",
        format!(
            "the text arrived {}; the stream {} after {} ms",
            if whole { "whole" } else { "broken" },
            if ended { "ended with [provider_network] and [DONE]" } else { "did not end with its error part" },
            took.as_millis()
        ),
        whole && ended && took < Duration::from_secs(5),
    )
}

/// Scenario 10: SIGTERM arrives while a request's body is still on its way; then a body breaks off.
pub async fn sigterm_mid_body(bin: &Binary) -> Outcome {
    let db = database().await;
    let mut opsd = bin.serve(db.url(), &[]).await;
    let token = TokenMinter.admin("user_chaos", "org_chaos");
    let body = json!({ "name": "Late Body", "slug": "late-body", "timezone": "UTC" }).to_string();
    let request = |body: &str| {
        format!(
            "POST /api/locations HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
    };
    let address = opsd.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    let half = body.len() / 2;
    socket.write_all(request(&body).as_bytes()).await.unwrap();
    socket.write_all(&body.as_bytes()[..half]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    opsd.sigterm();
    tokio::time::sleep(Duration::from_millis(500)).await;
    socket.write_all(&body.as_bytes()[half..]).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status_line = answer.lines().next().unwrap_or("(nothing)").to_owned();
    let exit = wait_exit(&mut opsd).await;
    let stored: i64 = connect(db.url())
        .await
        .query_one("SELECT count(*) FROM locations WHERE slug = 'late-body'", &[])
        .await
        .unwrap()
        .get(0);

    // A body that breaks off for good is the client's fault: 400 or a closed connection, no 500.
    let opsd = bin.serve(db.url(), &[]).await;
    let mut socket = tokio::net::TcpStream::connect(opsd.base.trim_start_matches("http://")).await.unwrap();
    socket.write_all(request(&body).as_bytes()).await.unwrap();
    socket.write_all(&body.as_bytes()[..half]).await.unwrap();
    socket.shutdown().await.unwrap();
    let mut broken = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut broken)).await;
    let broken = String::from_utf8_lossy(&broken).lines().next().unwrap_or("connection closed").to_owned();
    let metrics = client().get(opsd.url("/metrics")).send().await.unwrap().text().await.unwrap();
    let server_errors =
        metrics.lines().filter(|l| l.starts_with("http_requests_total") && l.contains("status=\"5")).count();
    let held = status_line.contains(" 201 ")
        && stored == 1
        && exit.is_some_and(|e| e.success())
        && !broken.contains(" 5")
        && server_errors == 0;
    Outcome::new(
        "SIGTERM while a POST /api/locations body was half sent, the rest 500 ms later; then a body cut off",
        format!(
            "answered {status_line:?}, {stored} location stored, exit {}; the cut-off body: {broken:?}, {server_errors} 5xx counted",
            exit.map_or("none within 40 s".to_owned(), |e| e.to_string())
        ),
        held,
    )
}
