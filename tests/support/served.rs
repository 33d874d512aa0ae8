//! The release `opsd` binary as a child process on a free port, for the fault-injection suite and the
//! benchmarks: started with the test credentials, killed when dropped.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

use crate::tokens::{SIGNING_PUBLIC_KEY, TokenMinter};
use crate::{API_KEY, CRON_SECRET};

pub struct Binary(pub PathBuf);

/// What `opsd seed-demo` made.
pub struct Demo {
    pub week_of: String,
    pub location_id: String,
}

/// A running `opsd serve`, killed when dropped.
pub struct Opsd {
    pub child: Child,
    pub base: String,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Binary {
    fn command(&self, db_url: &str, env: &[(&str, String)]) -> Command {
        let mut command = Command::new(&self.0);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", db_url)
            .env("API_KEY", API_KEY)
            .env("CRON_SECRET", CRON_SECRET)
            .env("IDENTITY_JWT_PUBLIC_KEY", SIGNING_PUBLIC_KEY)
            .env("RUST_LOG", "warn")
            .env("OUTBOUND_ALLOW_LOOPBACK", "true")
            .stdout(if std::env::var_os("OPSD_CHILD_LOG").is_some() { Stdio::inherit() } else { Stdio::null() })
            .stderr(if std::env::var_os("OPSD_CHILD_LOG").is_some() { Stdio::inherit() } else { Stdio::null() })
            .kill_on_drop(true);
        for (name, value) in env {
            command.env(name, value);
        }
        command
    }

    /// Starts `opsd serve` and waits until it answers `/health/live`.
    pub async fn serve(&self, db_url: &str, env: &[(&str, String)]) -> Opsd {
        let port = free_port();
        let mut command = self.command(db_url, env);
        command.env("BIND_ADDR", format!("127.0.0.1:{port}")).arg("serve");
        let child = command.spawn().expect("starting opsd");
        let opsd = Opsd { child, base: format!("http://127.0.0.1:{port}") };
        opsd.wait_for("/health/live", Duration::from_secs(30)).await;
        opsd
    }

    /// Runs `opsd seed-demo` (the demo team `org_demo`) with its default size.
    pub async fn seed(&self, db_url: &str) -> Demo {
        self.seed_sized(db_url, &[]).await
    }

    /// Runs `opsd seed-demo` with arguments (`--locations N`, `--weeks N`).
    pub async fn seed_sized(&self, db_url: &str, args: &[&str]) -> Demo {
        let output = self.command(db_url, &[]).arg("seed-demo").args(args).output().await.expect("seeding");
        assert!(output.status.success(), "seed-demo failed");
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).expect("a seed-demo line").to_owned();
        Demo { week_of: field("week_of="), location_id: field("location_id=") }
    }
}

impl Opsd {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Waits until `path` answers 200, or panics after `limit`.
    pub async fn wait_for(&self, path: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        let client = client();
        while started.elapsed() < limit {
            if let Ok(response) = client.get(self.url(path)).timeout(Duration::from_millis(500)).send().await
                && response.status() == 200
            {
                return started.elapsed();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{path} did not answer 200 within {limit:?}");
    }

    /// Creates a location of `org_chaos` (as its admin `user_chaos`) and returns it.
    pub async fn create_location(&self, slug: &str, scheduler_location: Option<&str>) -> serde_json::Value {
        let body = serde_json::json!({ "name": slug, "slug": slug, "timezone": "UTC", "schedulerLocationId": scheduler_location });
        let response = client()
            .post(self.url("/api/locations"))
            .bearer_auth(TokenMinter.admin("user_chaos", "org_chaos"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "creating location {slug}");
        response.json().await.unwrap()
    }

    /// Calls a job with the cron secret and returns its JSON answer.
    pub async fn cron(&self, path: &str) -> serde_json::Value {
        client().get(self.url(path)).bearer_auth(CRON_SECRET).send().await.unwrap().json().await.unwrap()
    }

    pub fn kill9(&mut self) {
        self.child.start_kill().expect("SIGKILL");
    }

    /// The process's resident set size, in KiB (Linux).
    pub fn rss_kib(&self) -> u64 {
        let pid = self.child.id().expect("running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process's status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("a VmRSS line")
    }

    pub fn sigterm(&self) {
        let pid = self.child.id().expect("running").to_string();
        std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap()
}
