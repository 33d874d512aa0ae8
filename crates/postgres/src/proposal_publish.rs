//! Holding a ready proposal for one publish to the scheduling provider, and what each of its shifts
//! has been through (migration 000034).

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Bool, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use opsd_core::{StoreError, TeamId};
use opsd_planning::week_plan::{PublishClaim, PublishStart, PublishStore, WeekPlanStore};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::prepared::prepared;
use crate::store_error;
use crate::week_plans::PgWeekPlanStore;

#[derive(QueryableByName)]
struct HoldRow {
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Bool)]
    held: bool,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    lease: Option<Uuid>,
    #[diesel(sql_type = Nullable<Text>)]
    provider_location: Option<String>,
}

#[derive(QueryableByName)]
struct SentRow {
    #[diesel(sql_type = Nullable<Text>)]
    provider_shift_id: Option<String>,
    #[diesel(sql_type = Bool)]
    tried: bool,
}

#[derive(QueryableByName)]
struct RoleRow {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    provider_role_id: String,
}

#[async_trait]
impl PublishStore for PgWeekPlanStore {
    async fn start_publish(&self, team: &TeamId, id: Uuid, lease: Duration) -> Result<PublishStart, StoreError> {
        let hold: Option<HoldRow> = {
            let mut conn = self.db.conn().await?;
            // Takes the hold only when no live one is there; answers the state either way.
            prepared(
                "WITH taken AS ( \
                   UPDATE schedule_proposals SET publish_lease = gen_random_uuid(), \
                       publishing_until = now() + $3 * interval '1 millisecond' \
                   WHERE id = $1 AND team_id = $2 AND status = 'ready' \
                     AND (publishing_until IS NULL OR publishing_until < now()) \
                   RETURNING id, publish_lease) \
                 SELECT p.status, t.id IS NOT NULL AS held, t.publish_lease AS lease, l.scheduler_location_id AS provider_location \
                 FROM schedule_proposals p JOIN locations l ON l.id = p.location_id \
                 LEFT JOIN taken t ON t.id = p.id \
                 WHERE p.id = $1 AND p.team_id = $2",
            )
            .bind::<SqlUuid, _>(id)
            .bind::<Text, _>(team.as_str())
            .bind::<BigInt, _>(lease.whole_milliseconds() as i64)
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(store_error)?
        };
        let Some(hold) = hold else { return Ok(PublishStart::NotFound) };
        if hold.status != "ready" {
            return Ok(PublishStart::NotReady);
        }
        let (true, Some(lease)) = (hold.held, hold.lease) else { return Ok(PublishStart::Busy) };
        let Some(proposal) = self.proposal(team, id).await? else { return Ok(PublishStart::NotFound) };
        let mut conn = self.db.conn().await?;
        let sent: Vec<SentRow> = prepared(
            "SELECT provider_shift_id, create_tried_at IS NOT NULL AS tried FROM schedule_proposal_shifts \
             WHERE proposal_id = $1 ORDER BY position",
        )
        .bind::<SqlUuid, _>(id)
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        let roles: Vec<RoleRow> = prepared(
            "SELECT name, provider_role_id FROM scheduler_roles \
             WHERE provider_location_id = $1 OR provider_location_id IS NULL ORDER BY provider_location_id NULLS LAST",
        )
        .bind::<Nullable<Text>, _>(hold.provider_location.as_deref())
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(PublishStart::Claimed(Box::new(PublishClaim {
            proposal,
            provider_location: hold.provider_location,
            roles: roles.into_iter().map(|r| (r.name, r.provider_role_id)).collect(),
            sent: sent.into_iter().map(|s| (s.provider_shift_id, s.tried)).collect(),
            lease,
        })))
    }

    async fn mark_tried(&self, id: Uuid, position: usize) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "UPDATE schedule_proposal_shifts SET create_tried_at = now() WHERE proposal_id = $1 AND position = $2",
        )
        .bind::<SqlUuid, _>(id)
        .bind::<Int4, _>(position as i32)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn record_sent(&self, id: Uuid, position: usize, provider_id: &str) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "UPDATE schedule_proposal_shifts SET provider_shift_id = $3 \
             WHERE proposal_id = $1 AND position = $2 AND provider_shift_id IS NULL",
        )
        .bind::<SqlUuid, _>(id)
        .bind::<Int4, _>(position as i32)
        .bind::<Text, _>(provider_id)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn end_publish(&self, id: Uuid, lease: Uuid, complete: bool, at: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "UPDATE schedule_proposals SET publish_lease = NULL, publishing_until = NULL, \
                 published_at = CASE WHEN $3 THEN coalesce(published_at, $4) ELSE published_at END \
             WHERE id = $1 AND publish_lease = $2",
        )
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(lease)
        .bind::<Bool, _>(complete)
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }
}
