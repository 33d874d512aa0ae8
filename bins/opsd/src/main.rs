//! `opsd [serve|migrate|seed-demo|vapid-keys|dev-keys|dev-token|serve-floor]`; `serve` is the default.

use anyhow::Context;
use opsd::config::Config;
use opsd::{Application, seed, telemetry};

const USAGE: &str = "usage: opsd [serve|migrate|openapi|seed-demo [--locations N] [--weeks N]|vapid-keys|jobs|dev-keys DIR|dev-token --user ID [--team ORG] [--role admin|member] [--hours N]|serve-floor FILE]";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // A missing .env is normal; a malformed one is not.
    if let Err(error) = dotenvy::dotenv()
        && !error.not_found()
    {
        anyhow::bail!(".env: {error}");
    }
    telemetry::init("info");
    let command = std::env::args().nth(1).unwrap_or_else(|| "serve".into());
    match command.as_str() {
        "serve" => serve().await,
        "migrate" => {
            let config = Config::from_environment()?;
            opsd::startup_database(&config).await?;
            println!("migrations are up to date");
            Ok(())
        }
        "seed-demo" => {
            let config = Config::from_environment()?;
            let db = opsd::startup_database(&config).await?;
            let args: Vec<String> = std::env::args().skip(2).collect();
            let demo = seed::seed_demo(&db, seed::DemoSize::from_args(&args)?).await?;
            println!(
                "team_id={}\nlocation_id={}\nlocation_slug={}\nweek_of={}\nthis_week_of={}",
                demo.team_id,
                demo.location_id,
                demo.location_slug,
                demo.week_of,
                demo.week_of + time::Duration::weeks(1)
            );
            Ok(())
        }
        "vapid-keys" => {
            let (public, private) = opsd_outbound::VapidKeys::generate();
            println!("NEXT_PUBLIC_VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}");
            Ok(())
        }
        "openapi" => {
            println!("{}", serde_json::to_string_pretty(&opsd::openapi_document())?);
            Ok(())
        }
        "jobs" => {
            println!("{}", opsd::jobs::listing().table());
            Ok(())
        }
        "dev-keys" => {
            let dir = std::env::args().nth(2).context(USAGE)?;
            opsd::dev_identity::ensure_keys(std::path::Path::new(&dir))
        }
        "dev-token" => {
            let args: Vec<String> = std::env::args().skip(2).collect();
            let request = opsd::dev_identity::TokenRequest::from_args(&args)?;
            println!("{}", opsd::dev_identity::mint(&request)?);
            Ok(())
        }
        "serve-floor" => {
            let file = std::env::args().nth(2).context(USAGE)?;
            let body = std::fs::read(&file).with_context(|| format!("reading {file}"))?;
            let bind = opsd::config::bind_addr()?;
            let listener = std::net::TcpListener::bind(bind).with_context(|| format!("binding {bind}"))?;
            opsd::floor::server(listener, body.into())?.await?;
            Ok(())
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => anyhow::bail!("unknown command {other:?}; {USAGE}"),
    }
}

async fn serve() -> anyhow::Result<()> {
    let config = Config::from_environment()?;
    let bind = config.bind_addr;
    let app = Application::build(config).await.context("starting opsd")?;
    tracing::info!(%bind, port = app.port(), "opsd serving");
    app.run_until_stopped().await?;
    tracing::info!("opsd stopped");
    Ok(())
}
