//! The jobs page (operators): every scheduled job with its cron expression, last run, next due
//! time, its runs and failures in the last 24 hours, and an alarm when it has not run within twice
//! its period or its health gate is raised. A job that is off (its provider is not configured) says
//! so instead.

use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use opsd_jobs::{JobActivity, LastRun};
use time::OffsetDateTime;

use crate::console::access::{Need, allow};
use crate::console::page::{layout, ok, unavailable, when};
use crate::state::AppState;

/// The next two times a cron expression comes due after `now`.
fn next_two(expression: &str, now: DateTime<Utc>) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let cron = croner::Cron::new(expression).parse().ok()?;
    let first = cron.find_next_occurrence(&now, false).ok()?;
    let second = cron.find_next_occurrence(&first, false).ok()?;
    Some((first, second))
}

fn to_chrono(at: OffsetDateTime) -> DateTime<Utc> {
    DateTime::from_timestamp(at.unix_timestamp(), at.nanosecond()).unwrap_or_default()
}

/// Why the job needs a look, if it does.
fn alarm(last: Option<&LastRun>, period: Option<chrono::Duration>, now: DateTime<Utc>) -> Option<String> {
    let Some(last) = last else { return Some("has never run".into()) };
    if let Some(period) = period
        && now - to_chrono(last.started_at) > period * 2
    {
        return Some("has not run within twice its period".into());
    }
    let gate = |key: &str| last.summary.get(key).cloned();
    match (last.status.as_str(), gate("reconciliationDelta"), gate("oldestExpiryLagSeconds")) {
        ("failed", Some(delta), Some(lag)) => Some(format!("health gate raised: delta {delta}, lag {lag} s")),
        ("failed" | "abandoned", _, _) => Some(format!("last run {}", last.status)),
        _ => None,
    }
}

fn last_run(last: Option<&LastRun>) -> Markup {
    match last {
        None => html! { "never" },
        Some(run) => {
            let duration = run.finished_at.map(|end| (end - run.started_at).whole_milliseconds());
            html! {
                span data-status=(run.status) { (run.status) } " "
                span class="when" { (when(run.started_at)) } @if let Some(ms) = duration { " (" (ms) " ms)" }
                span class="summary" { (run.summary.to_string().chars().take(160).collect::<String>()) }
            }
        }
    }
}

pub async fn page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if let Err(refused) = allow(&req, Need::Operator).await {
        return refused;
    }
    let names: Vec<String> = state.cron.all().map(|job| job.name().to_owned()).collect();
    let since = OffsetDateTime::now_utc() - time::Duration::hours(24);
    let activity = match state.job_history.activity(&names, since).await {
        Ok(activity) => activity,
        Err(error) => return unavailable("The job runs are", error),
    };
    let now = Utc::now();
    let body = html! {
        h1 { "Scheduled jobs" }
        div class="card" {
            table {
                thead { tr {
                    th { "Job" } th { "Schedule" } th { "Last run" } th { "Next due (UTC)" }
                    th class="num" { "Runs 24 h" } th class="num" { "Failures 24 h" } th { "Alarm" }
                } }
                tbody {
                    @for job in state.cron.all() {
                        @let seen = activity.iter().find(|a| a.job == job.name());
                        @let last = seen.and_then(|a: &JobActivity| a.last.as_ref());
                        @let next = next_two(job.schedule(), now);
                        // A job that is off (its provider is not configured) owes no runs.
                        @let alarm = if job.enabled() { alarm(last, next.map(|(a, b)| b - a), now) } else { None };
                        tr data-job=(job.name()) {
                            td { code { (job.name()) } }
                            td { code { (job.schedule()) } }
                            td { (last_run(last)) }
                            td class="when" { @if let Some((due, _)) = next { (due.format("%Y-%m-%d %H:%M")) } }
                            td class="num" { (seen.map_or(0, |a| a.runs)) }
                            td class="num" { (seen.map_or(0, |a| a.failures)) }
                            td {
                                @match alarm {
                                    Some(why) => { span class="alarm" data-alarm="raised" { (why) } }
                                    None if !job.enabled() => { span data-alarm="off" { "off: not configured" } }
                                    None => { span class="ok" { "on time" } }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    ok(layout("jobs", "Jobs", body))
}
