//! A closed-loop load generator: a number of connections, each sending its next request as soon as
//! the last one is answered, for a fixed time. It stands in for wrk where each request must differ
//! (new rows, signed deliveries, a token per user).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one connection's `n`-th request (and the run's `seq`-th overall) is.
pub struct Slot {
    pub connection: usize,
    pub n: u64,
    pub seq: u64,
}

pub type MakeRequest = Arc<dyn Fn(&reqwest::Client, Slot) -> reqwest::RequestBuilder + Send + Sync>;

/// One kind of request in a run: its share of the requests and the status that counts as answered.
#[derive(Clone)]
pub struct Kind {
    pub name: &'static str,
    pub weight: u32,
    pub expected: u16,
    pub make: MakeRequest,
}

/// The nearest-rank percentile `p` of latencies in µs sorted ascending, in ms (NaN for none).
pub fn percentile_ms(sorted_us: &[u32], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted_us.len() as f64 * p).ceil() as usize).clamp(1, sorted_us.len()) - 1;
    f64::from(sorted_us[index]) / 1000.0
}

/// One route's figures over a run.
#[derive(Debug, Default, Clone)]
pub struct Figures {
    pub answered: u64,
    /// Answers whose status was not the expected one, or transport errors.
    pub errors: u64,
    pub seconds: f64,
    latencies_us: Vec<u32>,
}

impl Figures {
    pub fn rate(&self) -> f64 {
        self.answered as f64 / self.seconds
    }

    pub fn percentile_ms(&self, p: f64) -> f64 {
        percentile_ms(&self.latencies_us, p)
    }

    fn merge(&mut self, other: Figures) {
        self.answered += other.answered;
        self.errors += other.errors;
        self.latencies_us.extend(other.latencies_us);
    }
}

/// Keeps `connections` requests in flight for `duration`; a request is counted as answered when its
/// status is `expected`. Connections are kept alive, as a client pool keeps them.
pub async fn run(connections: usize, duration: Duration, expected: u16, make: MakeRequest) -> Figures {
    let kind = Kind { name: "", weight: 1, expected, make };
    run_mix(connections, duration, vec![kind]).await.remove(0)
}

/// The kind whose share of `0..total` holds `position`.
fn kind_at(kinds: &[Kind], mut position: u32) -> usize {
    for (index, kind) in kinds.iter().enumerate() {
        if position < kind.weight {
            return index;
        }
        position -= kind.weight;
    }
    unreachable!("the position is below the weights' total")
}

/// As [`run`], with requests of several kinds interleaved by weight; figures per kind, in order.
pub async fn run_mix(connections: usize, duration: Duration, kinds: Vec<Kind>) -> Vec<Figures> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client");
    // The kinds in proportion to their weights, spread evenly: request `seq` is of kind schedule[seq % len].
    let total: u32 = kinds.iter().map(|k| k.weight).sum();
    let schedule: Arc<Vec<usize>> =
        Arc::new((0..total).map(|i| kind_at(&kinds, (u64::from(i) * 7_919 % u64::from(total)) as u32)).collect());
    let kinds = Arc::new(kinds);
    let seq = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks = (0..connections).map(|connection| {
        let (client, kinds, schedule, seq) = (client.clone(), kinds.clone(), schedule.clone(), seq.clone());
        tokio::spawn(async move {
            let mut figures = vec![Figures::default(); kinds.len()];
            let mut n = 0;
            while started.elapsed() < duration {
                let seq = seq.fetch_add(1, Ordering::Relaxed);
                let index = schedule[(seq % schedule.len() as u64) as usize];
                let kind = &kinds[index];
                let request = (kind.make)(&client, Slot { connection, n, seq });
                let sent = Instant::now();
                let ok = match request.send().await {
                    Ok(response) => {
                        let status = response.status().as_u16();
                        let body = response.bytes().await;
                        if status != kind.expected && figures[index].errors == 0 {
                            eprintln!(
                                "  {}: unexpected {status}: {}",
                                kind.name,
                                String::from_utf8_lossy(&body.unwrap_or_default())
                            );
                        }
                        status == kind.expected
                    }
                    Err(error) => {
                        eprintln!("  {}: request failed: {error}", kind.name);
                        false
                    }
                };
                let figures = &mut figures[index];
                if ok {
                    figures.answered += 1;
                    figures.latencies_us.push(sent.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                } else {
                    figures.errors += 1;
                }
                n += 1;
            }
            figures
        })
    });
    let mut totals = vec![Figures::default(); kinds.len()];
    for task in futures::future::join_all(tasks).await {
        for (total, figures) in totals.iter_mut().zip(task.expect("a load task")) {
            total.merge(figures);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    for total in &mut totals {
        total.seconds = seconds;
        total.latencies_us.sort_unstable();
    }
    totals
}
