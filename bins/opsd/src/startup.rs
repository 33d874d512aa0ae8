use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use anyhow::Context;
use opsd_assistant::{AssistantLimits, AssistantPorts, AssistantService};
use opsd_cache::MokaReportCache;
use opsd_core::{Clock, SystemClock, TeamChat};
use opsd_coupons::{CouponService, ExpirySweep, GuestEventIntake, GuestEventWorker};
use opsd_identity::{
    Authenticator, DecodingKey, IdentityWebhookService, JwksCache, JwksPolicy, KeySource, SignInCache, TokenPolicy,
    TokenVerifier,
};
use opsd_incidents::IncidentService;
use opsd_jobs::JobRunner;
use opsd_nudges::{AnnouncementService, NudgeJobs};
use opsd_optimization::{CircuitBreaker, OptimizationService};
use opsd_outbound::{
    ChatCompletions, ChatCompletionsConfig, HttpJwksFetcher, OutboundTargets, SevenShifts, SevenShiftsConfig,
    SlackWebhookChat, VapidKeys, VapidPushSender,
};
use opsd_planning::PlanningService;
use opsd_planning::week_plan::{DraftScheduler, PlanRules, PublishService, WeekPlanService};
use opsd_push::PushService;
use opsd_scheduling::{LegacyScheduleView, ScheduleService, SchedulingProvider};
use opsd_solver::HighsSolver;

use crate::assistant_tools::AppTools;
use crate::broadcast::{AnnouncementPush, PushAlertNotifier};
use opsd_idempotency::Idempotency;
use opsd_postgres::{
    Db, DbConfig, InvalidationHandler, InvalidationListener, PgAnalyticsStore, PgAnnouncementStore, PgContactStore,
    PgCouponStore, PgExpiryStore, PgGuestEventStore, PgIdempotencyStore, PgIdentityEventStore, PgIncidentStore,
    PgJobLocks, PgJobRunStore, PgLocationStore, PgMemberDirectory, PgMembershipStore, PgNudgeStore, PgPlanRulesStore,
    PgPlanningStore, PgPunchStore, PgRateLimiter, PgReportStore, PgScheduleStore, PgSubscriptionStore,
    PgTeamCacheInvalidation, PgTeamSettingsStore, PgThreadStore, PgUsageStore, PgWeekPlanStore, Topology,
    connect_invalidation_listener,
};
use opsd_reports::ReportService;
use opsd_signatures::WebhookSecret;
use opsd_teams::TeamService;
use secrecy::{ExposeSecret, SecretString};
use tokio::task::JoinHandle;

use crate::config::{Config, http_workers};
use crate::extract::json::BODY_LIMIT;
use crate::jobs::{self, Jobs};
use crate::middleware::{HttpMetrics, layered};
use crate::routes;
use crate::state::AppState;
use crate::supervisor::Supervisor;

/// A push service that does not answer in this long counts as a failed delivery.
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);

/// The built server: bound to its port, not yet serving.
pub struct Application {
    port: u16,
    server: Server,
    /// `/metrics` alone on `METRICS_BIND_ADDR`, and its port.
    metrics_server: Option<(u16, Server)>,
    background: Vec<JoinHandle<()>>,
    draining: Arc<AtomicBool>,
    drain: Duration,
}

impl Application {
    /// Connects to the database, runs the migrations, wires the services, starts the background
    /// tasks and binds the listener (port 0 picks a free port; `port()` tells which).
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        let mut db = connect_database(&config).await?;
        let workers = http_workers();
        db.split_for_workers(workers);
        let job_locks = PgJobLocks::new(db.split_session()?);
        let worker_db = db.clone();
        let mut metrics = HttpMetrics::new().with_routes(routes::patterns().iter().map(String::as_str));
        metrics.served_apart = config.metrics_bind_addr.is_some();
        let metrics = web::Data::new(metrics);
        let supervisor = Supervisor::new(&metrics.registry);
        crate::metrics::register_standard(&metrics.registry).context("registering the process metrics")?;
        let database = crate::metrics::DatabaseMetrics::new(db.clone());
        metrics.registry.register(Box::new(database)).context("registering the database metrics")?;
        let (state, background) = wire(&config, db, job_locks, &supervisor, &metrics.registry).await?;
        let draining = state.draining.clone();
        let state = web::Data::new(state);
        let supervisor = web::Data::new(supervisor);
        let listener = TcpListener::bind(config.bind_addr).with_context(|| format!("binding {}", config.bind_addr))?;
        let port = listener.local_addr()?.port();
        let metrics_server = match config.metrics_bind_addr {
            Some(address) => Some(metrics_server(address, state.clone(), metrics.clone())?),
            None => None,
        };
        let cors_origins = config.cors_allowed_origins.clone();
        // Absent, not refused, without the dev identity: a real deployment has no such route.
        let dev_sign_in = state.dev_sign_in.is_some();
        let server = HttpServer::new(move || {
            if let Err(error) = worker_db.attach_worker() {
                tracing::error!(%error, "this worker uses the shared connection pool");
            }
            layered(
                App::new()
                    .app_data(state.clone())
                    .app_data(metrics.clone())
                    .app_data(supervisor.clone())
                    .app_data(web::PayloadConfig::new(BODY_LIMIT))
                    .app_data(web::PathConfig::default().error_handler(|_, _| crate::ApiError::NotFound.into()))
                    .configure(routes::configure)
                    .configure(|routes| {
                        if dev_sign_in {
                            routes.route(crate::console::DEV_SIGN_IN_PATH, web::get().to(crate::console::dev_sign_in));
                        }
                    }),
                cors_origins.clone(),
            )
        })
        .workers(workers)
        .listen(listener)?
        .shutdown_timeout(30)
        .disable_signals()
        .run();
        Ok(Self { port, server, metrics_server, background, draining, drain: config.shutdown_drain })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of `METRICS_BIND_ADDR`'s listener, when it is set.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics_server.as_ref().map(|(port, _)| *port)
    }

    /// Serves until SIGTERM or SIGINT, then stops accepting, finishes requests in flight, stops
    /// the background tasks and returns.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let (handle, draining, drain) = (self.server.handle(), self.draining, self.drain);
        let stopper = tokio::spawn(async move {
            stop_signal().await;
            // Not ready from now on, still serving: a balancer's health check takes the instance
            // out within its own interval, and requests it sends meanwhile are answered.
            draining.store(true, Ordering::Relaxed);
            if !drain.is_zero() {
                tracing::info!(seconds = drain.as_secs(), "draining before stopping");
                tokio::time::sleep(drain).await;
            }
            handle.stop(true).await;
        });
        let metrics = self.metrics_server.map(|(_, server)| {
            let handle = server.handle();
            tokio::spawn(server);
            handle
        });
        let served = self.server.await;
        stopper.abort();
        if let Some(metrics) = metrics {
            metrics.stop(false).await;
        }
        for task in self.background {
            task.abort();
        }
        served
    }
}

/// `/metrics` and nothing else, on its own listener: one worker is plenty for a scraper.
fn metrics_server(
    address: std::net::SocketAddr,
    state: web::Data<AppState>,
    metrics: web::Data<HttpMetrics>,
) -> anyhow::Result<(u16, Server)> {
    let listener = TcpListener::bind(address).with_context(|| format!("binding {address} (METRICS_BIND_ADDR)"))?;
    let port = listener.local_addr()?.port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(metrics.clone())
            .route("/metrics", web::get().to(routes::render_metrics))
    })
    .workers(1)
    .listen(listener)?
    .disable_signals()
    .run();
    Ok((port, server))
}

/// SIGTERM or SIGINT.
async fn stop_signal() {
    let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(error) => {
            tracing::error!(%error, "SIGTERM cannot be handled; stopping on SIGINT only");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = terminate.recv() => tracing::info!("SIGTERM received"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received"),
    }
}

/// The database's pools, migrated.
pub async fn connect_database(config: &Config) -> anyhow::Result<Db> {
    let db = open_database(config)?;
    opsd_postgres::run_migrations(&db, opsd_postgres::MigrationStep::PreDeploy).await.context("running migrations")?;
    Ok(db)
}

/// The database's pools as configured; nothing is connected until it is used.
pub fn open_database(config: &Config) -> anyhow::Result<Db> {
    Ok(Db::connect_to(
        &DbConfig {
            url: config.database.url.clone(),
            max_connections: config.database.max_connections,
            acquire_timeout: config.database.acquire_timeout,
            statement_timeout: config.database.statement_timeout,
        },
        &Topology {
            pool_mode: config.database.pool_mode,
            session_url: config.database.session_url.clone(),
            replica_urls: config.database.replica_urls.clone(),
            replica_max_lag: config.database.replica_max_lag,
        },
    )?)
}

async fn wire(
    config: &Config,
    db: Db,
    job_locks: PgJobLocks,
    supervisor: &Supervisor,
    registry: &prometheus::Registry,
) -> anyhow::Result<(AppState, Vec<JoinHandle<()>>)> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let outbound = OutboundTargets { allow_loopback: config.outbound_allow_loopback };
    let locations = Arc::new(PgLocationStore::new(db.clone()));
    let settings = Arc::new(PgTeamSettingsStore::new(db.clone()));
    let chat: Arc<dyn TeamChat> = Arc::new(SlackWebhookChat::new(outbound, config.chat_timeout));

    let cache = MokaReportCache::new(opsd_cache::TIME_TO_LIVE, config.optimization_cache_capacity);
    let variances = MokaReportCache::new(opsd_cache::TIME_TO_LIVE, config.optimization_cache_capacity);
    let forecasts = MokaReportCache::new(opsd_cache::TIME_TO_LIVE, config.optimization_cache_capacity);
    let caches = crate::metrics::ReportCacheMetrics::new(vec![
        ("optimization", Box::new(cache.clone())),
        ("variance", Box::new(variances.clone())),
        ("forecast", Box::new(forecasts.clone())),
    ]);
    registry.register(Box::new(caches)).context("registering the cache metrics")?;
    let on_invalidation: InvalidationHandler = Arc::new({
        let (cache, variances, forecasts, db) = (cache.clone(), variances.clone(), forecasts.clone(), db.clone());
        move |team| {
            // First: a read that refills the cache from here on needs a replica past this write.
            db.note_invalidation();
            cache.invalidate(team);
            variances.invalidate(team);
            forecasts.invalidate(team);
        }
    });
    let instance = uuid::Uuid::new_v4();
    let cache_invalidation = Arc::new(PgTeamCacheInvalidation::new(db.clone(), on_invalidation.clone(), instance));
    let session_url = config.database.session_url.clone().unwrap_or_else(|| config.database.url.clone());
    let first = connect_invalidation_listener(session_url.expose_secret())
        .await
        .context("listening for cache invalidations")?;
    let sign_ins = Arc::new(SignInCache::default());
    let mut background: Vec<JoinHandle<()>> = db.spawn_replica_monitor().into_iter().collect();
    background.push(supervise_listener(supervisor, first, session_url, on_invalidation, sign_ins.clone(), instance));

    let authenticator = Authenticator::new(
        TokenVerifier::new(
            signing_keys(config, clock.clone())?,
            TokenPolicy {
                issuer: config.identity.issuer.clone(),
                authorized_parties: config.identity.authorized_parties.clone(),
            },
        ),
        Arc::new(PgMembershipStore::new(db.clone())),
        sign_ins.clone(),
    );
    let identity_webhooks = IdentityWebhookService::new(
        webhook_secret("IDENTITY_WEBHOOK_SECRET", config.identity.webhook_secret.as_ref())?,
        Arc::new(crate::routes::decode_identity_event),
        Arc::new(PgIdentityEventStore::new(db.clone())),
        cache_invalidation.clone(),
        sign_ins,
        clock.clone(),
    );

    let coupon_store = Arc::new(PgCouponStore::new(db.clone()));
    let guest_event_store = Arc::new(PgGuestEventStore::new(db.clone()));
    let guest_event_wake = Arc::new(tokio::sync::Notify::new());

    let rate_limiter = Arc::new(PgRateLimiter::new(db.clone()));
    let vapid = vapid_keys(config)?;
    let vapid_public_key = vapid.as_ref().map(|keys| keys.public_key().to_owned());
    let push = Arc::new(PushService::new(
        Arc::new(PgSubscriptionStore::new(db.clone())),
        Arc::new(PgMemberDirectory::new(db.clone())),
        Arc::new(VapidPushSender::new(vapid, outbound, PUSH_TIMEOUT)),
        rate_limiter.clone(),
        Arc::new(outbound),
        clock.clone(),
    ));
    if config.coupons.worker_enabled {
        let worker = Arc::new(GuestEventWorker::new(
            Arc::new(crate::routes::decode_guest_event),
            guest_event_store.clone(),
            coupon_store.clone(),
            Arc::new(PushAlertNotifier { push: push.clone(), locations: locations.clone() }),
            clock.clone(),
            time::Duration::try_from(config.coupons.guest_event_lease).context("GUEST_EVENT_LEASE_SECONDS")?,
        ));
        let wake = guest_event_wake.clone();
        background.push(
            supervisor
                .spawn("guest-event-worker", move || Box::pin(run_guest_event_worker(worker.clone(), wake.clone()))),
        );
    }
    let nudges = Arc::new(NudgeJobs::new(Arc::new(PgNudgeStore::new(db.primary_only())), chat.clone(), clock.clone()));
    // The console's compliance page reads the same filings, from the replicas.
    let compliance = Arc::new(NudgeJobs::new(Arc::new(PgNudgeStore::new(db.clone())), chat.clone(), clock.clone()));
    let announcements = Arc::new(AnnouncementService::new(
        Arc::new(PgAnnouncementStore::new(db.clone())),
        Arc::new(AnnouncementPush { push: push.clone() }),
        clock.clone(),
    ));

    let planning_store = Arc::new(PgPlanningStore::new(db.clone()));
    let week_plans = Arc::new(WeekPlanService::new(
        Arc::new(PgWeekPlanStore::new(db.clone())),
        Arc::new(PgPlanRulesStore::new(db.clone())),
        planning_store.clone(),
        Arc::new(HighsSolver),
        clock.clone(),
        PlanRules::default(),
    ));
    let proposal_wake = Arc::new(tokio::sync::Notify::new());
    if config.planning.concurrent_solves > 0 {
        let (service, wake, solves) = (week_plans.clone(), proposal_wake.clone(), config.planning.concurrent_solves);
        background.push(supervisor.spawn("proposal-solver", move || {
            let solvers: Vec<_> = (0..solves).map(|_| run_proposal_solver(service.clone(), wake.clone())).collect();
            Box::pin(async move { futures::future::try_join_all(solvers).await.map(drop) })
        }));
    }

    let schedule_store = Arc::new(PgScheduleStore::new(db.clone()));
    // One client for the syncs and the drafts, so both keep to the provider's one rate limit.
    let seven_shifts_client = match (&config.scheduler.token, &config.scheduler.company_id) {
        (Some(token), Some(company_id)) => Some(Arc::new(SevenShifts::new(SevenShiftsConfig {
            base_url: config.scheduler.base_url.clone(),
            token: token.clone(),
            company_id: company_id.clone(),
            timeout: Duration::from_secs(15),
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(30),
        }))),
        _ => None,
    };
    let seven_shifts = seven_shifts_client.clone().map(|client| client as Arc<dyn SchedulingProvider>);
    let publishes = Arc::new(PublishService::new(
        Arc::new(PgWeekPlanStore::new(db.clone())),
        seven_shifts_client.map(|client| client as Arc<dyn DraftScheduler>),
        clock.clone(),
    ));
    let schedule = Arc::new(LegacyScheduleView::new(schedule_store.clone(), clock.clone()));
    let schedule_sync = seven_shifts.map(|provider| {
        Arc::new(ScheduleService::new(
            provider,
            schedule_store.clone(),
            Arc::new(PgPunchStore::new(db.clone())),
            cache_invalidation.clone(),
            clock.clone(),
        ))
    });

    let teams = Arc::new(TeamService::new(locations.clone(), settings.clone(), Arc::new(outbound)));
    let incidents = Arc::new(IncidentService::new(
        Arc::new(PgIncidentStore::new(db.clone())),
        Arc::new(PgContactStore::new(db.clone())),
        clock.clone(),
    ));
    let optimization = Arc::new(OptimizationService::new(
        Arc::new(PgAnalyticsStore::new(db.clone())),
        Arc::new(cache),
        cache_invalidation.clone(),
        CircuitBreaker::new(
            clock.clone(),
            time::Duration::try_from(config.optimization_breaker_open).context("OPTIMIZATION_BREAKER_OPEN_SECONDS")?,
        ),
        Arc::new(crate::routes::render_report),
    ));
    let model = config.assistant.api_key.as_ref().map(|key| {
        Arc::new(ChatCompletions::new(ChatCompletionsConfig {
            base_url: config.assistant.base_url.clone(),
            api_key: key.clone(),
            model: config.assistant.model.clone(),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: config.assistant.timeout,
        })) as Arc<dyn opsd_assistant::LanguageModel>
    });
    let assistant = AssistantService::new(
        model,
        AssistantPorts {
            tools: Arc::new(AppTools {
                optimization: optimization.clone(),
                incidents: incidents.clone(),
                schedule: schedule.clone(),
                teams: teams.clone(),
            }),
            threads: Arc::new(PgThreadStore::new(db.clone())),
            clock: clock.clone(),
            limiter: rate_limiter.clone(),
            usage: Arc::new(PgUsageStore::new(db.clone())),
        },
        AssistantLimits {
            per_user_per_minute: config.assistant.rate_limit_per_minute,
            daily_tokens_per_team: config.assistant.daily_tokens_per_team,
        },
    );

    let idempotency = Arc::new(Idempotency::new(Arc::new(PgIdempotencyStore::new(db.clone()))));
    let dev_sign_in = crate::console::DevSignInDoor::from_config(&config.identity, &db, config.app_origin.as_deref())?;
    let state = AppState {
        dev_sign_in: dev_sign_in.map(Arc::new),
        idempotency: idempotency.clone(),
        db: db.clone(),
        credentials: config.credentials.clone(),
        app_origin: config.app_origin.clone(),
        trusted_proxies: config.trusted_proxies.clone(),
        draining: Arc::default(),
        operators: config.operator_user_ids.clone(),
        authenticator,
        identity_webhooks,
        teams,
        incidents: incidents.clone(),
        reports: ReportService::new(Arc::new(PgReportStore::new(db.clone())), clock.clone()),
        optimization,
        week_plans,
        publishes,
        proposal_wake,
        planning: PlanningService::new(planning_store, Arc::new(variances), Arc::new(forecasts)),
        coupons: CouponService::new(coupon_store, clock.clone()),
        push,
        announcements: announcements.clone(),
        vapid_public_key,
        schedule,
        assistant,
        cron: Jobs::new(vec![
            Arc::new(jobs::ReportReminder(nudges.clone())),
            Arc::new(jobs::CheckCompliance(nudges.clone())),
            Arc::new(jobs::AggregateHeroes(nudges.clone())),
            Arc::new(jobs::PublishAnnouncements(announcements)),
            Arc::new(jobs::PruneContacts {
                incidents: incidents.clone(),
                retention_days: config.contact_retention_days,
            }),
            Arc::new(jobs::PruneIdempotencyKeys(idempotency.clone())),
            Arc::new(jobs::SyncSchedule(schedule_sync.clone())),
            Arc::new(jobs::SyncRoles(schedule_sync.clone())),
            Arc::new(jobs::SyncPunches(schedule_sync)),
            Arc::new(jobs::ExpireCoupons {
                sweep: Arc::new(ExpirySweep::new(Arc::new(PgExpiryStore::new(db.clone())), clock.clone())),
                enabled: config.coupons.expiry_enabled,
            }),
        ]),
        guest_events: GuestEventIntake::new(
            webhook_secret("COUPON_WEBHOOK_SECRET", config.coupons.webhook_secret.as_ref())?,
            Arc::new(crate::routes::decode_guest_event),
            guest_event_store.clone(),
            clock.clone(),
        ),
        guest_event_queue: guest_event_store,
        guest_event_wake,
        job_history: Arc::new(PgJobRunStore::new(db.clone())),
        metrics: crate::metrics::OperationalMetrics::new(registry).context("registering the job metrics")?,
        nudges: compliance,
        jobs: Arc::new(JobRunner::new(Arc::new(job_locks), Arc::new(PgJobRunStore::new(db)), clock)),
    };
    Ok((state, background))
}

/// The cache-invalidation listener, under supervision: the first connection was made before the
/// server serves; every later one drops the whole cache first, since invalidations sent while it
/// was away are lost.
fn supervise_listener(
    supervisor: &Supervisor,
    first: InvalidationListener,
    url: SecretString,
    handler: InvalidationHandler,
    sign_ins: Arc<SignInCache>,
    instance: uuid::Uuid,
) -> JoinHandle<()> {
    let mut first = Some(first);
    supervisor.spawn("cache-invalidation-listener", move || {
        let (first, url, handler, sign_ins) = (first.take(), url.clone(), handler.clone(), sign_ins.clone());
        Box::pin(async move {
            let listener = match first {
                Some(listener) => listener,
                None => {
                    let listener = connect_invalidation_listener(url.expose_secret())
                        .await
                        .map_err(|error| format!("reconnecting: {error}"))?;
                    handler(None);
                    listener
                }
            };
            listener.run(&handler, &sign_ins, instance).await;
            Err("the LISTEN connection ended".to_owned())
        })
    })
}

/// Drains the guest-event queue: at once when an event arrives here, and every second for events
/// that arrived through other instances or wait for a retry.
async fn run_guest_event_worker(worker: Arc<GuestEventWorker>, wake: Arc<tokio::sync::Notify>) -> Result<(), String> {
    loop {
        match worker.run_once(50).await {
            Ok(50) => continue,
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "the guest-event worker could not claim events"),
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), wake.notified()).await;
    }
}

/// Solves queued schedule proposals one at a time (`PLANNING_SOLVES` of these run per instance): at once when one is queued here, and every two
/// seconds for those queued through other instances or left by a solver whose instance died.
async fn run_proposal_solver(service: Arc<WeekPlanService>, wake: Arc<tokio::sync::Notify>) -> Result<(), String> {
    loop {
        match service.solve_next(time::Duration::seconds(60)).await {
            Ok(true) => continue,
            Ok(false) => {}
            Err(error) => tracing::warn!(%error, "the proposal solver could not claim a proposal"),
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), wake.notified()).await;
    }
}

/// Without VAPID keys the server still starts, and sending answers `not_configured`.
fn vapid_keys(config: &Config) -> anyhow::Result<Option<VapidKeys>> {
    let Some(private) = &config.push.vapid_private_key else {
        if config.push.vapid_public_key.is_some() {
            tracing::warn!("NEXT_PUBLIC_VAPID_PUBLIC_KEY is set without VAPID_PRIVATE_KEY: push sending is off");
        }
        return Ok(None);
    };
    let subject = config
        .push
        .vapid_subject
        .clone()
        .or_else(|| config.app_origin.clone().filter(|origin| origin.starts_with("https://")))
        .unwrap_or_else(|| "mailto:operations@localhost".into());
    Ok(Some(VapidKeys::new(private.expose_secret(), config.push.vapid_public_key.as_deref(), &subject)?))
}

/// A configured signing secret must be well-formed, or the server does not start.
fn webhook_secret(name: &str, secret: Option<&SecretString>) -> anyhow::Result<Option<WebhookSecret>> {
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
    let policy = JwksPolicy {
        refresh_after: time::Duration::try_from(config.identity.jwks_refresh)
            .context("IDENTITY_JWKS_REFRESH_SECONDS")?,
        max_stale: time::Duration::try_from(config.identity.jwks_max_stale)
            .context("IDENTITY_JWKS_MAX_STALE_SECONDS")?,
    };
    if let Some(url) = &config.identity.jwks_url {
        let fetcher = Arc::new(HttpJwksFetcher::new(url.clone()));
        return Ok(KeySource::Jwks(Arc::new(JwksCache::new(fetcher, clock, policy))));
    }
    tracing::warn!("neither IDENTITY_JWT_PUBLIC_KEY nor IDENTITY_JWKS_URL is set: user tokens will be refused");
    Ok(KeySource::Jwks(Arc::new(JwksCache::new(Arc::new(NoKeys), clock, policy))))
}

struct NoKeys;

#[async_trait::async_trait]
impl opsd_identity::JwksFetcher for NoKeys {
    async fn fetch(&self) -> Result<opsd_identity::JwkSet, opsd_core::StoreError> {
        Ok(opsd_identity::JwkSet { keys: Vec::new() })
    }
}
