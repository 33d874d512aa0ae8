use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use opsd_core::{StoreError, TeamMembership, UserId};
use opsd_identity::{MembershipStore, SignInOutcome};

use crate::schema::{teams, users};
use crate::{Db, store_error};

pub struct PgMembershipStore {
    db: Db,
}

impl PgMembershipStore {
    pub fn new(db: Db) -> Self {
        Self { db }
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
        let user_id = user.as_str().to_owned();

        conn.transaction::<_, diesel::result::Error, _>(async |conn| {
            diesel::insert_into(users::table)
                .values(users::id.eq(&user_id))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            let deleted: Option<time::OffsetDateTime> =
                users::table.find(&user_id).select(users::deleted_at).first(conn).await?;
            if deleted.is_some() {
                return Ok(SignInOutcome::Deleted);
            }
            if let Some(membership) = membership {
                let team = membership.team_id.as_str();
                if revoked_since(conn, &user_id, team, issued_at).await? {
                    return Ok(SignInOutcome::MembershipRevoked);
                }
                diesel::insert_into(teams::table)
                    .values(teams::id.eq(team))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
                // Writes only when the role changed, so a steady stream of requests does not churn rows.
                diesel::sql_query(
                    "INSERT INTO memberships (user_id, team_id, role) VALUES ($1, $2, $3) \
                     ON CONFLICT (user_id, team_id) DO UPDATE SET role = EXCLUDED.role, updated_at = now() \
                     WHERE memberships.role IS DISTINCT FROM EXCLUDED.role",
                )
                .bind::<Text, _>(&user_id)
                .bind::<Text, _>(team)
                .bind::<Text, _>(membership.role.as_str())
                .execute(conn)
                .await?;
            }
            Ok(SignInOutcome::Active)
        })
        .await
        .map_err(store_error)
    }
}

/// Whether the provider removed this membership, or deleted the team, at or after the token's
/// `iat` (always, for a token without one): such a token cannot bring the membership back.
async fn revoked_since(
    conn: &mut AsyncPgConnection,
    user: &str,
    team: &str,
    issued_at: Option<i64>,
) -> Result<bool, diesel::result::Error> {
    #[derive(QueryableByName)]
    struct Revoked {
        #[diesel(sql_type = Bool)]
        revoked: bool,
    }
    let found: Revoked = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM membership_removals \
                        WHERE user_id = $1 AND team_id = $2 AND ($3 IS NULL OR removed_at >= to_timestamp($3))) \
             OR EXISTS (SELECT 1 FROM teams \
                        WHERE id = $2 AND deleted_at IS NOT NULL AND ($3 IS NULL OR deleted_at >= to_timestamp($3))) \
             AS revoked",
    )
    .bind::<Text, _>(user)
    .bind::<Text, _>(team)
    .bind::<Nullable<BigInt>, _>(issued_at)
    .get_result(conn)
    .await?;
    Ok(found.revoked)
}
