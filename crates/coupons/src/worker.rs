use std::sync::Arc;

use opsd_core::{Clock, StoreError};
use time::Duration;

use crate::events::{CanonicalEvent, GuestEvent, GuestEventDecoder};
use crate::ports::{ClaimedEvent, CouponStore, GuestEventStore, HoldOutcome, RedeemOutcome};

/// Ratings at or below this alert the location's admins, when backed by a durable feedback row.
pub const LOW_RATING: u8 = 2;
/// How long a claimed event is leased to its worker by default (`GUEST_EVENT_LEASE_SECONDS`): a
/// worker that dies leaves its events to be claimed again after it.
pub const DEFAULT_LEASE: Duration = Duration::seconds(60);
const MAX_ATTEMPTS: i32 = 10;

/// Processes the guest-event queue: reloads the authoritative records and decides each event's
/// effect. Every step is idempotent, so an event processed twice (an expired lease) changes
/// nothing the second time.
#[derive(derive_new::new)]
pub struct GuestEventWorker {
    decoder: Arc<dyn GuestEventDecoder>,
    events: Arc<dyn GuestEventStore>,
    coupons: Arc<dyn CouponStore>,
    notifier: Arc<dyn crate::ports::AlertNotifier>,
    clock: Arc<dyn Clock>,
    lease: Duration,
}

impl GuestEventWorker {
    /// Claims and processes up to `limit` events; returns how many were claimed.
    pub async fn run_once(&self, limit: u32) -> Result<usize, StoreError> {
        let claimed = self.events.claim(limit, self.lease).await?;
        for event in &claimed {
            let kept = match self.process(event).await {
                Ok(outcome) => self.events.complete(event.id, event.lease, outcome).await?,
                Err(error) => {
                    let attempts = event.attempts + 1;
                    tracing::warn!(event = %event.id, attempts, %error, "guest event failed; retrying later");
                    let backoff = Duration::seconds(2i64.pow(attempts.min(10) as u32));
                    let class = match error {
                        StoreError::Unavailable(_) => "store_unavailable",
                        StoreError::Unknown(_) => "store_error",
                    };
                    let give_up = attempts >= MAX_ATTEMPTS;
                    self.events.retry_later(event.id, event.lease, backoff, give_up, class).await?
                }
            };
            if !kept {
                // Its lease ran out while this worker was paused or slow, and another worker has
                // the event now: that worker records its outcome (processing is idempotent).
                tracing::warn!(event = %event.id, "guest event's lease was lost; its new holder finishes it");
            }
        }
        Ok(claimed.len())
    }

    async fn process(&self, claimed: &ClaimedEvent) -> Result<&'static str, StoreError> {
        let body = serde_json::to_vec(&claimed.payload).expect("a JSON value serializes");
        let Ok(event) = self.decoder.decode(&body) else {
            return Ok("unparseable");
        };
        let now = self.clock.now();
        let (team, location) = (&claimed.team_id, claimed.location_id);
        match event {
            // A legacy rating hint never alerts: it has no durable feedback identity.
            GuestEvent::Legacy { .. } => Ok("receipt_only"),
            GuestEvent::Canonical { event, .. } => match event {
                CanonicalEvent::ReservationCreated { reservation_id, offer_id, guest_id, expires_at } => {
                    let outcome =
                        self.events.hold(team, location, reservation_id, offer_id, &guest_id, expires_at, now).await?;
                    Ok(match outcome {
                        HoldOutcome::Held => "held",
                        HoldOutcome::Rejected => "rejected_no_capacity",
                        HoldOutcome::AlreadyKnown => "lifecycle_noop",
                        HoldOutcome::UnknownOffer => "unknown_offer",
                    })
                }
                CanonicalEvent::ReservationRedeemed { reservation_id } => {
                    Ok(match self.coupons.redeem(team, reservation_id, now).await? {
                        RedeemOutcome::Redeemed(_) => "redeemed",
                        RedeemOutcome::Expired(_) => "already_expired",
                        RedeemOutcome::NotActive(_) => "lifecycle_noop",
                        RedeemOutcome::NotFound => "unknown_reservation",
                    })
                }
                CanonicalEvent::FeedbackSubmitted(feedback) => {
                    self.events.record_feedback(team, location, &feedback, now).await?;
                    // The alert is decided from the stored feedback, not from the message, and
                    // claimed before it is sent: the same feedback delivered again sends nothing,
                    // even when this worker's event lease runs out while it sends (paused, cut off).
                    let Some(alert) = self.events.record_alert(&feedback.feedback_id, LOW_RATING, now).await? else {
                        return Ok("feedback_recorded");
                    };
                    match self.notifier.low_rating(&alert).await {
                        Ok(()) => self.events.alert_notified(alert.id, self.clock.now()).await?,
                        Err(error) => {
                            // It went nowhere: the next delivery of this feedback may send it.
                            tracing::warn!(alert = %alert.id, %error, "low-rating alert not delivered");
                            self.events.release_alert(alert.id).await?;
                        }
                    }
                    Ok("alerted")
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use mockall::predicate::eq;
    use opsd_core::{LocationId, MockClock, TeamId};
    use serde_json::json;
    use time::OffsetDateTime;
    use uuid::Uuid;

    use super::*;
    use crate::Feedback;
    use crate::ports::{GuestAlert, MockAlertNotifier, MockCouponStore, MockGuestEventStore};

    fn clock() -> Arc<MockClock> {
        Arc::new(MockClock::fixed(OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap()))
    }

    fn claimed(source: &str, payload: serde_json::Value) -> ClaimedEvent {
        ClaimedEvent {
            id: Uuid::from_u128(1),
            identity: "evt".into(),
            source: source.into(),
            attempts: 0,
            team_id: TeamId::new("org_1"),
            location_id: LocationId(Uuid::from_u128(9)),
            payload,
            lease: Uuid::from_u128(77),
        }
    }

    fn feedback(rating: u8) -> serde_json::Value {
        json!({ "type": "feedback.submitted", "eventId": "evt", "occurredAt": "2026-11-21T14:00:00Z", "teamId": "org_1",
                "locationId": Uuid::from_u128(9), "data": { "feedbackId": "fb_1", "guestId": "g_1", "rating": rating, "comment": "cold food" } })
    }

    /// Reads the two payloads these tests store, as the edge's decoder would.
    fn decode(body: &[u8]) -> Result<GuestEvent, opsd_core::ValidationErrors> {
        let payload: serde_json::Value = serde_json::from_slice(body).unwrap();
        let (team_id, location_id) = (TeamId::new("org_1"), LocationId(Uuid::from_u128(9)));
        if payload["type"] == "rating" {
            let rating =
                crate::LegacyRating { rating: payload["rating"].as_u64().unwrap() as u8, guest_id: "g_1".into() };
            return Ok(GuestEvent::Legacy { team_id, location_id, rating });
        }
        let data = &payload["data"];
        let event = CanonicalEvent::FeedbackSubmitted(Feedback {
            feedback_id: "fb_1".into(),
            guest_id: "g_1".into(),
            reservation_id: None,
            rating: data["rating"].as_u64().unwrap() as u8,
            comment: data["comment"].as_str().map(str::to_owned),
        });
        let occurred_at = OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap();
        Ok(GuestEvent::Canonical { event_id: "evt".into(), occurred_at, team_id, location_id, event })
    }

    fn worker(events: MockGuestEventStore, notifier: MockAlertNotifier) -> GuestEventWorker {
        GuestEventWorker::new(
            Arc::new(decode),
            Arc::new(events),
            Arc::new(MockCouponStore::new()),
            Arc::new(notifier),
            clock(),
            DEFAULT_LEASE,
        )
    }

    #[tokio::test]
    async fn low_feedback_with_a_stored_row_alerts_once_and_the_alert_carries_no_comment() {
        let mut events = MockGuestEventStore::new();
        let payload = feedback(1);
        events.expect_claim().returning(move |_, _| Ok(vec![claimed("canonical", payload.clone())]));
        events.expect_record_feedback().times(1).returning(|_, _, _, _| Ok(()));
        events.expect_record_alert().with(eq("fb_1"), eq(LOW_RATING), mockall::predicate::always()).returning(
            |_, _, _| {
                Ok(Some(GuestAlert {
                    id: Uuid::from_u128(5),
                    team_id: TeamId::new("org_1"),
                    location_id: LocationId(Uuid::from_u128(9)),
                    rating: 1,
                }))
            },
        );
        events.expect_alert_notified().times(1).returning(|_, _| Ok(()));
        events.expect_complete().withf(|_, _, outcome| outcome == "alerted").times(1).returning(|_, _, _| Ok(true));
        let mut notifier = MockAlertNotifier::new();
        notifier
            .expect_low_rating()
            .withf(|alert| format!("{alert:?}").find("cold food").is_none())
            .times(1)
            .returning(|_| Ok(()));
        assert_eq!(worker(events, notifier).run_once(10).await.unwrap(), 1);
    }

    #[tokio::test]
    async fn a_failing_notifier_gives_the_alert_back_and_leaves_the_event_processed() {
        let mut events = MockGuestEventStore::new();
        let payload = feedback(2);
        events.expect_claim().returning(move |_, _| Ok(vec![claimed("canonical", payload.clone())]));
        events.expect_record_feedback().returning(|_, _, _, _| Ok(()));
        events.expect_record_alert().returning(|_, _, _| {
            Ok(Some(GuestAlert {
                id: Uuid::from_u128(5),
                team_id: TeamId::new("org_1"),
                location_id: LocationId(Uuid::from_u128(9)),
                rating: 2,
            }))
        });
        events.expect_alert_notified().never();
        events.expect_release_alert().with(eq(Uuid::from_u128(5))).times(1).returning(|_| Ok(()));
        events.expect_retry_later().never();
        events.expect_complete().withf(|_, _, outcome| outcome == "alerted").times(1).returning(|_, _, _| Ok(true));
        let mut notifier = MockAlertNotifier::new();
        notifier.expect_low_rating().returning(|_| Err("provider down".into()));
        worker(events, notifier).run_once(10).await.unwrap();
    }

    #[tokio::test]
    async fn a_legacy_rating_hint_never_alerts() {
        let mut events = MockGuestEventStore::new();
        let payload = json!({ "type": "rating", "rating": 1, "teamId": "org_1", "locationId": Uuid::from_u128(9), "guestId": "g_1" });
        events.expect_claim().returning(move |_, _| Ok(vec![claimed("legacy", payload.clone())]));
        events.expect_record_feedback().never();
        events.expect_record_alert().never();
        events
            .expect_complete()
            .withf(|_, _, outcome| outcome == "receipt_only")
            .times(1)
            .returning(|_, _, _| Ok(true));
        let mut notifier = MockAlertNotifier::new();
        notifier.expect_low_rating().never();
        worker(events, notifier).run_once(10).await.unwrap();
    }

    #[tokio::test]
    async fn a_store_failure_puts_the_event_back_for_later() {
        let mut events = MockGuestEventStore::new();
        let payload = feedback(4);
        events.expect_claim().returning(move |_, _| Ok(vec![claimed("canonical", payload.clone())]));
        events.expect_record_feedback().returning(|_, _, _, _| Err(StoreError::Unavailable("down".into())));
        events.expect_complete().never();
        events
            .expect_retry_later()
            .withf(|_, lease, backoff, give_up, error| {
                *lease == Uuid::from_u128(77)
                    && *backoff == Duration::seconds(2)
                    && !give_up
                    && error == "store_unavailable"
            })
            .times(1)
            .returning(|_, _, _, _, _| Ok(true));
        worker(events, MockAlertNotifier::new()).run_once(10).await.unwrap();
    }

    #[tokio::test]
    async fn a_worker_completes_under_its_own_lease_and_one_that_lost_it_changes_nothing() {
        let mut events = MockGuestEventStore::new();
        let payload = json!({ "type": "rating", "rating": 5 });
        events
            .expect_claim()
            .withf(|limit, lease| *limit == 10 && *lease == DEFAULT_LEASE)
            .returning(move |_, _| Ok(vec![claimed("legacy", payload.clone())]));
        // The store answers that another worker holds the event now: the worker goes on, no error.
        events
            .expect_complete()
            .withf(|event, lease, _| *event == Uuid::from_u128(1) && *lease == Uuid::from_u128(77))
            .times(1)
            .returning(|_, _, _| Ok(false));
        events.expect_retry_later().never();
        assert_eq!(worker(events, MockAlertNotifier::new()).run_once(10).await.unwrap(), 1);
    }
}
