//! Rules 5 to 7 (the longest run of work, the shortest run of work, the shortest run of days off) in
//! one of two forms.
//!
//! The network: an employee's horizon is a path from day 0 to the day after the last, made of work
//! arcs (a whole run of work, of an allowed length) and off arcs (the first days of a run off, as
//! many as its minimum, then one arc per further day). Nodes say what ended there: a run of work, or
//! a run off that has had its minimum. Every path is a valid sequence and every valid sequence is a
//! path, so the relaxation of these rules is exact; each day's work is the sum of the work arcs over
//! it. The edges' exceptions are arcs of their own: a run that touches the first or the last day may
//! be shorter than the minimum.
//!
//! The rows on the days (windows of `max + 1` days, and a run that starts on `d` reaching `d + j`) are
//! the fallback where a network would be too large, and for leaving a rule out when diagnosing.

use super::{Column, Expr, Formulation, Row};
use crate::evaluate::Rule;
use crate::model::{Instance, Roster};
use crate::ports::RosterProblem;

/// The most network columns a program may hold before the days' rows are used instead.
const MOST_NETWORK_COLUMNS: usize = 60_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Start,
    /// A run of work ended before this day.
    AfterWork(usize),
    /// A run off, its minimum met (or touching day 0), ended before this day.
    AfterOff(usize),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct RunArc {
    from: Node,
    to: Node,
    first: usize,
    length: usize,
    work: bool,
    column: usize,
}

impl Formulation {
    /// Whether every employee with a free day can have a network within the program's size.
    pub(super) fn networks_fit(&self, instance: &Instance) -> bool {
        let employees =
            self.cells.iter().filter(|row| row.iter().any(|cell| matches!(cell, super::Cell::Free(_)))).count();
        employees * instance.horizon * 8 <= MOST_NETWORK_COLUMNS
    }

    pub(super) fn runs(&mut self, problem: &RosterProblem, employee: usize) {
        let relaxed = [Rule::MaxConsecutiveShifts, Rule::MinConsecutiveShifts, Rule::MinConsecutiveDaysOff];
        let instance = &problem.instance;
        if relaxed.iter().any(|&rule| problem.relaxes(rule)) || !self.networks_fit {
            self.run_arcs.push(Vec::new());
            self.run_rows(problem, employee);
        } else {
            let arcs = self.network(instance, employee);
            self.run_arcs.push(arcs);
        }
    }

    fn network(&mut self, instance: &Instance, employee: usize) -> Vec<RunArc> {
        let person = &instance.staff[employee];
        let horizon = instance.horizon;
        let max_work = (person.max_consecutive_shifts as usize).min(horizon);
        let min_work = (person.min_consecutive_shifts as usize).max(1);
        let min_off = (person.min_consecutive_days_off as usize).max(1);
        let mut arcs = Vec::new();
        let mut arc = |this: &mut Self, from: Node, first: usize, length: usize, work: bool, to: Node| {
            let column = this.column(Column { cost: 0.0, lower: 0.0, upper: 1.0, integer: false });
            arcs.push(RunArc { from, to, first, length, work, column });
        };
        for first in 0..horizon {
            let from_nodes: &[Node] = if first == 0 { &[Node::Start] } else { &[Node::AfterOff(first)] };
            for &from in from_nodes {
                for length in 1..=max_work.min(horizon - first) {
                    let touches_edge = first == 0 || first + length == horizon;
                    if length >= min_work || touches_edge {
                        arc(self, from, first, length, true, Node::AfterWork(first + length));
                    }
                }
            }
            // The first days of a run off: its minimum, or fewer when it reaches the end.
            let from = if first == 0 { Node::Start } else { Node::AfterWork(first) };
            let length = if first == 0 { 1 } else { min_off.min(horizon - first) };
            arc(self, from, first, length, false, Node::AfterOff(first + length));
            // One more day off.
            if first > 0 {
                arc(self, Node::AfterOff(first), first, 1, false, Node::AfterOff(first + 1));
            }
        }
        // Binary arcs: the solver branches on whole runs as well as on days.
        for arc in &arcs {
            self.mip.columns[arc.column].integer = true;
        }
        let nodes = (1..horizon).flat_map(|day| [Node::AfterWork(day), Node::AfterOff(day)]);
        for node in nodes {
            let mut terms: Vec<(usize, f64)> =
                arcs.iter().filter(|arc| arc.to == node).map(|arc| (arc.column, 1.0)).collect();
            terms.extend(arcs.iter().filter(|arc| arc.from == node).map(|arc| (arc.column, -1.0)));
            self.mip.rows.push(Row { lower: 0.0, upper: 0.0, terms });
        }
        let out_of_start = arcs.iter().filter(|arc| arc.from == Node::Start).map(|arc| (arc.column, 1.0)).collect();
        self.mip.rows.push(Row { lower: 1.0, upper: 1.0, terms: out_of_start });
        // Each day's work is the work arcs over it.
        for day in 0..horizon {
            let mut link = self.works(employee, day);
            let over = arcs.iter().filter(|arc| arc.work && arc.first <= day && day < arc.first + arc.length);
            link.terms.extend(over.map(|arc| (arc.column, -1.0)));
            self.row(link, 0.0, 0.0);
        }
        arcs
    }

    /// The network's path for a roster, as a start; none where the roster breaks a run rule.
    pub(super) fn run_values(&self, instance: &Instance, roster: &Roster, values: &mut [f64]) {
        for (employee, arcs) in self.run_arcs.iter().enumerate() {
            if arcs.is_empty() {
                continue;
            }
            let mut path = Vec::new();
            let mut node = Node::Start;
            let mut day = 0;
            while day < instance.horizon {
                let works = roster.works(employee, day);
                let length = (day..instance.horizon).take_while(|&d| roster.works(employee, d) == works).count();
                let take = if works { length } else { length.min(arcs_first_off_length(arcs, node, day)) };
                let Some(arc) = arcs
                    .iter()
                    .find(|arc| arc.from == node && arc.first == day && arc.work == works && arc.length == take)
                else {
                    break;
                };
                path.push(arc.column);
                node = arc.to;
                day += take;
            }
            if day == instance.horizon {
                path.into_iter().for_each(|column| values[column] = 1.0);
            }
        }
    }

    /// The rows on the days: no window of `max + 1` days all worked; a run that starts on `d` (worked,
    /// the day before off) reaches `d + j` for each `j` below its minimum, unless it would reach the
    /// last day; the same for runs off.
    fn run_rows(&mut self, problem: &RosterProblem, employee: usize) {
        let instance = &problem.instance;
        let horizon = instance.horizon;
        let person = &instance.staff[employee];
        let (max_work, min_work, min_off) = (
            person.max_consecutive_shifts as usize,
            person.min_consecutive_shifts as usize,
            person.min_consecutive_days_off as usize,
        );
        if !problem.relaxes(Rule::MaxConsecutiveShifts) && max_work < horizon {
            for first in 0..horizon - max_work {
                let mut window = Expr::default();
                (first..=first + max_work).for_each(|day| window.add(self.works(employee, day), 1.0));
                self.row(window, f64::NEG_INFINITY, max_work as f64);
            }
        }
        for day in 1..horizon {
            for reach in 1..min_work.max(min_off) {
                if day + reach >= horizon {
                    break;
                }
                if reach < min_work && !problem.relaxes(Rule::MinConsecutiveShifts) {
                    let mut expr = self.works(employee, day);
                    expr.add(self.works(employee, day - 1), -1.0);
                    expr.add(self.works(employee, day + reach), -1.0);
                    self.row(expr, f64::NEG_INFINITY, 0.0);
                }
                if reach < min_off && !problem.relaxes(Rule::MinConsecutiveDaysOff) {
                    let mut expr = self.works(employee, day - 1);
                    expr.add(self.works(employee, day), -1.0);
                    expr.add(self.works(employee, day + reach), 1.0);
                    self.row(expr, f64::NEG_INFINITY, 1.0);
                }
            }
        }
    }
}

/// How many days the off arc from `node` on `day` covers: one from the start, else the minimum.
fn arcs_first_off_length(arcs: &[RunArc], node: Node, day: usize) -> usize {
    arcs.iter().find(|arc| arc.from == node && arc.first == day && !arc.work).map_or(usize::MAX, |arc| arc.length)
}
