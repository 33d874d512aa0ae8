//! The built `opsd` binary: requests to user-aimed URLs (push endpoints, team-chat hooks) never go
//! through a proxy, whatever `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` say: a proxy would resolve the
//! target itself, past the private-address rule.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use opsd_test_db::TestDatabase;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A listener that counts connections and answers each with `answer`.
async fn counting(answer: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
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

fn token() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = serde_json::json!({ "sub": "user_proxy", "o": { "id": "org_proxy", "rol": "admin" }, "iat": now, "exp": now + 600 });
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(include_bytes!("../../../tests/fixtures/jwt-signing-key.pem")).unwrap();
    jsonwebtoken::encode(&jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256), &claims, &key).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn push_deliveries_ignore_proxy_variables() {
    let database = TestDatabase::new().await;
    let (proxy_port, proxied) = counting(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
    let (push_port, pushed) = counting(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n").await;
    let keys = std::process::Command::new(env!("CARGO_BIN_EXE_opsd")).arg("vapid-keys").output().unwrap();
    let keys = String::from_utf8(keys.stdout).unwrap();
    let key = |name: &str| keys.lines().find_map(|l| l.strip_prefix(name)).unwrap().to_owned();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsd"))
        .arg("serve")
        .env("DATABASE_URL", database.url())
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .env("IDENTITY_JWT_PUBLIC_KEY", include_str!("../../../tests/fixtures/jwt-signing-key.pub.pem"))
        .env("APP_ORIGIN", "https://app.proxy.example")
        .env("NEXT_PUBLIC_VAPID_PUBLIC_KEY", key("NEXT_PUBLIC_VAPID_PUBLIC_KEY="))
        .env("VAPID_PRIVATE_KEY", key("VAPID_PRIVATE_KEY="))
        .env("OUTBOUND_ALLOW_LOOPBACK", "true")
        .env("RUST_LOG", "warn")
        .envs(["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"].map(|name| (name, proxy.as_str())))
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if client.get(format!("{base}/health/ready")).send().await.is_ok_and(|r| r.status() == 200) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let token = token();
    // The subscription keys of RFC 8291's worked example: a valid P-256 point and auth secret.
    let subscription = serde_json::json!({
        "endpoint": format!("http://127.0.0.1:{push_port}/push/abc"),
        "keys": { "p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4", "auth": "BTBZMqHH6r4Tts7J_aSIgg" },
    });
    let subscribed = client
        .post(format!("{base}/api/push/subscribe"))
        .header("cookie", format!("__session={token}"))
        .header("origin", "https://app.proxy.example")
        .json(&subscription)
        .send()
        .await
        .unwrap();
    assert_eq!(subscribed.status(), 200);
    let sent: serde_json::Value =
        client.post(format!("{base}/api/push/send")).bearer_auth(&token).json(&serde_json::json!({ "title": "Hi" })).send().await.unwrap().json().await.unwrap();
    assert_eq!(sent["sent"], 1, "{sent}");
    assert_eq!(pushed.load(Ordering::SeqCst), 1, "the push went straight to its endpoint");
    assert_eq!(proxied.load(Ordering::SeqCst), 0, "nothing went through the proxy");
    server.start_kill().unwrap();
}
