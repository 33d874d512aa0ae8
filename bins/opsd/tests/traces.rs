//! OpenTelemetry traces, from outside: the real binary exports over OTLP (HTTP/protobuf) to a
//! local receiver that decodes what it gets. A request with a W3C `traceparent` yields spans of
//! that trace (the request, the job, its database statements, its call to 7shifts), the 7shifts
//! fake sees the same trace in its own `traceparent`, and the JSON log lines name the trace.

use std::process::Stdio;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use opsd_test_db::TestDatabase;
use prost::Message;
use tokio::io::AsyncReadExt;
use tokio::process::Child;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";
const CRON_SECRET: &str = "trace-cron-secret";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every span the receiver has been sent so far.
async fn exported(receiver: &MockServer) -> Vec<Span> {
    let requests = receiver.received_requests().await.unwrap_or_default();
    requests
        .iter()
        .filter(|request| request.url.path() == "/v1/traces")
        .flat_map(|request| {
            ExportTraceServiceRequest::decode(request.body.as_slice()).expect("OTLP protobuf").resource_spans
        })
        .flat_map(|resource| resource.scope_spans)
        .flat_map(|scope| scope.spans)
        .collect()
}

/// 7shifts on loopback, answering every GET with an empty page.
async fn seven_shifts() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({ "data": [], "meta": null })))
        .mount(&server)
        .await;
    server
}

/// The binary serving on a free port with 7shifts at `seven_shifts` and `env` besides, once ready;
/// and its address.
async fn serve(database: &TestDatabase, seven_shifts: &MockServer, env: &[(&str, String)]) -> (Child, String) {
    let port = free_port();
    let server = tokio::process::Command::new(env!("CARGO_BIN_EXE_opsd"))
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", database.url())
        .env("BIND_ADDR", format!("127.0.0.1:{port}"))
        .env("CRON_SECRET", CRON_SECRET)
        .env("OUTBOUND_ALLOW_LOOPBACK", "true")
        .env("SCHEDULER_API_BASE_URL", seven_shifts.uri())
        .env("SCHEDULER_API_TOKEN", "token")
        .env("SCHEDULER_COMPANY_ID", "7")
        .envs(env.iter().map(|(name, value)| (*name, value.as_str())))
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("opsd serves");
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if reqwest::get(format!("{base}/health/ready")).await.is_ok_and(|r| r.status() == 200) {
            return (server, base);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not become ready");
}

/// The role sync (it calls 7shifts) with the caller's `traceparent`.
async fn sync_roles(base: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(format!("{base}/cron/sync-7shifts-roles"))
        .bearer_auth(CRON_SECRET)
        .header("traceparent", format!("00-{TRACE_ID}-{CALLER_SPAN}-01"))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_traceparent_is_continued_through_the_job_its_statements_and_its_outbound_call() {
    let database = TestDatabase::new().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/traces")).respond_with(ResponseTemplate::new(200)).mount(&receiver).await;
    let seven_shifts = seven_shifts().await;
    let env = [
        ("LOG_FORMAT", "json".to_owned()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.uri()),
        ("OTEL_SERVICE_NAME", "opsd-traces-test".to_owned()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
    ];
    let (mut server, base) = serve(&database, &seven_shifts, &env).await;
    let answer = sync_roles(&base).await;
    assert_eq!(answer.status(), 200, "{}", answer.text().await.unwrap());

    // 7shifts was called with a traceparent of the same trace, naming opsd's client span.
    let calls = seven_shifts.received_requests().await.unwrap();
    assert!(!calls.is_empty(), "7shifts was not called");
    for call in &calls {
        let traceparent = call.headers.get("traceparent").expect("a traceparent").to_str().unwrap();
        assert!(traceparent.starts_with(&format!("00-{TRACE_ID}-")), "{traceparent}");
        assert!(!traceparent.contains(CALLER_SPAN), "the parent is opsd's own span: {traceparent}");
    }

    // The request's spans reach the receiver within the batch's schedule.
    let mut spans = Vec::new();
    for _ in 0..100 {
        spans = exported(&receiver).await.into_iter().filter(|span| hex(&span.trace_id) == TRACE_ID).collect();
        if spans.iter().any(|span| span.name == "GET /cron/sync-7shifts-roles") && spans.len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let names: Vec<&str> = spans.iter().map(|span| span.name.as_str()).collect();
    let named =
        |name: &str| spans.iter().find(|span| span.name == name).unwrap_or_else(|| panic!("no {name} in {names:?}"));
    let request = named("GET /cron/sync-7shifts-roles");
    assert_eq!(hex(&request.parent_span_id), CALLER_SPAN, "the request continues the caller's span");
    assert_eq!(named("job sync-7shifts-roles").parent_span_id, request.span_id);
    let statements = spans.iter().filter(|span| span.attributes.iter().any(|a| a.key == "db.statement")).count();
    assert!(statements > 0, "no database statement span in {names:?}");
    // 7shifts' parent is opsd's span of that call.
    let outbound = named("call 7shifts");
    let parents: Vec<&str> = calls.iter().map(|call| call.headers["traceparent"].to_str().unwrap()).collect();
    assert!(parents.iter().any(|parent| parent.split('-').nth(2) == Some(&hex(&outbound.span_id))), "{parents:?}");

    // The log lines of the request carry its trace and span ids.
    server.start_kill().unwrap();
    let mut logs = String::new();
    server.stdout.take().unwrap().read_to_string(&mut logs).await.unwrap();
    let finished = logs
        .lines()
        .find(|line| line.contains("request finished") && line.contains("sync-7shifts-roles"))
        .expect("the request's log line");
    assert!(finished.contains(&format!("\"trace_id\":\"{TRACE_ID}\"")), "{finished}");
    assert!(finished.contains(&format!("\"span_id\":\"{}\"", hex(&request.span_id))), "{finished}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_endpoint_nothing_is_exported_and_no_traceparent_leaves() {
    let database = TestDatabase::new().await;
    let seven_shifts = seven_shifts().await;
    let (_server, base) = serve(&database, &seven_shifts, &[]).await;
    assert_eq!(sync_roles(&base).await.status(), 200);
    let calls = seven_shifts.received_requests().await.unwrap();
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|call| call.headers.get("traceparent").is_none()));
}

/// The dev identity's keys in a fresh folder, and a session token for `user` in `team` signed with them.
fn dev_identity(dir: &std::path::Path) -> (String, String) {
    let opsd = env!("CARGO_BIN_EXE_opsd");
    let made = std::process::Command::new(opsd).arg("dev-keys").arg(dir).output().expect("dev-keys runs");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let public = std::fs::read_to_string(dir.join("public.pem")).expect("the public key");
    let token = std::process::Command::new(opsd)
        .args(["dev-token", "--user", "user_trace", "--team", "org_trace"])
        .env("OPSD_DEV_SIGNING_KEY", dir.join("private.pem"))
        .env("IDENTITY_JWT_PUBLIC_KEY", &public)
        .output()
        .expect("dev-token runs");
    assert!(token.status.success(), "{}", String::from_utf8_lossy(&token.stderr));
    (public, String::from_utf8(token.stdout).unwrap().trim().to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_assistants_call_to_the_language_model_carries_the_requests_trace() {
    let database = TestDatabase::new().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/traces")).respond_with(ResponseTemplate::new(200)).mount(&receiver).await;
    let model = MockServer::start().await;
    let answer = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n\
                  data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200).insert_header("content-type", "text/event-stream").set_body_string(answer),
        )
        .mount(&model)
        .await;
    let keys = std::env::temp_dir().join(format!("opsd-traces-{}", std::process::id()));
    std::fs::create_dir_all(&keys).unwrap();
    let (public_key, token) = dev_identity(&keys);
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.uri()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ("IDENTITY_JWT_PUBLIC_KEY", public_key),
        ("ASSISTANT_BASE_URL", model.uri()),
        ("ASSISTANT_API_KEY", "llm-key".to_owned()),
    ];
    let (_server, base) = serve(&database, &seven_shifts().await, &env).await;
    let response = reqwest::Client::new()
        .post(format!("{base}/api/assistant/chat"))
        .bearer_auth(&token)
        .header("traceparent", format!("00-{TRACE_ID}-{CALLER_SPAN}-01"))
        .json(&serde_json::json!({ "messages": [{ "role": "user", "content": "How did last week go?" }] }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let streamed = response.text().await.unwrap();
    assert!(streamed.contains("Hello") && streamed.ends_with("data: [DONE]\n\n"), "{streamed}");
    let _ = std::fs::remove_dir_all(&keys);

    // The provider saw the request's trace, with opsd's span of the call as the parent.
    let calls = model.received_requests().await.unwrap();
    assert_eq!(calls.len(), 1);
    let traceparent = calls[0].headers.get("traceparent").expect("a traceparent").to_str().unwrap().to_owned();
    assert!(traceparent.starts_with(&format!("00-{TRACE_ID}-")), "a new trace: {traceparent}");
    let mut spans = Vec::new();
    for _ in 0..100 {
        spans = exported(&receiver).await.into_iter().filter(|span| hex(&span.trace_id) == TRACE_ID).collect();
        if spans.iter().any(|span| span.name == "call llm") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let call = spans.iter().find(|span| span.name == "call llm").expect("the call's span in the request's trace");
    assert_eq!(traceparent.split('-').nth(2), Some(hex(&call.span_id).as_str()));
}
