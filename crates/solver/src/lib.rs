//! The rostering engine's MIP solver: HiGHS, loaded with the domain's formulation.

#[cfg(feature = "cbc")]
mod cbc_solver;
mod highs_solver;

#[cfg(feature = "cbc")]
pub use cbc_solver::CbcSolver;
pub use highs_solver::HighsSolver;
