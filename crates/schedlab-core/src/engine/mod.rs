//! The simulator: one event queue and the run loop (placeholder while the core lands).

use crate::api::{RunOptions, RunOutput};
use crate::error::SimError;
use crate::scenario::Scenario;

/// One run in progress.
pub struct Simulator;

impl Simulator {
    /// Builds a run from a scenario.
    pub fn new(_s: &Scenario, _seed: u64, _trace: bool) -> Result<Simulator, SimError> {
        Err(SimError::Internal("engine not implemented yet".into()))
    }

    /// Runs to the end.
    pub fn run(self, _opts: &RunOptions) -> Result<RunOutput, SimError> {
        Err(SimError::Internal("engine not implemented yet".into()))
    }
}
