use async_trait::async_trait;
use diesel::OptionalExtension;
use diesel::QueryableByName;
use diesel::sql_types::{Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use opsd_assistant::{ChatMessage, Role, ThreadId, ThreadStore, UsageStore};
use opsd_core::{StoreError, TeamId, UserId};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::prepared::prepared;
use crate::{Db, store_error};

pub struct PgThreadStore {
    db: Db,
}

impl PgThreadStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl ThreadStore for PgThreadStore {
    async fn create(&self, user: &UserId, team: &TeamId, at: OffsetDateTime) -> Result<ThreadId, StoreError> {
        let id = Uuid::now_v7();
        let mut conn = self.db.conn().await?;
        prepared("INSERT INTO assistant_threads (id, user_id, team_id, created_at) VALUES ($1, $2, $3, $4)")
            .bind::<SqlUuid, _>(id)
            .bind::<Text, _>(user.as_str())
            .bind::<Text, _>(team.as_str())
            .bind::<Timestamptz, _>(at)
            .execute(&mut conn)
            .await
            .map_err(store_error)?;
        Ok(ThreadId(id))
    }

    async fn owner(&self, thread: ThreadId) -> Result<Option<UserId>, StoreError> {
        #[derive(QueryableByName)]
        struct Owner {
            #[diesel(sql_type = Text)]
            user_id: String,
        }
        let mut conn = self.db.conn().await?;
        let owner: Option<Owner> = prepared("SELECT user_id FROM assistant_threads WHERE id = $1")
            .bind::<SqlUuid, _>(thread.0)
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(store_error)?;
        Ok(owner.map(|o| UserId::new(o.user_id)))
    }

    async fn append(&self, thread: ThreadId, role: Role, content: &str, at: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "INSERT INTO assistant_messages (id, thread_id, role, content, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind::<SqlUuid, _>(Uuid::now_v7())
        .bind::<SqlUuid, _>(thread.0)
        .bind::<Text, _>(role.as_str())
        .bind::<Text, _>(content)
        .bind::<Timestamptz, _>(at)
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }

    async fn recent_turns(&self, thread: ThreadId, limit: usize) -> Result<Vec<ChatMessage>, StoreError> {
        #[derive(QueryableByName)]
        struct Turn {
            #[diesel(sql_type = Text)]
            role: String,
            #[diesel(sql_type = Text)]
            content: String,
        }
        let mut conn = self.db.conn().await?;
        let mut turns: Vec<Turn> = prepared(
            "SELECT role, content FROM assistant_messages WHERE thread_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
        )
        .bind::<SqlUuid, _>(thread.0)
        .bind::<diesel::sql_types::BigInt, _>(i64::try_from(limit).unwrap_or(i64::MAX))
        .load(&mut conn)
        .await
        .map_err(store_error)?;
        turns.reverse();
        Ok(turns
            .into_iter()
            .map(|t| ChatMessage {
                role: if t.role == "assistant" { Role::Assistant } else { Role::User },
                content: t.content,
            })
            .collect())
    }
}

/// Tokens per team and day, added up across instances.
pub struct PgUsageStore {
    db: Db,
}

impl PgUsageStore {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl UsageStore for PgUsageStore {
    async fn used(&self, team: &TeamId, day: time::Date) -> Result<u64, StoreError> {
        #[derive(QueryableByName)]
        struct Used {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            tokens: i64,
        }
        let mut conn = self.db.conn().await?;
        let used: Used = prepared(
            "SELECT COALESCE((SELECT tokens FROM assistant_usage WHERE team_id = $1 AND day = $2), 0) AS tokens",
        )
        .bind::<Text, _>(team.as_str())
        .bind::<diesel::sql_types::Date, _>(day)
        .get_result(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(u64::try_from(used.tokens).unwrap_or(0))
    }

    async fn add(&self, team: &TeamId, day: time::Date, tokens: u64) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        prepared(
            "INSERT INTO assistant_usage (team_id, day, tokens) VALUES ($1, $2, $3) \
             ON CONFLICT (team_id, day) DO UPDATE SET tokens = assistant_usage.tokens + EXCLUDED.tokens",
        )
        .bind::<Text, _>(team.as_str())
        .bind::<diesel::sql_types::Date, _>(day)
        .bind::<diesel::sql_types::BigInt, _>(i64::try_from(tokens).unwrap_or(i64::MAX))
        .execute(&mut conn)
        .await
        .map_err(store_error)?;
        Ok(())
    }
}
