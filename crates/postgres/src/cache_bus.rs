//! Cache invalidation across instances with PostgreSQL `NOTIFY`/`LISTEN`: no new infrastructure,
//! and a notification reaches every listening instance within milliseconds.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use opsd_core::{TeamCacheInvalidation, TeamId};
use tokio_postgres::{AsyncMessage, NoTls};

use crate::Db;

pub const CACHE_CHANNEL: &str = "opsd_cache_invalidation";

/// What an instance does when a team's cache must go: `Some(team)`, or `None` for everything (after
/// the listener lost its connection and may have missed notifications).
pub type InvalidationHandler = Arc<dyn Fn(Option<&TeamId>) + Send + Sync>;

/// Drops the team's entries here at once and tells every other instance through `NOTIFY`.
pub struct PgTeamCacheInvalidation {
    db: Db,
    local: InvalidationHandler,
}

impl PgTeamCacheInvalidation {
    pub fn new(db: Db, local: InvalidationHandler) -> Self {
        Self { db, local }
    }
}

#[async_trait]
impl TeamCacheInvalidation for PgTeamCacheInvalidation {
    async fn invalidate_team(&self, team: &TeamId) {
        (self.local)(Some(team));
        let notified = match self.db.conn().await {
            Ok(mut conn) => diesel::sql_query("SELECT pg_notify($1, $2)")
                .bind::<Text, _>(CACHE_CHANNEL)
                .bind::<Text, _>(team.as_str())
                .execute(&mut conn)
                .await
                .map(drop)
                .map_err(|error| error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        if let Err(error) = notified {
            tracing::error!(%error, team = %team, "cache invalidation could not be broadcast; other instances expire it within 15 minutes");
        }
    }
}

/// Listens for invalidations until the process ends, reconnecting with backoff. Every successful
/// (re)connection drops everything, since notifications sent while away are lost; a lost
/// connection alone drops nothing, so cached answers keep being served through a database outage.
pub async fn listen_for_invalidations(database_url: String, handler: InvalidationHandler) {
    let mut backoff = Duration::from_millis(250);
    loop {
        match listen_once(&database_url, &handler).await {
            Ok(()) => tracing::warn!("cache invalidation listener disconnected; reconnecting"),
            Err(error) => tracing::warn!(%error, "cache invalidation listener failed; reconnecting"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(10));
    }
}

async fn listen_once(database_url: &str, handler: &InvalidationHandler) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = tokio_postgres::connect(database_url, NoTls).await?;
    let (sender, mut messages) = futures::channel::mpsc::unbounded();
    let driver = tokio::spawn(async move {
        let mut stream = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            if sender.unbounded_send(message).is_err() {
                break;
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CACHE_CHANNEL}")).await?;
    handler(None);
    while let Some(message) = messages.next().await {
        match message? {
            AsyncMessage::Notification(note) if note.channel() == CACHE_CHANNEL => {
                handler(Some(&TeamId::new(note.payload())));
            }
            _ => {}
        }
    }
    driver.abort();
    Ok(())
}
