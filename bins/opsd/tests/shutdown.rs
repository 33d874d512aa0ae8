//! The built `opsd` binary: SIGTERM stops accepting, lets requests in flight finish, exits 0.

mod support;

use std::time::Duration;

use opsd_test_db::TestDatabase;
use support::{free_port, serve, wait_live, wait_ready};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_finishes_requests_in_flight_and_exits_zero() {
    let database = TestDatabase::new().await;
    let port = free_port();
    // A JWKS endpoint that answers after 1.5 s keeps a token check in flight across the signal.
    let jwks = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks_url = format!("http://{}/jwks.json", jwks.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = jwks.accept().await {
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 8192];
                let _ = socket.read(&mut buffer).await;
                tokio::time::sleep(Duration::from_millis(1500)).await;
                let body = r#"{"keys":[]}"#;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    let mut child = serve(database.url(), port).env("IDENTITY_JWKS_URL", &jwks_url).spawn().unwrap();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    wait_live(&client, &base).await;

    // A well-formed RS256 token with an unknown kid: its check waits for the slow JWKS.
    let token = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ1c2VyXzEifQ.c2lnbmF0dXJl";
    let in_flight = tokio::spawn({
        let request = client.get(format!("{base}/api/locations")).bearer_auth(token);
        async move { request.send().await.map(|r| r.status().as_u16()) }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = child.id().unwrap().to_string();
    assert!(tokio::process::Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());

    let status = tokio::time::timeout(Duration::from_secs(35), child.wait()).await.expect("it stops").unwrap();
    assert_eq!(status.code(), Some(0), "a clean exit");
    let answered = in_flight.await.unwrap();
    assert!(answered.is_ok(), "the request in flight got its answer: {answered:?}");
    assert!(client.get(format!("{base}/health/live")).send().await.is_err(), "nothing listens any more");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_drain_sigterm_turns_readiness_503_and_keeps_serving_for_the_grace() {
    let database = TestDatabase::new().await;
    let port = free_port();
    let mut child = serve(database.url(), port).env("SHUTDOWN_DRAIN_SECONDS", "2").spawn().unwrap();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&client, &base).await;

    let pid = child.id().unwrap().to_string();
    assert!(tokio::process::Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let draining = client.get(format!("{base}/health/ready")).send().await.unwrap();
    assert_eq!(draining.status(), 503, "a balancer sees it leaving at once");
    let body: serde_json::Value = draining.json().await.unwrap();
    assert_eq!(body["code"], "unavailable");
    let live = client.get(format!("{base}/health/live")).send().await.unwrap();
    assert_eq!(live.status(), 200, "still serving what arrives during the grace");

    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("it stops").unwrap();
    assert_eq!(status.code(), Some(0), "a clean exit after the grace");
}

#[tokio::test]
async fn transaction_mode_without_a_session_address_refuses_to_start() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsd"))
        .arg("serve")
        .env("DATABASE_URL", "postgres://opsd@127.0.0.1:1/opsd")
        .env("DATABASE_POOL_MODE", "transaction")
        .env_remove("DATABASE_SESSION_URL")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("DATABASE_SESSION_URL: is required when DATABASE_POOL_MODE is transaction"), "{stderr}");

    for (name, value, expected) in [
        ("DATABASE_POOL_MODE", "statement", "DATABASE_POOL_MODE: must be session or transaction"),
        ("TRUSTED_PROXIES", "10.0.0.1, not-an-address", "TRUSTED_PROXIES: \"not-an-address\" is not an address"),
    ] {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsd"))
            .arg("serve")
            .env("DATABASE_URL", "postgres://opsd@127.0.0.1:1/opsd")
            .env(name, value)
            .output()
            .await
            .unwrap();
        assert!(!output.status.success(), "{name}={value}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{name}={value}: {stderr}");
    }
}
