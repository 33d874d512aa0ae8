//! `just chaos`: faults a real deployment meets, injected into the real release binary on loopback
//! (a killed process, a cut or refusing database, a stalled provider, a signal mid-request), each
//! checked from the outside. One line per scenario: what was injected, what was observed, and
//! whether the service held; the exit code is non-zero when one did not. Every scenario has its own
//! database and processes, is bounded in time and requests, and stops what it started.

mod scenarios;
mod support;

use std::time::Duration;

use support::Outcome;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let binary = std::env::args().nth(1).expect("usage: opsd-chaos PATH_TO_OPSD");
    let bin = support::Binary(binary.into());
    let mut outcomes: Vec<Outcome> = Vec::new();
    // CHAOS_ONLY=<name> runs one scenario.
    let only = std::env::var("CHAOS_ONLY").ok();
    macro_rules! run {
        ($name:literal, $scenario:expr) => {{
            if only.as_deref().is_some_and(|only| only != $name) {
                continue_label();
            } else {
                let outcome = match tokio::time::timeout(Duration::from_secs(120), $scenario).await {
                    Ok(outcome) => outcome,
                    Err(_) => Outcome::not_held("(the scenario)", "it did not finish within 120 s"),
                };
                println!("{:<30} {}", $name, outcome);
                outcomes.push(outcome);
            }
        }};
    }
    fn continue_label() {}
    run!("breaker-trial-cancelled", scenarios::breaker_trial_cancelled(&bin));
    run!("jwks-outage", scenarios::jwks_outage(&bin));
    run!("database-outage-under-load", scenarios::database_outage_under_load(&bin));
    run!("killed-mid-sync", scenarios::killed_mid_sync(&bin));
    run!("killed-mid-sweep", scenarios::killed_mid_sweep(&bin));
    run!("killed-mid-guest-event", scenarios::killed_mid_guest_event(&bin));
    run!("concurrent-first-start", scenarios::concurrent_first_start(&bin));
    run!("listen-connection-lost", scenarios::listen_connection_lost(&bin));
    run!("assistant-provider-stalls", scenarios::assistant_provider_stalls(&bin));
    run!("sigterm-mid-body", scenarios::sigterm_mid_body(&bin));
    let failed = outcomes.iter().filter(|o| !o.held).count();
    println!("{} passed, {failed} failed", outcomes.len() - failed);
    if failed > 0 {
        std::process::exit(1);
    }
}
