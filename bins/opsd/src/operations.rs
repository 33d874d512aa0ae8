//! The operator's commands: `opsd check-config`, `opsd probe` and `opsd migrate`.

use anyhow::{Context, bail};
use opsd_postgres::{Db, MigrationStep};

use crate::config::Config;

/// Validates the environment, then reaches every database address it names (the primary, its
/// session address, each replica) and lists pending migrations; serves nothing. An error names
/// the variable or the address that is wrong.
pub async fn check_config() -> anyhow::Result<()> {
    let config = Config::from_environment().context("the environment")?;
    println!("environment: valid");
    let db = crate::startup::open_database(&config).context("DATABASE_URL")?;
    drop(db.conn().await.map_err(|error| anyhow::anyhow!("{error}")).context("DATABASE_URL: connecting")?);
    println!("DATABASE_URL: reached");
    let (post_deploy, pending): (Vec<_>, Vec<_>) = opsd_postgres::migration_status(&db)
        .await
        .map_err(|error| anyhow::anyhow!("{error}"))
        .context("DATABASE_SESSION_URL: reading the applied migrations")?
        .into_iter()
        .filter(|migration| !migration.applied)
        .partition(|migration| migration.post_deploy);
    println!(
        "DATABASE_SESSION_URL: reached; {} migrations pending (`opsd migrate` or `opsd serve` applies them), \
         {} post-deploy (`opsd migrate --post-deploy`, once no instance of the previous release is left)",
        pending.len(),
        post_deploy.len()
    );
    for (index, reached) in db.check_replicas().await.into_iter().enumerate() {
        match reached {
            Ok(()) => println!("DATABASE_REPLICA_URLS[{index}]: reached"),
            Err(error) => bail!("DATABASE_REPLICA_URLS[{index}]: {error}"),
        }
    }
    Ok(())
}

/// `opsd migrate`: applies what is pending but the post-deploy steps; `--post-deploy` those too;
/// `--status` lists; `--revert N` runs the newest N applied migrations' `down.sql`.
pub async fn migrate(status: bool, post_deploy: bool, revert: Option<usize>) -> anyhow::Result<()> {
    let config = Config::from_environment()?;
    let db: Db = crate::startup::open_database(&config)?;
    let failed = |error: opsd_core::StoreError| anyhow::anyhow!("{error}");
    if status {
        for migration in opsd_postgres::migration_status(&db).await.map_err(failed)? {
            let state = match (migration.applied, migration.post_deploy) {
                (true, _) => "applied",
                (false, false) => "pending",
                (false, true) => "pending post-deploy",
            };
            println!("{state}  {}", migration.name);
        }
    } else if let Some(count) = revert {
        let reverted = opsd_postgres::revert_migrations(&db, count).await.map_err(failed)?;
        for version in &reverted {
            println!("reverted {version}");
        }
        println!("{} migrations reverted", reverted.len());
    } else {
        let step = if post_deploy { MigrationStep::PostDeploy } else { MigrationStep::PreDeploy };
        opsd_postgres::run_migrations(&db, step).await.map_err(failed)?;
        let waiting = opsd_postgres::migration_status(&db).await.map_err(failed)?.iter().filter(|m| !m.applied).count();
        match waiting {
            0 => println!("migrations are up to date"),
            _ => println!(
                "migrations are up to date but {waiting} post-deploy: run `opsd migrate --post-deploy` once no \
                 instance of the previous release is left"
            ),
        }
    }
    Ok(())
}

/// `opsd probe`: `/health/ready` of the server on `BIND_ADDR` (its loopback when it listens on
/// every address), answered 200 within 3 s.
pub async fn probe() -> anyhow::Result<()> {
    let mut bind = crate::config::bind_addr()?;
    if bind.ip().is_unspecified() {
        bind.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let url = format!("http://{bind}/health/ready");
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(3)).no_proxy().build()?;
    let status = client.get(&url).send().await.with_context(|| format!("{url}: no answer"))?.status();
    if !status.is_success() {
        bail!("{url}: {status}");
    }
    println!("{url}: ready");
    Ok(())
}
