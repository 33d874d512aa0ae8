use async_trait::async_trait;
use diesel::sql_types::{Bool, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use opsd_core::{Role, StoreError, TeamId, TeamMembership, UserId};
use opsd_identity::{DevSignIn, DevSignInStore};
use time::OffsetDateTime;

use crate::error::corrupt;
use crate::prepared::prepared;
use crate::{Db, store_error};

pub struct PgDevSignInStore {
    db: Db,
}

impl PgDevSignInStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(QueryableByName)]
struct TakenLink {
    #[diesel(sql_type = Text)]
    user_id: String,
    #[diesel(sql_type = Text)]
    team_id: String,
    #[diesel(sql_type = Text)]
    role: String,
    #[diesel(sql_type = Bool)]
    expired: bool,
}

#[async_trait]
impl DevSignInStore for PgDevSignInStore {
    async fn insert(
        &self,
        ticket_sha256: &str,
        sign_in: &DevSignIn,
        expires_at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "WITH expired AS (DELETE FROM dev_sign_in_links WHERE expires_at <= now()) \
             INSERT INTO dev_sign_in_links (ticket_sha256, user_id, team_id, role, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind::<Text, _>(ticket_sha256)
        .bind::<Text, _>(sign_in.user.as_str())
        .bind::<Text, _>(sign_in.membership.team_id.as_str())
        .bind::<Text, _>(sign_in.membership.role.as_str())
        .bind::<Timestamptz, _>(expires_at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn take(&self, ticket_sha256: &str, now: OffsetDateTime) -> Result<Option<DevSignIn>, StoreError> {
        let mut conn = self.db.conn().await?;
        let taken: Option<TakenLink> = prepared(
            "DELETE FROM dev_sign_in_links WHERE ticket_sha256 = $1 \
             RETURNING user_id, team_id, role, expires_at <= $2 AS expired",
        )
        .bind::<Text, _>(ticket_sha256)
        .bind::<Timestamptz, _>(now)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(store_error)?;
        let Some(link) = taken.filter(|link| !link.expired) else { return Ok(None) };
        let role = Role::parse(&link.role).ok_or_else(|| corrupt("dev_sign_in_links.role", &link.role))?;
        Ok(Some(DevSignIn {
            user: UserId::new(link.user_id),
            membership: TeamMembership { team_id: TeamId::new(link.team_id), role },
        }))
    }
}
