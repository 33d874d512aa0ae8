//! A busy day of a 200-location chain at compressed time: managers read the week's optimization
//! (the team's, mostly cached, and single locations', mostly first asks), staff file incidents,
//! comments, status changes and shift reports, managers their daily report, devices subscribe to
//! push, the identity provider and the coupon producer deliver webhooks, and every job is called
//! each second, as if a minute passed. Once on one instance, then on two sharing the database; the
//! resident memory of each instance is read after the load.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use opsd_tests::served::{Binary, Opsd};
use opsd_tests::{API_KEY, CRON_JOBS, CRON_SECRET};

use crate::load::{self, Kind, MakeRequest, Slot};
use crate::writes::{self, CONNECTIONS};

const WEEKS: i64 = 8;
const LOCATIONS: u32 = 200;
/// Resident memory after the load, per instance.
const RSS_GOAL_KIB: u64 = 64 * 1024;

/// Sends each request to one of the instances, by connection.
fn spread(per_instance: Vec<MakeRequest>) -> MakeRequest {
    Arc::new(move |client: &reqwest::Client, slot: Slot| {
        let make = &per_instance[slot.connection % per_instance.len()];
        make(client, slot)
    })
}

/// The day's requests against each of `bases`, with their weights, and what their clients have
/// done before the day (the push users have loaded the app on each instance).
fn kinds(
    bases: &[String],
    first: u64,
    last_week: time::Date,
    locations: &Arc<Vec<String>>,
) -> (Vec<Kind>, Vec<writes::Prelude>) {
    let run = uuid::Uuid::new_v4().simple().to_string();
    let mut per_instance: Vec<Vec<writes::WriteRoute>> =
        bases.iter().map(|base| writes::routes(base, &run, first)).collect();
    let preludes = per_instance.iter_mut().flatten().filter_map(|route| route.before.take()).collect();
    let weight = |name: &str| match name {
        "incident + new contact" => 8,
        "incident comment" => 12,
        "incident status change" => 4,
        "shift report" => 8,
        "manager report" => 2,
        "push subscription" => 4,
        "identity webhook" => 4,
        "guest event" => 8,
        // Minutes per request: a POS upload is not part of the day's interactive mix.
        "sales, 10,000 rows" => 0,
        other => panic!("the mix has no weight for the write route {other:?}"),
    };
    let mut kinds: Vec<Kind> = Vec::new();
    for (index, route) in per_instance[0].iter().enumerate() {
        if weight(route.name) == 0 {
            continue;
        }
        let makes = per_instance.iter().map(|routes| routes[index].make.clone()).collect();
        kinds.push(Kind {
            name: route.name,
            weight: weight(route.name),
            expected: route.expected,
            make: spread(makes),
        });
    }
    let report = |base: &String, one_location: bool| -> MakeRequest {
        let (base, locations) = (base.clone(), locations.clone());
        Arc::new(move |client: &reqwest::Client, slot: Slot| {
            let week = last_week - time::Duration::weeks((slot.seq % WEEKS as u64) as i64);
            let mut url = format!("{base}/api/analytics/optimization?teamId=org_demo&weekOf={week}");
            if one_location {
                url.push_str(&format!(
                    "&locationId={}",
                    locations[(slot.seq / WEEKS as u64 % locations.len() as u64) as usize]
                ));
            }
            client.get(url).bearer_auth(API_KEY)
        })
    };
    let team: Vec<MakeRequest> = bases.iter().map(|base| report(base, false)).collect();
    let location: Vec<MakeRequest> = bases.iter().map(|base| report(base, true)).collect();
    kinds.push(Kind { name: "optimization, team", weight: 40, expected: 200, make: spread(team) });
    kinds.push(Kind { name: "optimization, a location", weight: 10, expected: 200, make: spread(location) });
    (kinds, preludes)
}

/// What the scheduler saw of one job.
#[derive(Default)]
struct JobCalls {
    calls: u64,
    failures: u64,
    slowest: Duration,
}

/// Calls each job once a second on its own schedule, as a cron scheduler does (a slow job delays
/// only its own next call), on the instances in turn, until stopped.
async fn cron(bases: Vec<String>, stop: Arc<AtomicBool>) -> Vec<(&'static str, JobCalls)> {
    let client = reqwest::Client::new();
    let schedules = CRON_JOBS.map(|job| {
        let (client, bases, stop) = (client.clone(), bases.clone(), stop.clone());
        tokio::spawn(async move {
            let mut seen = JobCalls::default();
            let mut every_second = tokio::time::interval(Duration::from_secs(1));
            every_second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            for minute in 0usize.. {
                every_second.tick().await;
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let started = Instant::now();
                let answer =
                    client.get(format!("{}{job}", bases[minute % bases.len()])).bearer_auth(CRON_SECRET).send();
                let failure = match answer.await {
                    Ok(response) if response.status().is_success() => None,
                    Ok(response) => Some(response.status().to_string()),
                    Err(error) => Some(error.to_string()),
                };
                seen.calls += 1;
                seen.slowest = seen.slowest.max(started.elapsed());
                if let Some(why) = failure {
                    eprintln!("  {job}: {why}");
                    seen.failures += 1;
                }
            }
            (job, seen)
        })
    });
    futures::future::join_all(schedules).await.into_iter().map(|done| done.expect("a job's schedule")).collect()
}

/// One run of the day; `first` keeps its report dates apart from the other runs'.
async fn day(instances: &[Opsd], seconds: u64, first: u64, last_week: time::Date, locations: &Arc<Vec<String>>) {
    let bases: Vec<String> = instances.iter().map(|opsd| opsd.base.clone()).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let (kinds, preludes) = kinds(&bases, first, last_week, locations);
    let client = reqwest::Client::new();
    for prelude in &preludes {
        prelude.send(&client).await;
    }
    let jobs = tokio::spawn(cron(bases.clone(), stop.clone()));
    let figures = load::run_mix(CONNECTIONS, Duration::from_secs(seconds), kinds.clone()).await;
    stop.store(true, Ordering::Relaxed);
    let jobs = jobs.await.expect("the scheduler");
    let (mut answered, mut errors) = (0, 0);
    for (kind, figures) in kinds.iter().zip(&figures) {
        println!(
            "    {:<26} {:>7.0} req/s   p50 {:>6.2} ms   p99 {:>6.2} ms   errors {}",
            kind.name,
            figures.rate(),
            figures.percentile_ms(0.5),
            figures.percentile_ms(0.99),
            figures.errors
        );
        answered += figures.answered;
        errors += figures.errors;
    }
    let seconds = figures[0].seconds;
    let calls: u64 = jobs.iter().map(|(_, seen)| seen.calls).sum();
    let failures: u64 = jobs.iter().map(|(_, seen)| seen.failures).sum();
    let (slowest_job, slowest) =
        jobs.iter().map(|(job, seen)| (*job, seen.slowest)).max_by_key(|(_, took)| *took).expect("jobs");
    println!(
        "    all: {:.0} req/s, {errors} errors (goal: none); jobs: {calls} calls, {failures} failed (goal: none), \
         the slowest {:.2} s ({slowest_job})",
        answered as f64 / seconds,
        slowest.as_secs_f64()
    );
    for (index, opsd) in instances.iter().enumerate() {
        let rss = opsd.rss_kib();
        println!(
            "    instance {}: RSS after the load {:.1} MB (goal: at most {} MB)",
            index + 1,
            rss as f64 / 1024.0,
            RSS_GOAL_KIB / 1024
        );
    }
}

pub async fn measure(seconds: u64) {
    let database = writes::seeded_database().await;
    let opsd = std::env::current_exe().unwrap().with_file_name("opsd");
    let demo = Binary(opsd)
        .seed_sized(database.url(), &["--locations", &LOCATIONS.to_string(), "--weeks", &WEEKS.to_string()])
        .await;
    let last_week =
        time::Date::parse(&demo.week_of, time::macros::format_description!("[year]-[month]-[day]")).unwrap();
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let locations: Vec<String> = client
        .query("SELECT id::text FROM locations WHERE team_id = 'org_demo' ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    client.batch_execute("VACUUM ANALYZE").await.unwrap();
    let env = [("COUPON_EXPIRY_ENABLED", "true".to_owned())];
    println!(
        "mixed workload: a busy day of a {LOCATIONS}-location chain, {seconds} s at {CONNECTIONS} connections, every job each second:"
    );
    let locations = Arc::new(locations);
    let one = writes::serve(database.url(), &env).await;
    println!("  one instance:");
    day(std::slice::from_ref(&one), seconds, 0, last_week, &locations).await;
    let two = writes::serve(database.url(), &env).await;
    println!("  two instances on one database:");
    day(&[one, two], seconds, 1_000_000, last_week, &locations).await;
}
