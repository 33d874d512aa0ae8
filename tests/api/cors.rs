//! CORS for browser clients on other origins (`CORS_ALLOWED_ORIGINS`): preflights answered for the
//! listed origins only, with the headers the API takes, never with credentials; and in Debian's
//! chromium, a page on a listed origin calls the API while one on another origin is refused.

use opsd_tests::TestApp;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const LISTED: &str = "https://app.example.com";

async fn preflight(app: &TestApp, origin: &str) -> reqwest::Response {
    app.client
        .request(reqwest::Method::OPTIONS, app.url("/api/incidents"))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type, idempotency-key, traceparent")
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn preflights_are_answered_for_listed_origins_only_and_never_with_credentials() {
    let app = TestApp::spawn_with(|config| config.cors_allowed_origins = vec![LISTED.into()]).await;
    let allowed = preflight(&app, LISTED).await;
    assert_eq!(allowed.status(), 200);
    let headers = allowed.headers();
    assert_eq!(headers["access-control-allow-origin"], LISTED);
    let asked = headers["access-control-allow-headers"].to_str().unwrap().to_lowercase();
    for header in ["authorization", "content-type", "idempotency-key", "traceparent"] {
        assert!(asked.contains(header), "{header} is not allowed: {asked}");
    }
    assert!(headers["access-control-allow-methods"].to_str().unwrap().contains("POST"));
    assert!(headers.get("access-control-allow-credentials").is_none(), "cookies stay first-party");

    let refused = preflight(&app, "https://evil.example").await;
    assert!(refused.headers().get("access-control-allow-origin").is_none());
    assert_eq!(app.count("incidents").await, 0, "a preflight writes nothing");

    // An actual answer names the origin and exposes the headers clients read.
    let answer = app.get("/health/live").header("origin", LISTED).send().await.unwrap();
    assert_eq!(answer.headers()["access-control-allow-origin"], LISTED);
    let exposed = answer.headers()["access-control-expose-headers"].to_str().unwrap().to_lowercase();
    assert!(exposed.contains("x-request-id") && exposed.contains("link"), "{exposed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_listed_origins_no_cross_origin_header_is_sent() {
    let app = TestApp::spawn().await;
    let answer = preflight(&app, LISTED).await;
    assert!(answer.headers().get("access-control-allow-origin").is_none());
    let answer = app.get("/health/live").header("origin", LISTED).send().await.unwrap();
    assert!(answer.headers().get("access-control-allow-origin").is_none());
}

/// A page's origin: a server on loopback that serves an empty page.
async fn page_origin() -> MockServer {
    let server = MockServer::start().await;
    let page = ResponseTemplate::new(200).set_body_raw("<!doctype html><title>client</title>", "text/html");
    Mock::given(method("GET")).respond_with(page).mount(&server).await;
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn a_browser_on_a_listed_origin_calls_the_api_and_one_on_another_is_refused() {
    let (listed, unlisted) = (page_origin().await, page_origin().await);
    let origin = listed.uri();
    let app = TestApp::spawn_with(|config| config.cors_allowed_origins = vec![origin.clone()]).await;
    let browser = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    assert!(browser.join("node_modules/playwright-core").exists(), "run `npm ci` in tests/browser (just test does)");
    let output = tokio::process::Command::new("node")
        .arg(browser.join("cors.mjs"))
        .arg(app.url(""))
        .arg(&origin)
        .arg(unlisted.uri())
        .arg(app.tokens.admin("user_admin", "org_1"))
        .output()
        .await
        .expect("node runs");
    assert!(
        output.status.success(),
        "the browser run failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(app.count("locations").await, 1, "only the listed origin's call created a location");
}
