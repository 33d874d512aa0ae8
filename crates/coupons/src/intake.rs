use std::sync::Arc;

use opsd_core::{Clock, StoreError, ValidationErrors};
use opsd_signatures::{SignedDelivery, VerifyError, WebhookSecret};

use crate::events::{GuestEvent, GuestEventDecoder, canonical_sha256, raw_sha256};
use crate::ports::{EnqueueOutcome, GuestEventStore, QueuedEvent};

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("the signing secret is not configured")]
    NotConfigured,
    #[error("signature rejected: {0}")]
    Unverified(#[from] VerifyError),
    #[error(transparent)]
    Invalid(#[from] ValidationErrors),
    #[error("the event id was used with another payload")]
    Conflict,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntakeOutcome {
    /// The stable identity: the producer's `eventId`, or `legacy:<sha256 of the body>`.
    pub event_id: String,
    pub duplicate: bool,
}

/// The coupon-automation receiver: verifies, then puts the event into the durable guest-event
/// queue under its stable identity. Receiving authorizes nothing: the worker decides.
#[derive(derive_new::new)]
pub struct GuestEventIntake {
    secret: Option<WebhookSecret>,
    decoder: Arc<dyn GuestEventDecoder>,
    store: Arc<dyn GuestEventStore>,
    clock: Arc<dyn Clock>,
}

impl GuestEventIntake {
    pub async fn receive(&self, headers: SignedDelivery<'_>, body: &[u8]) -> Result<IntakeOutcome, IntakeError> {
        let secret = self.secret.as_ref().ok_or(IntakeError::NotConfigured)?;
        let now = self.clock.now();
        secret.verify(headers, body, now.unix_timestamp())?;
        let event = self.decoder.decode(body)?;
        let (identity, source, payload_sha256) = match &event {
            GuestEvent::Canonical { event_id, .. } => (event_id.clone(), "canonical", canonical_sha256(body)?),
            GuestEvent::Legacy { .. } => {
                let hash = raw_sha256(body);
                (format!("legacy:{hash}"), "legacy", hash)
            }
        };
        let payload = serde_json::from_slice(body).map_err(|e| ValidationErrors::single("body", e.to_string()))?;
        let queued =
            QueuedEvent { identity: identity.clone(), source, payload_sha256, event, payload, received_at: now };
        match self.store.enqueue(&queued).await? {
            EnqueueOutcome::New => Ok(IntakeOutcome { event_id: identity, duplicate: false }),
            EnqueueOutcome::Duplicate => Ok(IntakeOutcome { event_id: identity, duplicate: true }),
            EnqueueOutcome::Conflict => Err(IntakeError::Conflict),
            EnqueueOutcome::UnknownScope => {
                Err(ValidationErrors::single("locationId", "is not a location of the team").into())
            }
        }
    }
}
