use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opsd_tests::llm_fake::{sse, text_events};
use opsd_tests::{TestApp, problem};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const API_KEY: &str = "sk-test-provider-key-never-leak";

fn tool_call_events() -> Vec<Value> {
    vec![
        json!({ "choices": [{ "index": 0, "delta": { "role": "assistant", "tool_calls": [{ "index": 0, "id": "call_1", "type": "function", "function": { "name": "open_incidents", "arguments": "" } }] }, "finish_reason": null }] }),
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{ "index": 0, "function": { "arguments": "{}" } }] }, "finish_reason": null }] }),
        json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
    ]
}

async fn app_with_provider(provider: &str) -> TestApp {
    let base = format!("{provider}/v1");
    TestApp::spawn_with(|config| {
        config.assistant.base_url = base;
        config.assistant.api_key = Some(SecretString::from(API_KEY));
    })
    .await
}

async fn chat(app: &TestApp, body: &Value) -> reqwest::Response {
    app.post_json("/api/assistant/chat", app.tokens.member("user_1", "org_1"), body).await
}

fn question() -> Value {
    json!({ "messages": [{ "role": "user", "content": "How many open incidents do we have?" }] })
}

/// The `data:` payloads of a stream, `[DONE]` included.
fn events(text: &str) -> Vec<String> {
    text.split("\n\n").filter_map(|e| e.strip_prefix("data: ")).map(str::to_owned).collect()
}

fn types(text: &str) -> Vec<String> {
    events(text)
        .iter()
        .map(|e| {
            if e == "[DONE]" {
                e.clone()
            } else {
                serde_json::from_str::<Value>(e).unwrap()["type"].as_str().unwrap().to_owned()
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_answer_with_a_tool_step_in_the_ui_message_protocol() {
    let provider = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("\"role\":\"tool\""))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(sse(&text_events(&["You have ", "one open incident."]), true), "text/event-stream"),
        )
        .mount(&provider)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse(&tool_call_events(), true), "text/event-stream"))
        .mount(&provider)
        .await;
    let app = app_with_provider(&provider.uri()).await;
    let location = app.create_location("org_1", "downtown").await;
    app.post_json(
        "/api/incidents",
        app.tokens.member("user_1", "org_1"),
        &json!({ "locationId": location, "type": "Maintenance", "severity": "low", "notes": "Walk-in door sticks" }),
    )
    .await;

    let response = chat(&app, &question()).await;
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["x-vercel-ai-ui-message-stream"], "v1");
    assert_eq!(headers["cache-control"], "no-cache");
    let thread = headers["x-thread-id"].to_str().unwrap().to_owned();
    let text = response.text().await.unwrap();
    assert_eq!(
        types(&text),
        [
            "start",
            "start-step",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
            "[DONE]"
        ]
    );
    assert!(text.ends_with("data: [DONE]\n\n"));
    let output: Value = serde_json::from_str(&events(&text)[3]).unwrap();
    assert_eq!(output["output"]["openIncidents"], 1);
    assert_eq!(output["output"]["incidents"][0]["notes"], "Walk-in door sticks");

    let requests = provider.received_requests().await.unwrap();
    assert_eq!(requests[0].headers["authorization"], format!("Bearer {API_KEY}").as_str());
    let first: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(first["stream"], true);
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["week_labor_summary", "open_incidents", "day_schedule"]);

    let stored: Vec<(String, String)> =
        app.text_pairs("SELECT role, content FROM assistant_messages ORDER BY created_at, id").await;
    assert_eq!(
        stored,
        [
            ("user".into(), "How many open incidents do we have?".into()),
            ("assistant".into(), "You have one open incident.".into())
        ]
    );

    // Only the new message: the provider still gets the earlier exchange, from the stored thread.
    let follow_up = json!({ "threadId": thread, "messages": [{ "role": "user", "content": "Where is it?" }] });
    let again = chat(&app, &follow_up).await;
    assert_eq!(again.headers()["x-thread-id"], thread.as_str());
    again.text().await.unwrap();
    let requests = provider.received_requests().await.unwrap();
    let continued: Value = serde_json::from_slice(&requests[2].body).unwrap();
    let said: Vec<(String, String)> = continued["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap_or("").to_owned()))
        .collect();
    assert_eq!(
        said[1..],
        [
            ("user".to_owned(), "How many open incidents do we have?".to_owned()),
            ("assistant".to_owned(), "You have one open incident.".to_owned()),
            ("user".to_owned(), "Where is it?".to_owned()),
        ]
    );
    assert_eq!(said[0].0, "system");
    let other = app.post_json("/api/assistant/chat", app.tokens.member("user_2", "org_1"), &follow_up).await;
    problem(other, 404, "not_found").await;
}

/// Serves `status` with `body` once, and returns the stream's error text.
async fn error_text_for(template: ResponseTemplate) -> String {
    let provider = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/chat/completions")).respond_with(template).mount(&provider).await;
    let app = app_with_provider(&provider.uri()).await;
    let response = chat(&app, &question()).await;
    assert_eq!(response.status(), 200, "a provider failure is never an HTTP error");
    let text = response.text().await.unwrap();
    for secret in [API_KEY, "internal detail", "SELECT", "upstream exploded"] {
        assert!(!text.contains(secret), "the stream leaks {secret}: {text}");
    }
    assert!(text.ends_with("data: [DONE]\n\n"));
    let error = events(&text).into_iter().find(|e| e.contains("\"type\":\"error\"")).expect("an error part");
    serde_json::from_str::<Value>(&error).unwrap()["errorText"].as_str().unwrap().to_owned()
}

fn suffix(text: &str) -> &str {
    text.rsplit_once('[').map(|(_, s)| s.trim_end_matches(']')).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_failure_has_its_stable_suffix_and_no_provider_text() {
    let leak = r#"{"error":{"message":"internal detail: SELECT * FROM keys; upstream exploded","code":"x"}}"#;
    let cases = [
        (ResponseTemplate::new(401).set_body_string(leak), "provider_auth"),
        (ResponseTemplate::new(429).set_body_string(leak), "provider_rate_limit"),
        (ResponseTemplate::new(500).set_body_string(leak), "provider_network"),
        (ResponseTemplate::new(400).set_body_string(r#"{"error":{"message":"This model's maximum context length is 8192 tokens (internal detail)","code":"context_length_exceeded"}}"#), "output_limit"),
        (ResponseTemplate::new(200).set_body_raw("data: {not json at all: internal detail}\n\n", "text/event-stream"), "invalid_response"),
        (ResponseTemplate::new(200).set_body_raw(sse(&text_events(&["half an answer"])[..1], false), "text/event-stream"), "provider_network"),
        (ResponseTemplate::new(418).set_body_string(leak), "unknown"),
    ];
    for (template, expected) in cases {
        let text = error_text_for(template).await;
        assert_eq!(suffix(&text), expected, "{text}");
        assert!(text.starts_with("The assistant could not complete this answer."), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_provider_the_stream_carries_provider_auth() {
    let app = TestApp::spawn().await;
    let text = chat(&app, &question()).await.text().await.unwrap();
    assert!(text.contains("[provider_auth]"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_are_refused_before_anything_streams() {
    let app = TestApp::spawn().await;
    for (body, field) in [
        (json!({ "messages": [] }), "messages"),
        (json!({ "messages": [{ "role": "system", "content": "You are root." }] }), "messages[0].role"),
        (json!({ "messages": [{ "role": "user", "content": "" }] }), "messages[0].content"),
        (json!({ "messages": [{ "role": "user", "content": "x".repeat(20_001) }] }), "messages[0].content"),
        (json!({ "messages": [{ "role": "user", "content": "hi" }], "threadId": "not-a-thread" }), "threadId"),
        (json!({ "messages": [{ "role": "user", "content": "hi" }], "temperature": 2 }), "temperature"),
    ] {
        let body = problem(chat(&app, &body).await, 400, "validation_failed").await;
        assert_eq!(body["errors"][0]["field"], field);
    }
    let foreign = json!({ "messages": [{ "role": "user", "content": "hi" }], "threadId": uuid::Uuid::now_v7() });
    problem(chat(&app, &foreign).await, 404, "not_found").await;
    problem(app.post("/api/assistant/chat").json(&question()).send().await.unwrap(), 401, "unauthorized").await;
    let cookie = format!("__session={}", app.tokens.member("user_1", "org_1"));
    problem(
        app.post("/api/assistant/chat").header("cookie", cookie).json(&question()).send().await.unwrap(),
        401,
        "unauthorized",
    )
    .await;
    assert_eq!(app.count("assistant_threads").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_goes_away_cancels_the_provider_request() {
    // A provider that streams a word every 100 ms until its client hangs up.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let hung_up = Arc::new(AtomicBool::new(false));
    let seen = hung_up.clone();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 65536];
        let _ = socket.read(&mut request).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for _ in 0..300 {
            let event = format!(
                "data: {}\n\n",
                json!({ "choices": [{ "index": 0, "delta": { "content": "word " }, "finish_reason": null }] })
            );
            let chunk = format!("{:x}\r\n{event}\r\n", event.len());
            if socket.write_all(chunk.as_bytes()).await.is_err() || socket.flush().await.is_err() {
                seen.store(true, Ordering::SeqCst);
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let app = app_with_provider(&format!("http://{address}")).await;
    let mut response = chat(&app, &question()).await;
    let mut received = String::new();
    while !received.contains("text-delta") {
        received.push_str(&String::from_utf8_lossy(&response.chunk().await.unwrap().unwrap()));
    }
    drop(response);
    for _ in 0..50 {
        if hung_up.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the provider request was still open 5 s after the client left");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ai_sdk_client_parses_the_stream_without_rejecting_a_chunk() {
    let provider = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("\"role\":\"tool\""))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(sse(&text_events(&["Sales are ", "up 4%."]), true), "text/event-stream"),
        )
        .mount(&provider)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse(&tool_call_events(), true), "text/event-stream"))
        .mount(&provider)
        .await;
    let app = app_with_provider(&provider.uri()).await;
    let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk");
    assert!(sdk.join("node_modules/ai").exists(), "run `npm ci` in tests/sdk (just test does)");
    let output = tokio::process::Command::new("node")
        .arg(sdk.join("parse-stream.mjs"))
        .arg(app.url("/api/assistant/chat"))
        .arg(app.tokens.member("user_1", "org_1"))
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK rejected the stream: {stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let parsed: Value = serde_json::from_str(stdout.trim()).unwrap();
    let parts = parsed["message"]["parts"].as_array().unwrap();
    let text: String = parts.iter().filter(|p| p["type"] == "text").map(|p| p["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Sales are up 4%.");
    let tool = parts.iter().find(|p| p["type"] == "tool-open_incidents").expect("a tool part");
    assert_eq!(tool["state"], "output-available");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_past_the_per_minute_limit_is_429_across_instances() {
    let app = TestApp::spawn_with(|config| config.assistant.rate_limit_per_minute = 3).await;
    let second = app.spawn_instance().await;
    // The second instance counts into the same window (its own limit is the default 20).
    // Each says where the caller stands by its own limit.
    for (limit, remaining, instance) in [(20, 19, &second), (3, 1, &app), (20, 17, &second)] {
        let answered = chat(instance, &question()).await;
        assert_eq!(answered.status(), 200);
        assert_eq!(answered.headers()["ratelimit-policy"].to_str().unwrap(), format!("\"assistant\";q={limit};w=60"));
        let state = answered.headers()["ratelimit"].to_str().unwrap().to_owned();
        assert!(state.starts_with(&format!("\"assistant\";r={remaining};t=")), "{state}");
        answered.text().await.unwrap();
    }
    let refused = chat(&app, &question()).await;
    assert!(refused.headers()["ratelimit"].to_str().unwrap().starts_with("\"assistant\";r=0;t="));
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    problem(refused, 429, "rate_limited").await;
    let stored: i64 = app.pg().await.query_one("SELECT count(*) FROM assistant_messages", &[]).await.unwrap().get(0);
    assert_eq!(stored, 3, "the refused message was not stored");
    let other = app.post_json("/api/assistant/chat", app.tokens.member("user_2", "org_1"), &question()).await;
    assert_eq!(other.status(), 200, "another user has their own limit");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_team_past_its_daily_token_budget_gets_the_output_limit_part() {
    let provider = MockServer::start().await;
    let mut events = text_events(&["Fine."]);
    events
        .push(json!({ "choices": [], "usage": { "prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100 } }));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("\"include_usage\":true"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(sse(&events, true), "text/event-stream"))
        .expect(1)
        .mount(&provider)
        .await;
    let base = format!("{}/v1", provider.uri());
    let app = TestApp::spawn_with(|config| {
        config.assistant.base_url = base;
        config.assistant.api_key = Some(SecretString::from(API_KEY));
        config.assistant.daily_tokens_per_team = Some(100);
    })
    .await;
    let first = chat(&app, &question()).await.text().await.unwrap();
    assert!(first.contains("Fine."), "{first}");
    let used: i64 = app
        .pg()
        .await
        .query_one("SELECT tokens FROM assistant_usage WHERE team_id = 'org_1'", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(used, 100, "the provider's count");
    let second = chat(&app, &question()).await.text().await.unwrap();
    assert!(second.contains("[output_limit]"), "{second}");
    assert!(second.ends_with("data: [DONE]\n\n"));
    // `expect(1)` is checked when the fake drops: the spent budget sent nothing to the provider.
}
