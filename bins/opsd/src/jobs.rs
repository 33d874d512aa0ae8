//! The scheduled jobs, each a type: its name, schedule, answer format and body. The runner in
//! `opsd-jobs` owns locking, run records and the answers of runs that did not happen; docs/configuration.md's
//! job table is generated from these (`opsd jobs`, checked by a test).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use opsd_core::StoreError;
use opsd_core::SystemClock;
use opsd_coupons::ExpirySweep;
use opsd_idempotency::Idempotency;
use opsd_incidents::IncidentService;
use opsd_jobs::{AnswerFormat, Finished, Job, JobStatus};
use opsd_nudges::{AnnouncementService, NudgeJobs, NudgeTally};
use opsd_postgres::{
    Db, DbConfig, PgAnnouncementStore, PgContactStore, PgExpiryStore, PgIdempotencyStore, PgIncidentStore, PgNudgeStore,
};
use opsd_scheduling::{ScheduleService, SyncStatus};
use serde_json::json;
use uuid::Uuid;

/// Every job, in the order of the job table in docs/configuration.md.
pub struct Jobs {
    all: Vec<Arc<dyn Job>>,
}

impl Jobs {
    pub fn new(all: Vec<Arc<dyn Job>>) -> Self {
        Self { all }
    }

    pub fn all(&self) -> impl Iterator<Item = &dyn Job> {
        self.all.iter().map(|job| job.as_ref())
    }

    pub fn get(&self, name: &str) -> &dyn Job {
        self.all.iter().find(|job| job.name() == name).map(|job| job.as_ref()).expect("a registered job")
    }

    /// The job table of docs/configuration.md (keep-alive, public and recordless, is the first row).
    pub fn table(&self) -> String {
        let mut rows = vec![
            "| path | schedule | answer | what it does |".to_owned(),
            "|---|---|---|---|".to_owned(),
            "| `/cron/keep-alive` | `0 1 * * *` | text | keeps the database connection warm (`SELECT 1`; public, records no run) |"
                .to_owned(),
        ];
        for job in &self.all {
            let format = match job.format() {
                AnswerFormat::Text => "text",
                AnswerFormat::Json => "JSON",
            };
            rows.push(format!("| `/cron/{}` | `{}` | {format} | {} |", job.name(), job.schedule(), job.description()));
        }
        rows.join("\n")
    }
}

fn tally(tally: NudgeTally, noun: &str) -> Finished {
    let status = if tally.failed == 0 { JobStatus::Ok } else { JobStatus::Partial };
    let summary = json!({ "sent": tally.sent, "alreadyNudged": tally.already, "failed": tally.failed });
    let text = format!("ok: {} {noun} sent, {} already nudged, {} failed", tally.sent, tally.already, tally.failed);
    Finished::new(status, summary, json!(text))
}

pub struct ReportReminder(pub Arc<NudgeJobs>);

#[async_trait]
impl Job for ReportReminder {
    fn name(&self) -> &'static str {
        "report-reminder"
    }
    fn schedule(&self) -> &'static str {
        "0 20 * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Text
    }
    fn description(&self) -> &'static str {
        "reminds the team chat of today's unfiled shift and manager reports: `ok: N reminders sent, M already nudged, K failed`"
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        Ok(tally(self.0.remind().await?, "reminders"))
    }
}

pub struct CheckCompliance(pub Arc<NudgeJobs>);

#[async_trait]
impl Job for CheckCompliance {
    fn name(&self) -> &'static str {
        "check-compliance"
    }
    fn schedule(&self) -> &'static str {
        "0 14 * * 1"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Text
    }
    fn description(&self) -> &'static str {
        "stores last week's filing compliance and nudges about what is missing: `ok: N nudges sent, …`"
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        Ok(tally(self.0.check_compliance().await?, "nudges"))
    }
}

pub struct AggregateHeroes(pub Arc<NudgeJobs>);

#[async_trait]
impl Job for AggregateHeroes {
    fn name(&self) -> &'static str {
        "aggregate-heroes"
    }
    fn schedule(&self) -> &'static str {
        "0 14 * * 1"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Text
    }
    fn description(&self) -> &'static str {
        "posts last week's Hero of the Shift per location: `ok: N MVP messages sent, …`"
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        Ok(tally(self.0.aggregate_heroes().await?, "MVP messages"))
    }
}

pub struct PublishAnnouncements(pub Arc<AnnouncementService>);

#[async_trait]
impl Job for PublishAnnouncements {
    fn name(&self) -> &'static str {
        "publish-scheduled-announcements"
    }
    fn schedule(&self) -> &'static str {
        "*/5 * * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "publishes due announcements and delivers their push outbox: `{status, published, pushed}`"
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        let (published, pushed) = self.0.publish_due().await?;
        let summary = json!({ "published": published, "pushed": pushed });
        Ok(Finished::new(JobStatus::Ok, summary, json!({ "status": "ok", "published": published, "pushed": pushed })))
    }
}

pub struct PruneContacts {
    pub incidents: Arc<IncidentService>,
    pub retention_days: u32,
}

#[async_trait]
impl Job for PruneContacts {
    fn name(&self) -> &'static str {
        "prune-soft-deleted-contacts"
    }
    fn schedule(&self) -> &'static str {
        "30 8 * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "deletes contacts soft-deleted more than `CONTACT_RETENTION_DAYS` ago: `{\"status\":\"ok\",\"pruned\":N}`"
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        let pruned = self.incidents.prune_contacts(self.retention_days).await?;
        let summary = json!({ "pruned": pruned, "retentionDays": self.retention_days });
        Ok(Finished::new(JobStatus::Ok, summary, json!({ "status": "ok", "pruned": pruned })))
    }
}

/// Deletes idempotency keys and their answers once they are a day old.
pub struct PruneIdempotencyKeys(pub Arc<Idempotency>);

#[async_trait]
impl Job for PruneIdempotencyKeys {
    fn name(&self) -> &'static str {
        "prune-idempotency-keys"
    }
    fn schedule(&self) -> &'static str {
        "45 * * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "deletes `Idempotency-Key` answers kept more than 24 hours: `{\"status\":\"ok\",\"pruned\":N}`"
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        let pruned = self.0.prune().await?;
        Ok(Finished::new(JobStatus::Ok, json!({ "pruned": pruned }), json!({ "status": "ok", "pruned": pruned })))
    }
}

fn sync_status(status: SyncStatus) -> JobStatus {
    match status {
        SyncStatus::Ok => JobStatus::Ok,
        SyncStatus::Partial => JobStatus::Partial,
        SyncStatus::Failed => JobStatus::Failed,
    }
}

pub struct SyncSchedule(pub Option<Arc<ScheduleService>>);

#[async_trait]
impl Job for SyncSchedule {
    fn name(&self) -> &'static str {
        "sync-schedule-from-7shifts"
    }
    fn schedule(&self) -> &'static str {
        "0 */6 * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "refreshes imported shifts from 7shifts: `{status, inserted, updated, deleted, unchanged, failedLocations}`"
    }
    fn enabled(&self) -> bool {
        self.0.is_some()
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        let report = self.0.as_ref().expect("enabled").sync_schedule().await?;
        let body = serde_json::to_value(&report).expect("a report serializes");
        Ok(Finished::new(sync_status(report.status), body.clone(), body))
    }
}

pub struct SyncRoles(pub Option<Arc<ScheduleService>>);

#[async_trait]
impl Job for SyncRoles {
    fn name(&self) -> &'static str {
        "sync-7shifts-roles"
    }
    fn schedule(&self) -> &'static str {
        "0 */4 * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "refreshes the role-to-department mapping: `{status, inserted, updated, unchanged}`"
    }
    fn enabled(&self) -> bool {
        self.0.is_some()
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        let report = self.0.as_ref().expect("enabled").sync_roles().await?;
        let body = serde_json::to_value(&report).expect("a report serializes");
        Ok(Finished::new(sync_status(report.status), body.clone(), body))
    }
}

pub struct SyncPunches(pub Option<Arc<ScheduleService>>);

#[async_trait]
impl Job for SyncPunches {
    fn name(&self) -> &'static str {
        "sync-7shifts-punches"
    }
    fn schedule(&self) -> &'static str {
        "*/15 * * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "syncs time punches modified since the last run: `{status, inserted, updated, deleted, unchanged, failedLocations}`"
    }
    fn enabled(&self) -> bool {
        self.0.is_some()
    }
    async fn run(&self, _: Uuid) -> Result<Finished, StoreError> {
        let report = self.0.as_ref().expect("enabled").sync_punches().await?;
        let body = serde_json::to_value(&report).expect("a report serializes");
        Ok(Finished::new(sync_status(report.status), body.clone(), body))
    }
}

pub struct ExpireCoupons {
    pub sweep: Arc<ExpirySweep>,
    pub enabled: bool,
}

#[async_trait]
impl Job for ExpireCoupons {
    fn name(&self) -> &'static str {
        "expire-coupons"
    }
    fn schedule(&self) -> &'static str {
        "* * * * *"
    }
    fn format(&self) -> AnswerFormat {
        AnswerFormat::Json
    }
    fn description(&self) -> &'static str {
        "expires due coupon reservations: `{status, correlationId, durationMs, expired, …}`; 500 with `\"status\":\"failed\"` when the health gate is raised"
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
    async fn run(&self, correlation: Uuid) -> Result<Finished, StoreError> {
        let report = self.sweep.run(correlation).await?;
        let healthy = report.healthy();
        let body = serde_json::to_value(&report).expect("a report serializes");
        let status = if healthy { JobStatus::Ok } else { JobStatus::Failed };
        Ok(Finished { status, summary: body.clone(), answer: body, healthy })
    }
}

/// The registry over services whose pool never connects: enough to list the jobs (`opsd jobs`).
pub fn listing() -> Jobs {
    let db = Db::connect(&DbConfig {
        url: "postgres://nobody@127.0.0.1:9/none".into(),
        max_connections: 1,
        acquire_timeout: Duration::from_secs(1),
        statement_timeout: Duration::from_secs(1),
    })
    .unwrap();
    let clock = Arc::new(SystemClock);
    let chat = Arc::new(opsd_outbound::SlackWebhookChat::new(
        opsd_outbound::OutboundTargets { allow_loopback: false },
        Duration::from_secs(1),
    ));
    let nudges = Arc::new(NudgeJobs::new(Arc::new(PgNudgeStore::new(db.primary_only())), chat, clock.clone()));
    let announcements = Arc::new(AnnouncementService::new(
        Arc::new(PgAnnouncementStore::new(db.clone())),
        Arc::new(NoPush),
        clock.clone(),
    ));
    let incidents = Arc::new(IncidentService::new(
        Arc::new(PgIncidentStore::new(db.clone())),
        Arc::new(PgContactStore::new(db.clone())),
        clock.clone(),
    ));
    Jobs::new(vec![
        Arc::new(ReportReminder(nudges.clone())),
        Arc::new(CheckCompliance(nudges.clone())),
        Arc::new(AggregateHeroes(nudges)),
        Arc::new(PublishAnnouncements(announcements)),
        Arc::new(PruneContacts { incidents, retention_days: 30 }),
        Arc::new(PruneIdempotencyKeys(Arc::new(Idempotency::new(Arc::new(PgIdempotencyStore::new(db.clone())))))),
        Arc::new(SyncSchedule(None)),
        Arc::new(SyncRoles(None)),
        Arc::new(SyncPunches(None)),
        Arc::new(ExpireCoupons {
            sweep: Arc::new(ExpirySweep::new(Arc::new(PgExpiryStore::new(db)), clock)),
            enabled: false,
        }),
    ])
}

struct NoPush;

#[async_trait]
impl opsd_nudges::UserPush for NoPush {
    async fn push(&self, _: &opsd_core::UserId, _: &str, _: &str, _: &str) -> Result<u32, StoreError> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_documented_job_table_is_the_jobs_own() {
        let table = listing().table();
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md")).unwrap();
        assert!(readme.contains(&table), "the job table of docs/configuration.md must be exactly:\n{table}");
    }
}
