//! A fresh PostgreSQL database per test, cloned from a template that is migrated once per version
//! of `migrations/`, so tests run in parallel and never see each other's rows.
//!
//! The server comes from `TEST_DATABASE_URL` (any database on it; `just test` sets it), else the
//! local default `postgres://postgres@127.0.0.1:5432/postgres`.

use std::path::Path;

use diesel_async::{AsyncConnection, AsyncMigrationHarness, AsyncPgConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sha2::{Digest, Sha256};
use tokio_postgres::NoTls;
use url::Url;

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");
const DEFAULT_SERVER: &str = "postgres://postgres@127.0.0.1:5432/postgres";
/// Serializes template creation across test processes.
const TEMPLATE_LOCK: i64 = 0x6f70_7364_7470;

pub struct TestDatabase {
    name: String,
    url: String,
    server: Url,
}

impl TestDatabase {
    pub async fn new() -> Self {
        let server = server_url();
        let admin = admin_client(&server).await;
        let template = ensure_template(&admin, &server).await;
        let name = format!("opsd_t_{}", uuid::Uuid::new_v4().simple());
        admin
            .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template} STRATEGY = FILE_COPY"))
            .await
            .expect("creating the test database from the template");
        let url = database_url(&server, &name);
        Self { name, url, server }
    }

    /// A database with nothing in it, not even the schema (a restore's target); dropped as above.
    pub async fn empty() -> Self {
        let server = server_url();
        let admin = admin_client(&server).await;
        let name = format!("opsd_t_{}", uuid::Uuid::new_v4().simple());
        admin.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("creating an empty database");
        let url = database_url(&server, &name);
        Self { name, url, server }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The database refuses new connections and ends those it has, as one out of reach would.
    pub async fn refuse_connections(&self) {
        let admin = admin_client(&server_url()).await;
        let name = &self.name;
        admin
            .batch_execute(&format!(
                "ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false; \
                 SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
            ))
            .await
            .expect("cutting the database off");
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let server = self.server.clone();
        let name = self.name.clone();
        // Drop runs inside the test's runtime; the database is dropped from a runtime of its own.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async move {
                let admin = admin_client(&server).await;
                admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!("warning: test database {} was not dropped", self.name);
        }
    }
}

fn server_url() -> Url {
    let raw = std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_SERVER.to_owned());
    Url::parse(&raw).expect("TEST_DATABASE_URL must be a postgres:// URL")
}

fn database_url(server: &Url, name: &str) -> String {
    let mut url = server.clone();
    url.set_path(&format!("/{name}"));
    url.to_string()
}

async fn admin_client(server: &Url) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&database_url(server, "postgres"), NoTls)
        .await
        .unwrap_or_else(|error| panic!("cannot reach the test PostgreSQL server at {server}: {error}"));
    tokio::spawn(connection);
    client
}

/// The template for the current migrations, created when missing.
async fn ensure_template(admin: &tokio_postgres::Client, server: &Url) -> String {
    let template = format!("opsd_tpl_{}", migrations_fingerprint());
    admin.execute("SELECT pg_advisory_lock($1)", &[&TEMPLATE_LOCK]).await.expect("template lock");
    let exists = admin
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&template])
        .await
        .expect("looking up the template")
        .is_some();
    if !exists {
        let building = format!("{template}_building");
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)")).await.expect("drop");
        admin.batch_execute(&format!("CREATE DATABASE {building}")).await.expect("create template");
        let conn = AsyncPgConnection::establish(&database_url(server, &building)).await.expect("connect to template");
        let mut harness = AsyncMigrationHarness::new(conn);
        tokio::task::block_in_place(|| harness.run_pending_migrations(MIGRATIONS).map(|_| ()))
            .expect("migrating the template");
        drop(harness);
        // The migration connection may still be closing: a rename waits until it is gone.
        let rename = format!("ALTER DATABASE {building} RENAME TO {template}");
        let mut attempts = 0;
        while let Err(error) = admin.batch_execute(&rename).await {
            attempts += 1;
            assert!(attempts < 100, "naming the template: {error}");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    admin.execute("SELECT pg_advisory_unlock($1)", &[&TEMPLATE_LOCK]).await.expect("template unlock");
    template
}

/// A short hash of every migration file, so a changed migration gets a new template.
fn migrations_fingerprint() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(file.strip_prefix(&root).unwrap().to_string_lossy().as_bytes());
        hasher.update(std::fs::read(&file).expect("reading a migration"));
    }
    hex::encode(&hasher.finalize()[..6])
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("reading migrations/") {
        let path = entry.expect("a migrations/ entry").path();
        if path.is_dir() { collect(&path, files) } else { files.push(path) }
    }
}

/// Counts the statements a diesel connection sends: set it with `set_instrumentation`, read the
/// shared counter. Tests of SQL changes use it to pin round trips.
pub struct CountQueries(pub std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl diesel::connection::Instrumentation for CountQueries {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        if matches!(event, diesel::connection::InstrumentationEvent::StartQuery { .. }) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// A TCP proxy in front of a database that counts round trips: the times a client starts sending
/// again after the server has answered. Connect through [`RoundTrips::url`]; [`RoundTrips::reset`]
/// once the connection is set up. Drive the counted calls on a current-thread runtime, so a
/// connection's driver cannot send half of a pipeline before the rest is queued.
pub struct RoundTrips {
    url: String,
    turns: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl RoundTrips {
    pub async fn start(database_url: &str) -> Self {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let mut url = Url::parse(database_url).expect("a database URL");
        let upstream = format!("{}:{}", url.host_str().expect("a host"), url.port().unwrap_or(5432));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        url.set_host(Some("127.0.0.1")).expect("an IP host");
        url.set_port(Some(listener.local_addr().expect("bound").port())).expect("a port");
        let turns = Arc::new(AtomicUsize::new(0));
        let counted = turns.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = tokio::net::TcpStream::connect(&upstream).await.expect("the database");
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let answered = Arc::new(AtomicBool::new(true));
                let (to_server, turns) = (answered.clone(), counted.clone());
                tokio::spawn(async move {
                    let mut buffer = vec![0; 65_536];
                    while let Ok(read @ 1..) = client_read.read(&mut buffer).await {
                        if to_server.swap(false, Ordering::SeqCst) {
                            turns.fetch_add(1, Ordering::SeqCst);
                        }
                        if server_write.write_all(&buffer[..read]).await.is_err() {
                            break;
                        }
                    }
                });
                tokio::spawn(async move {
                    let mut buffer = vec![0; 65_536];
                    while let Ok(read @ 1..) = server_read.read(&mut buffer).await {
                        // Before the client can see the answer, so its reply is always a new turn.
                        answered.store(true, Ordering::SeqCst);
                        if client_write.write_all(&buffer[..read]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        Self { url: url.to_string(), turns }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn reset(&self) {
        self.turns.store(0, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn count(&self) -> usize {
        self.turns.load(std::sync::atomic::Ordering::SeqCst)
    }
}
