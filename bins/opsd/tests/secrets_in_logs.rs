//! The built `opsd` binary at `RUST_LOG=trace`, with every secret configured and every job,
//! webhook and provider path exercised: its log holds none of the secret values.

mod support;

use std::process::Stdio;

use opsd_test_db::TestDatabase;
use support::{counting, free_port, json_of, serve, token, vapid_keys, wait_ready};

const API_KEY: &str = "api-key-4b1d9e0c-never-logged";
const CRON_SECRET: &str = "cron-secret-77aa31-never-logged";
const IDENTITY_WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const COUPON_WEBHOOK_SECRET: &str = "whsec_dGVzdC1jb3Vwb24tc2VjcmV0LWZvci1vcHNk";
const SCHEDULER_TOKEN: &str = "7shifts-token-5c2f-never-logged";
const ASSISTANT_KEY: &str = "sk-provider-key-9e8d-never-logged";
const DATABASE_PASSWORD: &str = "db-password-31f0-never-logged";

#[tokio::test(flavor = "multi_thread")]
async fn no_configured_secret_reaches_the_log_at_trace_level() {
    let database = TestDatabase::new().await;
    let (seven_shifts, _) = counting(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 45\r\n\r\n{\"data\":[],\"meta\":{\"cursor\":{\"next\":null}}}\r\n").await;
    let (provider, _) = counting(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    )
    .await;
    let (vapid_public, vapid_private) = vapid_keys();
    // Trust authentication ignores the password, so the URL can carry one that must never show.
    let url = database.url().replacen("postgres@", &format!("postgres:{DATABASE_PASSWORD}@"), 1);
    assert!(url.contains(DATABASE_PASSWORD));
    let port = free_port();
    let log = tempfile_path();
    let server = serve(&url, port)
        .env("RUST_LOG", "trace")
        .env("API_KEY", API_KEY)
        .env("CRON_SECRET", CRON_SECRET)
        .env("IDENTITY_JWT_PUBLIC_KEY", support::PUBLIC_KEY)
        .env("IDENTITY_WEBHOOK_SECRET", IDENTITY_WEBHOOK_SECRET)
        .env("COUPON_WEBHOOK_SECRET", COUPON_WEBHOOK_SECRET)
        .env("COUPON_EXPIRY_ENABLED", "true")
        .env("NEXT_PUBLIC_VAPID_PUBLIC_KEY", &vapid_public)
        .env("VAPID_PRIVATE_KEY", &vapid_private)
        .env("SCHEDULER_API_BASE_URL", format!("http://127.0.0.1:{seven_shifts}"))
        .env("SCHEDULER_API_TOKEN", SCHEDULER_TOKEN)
        .env("SCHEDULER_COMPANY_ID", "1")
        .env("ASSISTANT_BASE_URL", format!("http://127.0.0.1:{provider}/v1"))
        .env("ASSISTANT_API_KEY", ASSISTANT_KEY)
        .env("OUTBOUND_ALLOW_LOOPBACK", "true")
        .env("APP_ORIGIN", "https://app.secrets.example")
        .stdout(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&client, &base).await;

    let user = token("user_secret", "org_secret");
    let body =
        serde_json::json!({ "name": "Secret", "slug": "secret", "timezone": "UTC", "schedulerLocationId": "100" });
    let location = json_of(client.post(format!("{base}/api/locations")).bearer_auth(&user).json(&body)).await;
    for job in [
        "keep-alive",
        "report-reminder",
        "check-compliance",
        "aggregate-heroes",
        "publish-scheduled-announcements",
        "prune-soft-deleted-contacts",
        "sync-schedule-from-7shifts",
        "sync-7shifts-roles",
        "expire-coupons",
    ] {
        let answer = client.get(format!("{base}/cron/{job}")).bearer_auth(CRON_SECRET).send().await.unwrap();
        assert!(answer.status().is_success(), "{job}: {}", answer.status());
    }
    // A wrong secret is logged as refused, never echoed.
    client.get(format!("{base}/cron/report-reminder")).bearer_auth(format!("{CRON_SECRET}x")).send().await.unwrap();
    let week = "2026-11-14";
    let report = client
        .get(format!("{base}/api/analytics/optimization?teamId=org_secret&weekOf={week}"))
        .bearer_auth(API_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(report.status(), 200);
    for (path, secret, body) in [
        (
            "/api/webhooks/identity",
            IDENTITY_WEBHOOK_SECRET,
            serde_json::json!({ "type": "user.created", "data": { "id": "user_secret", "updated_at": 1, "email_addresses": [] } }),
        ),
        (
            "/api/automation/coupons",
            COUPON_WEBHOOK_SECRET,
            serde_json::json!({ "type": "rating", "rating": 5, "teamId": "org_secret", "locationId": location["id"], "guestId": "g" }),
        ),
    ] {
        let bytes = serde_json::to_vec(&body).unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        let signature = opsd_signatures::WebhookSecret::parse(secret).unwrap().sign("msg_secret", now, &bytes);
        let answer = client
            .post(format!("{base}{path}"))
            .header("content-type", "application/json")
            .header("webhook-id", "msg_secret")
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", signature)
            .body(bytes)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_success(), "{path}: {}", answer.status());
    }
    let pushed = client
        .post(format!("{base}/api/push/send"))
        .bearer_auth(&user)
        .json(&serde_json::json!({ "title": "Hi" }))
        .send()
        .await
        .unwrap();
    assert_eq!(pushed.status(), 200);
    let chat = client
        .post(format!("{base}/api/assistant/chat"))
        .bearer_auth(&user)
        .json(&serde_json::json!({ "messages": [{ "role": "user", "content": "hi" }] }))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(chat.contains("\"Hi\""), "the provider path ran: {chat}");
    drop(server);

    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.lines().count() > 100, "a trace log was written");
    let whsec = |secret: &'static str| secret.trim_start_matches("whsec_");
    for secret in [
        API_KEY,
        CRON_SECRET,
        whsec(IDENTITY_WEBHOOK_SECRET),
        whsec(COUPON_WEBHOOK_SECRET),
        SCHEDULER_TOKEN,
        ASSISTANT_KEY,
        DATABASE_PASSWORD,
        vapid_private.as_str(),
    ] {
        assert!(!written.contains(secret), "the log holds a secret: {secret}");
    }
    let _ = std::fs::remove_file(&log);
}

fn tempfile_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("opsd-trace-{}.log", std::process::id()))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dev_sign_in_links_ticket_reaches_no_log() {
    let database = TestDatabase::new().await;
    let key = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/jwt-signing-key.pem");
    let opsd = |command: &str| {
        let mut opsd = std::process::Command::new(env!("CARGO_BIN_EXE_opsd"));
        opsd.arg(command)
            .env("DATABASE_URL", database.url())
            .env("RUST_LOG", "trace")
            .env("IDENTITY_JWT_PUBLIC_KEY", support::PUBLIC_KEY)
            .env("OPSD_DEV_SIGNING_KEY", key)
            .env("OPERATOR_USER_IDS", "user_demo");
        opsd
    };
    let log = tempfile_path().with_extension("dev.log");
    let issued = opsd("dev-sign-in-link")
        .args(["--user", "user_demo", "--team", "org_demo"])
        .stderr(std::fs::File::create(&log).unwrap())
        .output()
        .unwrap();
    assert!(issued.status.success(), "{}", std::fs::read_to_string(&log).unwrap());
    // The command's own log shares its stdout at trace: one line is the link, and no other may
    // hold its ticket.
    let printed = String::from_utf8(issued.stdout).unwrap();
    let path = printed.lines().find(|line| line.starts_with("/dev/sign-in?ticket=")).expect("a link").to_owned();
    let ticket = path.strip_prefix("/dev/sign-in?ticket=").unwrap().to_owned();
    let cli_log: Vec<&str> = printed.lines().filter(|line| *line != path).collect();
    assert!(cli_log.len() > 10, "the command logged at trace");
    assert!(!cli_log.iter().any(|line| line.contains(&ticket)), "the command's log holds the ticket");

    let port = free_port();
    let server = tokio::process::Command::from(opsd("serve"))
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .stdout(std::fs::OpenOptions::new().append(true).open(&log).unwrap())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&client, &base).await;
    let answer = client.get(format!("{base}{path}")).send().await.unwrap();
    assert_eq!(answer.status(), 303);
    assert_eq!(client.get(format!("{base}{path}")).send().await.unwrap().status(), 403);
    drop(server);

    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("/dev/sign-in"), "the requests were logged");
    assert!(!written.contains(&ticket), "the log holds the ticket");
    let _ = std::fs::remove_file(&log);
}
