//! The built `opsd` binary: requests to user-aimed URLs (push endpoints, team-chat hooks) never go
//! through a proxy, whatever `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` say: a proxy would resolve the
//! target itself, past the private-address rule.

mod support;

use std::sync::atomic::Ordering;

use opsd_test_db::TestDatabase;
use support::{counting, free_port, json_of, serve, token, vapid_keys, wait_ready};

#[tokio::test(flavor = "multi_thread")]
async fn push_deliveries_ignore_proxy_variables() {
    let database = TestDatabase::new().await;
    let (proxy_port, proxied) = counting(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
    let (push_port, pushed) = counting(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n").await;
    let (vapid_public, vapid_private) = vapid_keys();
    let port = free_port();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let mut server = serve(database.url(), port)
        .env("IDENTITY_JWT_PUBLIC_KEY", support::PUBLIC_KEY)
        .env("APP_ORIGIN", "https://app.proxy.example")
        .env("NEXT_PUBLIC_VAPID_PUBLIC_KEY", vapid_public)
        .env("VAPID_PRIVATE_KEY", vapid_private)
        .env("OUTBOUND_ALLOW_LOOPBACK", "true")
        .envs(
            ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"]
                .map(|name| (name, proxy.as_str())),
        )
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .spawn()
        .unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    wait_ready(&client, &base).await;
    let token = token("user_proxy", "org_proxy");
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
    let send = client.post(format!("{base}/api/push/send")).bearer_auth(&token);
    let sent = json_of(send.json(&serde_json::json!({ "title": "Hi" }))).await;
    assert_eq!(sent["sent"], 1, "{sent}");
    assert_eq!(pushed.load(Ordering::SeqCst), 1, "the push went straight to its endpoint");
    assert_eq!(proxied.load(Ordering::SeqCst), 0, "nothing went through the proxy");
    server.start_kill().unwrap();
}
