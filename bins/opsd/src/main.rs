//! The `opsd` command: `serve` (the default) and the operator's and developer's commands beside it.

use anyhow::Context;
use clap::Parser;
use opsd::cli::{Cli, Command, PlanCommand, RosterCommand};
use opsd::config::Config;
use opsd::{Application, seed, telemetry};
use opsd_core::{Role, TeamId, TeamMembership, UserId};
use opsd_identity::DevSignIn;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // Before the telemetry, whose log lines would share stdout with the roster.
    if let Some(Command::Roster { command: RosterCommand::Solve { file, time_limit, threads, seed, json, solver } }) =
        cli.command
    {
        let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
        let command = opsd::roster::SolveCommand { file, solver, time_limit, threads, seed, json };
        std::process::exit(opsd::roster::solve(command).await);
    }
    // A missing .env is normal; a malformed one is not.
    if let Err(error) = dotenvy::dotenv()
        && !error.not_found()
    {
        anyhow::bail!(".env: {error}");
    }
    // Held to the end: dropping it sends the spans still buffered.
    let _telemetry = telemetry::init("info");
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve().await,
        Command::CheckConfig => opsd::operations::check_config().await,
        Command::Probe => opsd::operations::probe().await,
        Command::Migrate { status, post_deploy, revert } => {
            opsd::operations::migrate(status, post_deploy, revert).await
        }
        Command::SeedDemo { locations, weeks } => {
            let config = Config::from_environment()?;
            let db = opsd::startup_database(&config).await?;
            let demo = seed::seed_demo(&db, seed::DemoSize { locations, weeks }).await?;
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
        Command::VapidKeys => {
            let (public, private) = opsd_outbound::VapidKeys::generate();
            println!("NEXT_PUBLIC_VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}");
            Ok(())
        }
        Command::Openapi => {
            println!("{}", serde_json::to_string_pretty(&opsd::openapi_document())?);
            Ok(())
        }
        Command::Jobs => {
            println!("{}", opsd::jobs::listing().table());
            Ok(())
        }
        Command::DevKeys { dir } => opsd::dev_identity::ensure_keys(&dir),
        Command::DevToken { user, team, role, hours } => {
            let request = opsd::dev_identity::TokenRequest { user, team, role, hours };
            println!("{}", opsd::dev_identity::DevSigner::from_environment()?.sign(&request)?);
            Ok(())
        }
        Command::DevSignInLink { user, team, role, minutes } => {
            let config = Config::from_environment()?;
            anyhow::ensure!(
                config.identity.dev_signing_key.is_some(),
                "sign-in links are for the dev identity that `just run` creates ({}); a real deployment has none",
                opsd::dev_identity::SIGNING_KEY_VARIABLE
            );
            let db = opsd::startup_database(&config).await?;
            let membership =
                TeamMembership { team_id: TeamId::new(team), role: Role::parse(&role).expect("checked by clap") };
            let sign_in = DevSignIn { user: UserId::new(user), membership };
            println!("{}", opsd::issue_dev_sign_in_link(&db, &sign_in, time::Duration::minutes(minutes)).await?);
            Ok(())
        }
        Command::Roster { .. } => unreachable!("answered before the telemetry starts"),
        Command::Plan { command: PlanCommand::Backtest { team, locations, weeks, time_limit, threads } } => {
            let locations = locations as usize;
            opsd::plan_backtest::run(opsd::plan_backtest::BacktestCommand {
                team,
                locations,
                weeks,
                time_limit,
                threads,
            })
            .await
        }
        Command::ServeFloor { file } => {
            let body = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let bind = opsd::config::bind_addr()?;
            let listener = std::net::TcpListener::bind(bind).with_context(|| format!("binding {bind}"))?;
            opsd::floor::server(listener, body.into())?.await?;
            Ok(())
        }
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
