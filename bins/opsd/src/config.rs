//! Configuration from environment variables (and an optional `.env`). A variable that is present
//! but malformed stops the server with a message naming it.

use std::net::SocketAddr;
use std::time::Duration;

use ip_network::IpNetwork;
use opsd_postgres::PoolMode;
use secrecy::SecretString;

#[derive(Debug, thiserror::Error)]
#[error("{name}: {problem}")]
pub struct ConfigError {
    pub name: &'static str,
    pub problem: String,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub bind_addr: SocketAddr,
    /// `METRICS_BIND_ADDR`: `/metrics` is served there only (a private network), not on `bind_addr`.
    pub metrics_bind_addr: Option<SocketAddr>,
    pub database: DatabaseConfig,
    pub credentials: CredentialsConfig,
    pub identity: IdentityConfig,
    /// The web app's origin: cookie-authenticated unsafe requests must come from it.
    pub app_origin: Option<String>,
    /// `CORS_ALLOWED_ORIGINS`: browser clients on these other origins may call the API (with a
    /// bearer token; cookies stay first-party).
    pub cors_allowed_origins: Vec<String>,
    /// Users who may open the console's operator pages (jobs, queue): `OPERATOR_USER_IDS`.
    pub operator_user_ids: Vec<String>,
    pub coupons: CouponConfig,
    pub planning: PlanningConfig,
    pub push: PushConfig,
    pub scheduler: SchedulerConfig,
    pub assistant: AssistantConfig,
    /// Optimization reports the in-process cache holds (0 turns the cache off, for benchmarks).
    pub optimization_cache_capacity: u64,
    /// How long the analytics circuit stays open before one trial call may pass.
    pub optimization_breaker_open: Duration,
    /// How long a team-chat post may take before it counts as failed.
    pub chat_timeout: Duration,
    /// Soft-deleted contacts older than this are pruned by the prune job.
    pub contact_retention_days: u32,
    /// Allows `http` and loopback targets for user-supplied outbound URLs (tests only).
    pub outbound_allow_loopback: bool,
    /// After SIGTERM, how long the instance keeps serving while `/health/ready` answers 503, so a
    /// balancer takes it out before it stops accepting.
    pub shutdown_drain: Duration,
    /// Peers whose `Forwarded` / `X-Forwarded-*` headers are believed (`TRUSTED_PROXIES`).
    pub trusted_proxies: Vec<IpNetwork>,
}

#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// Carries the password: never printed.
    pub url: SecretString,
    pub max_connections: usize,
    pub acquire_timeout: Duration,
    pub statement_timeout: Duration,
    /// `DATABASE_POOL_MODE`: how `url` pools.
    pub pool_mode: PoolMode,
    /// `DATABASE_SESSION_URL`: a session-capable address of the primary; `None` is `url`.
    pub session_url: Option<SecretString>,
    /// `DATABASE_REPLICA_URLS`: read-only replicas for the report reads.
    pub replica_urls: Vec<SecretString>,
    /// `DATABASE_REPLICA_MAX_LAG_MS`: a replica further behind is not read.
    pub replica_max_lag: Duration,
}

#[derive(Debug, Clone)]
pub struct CredentialsConfig {
    /// Service keys for optimization data, goals, sales ingestion and the legacy schedule view;
    /// several at once so keys can rotate.
    pub api_keys: Vec<SecretString>,
    pub cron_secret: Option<SecretString>,
}

#[derive(Debug, Clone)]
pub struct AssistantConfig {
    /// An OpenAI-compatible API root including the version; `/chat/completions` is appended.
    pub base_url: String,
    /// Without it every answer carries the `[provider_auth]` error part.
    pub api_key: Option<SecretString>,
    pub model: String,
    /// The longest wait for the provider's answer to start or for its next event.
    pub timeout: Duration,
    /// Answers per user in any minute, across instances.
    pub rate_limit_per_minute: u32,
    /// Tokens per team and UTC day; unset is no budget.
    pub daily_tokens_per_team: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub struct SchedulerConfig {
    /// The 7shifts API root; the adapter appends `/v2/company/{id}/...`.
    pub base_url: String,
    pub token: Option<SecretString>,
    pub company_id: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct PushConfig {
    pub vapid_public_key: Option<String>,
    pub vapid_private_key: Option<SecretString>,
    /// The VAPID `sub` claim: a `mailto:` or `https:` contact; default APP_ORIGIN.
    pub vapid_subject: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct CouponConfig {
    /// Admits the expiry sweep (default false: the job answers `disabled`).
    pub expiry_enabled: bool,
    pub webhook_secret: Option<SecretString>,
    /// Runs the guest-event worker in this instance (default true).
    pub worker_enabled: bool,
    /// How long a claimed guest event is leased before another worker may take it.
    pub guest_event_lease: Duration,
}

#[derive(Debug, Clone)]
pub struct PlanningConfig {
    /// Schedule proposals this instance solves at once (`PLANNING_SOLVES`, default 1; 0: none here).
    /// Each solve takes one core for up to 120 s; the rest wait their turn on the queue.
    pub concurrent_solves: u32,
}

#[derive(Debug, Clone)]
pub struct IdentityConfig {
    pub jwks_url: Option<String>,
    /// Fetched keys are fresh this long, then refreshed in the background.
    pub jwks_refresh: Duration,
    /// How long past their refresh time keys still verify while refreshes fail.
    pub jwks_max_stale: Duration,
    pub jwt_public_key_pem: Option<String>,
    pub issuer: Option<String>,
    pub authorized_parties: Vec<String>,
    pub webhook_secret: Option<SecretString>,
    /// `OPSD_DEV_SIGNING_KEY`: the dev identity's private key (`just run` only), which enables the
    /// console's one-time sign-in links.
    pub dev_signing_key: Option<std::path::PathBuf>,
}

impl Config {
    pub fn from_environment() -> Result<Self, ConfigError> {
        Ok(Self {
            bind_addr: bind_addr()?,
            metrics_bind_addr: parsed("METRICS_BIND_ADDR")?,
            database: DatabaseConfig {
                url: text("DATABASE_URL")
                    .map(SecretString::from)
                    .ok_or(ConfigError { name: "DATABASE_URL", problem: "is required".into() })?,
                max_connections: parsed("DATABASE_POOL_SIZE")?.unwrap_or_else(default_pool_size),
                acquire_timeout: Duration::from_millis(parsed("DATABASE_ACQUIRE_TIMEOUT_MS")?.unwrap_or(3_000)),
                statement_timeout: Duration::from_millis(parsed("DATABASE_STATEMENT_TIMEOUT_MS")?.unwrap_or(10_000)),
                pool_mode: pool_mode()?,
                session_url: session_url()?,
                replica_urls: list("DATABASE_REPLICA_URLS").into_iter().map(SecretString::from).collect(),
                replica_max_lag: Duration::from_millis(parsed("DATABASE_REPLICA_MAX_LAG_MS")?.unwrap_or(5_000)),
            },
            credentials: CredentialsConfig {
                api_keys: list("API_KEY").into_iter().map(SecretString::from).collect(),
                cron_secret: text("CRON_SECRET").map(SecretString::from),
            },
            identity: IdentityConfig {
                jwks_url: text("IDENTITY_JWKS_URL"),
                jwks_refresh: Duration::from_secs(parsed("IDENTITY_JWKS_REFRESH_SECONDS")?.unwrap_or(3_600)),
                jwks_max_stale: Duration::from_secs(parsed("IDENTITY_JWKS_MAX_STALE_SECONDS")?.unwrap_or(86_400)),
                jwt_public_key_pem: text("IDENTITY_JWT_PUBLIC_KEY").map(|pem| pem.replace("\\n", "\n")),
                issuer: text("IDENTITY_ISSUER"),
                authorized_parties: list("IDENTITY_AUTHORIZED_PARTIES"),
                webhook_secret: text("IDENTITY_WEBHOOK_SECRET").map(SecretString::from),
                dev_signing_key: dev_signing_key()?,
            },
            app_origin: text("APP_ORIGIN").map(|origin| origin.trim_end_matches('/').to_owned()),
            cors_allowed_origins: origins("CORS_ALLOWED_ORIGINS")?,
            operator_user_ids: list("OPERATOR_USER_IDS"),
            assistant: AssistantConfig {
                base_url: text("ASSISTANT_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into()),
                api_key: text("ASSISTANT_API_KEY").map(SecretString::from),
                model: text("ASSISTANT_MODEL").unwrap_or_else(|| "gpt-4o-mini".into()),
                timeout: Duration::from_millis(parsed("ASSISTANT_TIMEOUT_MS")?.unwrap_or(30_000)),
                rate_limit_per_minute: parsed("ASSISTANT_RATE_LIMIT_PER_MINUTE")?.unwrap_or(20),
                daily_tokens_per_team: parsed("ASSISTANT_DAILY_TOKENS_PER_TEAM")?,
            },
            scheduler: SchedulerConfig {
                base_url: text("SCHEDULER_API_BASE_URL").unwrap_or_else(|| "https://api.7shifts.com".into()),
                token: text("SCHEDULER_API_TOKEN").map(SecretString::from),
                company_id: text("SCHEDULER_COMPANY_ID"),
            },
            push: PushConfig {
                vapid_public_key: text("NEXT_PUBLIC_VAPID_PUBLIC_KEY"),
                vapid_private_key: text("VAPID_PRIVATE_KEY").map(SecretString::from),
                vapid_subject: text("VAPID_SUBJECT"),
            },
            coupons: CouponConfig {
                expiry_enabled: flag("COUPON_EXPIRY_ENABLED")?,
                webhook_secret: text("COUPON_WEBHOOK_SECRET").map(SecretString::from),
                worker_enabled: !matches!(text("GUEST_EVENT_WORKER").as_deref(), Some("false" | "0" | "off")),
                guest_event_lease: Duration::from_secs(parsed("GUEST_EVENT_LEASE_SECONDS")?.unwrap_or(60)),
            },
            planning: PlanningConfig { concurrent_solves: parsed("PLANNING_SOLVES")?.unwrap_or(1) },
            optimization_cache_capacity: parsed("OPTIMIZATION_CACHE_CAPACITY")?.unwrap_or(10_000),
            optimization_breaker_open: Duration::from_secs(parsed("OPTIMIZATION_BREAKER_OPEN_SECONDS")?.unwrap_or(30)),
            chat_timeout: Duration::from_millis(parsed("CHAT_TIMEOUT_MS")?.unwrap_or(5_000)),
            contact_retention_days: parsed("CONTACT_RETENTION_DAYS")?.unwrap_or(30),
            outbound_allow_loopback: flag("OUTBOUND_ALLOW_LOOPBACK")? || flag("PUSH_ALLOW_INSECURE_ENDPOINTS")?,
            shutdown_drain: Duration::from_secs(parsed("SHUTDOWN_DRAIN_SECONDS")?.unwrap_or(0)),
            trusted_proxies: trusted_proxies()?,
        })
    }
}

/// The dev identity's key (`just run` only): never beside a real provider, and only the key whose
/// public half the server trusts, so the console's sign-in links sign in no one it would refuse.
fn dev_signing_key() -> Result<Option<std::path::PathBuf>, ConfigError> {
    let name = crate::dev_identity::SIGNING_KEY_VARIABLE;
    let Some(path) = text(name).map(std::path::PathBuf::from) else { return Ok(None) };
    if text("IDENTITY_JWKS_URL").is_some() {
        return Err(ConfigError {
            name,
            problem: "is for `just run` only: unset it where IDENTITY_JWKS_URL names a provider".into(),
        });
    }
    let trusted = text("IDENTITY_JWT_PUBLIC_KEY").map(|pem| pem.replace("\\n", "\n")).unwrap_or_default();
    match crate::dev_identity::is_public_half(&path, &trusted) {
        Ok(true) => Ok(Some(path)),
        Ok(false) => Err(ConfigError { name, problem: "IDENTITY_JWT_PUBLIC_KEY is not this key's public half".into() }),
        Err(error) => Err(ConfigError { name, problem: format!("{error:#}") }),
    }
}

fn pool_mode() -> Result<PoolMode, ConfigError> {
    match text("DATABASE_POOL_MODE").as_deref() {
        None | Some("session") => Ok(PoolMode::Session),
        Some("transaction") => Ok(PoolMode::Transaction),
        Some(other) => Err(ConfigError {
            name: "DATABASE_POOL_MODE",
            problem: format!("must be session or transaction (got {other:?})"),
        }),
    }
}

/// Behind a transaction pooler `DATABASE_URL` cannot carry a session (`LISTEN`, the jobs' and the
/// migrations' locks), and defaulting to it would fail silently: `LISTEN` on a pooled backend never
/// hears anything. So transaction mode needs the session address named.
fn session_url() -> Result<Option<SecretString>, ConfigError> {
    let url = text("DATABASE_SESSION_URL").map(SecretString::from);
    if url.is_none() && pool_mode()? == PoolMode::Transaction {
        return Err(ConfigError {
            name: "DATABASE_SESSION_URL",
            problem:
                "is required when DATABASE_POOL_MODE is transaction (a direct or session-mode address of the primary)"
                    .into(),
        });
    }
    Ok(url)
}

/// Addresses (`10.0.0.5`) or networks (`10.0.0.0/24`), comma-separated.
fn trusted_proxies() -> Result<Vec<IpNetwork>, ConfigError> {
    list("TRUSTED_PROXIES")
        .into_iter()
        .map(|entry| {
            let parsed = if entry.contains('/') {
                entry.parse::<IpNetwork>().map_err(|error| error.to_string())
            } else {
                entry.parse::<std::net::IpAddr>().map(IpNetwork::from).map_err(|error| error.to_string())
            };
            parsed.map_err(|error| ConfigError {
                name: "TRUSTED_PROXIES",
                problem: format!("{entry:?} is not an address or a network: {error}"),
            })
        })
        .collect()
}

/// A set, non-blank variable.
fn text(name: &'static str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

fn list(name: &'static str) -> Vec<String> {
    text(name)
        .map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn parsed<T: std::str::FromStr>(name: &'static str) -> Result<Option<T>, ConfigError>
where
    T::Err: std::fmt::Display,
{
    text(name)
        .map(|raw| raw.parse::<T>().map_err(|error| ConfigError { name, problem: format!("{error} (got {raw:?})") }))
        .transpose()
}

fn flag(name: &'static str) -> Result<bool, ConfigError> {
    match text(name).as_deref() {
        None | Some("false" | "0" | "no") => Ok(false),
        Some("true" | "1" | "yes") => Ok(true),
        Some(other) => Err(ConfigError { name, problem: format!("must be true or false (got {other:?})") }),
    }
}

/// For the shared pool, two connections per core and two spare (the usual sizing for a server whose
/// database shares the machine's cores): more connections than the cores can run only make the
/// requests' database work wait on each other. Measured on 2 cores at 32 concurrent uncached
/// reports: 4 to 6 connections gave a p99 of 23 to 27 ms, 16 gave 43 to 64 ms at the same
/// throughput. Plus one per core for the HTTP workers' own connections (`Db::split_for_workers`,
/// one worker per core): taken out of the 6, they left the write routes about 10% slower. Plus one
/// for the session that holds the jobs' locks (`Db::split_session`).
fn default_pool_size() -> usize {
    http_workers() * 3 + 3
}

/// `BIND_ADDR`, by default 127.0.0.1:8080.
pub fn bind_addr() -> Result<SocketAddr, ConfigError> {
    Ok(parsed("BIND_ADDR")?.unwrap_or_else(|| "127.0.0.1:8080".parse().expect("a socket address")))
}

/// One HTTP worker per core, as actix-web's own default (two when the count cannot be read).
pub fn http_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |cores| cores.get())
}

/// A comma-separated list of origins (`scheme://host[:port]`, nothing after), each checked.
fn origins(name: &'static str) -> Result<Vec<String>, ConfigError> {
    let Some(raw) = text(name) else { return Ok(Vec::new()) };
    raw.split(',')
        .map(str::trim)
        .filter(|origin| !origin.is_empty())
        .map(|origin| {
            let parsed = url::Url::parse(origin)
                .map_err(|error| ConfigError { name, problem: format!("{origin:?}: {error}") })?;
            let serialized = parsed.origin().ascii_serialization();
            if matches!(parsed.scheme(), "http" | "https") && serialized == origin.trim_end_matches('/') {
                Ok(serialized)
            } else {
                Err(ConfigError { name, problem: format!("{origin:?} is not an origin (scheme://host[:port])") })
            }
        })
        .collect()
}
