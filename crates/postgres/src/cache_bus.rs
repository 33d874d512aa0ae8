//! Cache invalidation across instances with PostgreSQL `NOTIFY`/`LISTEN`: no new infrastructure,
//! and a notification reaches every listening instance within milliseconds.

use std::sync::Arc;

use async_trait::async_trait;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use opsd_core::{TeamCacheInvalidation, TeamId, UserId};
use opsd_identity::SignInCache;
use tokio_postgres::AsyncMessage;

use crate::Db;
use crate::prepared::prepared;

pub const CACHE_CHANNEL: &str = "opsd_cache_invalidation";
/// Changes to what decides a sign-in, announced by triggers (migration 21): a user's id, or `*`.
pub const SIGN_IN_CHANNEL: &str = "opsd_sign_in";

/// What an instance does when a team's cache must go: `Some(team)`, or `None` for everything (after
/// the listener lost its connection and may have missed notifications).
pub type InvalidationHandler = Arc<dyn Fn(Option<&TeamId>) + Send + Sync>;

/// Drops the team's entries here at once and tells every other instance through `NOTIFY`. The
/// payload is `<instance>:<team>`, so an instance ignores the echo of its own notification (which
/// could otherwise drop a report cached after the write).
pub struct PgTeamCacheInvalidation {
    db: Db,
    local: InvalidationHandler,
    instance: uuid::Uuid,
}

impl PgTeamCacheInvalidation {
    pub fn new(db: Db, local: InvalidationHandler, instance: uuid::Uuid) -> Self {
        Self { db, local, instance }
    }
}

#[async_trait]
impl TeamCacheInvalidation for PgTeamCacheInvalidation {
    async fn invalidate_team(&self, team: &TeamId) {
        (self.local)(Some(team));
        let notified = match self.db.conn().await {
            Ok(mut conn) => prepared("SELECT pg_notify($1, $2)")
                .bind::<Text, _>(CACHE_CHANNEL)
                .bind::<Text, _>(format!("{}:{team}", self.instance))
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

/// A connection that `LISTEN`s for invalidations. The server connects the first one before it
/// serves, so an instance never serves a cache that is not listening; its supervisor connects a
/// new one whenever the last ends, and each reconnection drops everything, since notifications
/// sent while away are lost. A lost connection alone drops nothing, so cached answers keep being
/// served through a database outage.
pub async fn connect_invalidation_listener(database_url: &str) -> Result<InvalidationListener, ListenError> {
    Listener::connect(database_url).await.map(InvalidationListener)
}

/// A silent listener would leave other instances' caches stale, so its connection is given up
/// when the database stops answering, and the supervisor connects another.
const LISTENER_DEAD_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

pub struct InvalidationListener(Listener);

/// Why the listener could not connect.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error("{0}")]
    Config(String),
    #[error("{}", crate::pool::describe(.0))]
    Connect(tokio_postgres::Error),
}

impl InvalidationListener {
    /// Applies notifications until the connection ends. Remembered sign-ins are used only while
    /// it runs.
    pub async fn run(self, handler: &InvalidationHandler, sign_ins: &SignInCache, instance: uuid::Uuid) {
        sign_ins.set_listening(true);
        self.0.run(handler, sign_ins, instance).await;
        sign_ins.set_listening(false);
    }
}

struct Listener {
    _client: tokio_postgres::Client,
    messages: futures::channel::mpsc::UnboundedReceiver<Result<AsyncMessage, tokio_postgres::Error>>,
    driver: tokio::task::JoinHandle<()>,
}

impl Listener {
    async fn connect(database_url: &str) -> Result<Self, ListenError> {
        let mut connect = crate::tls::PgConnect::from_url(database_url).map_err(ListenError::Config)?;
        connect.config.application_name("opsd-listener");
        connect.detect_dead_peers(LISTENER_DEAD_AFTER);
        let (client, mut connection) =
            connect.config.connect(connect.tls.clone()).await.map_err(ListenError::Connect)?;
        let (sender, messages) = futures::channel::mpsc::unbounded();
        let driver = tokio::spawn(async move {
            let mut stream = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
            // The first error ends the connection: a closed TLS stream keeps answering its error,
            // and polling on would spin.
            while let Some(message) = stream.next().await {
                let ended = message.is_err();
                if sender.unbounded_send(message).is_err() || ended {
                    break;
                }
            }
        });
        client
            .batch_execute(&format!("LISTEN {CACHE_CHANNEL}; LISTEN {SIGN_IN_CHANNEL}"))
            .await
            .map_err(ListenError::Connect)?;
        Ok(Self { _client: client, messages, driver })
    }

    /// Applies notifications until the connection ends.
    async fn run(mut self, handler: &InvalidationHandler, sign_ins: &SignInCache, instance: uuid::Uuid) {
        let own = format!("{instance}:");
        while let Some(Ok(message)) = self.messages.next().await {
            let AsyncMessage::Notification(note) = message else { continue };
            match note.channel() {
                CACHE_CHANNEL if !note.payload().starts_with(&own) => {
                    let team = note.payload().split_once(':').map_or(note.payload(), |(_, team)| team);
                    handler(Some(&TeamId::new(team)));
                }
                SIGN_IN_CHANNEL if note.payload() == "*" => sign_ins.forget_all(),
                SIGN_IN_CHANNEL => sign_ins.forget(&UserId::new(note.payload())),
                _ => {}
            }
        }
        self.driver.abort();
    }
}
