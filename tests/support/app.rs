use std::time::Duration;

use opsd::Application;
use opsd::config::{Config, CredentialsConfig, DatabaseConfig, IdentityConfig};
use opsd_test_db::TestDatabase;
use secrecy::SecretString;
use serde_json::Value;

use crate::tokens::{AUTHORIZED_PARTY, ISSUER, SIGNING_PUBLIC_KEY, TokenMinter};
use crate::{API_KEY, APP_ORIGIN, CRON_SECRET, IDENTITY_WEBHOOK_SECRET, ROTATED_API_KEY};

/// One running server on its own database. Several may share a database (`spawn_instance`).
pub struct TestApp {
    pub address: String,
    /// `METRICS_BIND_ADDR`'s listener, when the test set it.
    pub metrics_address: Option<String>,
    pub client: reqwest::Client,
    pub tokens: TokenMinter,
    pub db_url: String,
    _database: Option<std::sync::Arc<TestDatabase>>,
    database_handle: std::sync::Arc<TestDatabase>,
}

pub fn test_config(db_url: &str) -> Config {
    Config {
        bind_addr: "127.0.0.1:0".parse().unwrap(),
        metrics_bind_addr: None,
        cors_allowed_origins: Vec::new(),
        database: DatabaseConfig {
            url: SecretString::from(db_url),
            max_connections: 8,
            acquire_timeout: Duration::from_secs(3),
            statement_timeout: Duration::from_secs(10),
            pool_mode: opsd_postgres::PoolMode::Session,
            session_url: None,
            replica_urls: Vec::new(),
            replica_max_lag: Duration::from_secs(5),
        },
        credentials: CredentialsConfig {
            api_keys: vec![SecretString::from(API_KEY), SecretString::from(ROTATED_API_KEY)],
            cron_secret: Some(SecretString::from(CRON_SECRET)),
        },
        identity: IdentityConfig {
            jwks_url: None,
            jwks_refresh: std::time::Duration::from_secs(3_600),
            jwks_max_stale: std::time::Duration::from_secs(86_400),
            jwt_public_key_pem: Some(SIGNING_PUBLIC_KEY.to_owned()),
            issuer: Some(ISSUER.to_owned()),
            authorized_parties: vec![AUTHORIZED_PARTY.to_owned()],
            webhook_secret: Some(SecretString::from(IDENTITY_WEBHOOK_SECRET)),
            dev_signing_key: None,
        },
        app_origin: Some(APP_ORIGIN.to_owned()),
        operator_user_ids: vec!["user_operator".into()],
        contact_retention_days: 30,
        chat_timeout: Duration::from_millis(500),
        optimization_cache_capacity: 10_000,
        optimization_breaker_open: std::time::Duration::from_secs(30),
        assistant: opsd::config::AssistantConfig {
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: None,
            model: "test-model".into(),
            timeout: Duration::from_secs(30),
            rate_limit_per_minute: 20,
            daily_tokens_per_team: None,
        },
        scheduler: opsd::config::SchedulerConfig {
            base_url: "http://127.0.0.1:9".into(),
            token: None,
            company_id: None,
        },
        push: opsd::config::PushConfig {
            vapid_public_key: Some(crate::push_fake::VAPID_PUBLIC_KEY.to_owned()),
            vapid_private_key: Some(SecretString::from(crate::push_fake::VAPID_PRIVATE_KEY)),
            vapid_subject: Some("mailto:ops@test.example".to_owned()),
        },
        coupons: opsd::config::CouponConfig {
            expiry_enabled: true,
            webhook_secret: Some(SecretString::from(crate::COUPON_WEBHOOK_SECRET)),
            worker_enabled: true,
            guest_event_lease: Duration::from_secs(60),
        },
        planning: opsd::config::PlanningConfig { concurrent_solves: 1 },
        outbound_allow_loopback: true,
        shutdown_drain: Duration::ZERO,
        trusted_proxies: Vec::new(),
    }
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(|_| {}).await
    }

    /// A server on a fresh database, with the test configuration adjusted by `customize`.
    pub async fn spawn_with(customize: impl FnOnce(&mut Config)) -> Self {
        opsd::telemetry::init_for_tests();
        let database = std::sync::Arc::new(TestDatabase::new().await);
        Self::start(database, customize).await
    }

    /// A server on a database of the caller's (a restored backup, say).
    pub async fn spawn_on(database: TestDatabase, customize: impl FnOnce(&mut Config)) -> Self {
        opsd::telemetry::init_for_tests();
        Self::start(std::sync::Arc::new(database), customize).await
    }

    /// A second server on this one's database, as a second instance behind a load balancer.
    pub async fn spawn_instance(&self) -> Self {
        Self::start(self.database_handle.clone(), |_| {}).await
    }

    async fn start(database: std::sync::Arc<TestDatabase>, customize: impl FnOnce(&mut Config)) -> Self {
        let mut config = test_config(database.url());
        customize(&mut config);
        let app = Application::build(config).await.expect("the test server builds");
        let address = format!("http://127.0.0.1:{}", app.port());
        let metrics_address = app.metrics_port().map(|port| format!("http://127.0.0.1:{port}"));
        tokio::spawn(app.run_until_stopped());
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Self {
            address,
            metrics_address,
            client,
            tokens: TokenMinter,
            db_url: database.url().to_owned(),
            _database: Some(database.clone()),
            database_handle: database,
        }
    }

    /// The server's database refuses it from now on, as one out of reach would.
    pub async fn cut_off_database(&self) {
        self.database_handle.refuse_connections().await;
    }

    /// A small pool of this server's database, for what a test does beside the API (seeding, say).
    pub fn db(&self) -> opsd_postgres::Db {
        opsd_postgres::Db::connect(&opsd_postgres::DbConfig {
            url: self.db_url.clone().into(),
            max_connections: 2,
            acquire_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(60),
        })
        .expect("a pool of the test database")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path))
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.post(self.url(path))
    }

    pub fn put(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.put(self.url(path))
    }

    pub fn patch(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.patch(self.url(path))
    }

    pub fn delete(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.delete(self.url(path))
    }

    /// A direct connection to this server's database, for arranging and asserting rows.
    pub async fn pg(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.db_url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client
    }

    /// The rows of a two-column text query.
    pub async fn text_pairs(&self, sql: &str) -> Vec<(String, String)> {
        self.pg().await.query(sql, &[]).await.unwrap().iter().map(|r| (r.get(0), r.get(1))).collect()
    }

    pub async fn count(&self, table: &str) -> i64 {
        let pg = self.pg().await;
        pg.query_one(&format!("SELECT count(*) FROM {table}"), &[]).await.unwrap().get(0)
    }

    /// Creates a location for `team` as its admin and returns its id.
    /// GET `path` with `token` as the bearer, and its JSON body.
    pub async fn get_json(&self, path: &str, token: impl std::fmt::Display) -> Value {
        self.get(path).bearer_auth(token).send().await.unwrap().json().await.unwrap()
    }

    /// POST `body` as JSON to `path` with `token` as the bearer.
    pub async fn post_json<T: serde::Serialize + ?Sized>(
        &self,
        path: &str,
        token: impl std::fmt::Display,
        body: &T,
    ) -> reqwest::Response {
        self.post(path).bearer_auth(token).json(body).send().await.unwrap()
    }

    pub async fn create_location(&self, team: &str, slug: &str) -> String {
        self.create_location_in(team, slug, "America/Chicago").await
    }

    /// Creates a location named `name` (its slug the name in lower case) of `team`, as its admin
    /// `user_admin`, in `timezone`; answers its id.
    pub async fn create_location_in(&self, team: &str, name: &str, timezone: &str) -> String {
        let slug = name.to_lowercase();
        let body = serde_json::json!({ "name": name, "slug": slug, "timezone": timezone });
        let response = self.post_json("/api/locations", self.tokens.admin("user_admin", team), &body).await;
        assert_eq!(response.status(), 201, "creating location {slug}");
        response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
    }
}

/// Asserts a problem-details answer with `status` and `code`, and returns its body.
pub async fn problem(response: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(response.status().as_u16(), status, "status");
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(content_type.as_deref(), Some("application/problem+json"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], code, "code in {body}");
    assert_eq!(body["status"], status);
    body
}

/// A shift to import for tests: start and end in UTC.
pub struct TestShift {
    pub id: &'static str,
    pub start: time::OffsetDateTime,
    pub end: time::OffsetDateTime,
    pub department: opsd_core::Department,
    pub wage_cents: i64,
    pub unpaid_break_minutes: u32,
    pub draft: bool,
}

impl TestApp {
    /// Imports shifts through the schedule adapter, as the schedule sync does.
    pub async fn import_shifts(&self, location: &str, timezone: &str, shifts: &[TestShift]) {
        use diesel_async::{AsyncConnection, AsyncPgConnection};
        let zone = time_tz::timezones::get_by_name(timezone).expect("a zone");
        let placed: Vec<opsd_scheduling::ScheduledShift> = shifts
            .iter()
            .map(|s| {
                let input = opsd_scheduling::ShiftInput {
                    provider_shift_id: s.id.to_owned(),
                    employee_name: format!("Employee {}", s.id),
                    employee_key: format!("key-{}", s.id),
                    role: "Server".into(),
                    department: s.department,
                    start_at: s.start,
                    end_at: s.end,
                    unpaid_break_minutes: s.unpaid_break_minutes,
                    hourly_wage: opsd_core::Decimal::new(s.wage_cents, 2),
                    is_draft: s.draft,
                };
                opsd_scheduling::ScheduledShift::place(input, zone).expect("a valid shift")
            })
            .collect();
        let mut conn = AsyncPgConnection::establish(&self.db_url).await.unwrap();
        let location = opsd_core::LocationId(location.parse().unwrap());
        opsd_postgres::upsert_shifts(&mut conn, location, &placed, time::OffsetDateTime::now_utc()).await.unwrap();
    }
}
