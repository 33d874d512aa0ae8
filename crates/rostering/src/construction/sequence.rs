//! One employee's best sequence of days by dynamic programming: each day is off or one of a few
//! candidate shifts, and the state after a day is the run it ends (work of some length on some
//! candidate, or days off up to their minimum). Every path meets rules 5 to 7 with their edge
//! exceptions, the days that may not be worked and the rotation between consecutive shifts; the
//! total minutes, the weekends and the limits per shift type are the caller's.

/// The run rules of one employee.
#[derive(Clone, Copy, Debug)]
pub(super) struct RunLimits {
    pub max_work: usize,
    pub min_work: usize,
    pub min_off: usize,
}

/// Per day, the shifts that may be worked with what each is worth (empty: the day is off).
pub(super) type Candidates = [Vec<(usize, f64)>];

/// The most valuable row whose runs and rotation are valid, or `None` when there is none.
/// `forbidden[a][b]`: shift `b` may not be worked the day after shift `a`.
pub(super) fn best_sequence(
    candidates: &Candidates,
    limits: RunLimits,
    forbidden: &[Vec<bool>],
) -> Option<Vec<Option<usize>>> {
    let horizon = candidates.len();
    let layout = Layout::new(candidates, limits);
    let mut scores = vec![f64::NEG_INFINITY; layout.states];
    // For each day and state, the state before it (`NONE` on day 0).
    let mut before = vec![NONE; horizon * layout.states];
    scores[layout.off(layout.off_states)] = 0.0; // a run off that touches day 0 has no minimum
    for (k, &(_, value)) in candidates.first()?.iter().enumerate().filter(|_| layout.max_work > 0) {
        scores[layout.work(1, k, true)] = value;
    }
    for day in 1..horizon {
        let mut next = vec![f64::NEG_INFINITY; layout.states];
        let back = &mut before[day * layout.states..(day + 1) * layout.states];
        let mut offer = |state: usize, score: f64, from: usize| {
            if score > next[state] {
                next[state] = score;
                back[state] = from as u32;
            }
        };
        for (from, &score) in scores.iter().enumerate().filter(|(_, score)| score.is_finite()) {
            match layout.state(from) {
                State::Work { length, candidate, waived } => {
                    let shift = candidates[day - 1][candidate].0;
                    if let Some(longer) = layout.longer(length) {
                        for (k, &(next_shift, value)) in candidates[day].iter().enumerate() {
                            if !forbidden[shift][next_shift] {
                                offer(layout.work(longer, k, waived), score + value, from);
                            }
                        }
                    }
                    if waived || length >= limits.min_work {
                        offer(layout.off(1), score, from);
                    }
                }
                State::Off { length } => {
                    offer(layout.off((length + 1).min(layout.off_states)), score, from);
                    if length >= layout.off_states && layout.max_work > 0 {
                        for (k, &(_, value)) in candidates[day].iter().enumerate() {
                            offer(layout.work(1, k, false), score + value, from);
                        }
                    }
                }
            }
        }
        scores = next;
    }
    // A run that touches the last day has no minimum: every state may end the horizon.
    let (mut state, _) =
        scores.iter().enumerate().filter(|(_, score)| score.is_finite()).max_by(|a, b| a.1.total_cmp(b.1))?;
    let mut row = vec![None; horizon];
    for day in (0..horizon).rev() {
        if let State::Work { candidate, .. } = layout.state(state) {
            row[day] = Some(candidates[day][candidate].0);
        }
        state = before[day * layout.states + state] as usize;
    }
    Some(row)
}

const NONE: u32 = u32::MAX;

enum State {
    Work { length: usize, candidate: usize, waived: bool },
    Off { length: usize },
}

/// States as indexes: work runs (length, candidate, whether the run touches day 0 and so has no
/// minimum), then runs off by length up to the minimum. Where no run can break the longest-run rule,
/// a run's length is followed only up to its minimum.
struct Layout {
    max_work: usize,
    /// Whether a run may be as long as the horizon.
    endless: bool,
    width: usize,
    off_states: usize,
    states: usize,
}

impl Layout {
    fn new(candidates: &Candidates, limits: RunLimits) -> Self {
        let horizon = candidates.len();
        let endless = limits.max_work >= horizon;
        let max_work = if endless { limits.min_work.clamp(1, horizon.max(1)) } else { limits.max_work };
        let width = candidates.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let off_states = limits.min_off.clamp(1, horizon.max(1));
        Self { max_work, endless, width, off_states, states: max_work * width * 2 + off_states }
    }

    /// The length a run of `length` has after one more day of work, if it may have one.
    fn longer(&self, length: usize) -> Option<usize> {
        if length < self.max_work { Some(length + 1) } else { self.endless.then_some(length) }
    }

    fn work(&self, length: usize, candidate: usize, waived: bool) -> usize {
        ((length - 1) * self.width + candidate) * 2 + usize::from(waived)
    }

    fn off(&self, length: usize) -> usize {
        self.max_work * self.width * 2 + length - 1
    }

    fn state(&self, index: usize) -> State {
        let work_states = self.max_work * self.width * 2;
        if index >= work_states {
            return State::Off { length: index - work_states + 1 };
        }
        State::Work { length: index / 2 / self.width + 1, candidate: index / 2 % self.width, waived: index % 2 == 1 }
    }
}
