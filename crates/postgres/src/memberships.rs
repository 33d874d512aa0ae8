use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use opsd_core::{StoreError, TeamMembership, UserId};
use opsd_identity::{MembershipStore, SignInOutcome};

use crate::error::corrupt;
use crate::prepared::prepared;
use crate::{Db, store_error};

pub struct PgMembershipStore {
    db: Db,
}

impl PgMembershipStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

impl PgMembershipStore {
    /// [`MembershipStore::record_sign_in`] on a given connection: one statement (migration 20).
    pub async fn record_sign_in_on(
        conn: &mut AsyncPgConnection,
        user: &UserId,
        membership: Option<&TeamMembership>,
        issued_at: Option<i64>,
    ) -> Result<SignInOutcome, StoreError> {
        #[derive(QueryableByName)]
        struct Recorded {
            #[diesel(sql_type = Text)]
            outcome: String,
        }
        let recorded: Recorded = prepared("SELECT record_sign_in($1, $2, $3, $4) AS outcome")
            .bind::<Text, _>(user.as_str())
            .bind::<Nullable<Text>, _>(membership.map(|m| m.team_id.as_str()))
            .bind::<Nullable<Text>, _>(membership.map(|m| m.role.as_str()))
            .bind::<Nullable<BigInt>, _>(issued_at)
            .get_result(conn)
            .await
            .map_err(store_error)?;
        match recorded.outcome.as_str() {
            "active" => Ok(SignInOutcome::Active),
            "revoked" => Ok(SignInOutcome::MembershipRevoked),
            "deleted" => Ok(SignInOutcome::Deleted),
            other => Err(corrupt("sign-in outcome", other)),
        }
    }
}

#[async_trait]
impl MembershipStore for PgMembershipStore {
    async fn record_sign_in(
        &self,
        user: &UserId,
        membership: Option<TeamMembership>,
        issued_at: Option<i64>,
    ) -> Result<SignInOutcome, StoreError> {
        let mut conn = self.db.conn().await?;
        Self::record_sign_in_on(&mut conn, user, membership.as_ref(), issued_at).await
    }
}
