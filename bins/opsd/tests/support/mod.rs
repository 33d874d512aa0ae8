//! Helpers of the tests that run the built `opsd` binary.
#![allow(dead_code)] // each test binary uses some of it

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback listener that counts connections and answers each request with `answer`.
pub async fn counting(answer: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 65536];
                let _ = socket.read(&mut buffer).await;
                let _ = socket.write_all(answer).await;
            });
        }
    });
    (port, count)
}

/// A session token of `user`, admin of `team`, signed with the test fixture key.
pub fn token(user: &str, team: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = serde_json::json!({ "sub": user, "o": { "id": team, "rol": "admin" }, "iat": now, "exp": now + 600 });
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(include_bytes!("../../../../tests/fixtures/jwt-signing-key.pem"))
        .unwrap();
    jsonwebtoken::encode(&jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256), &claims, &key).unwrap()
}

pub const PUBLIC_KEY: &str = include_str!("../../../../tests/fixtures/jwt-signing-key.pub.pem");

/// `opsd vapid-keys`: (public, private).
pub fn vapid_keys() -> (String, String) {
    let keys = std::process::Command::new(env!("CARGO_BIN_EXE_opsd")).arg("vapid-keys").output().unwrap();
    let keys = String::from_utf8(keys.stdout).unwrap();
    let key = |name: &str| keys.lines().find_map(|l| l.strip_prefix(name)).unwrap().to_owned();
    (key("NEXT_PUBLIC_VAPID_PUBLIC_KEY="), key("VAPID_PRIVATE_KEY="))
}

/// `opsd serve` on `url` and loopback `port`, logging warnings, its output discarded; stopped when
/// dropped. The caller adds what its test configures.
pub fn serve(url: &str, port: u16) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsd"));
    command
        .arg("serve")
        .env("DATABASE_URL", url)
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    command
}

/// Waits until the server answers at all (`/health/live`).
pub async fn wait_live(client: &reqwest::Client, base: &str) {
    for _ in 0..150 {
        if client.get(format!("{base}/health/live")).send().await.is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the server did not come up");
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until the server answers `/health/ready`.
pub async fn wait_ready(client: &reqwest::Client, base: &str) {
    for _ in 0..100 {
        if client.get(format!("{base}/health/ready")).send().await.is_ok_and(|r| r.status() == 200) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the server did not become ready");
}

/// The JSON body of a request's answer.
pub async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}
