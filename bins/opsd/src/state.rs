use std::sync::Arc;

use opsd_assistant::AssistantService;
use opsd_coupons::{CouponService, GuestEventIntake};
use opsd_identity::{Authenticator, IdentityWebhookService};
use opsd_incidents::IncidentService;
use opsd_jobs::JobRunner;
use opsd_nudges::AnnouncementService;
use opsd_optimization::OptimizationService;
use opsd_postgres::Db;
use opsd_push::PushService;
use opsd_reports::ReportService;
use opsd_scheduling::LegacyScheduleView;
use opsd_teams::TeamService;

use crate::config::CredentialsConfig;
use crate::jobs::Jobs;

/// What handlers reach: the domain services and the credentials the extractors check.
pub struct AppState {
    pub db: Db,
    /// `Idempotency-Key` answers (the `idempotency` middleware).
    pub idempotency: Arc<opsd_idempotency::Idempotency>,
    pub credentials: CredentialsConfig,
    pub app_origin: Option<String>,
    /// Peers whose forwarding headers (`X-Forwarded-Host`, `-Proto`, `Forwarded`) are believed.
    pub trusted_proxies: Vec<ip_network::IpNetwork>,
    /// Set on SIGTERM: `/health/ready` answers 503 while the instance drains.
    pub draining: Arc<std::sync::atomic::AtomicBool>,
    /// The users of `OPERATOR_USER_IDS`.
    pub operators: Vec<String>,
    pub authenticator: Authenticator,
    pub identity_webhooks: IdentityWebhookService,
    pub teams: Arc<TeamService>,
    pub incidents: Arc<IncidentService>,
    pub reports: ReportService,
    pub optimization: Arc<OptimizationService>,
    pub planning: opsd_planning::PlanningService,
    /// Availability and schedule proposals (the week planner).
    pub week_plans: Arc<opsd_planning::week_plan::WeekPlanService>,
    /// Proposals sent to 7shifts as drafts.
    pub publishes: Arc<opsd_planning::week_plan::PublishService>,
    /// Wakes this instance's proposal solvers when a proposal is queued here.
    pub proposal_wake: Arc<tokio::sync::Notify>,
    pub coupons: CouponService,
    pub schedule: Arc<LegacyScheduleView>,
    pub assistant: AssistantService,
    pub push: Arc<PushService>,
    pub announcements: Arc<AnnouncementService>,
    pub vapid_public_key: Option<String>,
    pub guest_events: GuestEventIntake,
    /// The queue as operators see it, and their Retry.
    pub guest_event_queue: Arc<dyn opsd_coupons::GuestEventQueue>,
    /// Wakes the guest-event worker when an event arrives.
    pub guest_event_wake: Arc<tokio::sync::Notify>,
    /// Runs the scheduled jobs: one run at a time across instances, each recorded.
    pub jobs: Arc<JobRunner>,
    /// The scheduled jobs by name.
    pub cron: Jobs,
    /// The nudge jobs' counts, for the console's compliance page: read from the replicas.
    pub nudges: Arc<opsd_nudges::NudgeJobs>,
    /// Each job's last run and its last day, for the console.
    pub job_history: Arc<dyn opsd_jobs::JobHistory>,
    /// Job runs, and the figures `/metrics` reads afresh at each scrape.
    pub metrics: crate::metrics::OperationalMetrics,
    /// The console's one-time sign-in links, with the dev identity only.
    pub dev_sign_in: Option<Arc<crate::console::DevSignInDoor>>,
}
