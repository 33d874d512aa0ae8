//! Sending a ready proposal to the scheduling provider as drafts, which the manager reviews and
//! publishes there. Idempotent and resumable: each shift's provider id is recorded once sent, a create
//! is marked as tried before it goes, and a tried one is looked for at the provider (by the note it
//! carries) before it is tried again, so a publish repeated or cut off halfway creates nothing twice.

use std::sync::Arc;

use opsd_core::{Caller, Clock, ServiceError};
use time::Duration;
use uuid::Uuid;

use super::ports::{DraftScheduler, DraftShift, PublishClaim, PublishStart, PublishStore};
use super::service::{PlanRefusal, WeekPlanError};

/// How long one publish holds its proposal: far beyond what a week's drafts take at the provider's
/// 10 requests a second; a publish whose instance died is taken over after it.
const PUBLISH_LEASE: Duration = Duration::minutes(10);

/// What a publish did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub created: u32,
    /// Sent by an earlier publish (or found at the provider after one was cut off).
    pub already_sent: u32,
}

#[derive(derive_new::new)]
pub struct PublishService {
    store: Arc<dyn PublishStore>,
    drafts: Option<Arc<dyn DraftScheduler>>,
    clock: Arc<dyn Clock>,
}

impl PublishService {
    pub async fn publish(&self, caller: &Caller, id: Uuid) -> Result<Published, WeekPlanError> {
        let team = caller.admin_team()?;
        let claim = match self.store.start_publish(team, id, PUBLISH_LEASE).await? {
            PublishStart::Claimed(claim) => claim,
            PublishStart::NotFound => return Err(ServiceError::NotFound),
            PublishStart::NotReady => return Err(ServiceError::Domain(PlanRefusal::NotReady)),
            PublishStart::Busy => return Err(ServiceError::Domain(PlanRefusal::PublishInProgress)),
        };
        let outcome = self.send(&claim).await;
        let complete = outcome.is_ok();
        self.store.end_publish(id, claim.lease, complete, self.clock.now()).await?;
        outcome
    }

    async fn send(&self, claim: &PublishClaim) -> Result<Published, WeekPlanError> {
        let proposal = &claim.proposal;
        if proposal.week.end() < self.clock.now().date() {
            return Err(ServiceError::Domain(PlanRefusal::WeekPassed));
        }
        let Some(location) = &claim.provider_location else {
            return Err(ServiceError::Domain(PlanRefusal::NotLinked));
        };
        let Some(drafts) = &self.drafts else {
            return Err(ServiceError::Domain(PlanRefusal::SchedulerNotConfigured));
        };
        let failed =
            |error: super::ports::DraftError| ServiceError::Domain(PlanRefusal::ProviderFailed(error.to_string()));
        let shifts = proposal.result.as_ref().map(|r| r.shifts.as_slice()).unwrap_or_default();
        let mut published = Published { created: 0, already_sent: 0 };
        for (position, shift) in shifts.iter().enumerate() {
            let (sent, tried) = claim.sent.get(position).cloned().unwrap_or((None, false));
            if sent.is_some() {
                published.already_sent += 1;
                continue;
            }
            let notes = format!("opsd schedule proposal {} shift {position}", proposal.id);
            if tried {
                let window = (shift.start - Duration::minutes(1), shift.start + Duration::minutes(1));
                let found = drafts.drafts(location, &shift.employee_key, window.0, window.1).await.map_err(failed)?;
                if let Some((provider_id, _)) = found.iter().find(|(_, note)| *note == notes) {
                    self.store.record_sent(proposal.id, position, provider_id).await?;
                    published.already_sent += 1;
                    continue;
                }
            }
            let draft = DraftShift {
                location: location.clone(),
                user: shift.employee_key.clone(),
                role: claim.roles.iter().find(|(name, _)| *name == shift.role).map(|(_, id)| id.clone()),
                start: shift.start,
                end: shift.end,
                notes,
            };
            self.store.mark_tried(proposal.id, position).await?;
            let provider_id = drafts.create_draft(&draft).await.map_err(failed)?;
            self.store.record_sent(proposal.id, position, &provider_id).await?;
            published.created += 1;
        }
        Ok(published)
    }
}
