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
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let index = ((self.latencies_us.len() as f64 * p).ceil() as usize).clamp(1, self.latencies_us.len()) - 1;
        f64::from(self.latencies_us[index]) / 1000.0
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
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client");
    let seq = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks = (0..connections).map(|connection| {
        let (client, make, seq) = (client.clone(), make.clone(), seq.clone());
        tokio::spawn(async move {
            let mut figures = Figures::default();
            let mut n = 0;
            while started.elapsed() < duration {
                let slot = Slot { connection, n, seq: seq.fetch_add(1, Ordering::Relaxed) };
                let request = make(&client, slot);
                let sent = Instant::now();
                let answer = request.send().await;
                let ok = match answer {
                    Ok(response) => {
                        let status = response.status().as_u16();
                        let body = response.bytes().await;
                        if status != expected && figures.errors == 0 {
                            eprintln!("  unexpected {status}: {}", String::from_utf8_lossy(&body.unwrap_or_default()));
                        }
                        status == expected
                    }
                    Err(error) => {
                        eprintln!("  request failed: {error}");
                        false
                    }
                };
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
    let mut total = Figures::default();
    for task in futures::future::join_all(tasks).await {
        total.merge(task.expect("a load task"));
    }
    total.seconds = started.elapsed().as_secs_f64();
    total.latencies_us.sort_unstable();
    total
}
