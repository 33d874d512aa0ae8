//! Rostering: the Shift Scheduling Benchmark's model, its text format, an evaluator that judges any
//! roster, the program a MIP solver solves, and the engine that drives a solver through the port.

mod construction;
pub mod engine;
pub mod evaluate;
pub mod formulation;
pub mod model;
mod neighbourhood;
pub mod parse;
pub mod ports;

pub use engine::{Engine, Infeasibility, Progress, Solution, SolveOptions, Status};
pub use evaluate::{Evaluation, Objective, Rule, Violation, evaluate};
pub use model::{Cover, Employee, Instance, Overtime, Roster, ShiftRequest, ShiftType, Weekend};
pub use parse::{ParseError, Section, parse};
pub use ports::{FreeCells, RosterProblem, RosterSolver, SolverError, SolverOutcome, SolverStatus};
