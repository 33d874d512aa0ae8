use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use anyhow::Context;
use opsd_core::{Clock, SystemClock};
use opsd_identity::{
    Authenticator, DecodingKey, IdentityWebhookService, JwksCache, KeySource, TokenPolicy, TokenVerifier,
};
use opsd_jobs::JobRunner;
use opsd_signatures::WebhookSecret;
use opsd_outbound::{HttpJwksFetcher, OutboundTargets};
use opsd_incidents::IncidentService;
use opsd_postgres::{
    Db, DbConfig, InvalidationHandler, PgAnalyticsStore, PgContactStore, PgIdentityEventStore, PgIncidentStore, PgTeamCacheInvalidation, PgJobLocks, PgJobRunStore, PgLocationStore, PgMembershipStore,
    PgReportStore, PgTeamSettingsStore,
};
use opsd_cache::MokaReportCache;
use opsd_optimization::{CircuitBreaker, OptimizationService};
use opsd_postgres::listen_for_invalidations;
use opsd_reports::ReportService;
use opsd_teams::TeamService;

use crate::config::Config;
use crate::extract::json::BODY_LIMIT;
use crate::middleware::{HttpMetrics, record_metrics, request_id};
use crate::routes;
use crate::state::AppState;

/// The built server: bound to its port, not yet serving.
pub struct Application {
    port: u16,
    server: Server,
}

impl Application {
    /// Connects to the database, runs the migrations, wires the services and binds the listener
    /// (port 0 picks a free port; `port()` tells which).
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        let db = connect_database(&config).await?;
        let cache = MokaReportCache::new(opsd_cache::TIME_TO_LIVE, 10_000);
        let on_invalidation: InvalidationHandler = Arc::new({
            let cache = cache.clone();
            move |team| cache.invalidate(team)
        });
        tokio::spawn(listen_for_invalidations(config.database.url.clone(), on_invalidation.clone()));
        let state = web::Data::new(wire(&config, db, cache, on_invalidation)?);
        let metrics = web::Data::new(HttpMetrics::new());
        let listener = TcpListener::bind(config.bind_addr).with_context(|| format!("binding {}", config.bind_addr))?;
        let port = listener.local_addr()?.port();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .app_data(metrics.clone())
                .app_data(web::PayloadConfig::new(BODY_LIMIT))
                .app_data(web::PathConfig::default().error_handler(|_, _| crate::ApiError::NotFound.into()))
                .configure(routes::configure)
                .wrap(from_fn(record_metrics))
                .wrap(from_fn(request_id))
        })
        .listen(listener)?
        .shutdown_timeout(30)
        .run();
        Ok(Self { port, server })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, finishes requests in flight and returns.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

pub async fn connect_database(config: &Config) -> anyhow::Result<Db> {
    let db = Db::connect(&DbConfig {
        url: config.database.url.clone(),
        max_connections: config.database.max_connections,
        acquire_timeout: config.database.acquire_timeout,
        statement_timeout: config.database.statement_timeout,
    })?;
    opsd_postgres::run_migrations(&db).await.context("running migrations")?;
    Ok(db)
}

fn wire(
    config: &Config,
    db: Db,
    cache: MokaReportCache,
    on_invalidation: InvalidationHandler,
) -> anyhow::Result<AppState> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let outbound = OutboundTargets { allow_loopback: config.outbound_allow_loopback };
    let keys = signing_keys(config, clock.clone())?;
    let policy = TokenPolicy {
        issuer: config.identity.issuer.clone(),
        authorized_parties: config.identity.authorized_parties.clone(),
    };
    let authenticator =
        Authenticator::new(TokenVerifier::new(keys, policy), Arc::new(PgMembershipStore::new(db.clone())));
    let cache_invalidation = Arc::new(PgTeamCacheInvalidation::new(db.clone(), on_invalidation));
    let optimization = OptimizationService::new(
        Arc::new(PgAnalyticsStore::new(db.clone())),
        Arc::new(cache),
        cache_invalidation.clone(),
        CircuitBreaker::new(clock.clone()),
    );
    let identity_webhooks = IdentityWebhookService::new(
        webhook_secret("IDENTITY_WEBHOOK_SECRET", config.identity.webhook_secret.as_ref())?,
        Arc::new(PgIdentityEventStore::new(db.clone())),
        cache_invalidation,
        clock.clone(),
    );
    let teams = TeamService::new(
        Arc::new(PgLocationStore::new(db.clone())),
        Arc::new(PgTeamSettingsStore::new(db.clone())),
        Arc::new(outbound),
    );
    let incidents = IncidentService::new(
        Arc::new(PgIncidentStore::new(db.clone())),
        Arc::new(PgContactStore::new(db.clone())),
        clock.clone(),
    );
    let reports = ReportService::new(Arc::new(PgReportStore::new(db.clone())), clock.clone());
    let jobs = Arc::new(JobRunner::new(
        Arc::new(PgJobLocks::new(db.clone())),
        Arc::new(PgJobRunStore::new(db.clone())),
        clock,
    ));
    Ok(AppState {
        db,
        credentials: config.credentials.clone(),
        app_origin: config.app_origin.clone(),
        authenticator,
        identity_webhooks,
        teams,
        incidents,
        reports,
        optimization,
        contact_retention_days: config.contact_retention_days,
        jobs,
    })
}

/// A configured signing secret must be well-formed, or the server does not start.
fn webhook_secret(name: &str, secret: Option<&secrecy::SecretString>) -> anyhow::Result<Option<WebhookSecret>> {
    use secrecy::ExposeSecret;
    secret
        .map(|secret| WebhookSecret::parse(secret.expose_secret()).map_err(|error| anyhow::anyhow!("{name}: {error}")))
        .transpose()
}

/// A static PEM key wins over a JWKS URL; with neither, no user token verifies.
fn signing_keys(config: &Config, clock: Arc<dyn Clock>) -> anyhow::Result<KeySource> {
    if let Some(pem) = &config.identity.jwt_public_key_pem {
        let key = DecodingKey::from_rsa_pem(pem.as_bytes())
            .map_err(|error| anyhow::anyhow!("IDENTITY_JWT_PUBLIC_KEY: not an RSA public key in PEM form: {error}"))?;
        return Ok(KeySource::Static(key));
    }
    if let Some(url) = &config.identity.jwks_url {
        let fetcher = Arc::new(HttpJwksFetcher::new(url.clone()));
        return Ok(KeySource::Jwks(Arc::new(JwksCache::new(fetcher, clock))));
    }
    tracing::warn!("neither IDENTITY_JWT_PUBLIC_KEY nor IDENTITY_JWKS_URL is set: user tokens will be refused");
    Ok(KeySource::Jwks(Arc::new(JwksCache::new(Arc::new(NoKeys), clock))))
}

struct NoKeys;

#[async_trait::async_trait]
impl opsd_identity::JwksFetcher for NoKeys {
    async fn fetch(&self) -> Result<opsd_identity::JwkSet, opsd_core::StoreError> {
        Ok(opsd_identity::JwkSet { keys: Vec::new() })
    }
}
