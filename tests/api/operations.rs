use opsd_tests::{TestApp, problem};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn liveness_and_readiness_answer_200() {
    let app = TestApp::spawn().await;
    let live = app.get("/health/live").send().await.unwrap();
    assert_eq!(live.status(), 200);
    assert_eq!(live.json::<Value>().await.unwrap()["status"], "live");
    let ready = app.get("/health/ready").send().await.unwrap();
    assert_eq!(ready.status(), 200);
    assert_eq!(ready.json::<Value>().await.unwrap()["status"], "ready");
}

#[tokio::test(flavor = "multi_thread")]
async fn readiness_and_keep_alive_answer_503_when_the_database_is_gone() {
    let app = TestApp::spawn().await;
    assert_eq!(app.get("/cron/keep-alive").send().await.unwrap().status(), 200);
    // Take the database away under the running server.
    let name = app.db_url.rsplit('/').next().unwrap().to_owned();
    let admin_url = format!("{}/postgres", app.db_url.rsplit_once('/').unwrap().0);
    let (admin, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    admin.batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)")).await.unwrap();

    problem(app.get("/health/ready").send().await.unwrap(), 503, "unavailable").await;
    problem(app.get("/cron/keep-alive").send().await.unwrap(), 503, "unavailable").await;
    assert_eq!(app.get("/health/live").send().await.unwrap().status(), 200, "liveness does not depend on the database");
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_alive_is_public_plain_text_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let response = app.get("/cron/keep-alive").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    assert_eq!(response.text().await.unwrap(), "ok");
    assert_eq!(app.count("job_runs").await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_carries_a_request_id_and_a_sane_inbound_one_is_kept() {
    let app = TestApp::spawn().await;
    let kept = app.get("/health/live").header("x-request-id", "abc-123.def").send().await.unwrap();
    assert_eq!(kept.headers()["x-request-id"], "abc-123.def");

    let replaced = app.get("/health/live").header("x-request-id", "bad id <script>").send().await.unwrap();
    let id = replaced.headers()["x-request-id"].to_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");

    let fresh = app.get("/nowhere").send().await.unwrap();
    assert!(uuid::Uuid::parse_str(fresh.headers()["x-request-id"].to_str().unwrap()).is_ok());
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_requests_by_route_pattern_and_status() {
    let app = TestApp::spawn().await;
    app.get("/health/live").send().await.unwrap();
    app.get("/api/locations").send().await.unwrap();
    app.get("/api/incidents/00000000-0000-7000-8000-000000000001").send().await.unwrap();
    app.delete("/health/live").send().await.unwrap();
    app.get("/nowhere/at/all").send().await.unwrap();
    let text = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    assert!(text.contains(r#"http_requests_total{method="GET",route="/health/live",status="200"} 1"#), "{text}");
    assert!(text.contains(r#"route="/api/locations",status="401""#), "{text}");
    assert!(text.contains(r#"route="/api/incidents/{id}",status="401""#), "{text}");
    assert!(text.contains(r#"http_requests_total{method="DELETE",route="/health/live",status="405"} 1"#), "{text}");
    assert!(text.contains(r#"http_requests_total{method="GET",route="unmatched",status="404"} 1"#), "{text}");
    assert!(text.contains("http_request_duration_seconds_bucket"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_show_the_process_build_pools_queue_circuit_caches_jobs_and_outbound_calls() {
    let app = TestApp::spawn().await;
    let prune = app.get("/cron/prune-idempotency-keys").bearer_auth(opsd_tests::CRON_SECRET).send().await.unwrap();
    assert_eq!(prune.status(), 200);
    let report = app.get("/api/analytics/optimization?teamId=org_none").bearer_auth(opsd_tests::API_KEY);
    report.send().await.unwrap();
    let text = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    for expected in [
        "process_resident_memory_bytes ",
        "process_open_fds ",
        r#"opsd_build_info{commit=""#,
        r#"opsd_db_pool_connections{pool="primary",state="max"}"#,
        r#"opsd_db_pool_connections{pool="primary",state="waiting"} 0"#,
        "opsd_guest_event_queue_depth 0",
        "opsd_guest_event_queue_oldest_seconds 0",
        "opsd_analytics_circuit_open 0",
        r#"opsd_report_cache_lookups_total{report="optimization",result="miss"}"#,
        r#"opsd_job_runs_total{job_name="prune-idempotency-keys",outcome="ok"} 1"#,
        r#"opsd_job_duration_seconds_count{job_name="prune-idempotency-keys"} 1"#,
        r#"opsd_outbound_calls_total{outcome="timeout",target="7shifts"}"#,
    ] {
        assert!(text.contains(expected), "{expected} is not in {text}");
    }
    // A guest event waiting shows in the queue's figures at the next scrape.
    app.pg()
        .await
        .execute(
            "INSERT INTO guest_events (id, identity, source, event_type, payload_sha256, team_id, location_id, payload,              available_at, received_at) VALUES (gen_random_uuid(), 'e1', 'canonical', 'x', '', 'org_1',              gen_random_uuid(), '{}', now(), now() - interval '90 seconds')",
            &[],
        )
        .await
        .unwrap();
    let text = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    assert!(text.contains("opsd_guest_event_queue_depth 1"), "{text}");
    let oldest = text.lines().find_map(|line| line.strip_prefix("opsd_guest_event_queue_oldest_seconds ")).unwrap();
    assert!(oldest.parse::<f64>().unwrap() >= 90.0, "{oldest}");
}

#[tokio::test(flavor = "multi_thread")]
async fn with_metrics_bind_addr_metrics_are_served_there_only() {
    let app = TestApp::spawn_with(|config| config.metrics_bind_addr = Some("127.0.0.1:0".parse().unwrap())).await;
    let apart = app.metrics_address.clone().expect("a metrics listener");
    let api = app.get("/metrics").send().await.unwrap();
    opsd_tests::problem(api, 404, "not_found").await;
    let served = app.client.get(format!("{apart}/metrics")).send().await.unwrap();
    assert_eq!(served.status(), 200);
    let text = served.text().await.unwrap();
    assert!(text.contains(r#"http_requests_total{method="GET",route="/metrics",status="404"} 1"#), "{text}");
    assert!(text.contains("opsd_build_info"), "{text}");
    // Nothing but /metrics there.
    assert_eq!(app.client.get(format!("{apart}/health/live")).send().await.unwrap().status(), 404);
}

/// The metric names a file of the monitoring pack uses: its words with opsd's prefixes.
fn metric_names(text: &str) -> std::collections::BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| ["opsd_", "http_", "process_"].iter().any(|prefix| word.starts_with(prefix)))
        .map(str::to_owned)
        .collect()
}

/// deploy/monitoring's dashboard and alerts query only what /metrics serves (`up` is Prometheus's).
#[tokio::test(flavor = "multi_thread")]
async fn the_monitoring_pack_names_only_metrics_the_server_serves() {
    // Its own database as its replica, so the replica metrics are there too.
    let app = TestApp::spawn_with(|config| config.database.replica_urls = vec![config.database.url.clone()]).await;
    app.get("/health/live").send().await.unwrap();
    let report = app.get("/api/analytics/optimization?teamId=org_none").bearer_auth(opsd_tests::API_KEY);
    report.send().await.unwrap();
    app.get("/cron/prune-idempotency-keys").bearer_auth(opsd_tests::CRON_SECRET).send().await.unwrap();
    let served = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    let served: std::collections::BTreeSet<&str> =
        served.lines().filter(|line| !line.starts_with('#')).filter_map(|line| line.split(['{', ' ']).next()).collect();
    let pack = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/monitoring");
    for file in ["dashboard.json", "alerts.yml", "alerts_test.yml"] {
        let names = metric_names(&std::fs::read_to_string(pack.join(file)).unwrap());
        assert!(!names.is_empty(), "{file} names no metric");
        let missing: Vec<&String> = names.iter().filter(|name| !served.contains(name.as_str())).collect();
        assert!(missing.is_empty(), "{file} queries {missing:?}, which /metrics does not serve: {served:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_is_3_1_and_names_every_route() {
    let app = TestApp::spawn().await;
    let doc: Value = app.get("/openapi.json").send().await.unwrap().json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{}", doc["openapi"]);
    for path in
        ["/health/live", "/health/ready", "/metrics", "/cron/keep-alive", "/api/locations", "/api/team/settings"]
    {
        assert!(doc["paths"].get(path).is_some(), "{path} is missing");
    }
    assert!(doc["components"]["securitySchemes"].get("bearer").is_some());
    let operations: Vec<&Value> =
        doc["paths"].as_object().unwrap().values().flat_map(|item| item.as_object().unwrap().values()).collect();
    let mut ids: Vec<&str> = operations.iter().map(|op| op["operationId"].as_str().unwrap()).collect();
    ids.sort_unstable();
    let count = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids are unique");
    let links = &doc["paths"]["/api/incidents"]["post"]["responses"]["201"]["links"];
    assert_eq!(
        links["GetIncident"],
        serde_json::json!({ "operationId": "get_incident", "parameters": { "id": "$response.body#/id" } })
    );
    for link in ["CommentOnIncident", "ChangeIncidentStatus"] {
        assert!(ids.contains(&links[link]["operationId"].as_str().unwrap()), "{link} names an operation");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lost_listen_connection_is_restarted_and_shown_in_health_and_metrics() {
    let app = TestApp::spawn().await;
    let ready: Value = app.get("/health/ready").send().await.unwrap().json().await.unwrap();
    assert_eq!(
        ready["background"]["cache-invalidation-listener"],
        serde_json::json!({ "state": "running", "restarts": 0 })
    );
    assert_eq!(ready["background"]["guest-event-worker"]["state"], "running");

    // Cut the listener's connection, as a database failover or a proxy's idle timeout would.
    let name = app.db_url.rsplit('/').next().unwrap().to_owned();
    let terminated: i64 = app
        .pg()
        .await
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'",
            &[&name],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(terminated, 1, "one LISTEN connection per instance");

    let mut listener = Value::Null;
    for _ in 0..50 {
        let ready: Value = app.get("/health/ready").send().await.unwrap().json().await.unwrap();
        listener = ready["background"]["cache-invalidation-listener"].clone();
        if listener["restarts"] == 1 && listener["state"] == "running" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listener["restarts"], 1, "{listener}");
    assert_eq!(listener["state"], "running", "{listener}");
    // Running again may come a moment before its LISTEN reaches the server (under a loaded suite).
    let mut listening = 0i64;
    for _ in 0..50 {
        listening = app
            .pg()
            .await
            .query_one("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", &[&name])
            .await
            .unwrap()
            .get(0);
        if listening == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listening, 1, "listening again");
    let metrics = app.get("/metrics").send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.contains(r#"opsd_background_task_restarts_total{task="cache-invalidation-listener"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"opsd_background_task_up{task="cache-invalidation-listener"} 1"#));
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_are_nosniff_and_credentialed_ones_are_never_stored() {
    let app = TestApp::spawn().await;
    let public = app.get("/health/live").send().await.unwrap();
    assert_eq!(public.headers()["x-content-type-options"], "nosniff");
    let token = app.tokens.admin("user_1", "org_1");
    let listed = app.get("/api/locations").bearer_auth(&token).send().await.unwrap();
    assert_eq!(listed.headers()["cache-control"], "no-store");
    assert_eq!(listed.headers()["x-content-type-options"], "nosniff");
    let refused = app.get("/api/locations").bearer_auth("garbage").send().await.unwrap();
    assert_eq!((refused.status().as_u16(), &refused.headers()["cache-control"]), (401, &"no-store".parse().unwrap()));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_reference_is_served_from_this_origin_only() {
    let app = TestApp::spawn().await;
    let page = app.get("/docs").send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.starts_with("default-src 'self'") && policy.contains("script-src 'self'"), "{policy}");
    assert!(!policy.contains("http"), "no other origin is allowed: {policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"spec-url="/openapi.json""#));
    assert!(!html.contains("http://") && !html.contains("https://"), "the page names no other origin");
    let script_path = html.split("src=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    assert!(script_path.starts_with("/docs/"), "{script_path}");
    let script = app.get(&script_path).send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert_eq!(script.headers()["content-encoding"], "gzip");
    assert!(script.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let bytes = script.bytes().await.unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "the gzipped bundle, as the package ships it");
    assert!(bytes.len() > 100_000);
}

/// A cron scheduler calls the jobs due in the same minute at once. Each used to hold a pooled
/// connection for its lock and wait for a second one for its work: ten of them took the whole
/// shared pool and every job and request waited out the acquire timeout (503).
#[tokio::test(flavor = "multi_thread")]
async fn every_job_called_in_the_same_second_runs_and_requests_are_still_answered() {
    let app = TestApp::spawn().await;
    let calls = opsd_tests::CRON_JOBS.map(|job| app.get(job).bearer_auth(opsd_tests::CRON_SECRET).send());
    let request = app.get("/api/locations").bearer_auth(app.tokens.member("user_1", "org_1")).send();
    let (answers, request) = futures::join!(futures::future::join_all(calls), request);
    for (job, answer) in opsd_tests::CRON_JOBS.iter().zip(answers) {
        assert_eq!(answer.unwrap().status(), 200, "{job}");
    }
    assert_eq!(request.unwrap().status(), 200);
}
