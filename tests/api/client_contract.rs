//! The TypeScript client's contract test (`clients/typescript/test/contract.test.ts`): compiled by
//! the client's pinned tsc and run by node's test runner against two live servers, one configured
//! as in production (a provider, a push service and the webhook secrets on loopback) and one with
//! nothing optional configured and its database out of reach, for the refusals only it can give.

use std::path::Path;

use opsd_tests::llm_fake::{sse, text_events};
use opsd_tests::push_fake::FakePushService;
use opsd_tests::{API_KEY, APP_ORIGIN, COUPON_WEBHOOK_SECRET, CRON_SECRET, IDENTITY_WEBHOOK_SECRET, TestApp};
use secrecy::SecretString;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const ANSWER: [&str; 2] = ["Sales are ", "up 4%."];

/// A server without push keys, webhook secrets or metrics on its API port, whose database refuses it.
async fn bare_server() -> TestApp {
    let app = TestApp::spawn_with(|config| {
        config.push.vapid_public_key = None;
        config.push.vapid_private_key = None;
        config.coupons.webhook_secret = None;
        config.identity.webhook_secret = None;
        config.metrics_bind_addr = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    app.cut_off_database().await;
    app
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_client_calls_every_operation_and_reads_each_refusal() {
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/typescript");
    assert!(client.join("node_modules/openapi-fetch").exists(), "run `npm ci` in clients/typescript (just test does)");
    let provider = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse(&text_events(&ANSWER), true), "text/event-stream"))
        .mount(&provider)
        .await;
    let push = FakePushService::start().await;
    let device = push.subscriber(201).await;
    let app = TestApp::spawn_with(|config| {
        config.assistant.base_url = format!("{}/v1", provider.uri());
        config.assistant.api_key = Some(SecretString::from("sk-contract"));
    })
    .await;
    let bare = bare_server().await;

    let built = tokio::process::Command::new(client.join("node_modules/.bin/tsc"))
        .args(["-p", "tsconfig.contract.json"])
        .current_dir(&client)
        .output()
        .await
        .expect("tsc runs");
    assert!(built.status.success(), "tsc: {}", String::from_utf8_lossy(&built.stdout));
    let output = tokio::process::Command::new("node")
        .args(["--test", "--test-reporter=spec", "dist/test/contract.test.js"])
        .current_dir(&client)
        .env("OPSD_URL", app.url(""))
        .env("OPSD_BARE_URL", bare.url(""))
        .env("TEAM_ID", "org_contract")
        .env("APP_ORIGIN", APP_ORIGIN)
        .env("ADMIN_TOKEN", app.tokens.admin("user_contract_admin", "org_contract"))
        .env("MEMBER_TOKEN", app.tokens.member("user_contract_member", "org_contract"))
        .env("API_KEY", API_KEY)
        .env("CRON_SECRET", CRON_SECRET)
        .env("COUPON_WEBHOOK_SECRET", COUPON_WEBHOOK_SECRET)
        .env("IDENTITY_WEBHOOK_SECRET", IDENTITY_WEBHOOK_SECRET)
        .env("PUSH_ENDPOINT", &device.endpoint)
        .env("PUSH_P256DH", &device.p256dh)
        .env("PUSH_AUTH", &device.auth)
        .env("ASSISTANT_ANSWER", ANSWER.concat())
        .output()
        .await
        .expect("node runs");
    assert!(
        output.status.success(),
        "the contract test failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(push.delivered().len(), 1, "the send reached the subscribed device");
    assert!(push.refused().is_empty(), "{:?}", push.refused());
}
