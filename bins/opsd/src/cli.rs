//! The `opsd` command line: every command answers `--help`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// The back-end service of the operations platform. Configured by environment variables (and a
/// `.env` file); see docs/configuration.md.
#[derive(Parser)]
#[command(name = "opsd", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Serve HTTP on BIND_ADDR (the default): applies pending migrations first.
    Serve,
    /// Validate the environment and reach the database, without serving; non-zero naming what is wrong.
    CheckConfig,
    /// Ask the server on BIND_ADDR whether it is ready (a container's health check); exit 0 if so.
    Probe,
    /// Apply pending migrations (the default), list them, or revert the newest.
    Migrate {
        /// List every migration of this binary, applied or pending; change nothing.
        #[arg(long, conflicts_with_all = ["revert", "post_deploy"])]
        status: bool,
        /// Also apply the post-deploy migrations, which remove what the previous release still
        /// uses: run it once every instance runs this release.
        #[arg(long, conflicts_with = "revert")]
        post_deploy: bool,
        /// Run the down.sql of the newest N applied migrations.
        #[arg(long, value_name = "N")]
        revert: Option<usize>,
    },
    /// Print the OpenAPI document.
    Openapi,
    /// Fill the database with a demo team: its locations, a history of sales, shifts and punches.
    SeedDemo {
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=500))]
        locations: u32,
        #[arg(long, default_value_t = 52, value_parser = clap::value_parser!(u32).range(1..=520))]
        weeks: u32,
    },
    /// Print a new VAPID key pair for web push.
    VapidKeys,
    /// List the scheduled jobs, their routes and periods.
    Jobs,
    /// Make the development identity's key pair in DIR (`just run`).
    DevKeys { dir: PathBuf },
    /// Sign a session token with the development identity (`just run` only).
    DevToken {
        #[arg(long)]
        user: String,
        #[arg(long)]
        team: Option<String>,
        #[arg(long, default_value = "admin", value_parser = ["admin", "member"])]
        role: String,
        #[arg(long, default_value_t = 12)]
        hours: i64,
    },
    /// Print a one-time link into the console signed in as USER (`just run` only: needs the dev
    /// identity and DATABASE_URL); it works once, for MINUTES.
    DevSignInLink {
        #[arg(long)]
        user: String,
        #[arg(long)]
        team: String,
        #[arg(long, default_value = "admin", value_parser = ["admin", "member"])]
        role: String,
        #[arg(long, default_value_t = 15)]
        minutes: i64,
    },
    /// Serve FILE's bytes from a handler that does nothing else (`just bench`'s floor).
    ServeFloor { file: PathBuf },
    /// The rostering engine on a file of the Shift Scheduling Benchmark's text format.
    Roster {
        #[command(subcommand)]
        command: RosterCommand,
    },
    /// The week planner (DATABASE_URL).
    Plan {
        #[command(subcommand)]
        command: PlanCommand,
    },
}

#[derive(Subcommand)]
pub enum PlanCommand {
    /// Plan each of the last WEEKS weeks of a sample of the team's locations from what was known
    /// before the week, and score it against what the week sold, beside the schedule published for it
    /// and the rule of thumb (each weekday staffed as the mean of the 4 weeks before).
    Backtest {
        #[arg(long)]
        team: String,
        /// How many of the team's locations, spread over its list.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=500))]
        locations: u32,
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=52))]
        weeks: u32,
        /// Seconds per week's solve.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=120))]
        time_limit: u32,
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
        threads: u32,
    },
}

#[derive(Subcommand)]
pub enum RosterCommand {
    /// Solve FILE within the time limit and print the best roster found; progress goes to stderr.
    /// Exit 0 with a roster, 3 without one, 2 for an unreadable file or bad arguments.
    Solve {
        file: PathBuf,
        /// Seconds for everything, reading the file and building the model included.
        #[arg(long, value_name = "SECONDS", value_parser = time_limit)]
        time_limit: f64,
        /// Solver threads (and neighbourhoods solved at once); the machine's cores by default.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
        threads: Option<u32>,
        /// The search's random seed, for a run that can be repeated.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// One JSON object on stdout instead of a table.
        #[arg(long)]
        json: bool,
        /// The MIP solver (CBC only in a build with the `cbc` feature, to compare the two).
        #[arg(long, value_enum, default_value = "highs")]
        solver: crate::roster::SolverChoice,
    },
}

fn time_limit(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!("{text:?} is not a number of seconds above 0 and at most 86400")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Command>, clap::Error> {
        Cli::try_parse_from(std::iter::once("opsd").chain(args.iter().copied())).map(|cli| cli.command)
    }

    #[test]
    fn serve_is_the_default_and_every_command_answers_help() {
        assert!(matches!(parse(&[]), Ok(None)));
        for command in [
            "serve",
            "check-config",
            "migrate",
            "openapi",
            "seed-demo",
            "vapid-keys",
            "jobs",
            "dev-keys",
            "dev-token",
            "dev-sign-in-link",
            "serve-floor",
            "roster",
            "plan",
        ] {
            let help = parse(&[command, "--help"]).err().expect("--help stops the parse");
            assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp, "{command}");
        }
    }

    #[test]
    fn flags_are_checked_before_anything_runs() {
        assert!(matches!(
            parse(&["migrate", "--revert", "2"]),
            Ok(Some(Command::Migrate { status: false, post_deploy: false, revert: Some(2) }))
        ));
        assert!(parse(&["migrate", "--status", "--revert", "1"]).is_err(), "list or revert, not both");
        assert!(matches!(
            parse(&["migrate", "--post-deploy"]),
            Ok(Some(Command::Migrate { status: false, post_deploy: true, revert: None }))
        ));
        assert!(parse(&["migrate", "--post-deploy", "--revert", "1"]).is_err());
        assert!(parse(&["migrate", "--post-deploy", "--status"]).is_err());
        assert!(parse(&["dev-token", "--team", "org_demo"]).is_err(), "the user is required");
        assert!(parse(&["dev-token", "--user", "u", "--role", "owner"]).is_err());
        assert!(parse(&["seed-demo", "--locations", "0"]).is_err());
        assert!(parse(&["seed-demo", "--weeks", "521"]).is_err());
        assert!(matches!(
            parse(&["seed-demo", "--locations", "20"]),
            Ok(Some(Command::SeedDemo { locations: 20, weeks: 52 }))
        ));
        assert!(parse(&["serve", "--unknown"]).is_err());
        for limit in ["0", "-1", "nan", "inf", "86401", "soon"] {
            assert!(parse(&["roster", "solve", "f.txt", "--time-limit", limit]).is_err(), "{limit}");
        }
        assert!(parse(&["roster", "solve", "f.txt"]).is_err(), "the time limit is required");
        assert!(parse(&["roster", "solve", "f.txt", "--time-limit", "5", "--threads", "0"]).is_err());
        assert!(matches!(
            parse(&["roster", "solve", "f.txt", "--time-limit", "2.5", "--json"]),
            Ok(Some(Command::Roster { command: RosterCommand::Solve { json: true, threads: None, .. } }))
        ));
    }
}
