//! The large neighbourhood search's moves: which employee-days to free for the solver. Three shapes, as
//! rostering LNS uses them: a few employees' whole horizon (their run, minute and weekend rules), a
//! window of days for everybody (the cover), and a block of both. The size adapts: a neighbourhood the
//! solver closes quickly grows, one it cannot close in time shrinks.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::model::Instance;
use crate::ports::FreeCells;

/// The most assignment columns a neighbourhood frees, whatever the instance's size.
const MOST_COLUMNS: usize = 12_000;
const FIRST_LIMIT: Duration = Duration::from_millis(1500);

pub struct Neighbourhoods {
    instance: Arc<Instance>,
    rng: StdRng,
    /// Free employee-days wanted.
    size: f64,
    limit: Duration,
}

impl Neighbourhoods {
    pub fn new(instance: &Arc<Instance>, rng: StdRng) -> Self {
        let cells = instance.staff.len() * instance.horizon;
        let size = (cells as f64 / 4.0).max(2.0 * instance.horizon as f64).min(cells as f64);
        let mut neighbourhoods = Self { instance: Arc::clone(instance), rng, size, limit: FIRST_LIMIT };
        neighbourhoods.size = neighbourhoods.size.min(neighbourhoods.most_cells());
        neighbourhoods
    }

    /// At most the column budget, and at most 60 % of the roster: a move frees part of it.
    fn most_cells(&self) -> f64 {
        let cells = self.instance.staff.len() * self.instance.horizon;
        let part = (cells as f64 * 0.6).max(1.0);
        ((MOST_COLUMNS / self.instance.shifts.len().max(1)).max(1) as f64).min(part)
    }

    pub fn time_limit(&self) -> Duration {
        self.limit
    }

    pub fn next(&mut self) -> FreeCells {
        let instance = &self.instance;
        let (staff, horizon) = (instance.staff.len(), instance.horizon);
        let size = self.size.round().max(1.0) as usize;
        // How many employees, and how many days each.
        let (employees, days) = match self.rng.gen_range(0..3) {
            0 => (size.div_ceil(horizon).clamp(1, staff), horizon),
            1 => (staff, size.div_ceil(staff).clamp(1, horizon)),
            _ => {
                let employees = self.rng.gen_range(2.min(staff)..=staff).max(1);
                (employees, size.div_ceil(employees).clamp(1, horizon))
            }
        };
        let mut chosen: Vec<usize> = (0..staff).collect();
        chosen.shuffle(&mut self.rng);
        let first = self.rng.gen_range(0..=horizon - days);
        let mut free = FreeCells::none(instance);
        for &employee in &chosen[..employees] {
            (first..first + days).for_each(|day| free.free(employee, day));
        }
        free
    }

    /// After a move: closed well within its limit, the next is larger; cut off by the limit, smaller
    /// (and given a little more time, up to a few seconds).
    pub fn learn(&mut self, closed: bool, took: Duration, limit: Duration) {
        if closed && took < limit / 2 {
            self.size = (self.size * 1.15).min(self.most_cells());
        } else if !closed {
            self.size = (self.size * 0.85).max(self.instance.horizon.min(8) as f64);
            self.limit = (self.limit.mul_f64(1.1)).min(Duration::from_secs(4));
        }
    }
}
