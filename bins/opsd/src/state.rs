use std::sync::Arc;

use opsd_assistant::AssistantService;
use opsd_coupons::{CouponService, ExpirySweep, GuestEventIntake};
use opsd_identity::{Authenticator, IdentityWebhookService};
use opsd_incidents::IncidentService;
use opsd_jobs::JobRunner;
use opsd_nudges::{AnnouncementService, NudgeJobs};
use opsd_optimization::OptimizationService;
use opsd_postgres::Db;
use opsd_push::PushService;
use opsd_reports::ReportService;
use opsd_scheduling::{LegacyScheduleView, ScheduleService};
use opsd_teams::TeamService;

use crate::config::CredentialsConfig;

/// What handlers reach: the domain services and the credentials the extractors check.
pub struct AppState {
    pub db: Db,
    pub credentials: CredentialsConfig,
    pub app_origin: Option<String>,
    pub authenticator: Authenticator,
    pub identity_webhooks: IdentityWebhookService,
    pub teams: Arc<TeamService>,
    pub incidents: Arc<IncidentService>,
    pub reports: ReportService,
    pub optimization: Arc<OptimizationService>,
    pub coupons: CouponService,
    pub schedule: Arc<LegacyScheduleView>,
    pub assistant: AssistantService,
    /// Present when the provider's credentials are configured.
    pub schedule_sync: Option<ScheduleService>,
    pub push: Arc<PushService>,
    pub nudges: NudgeJobs,
    pub announcements: AnnouncementService,
    pub vapid_public_key: Option<String>,
    pub expiry: ExpirySweep,
    pub coupon_expiry_enabled: bool,
    pub guest_events: GuestEventIntake,
    /// Wakes the guest-event worker when an event arrives.
    pub guest_event_wake: Arc<tokio::sync::Notify>,
    pub contact_retention_days: u32,
    pub jobs: Arc<JobRunner>,
}
