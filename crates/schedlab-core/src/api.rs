//! The library's entry points: load, inspect and run scenarios.
//!
//! One call runs one scenario with one seed to completion; there are no per-event
//! callbacks, so bindings cross the language boundary once per run.

use crate::error::{ScenarioError, SimError};
use crate::metrics::RunResult;
use crate::scenario::{MachineSpec, Scenario};
use crate::topology::{presets, Machine};
use crate::trace::Trace;

/// Options of one run that are not part of the scenario.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Record a trace even if the scenario does not ask for one.
    pub trace: bool,
    /// Check every invariant after every event (slow; debug builds already sample).
    pub check_invariants: bool,
    /// Called now and then with the fraction of the run done (0..1).
    pub progress: Option<std::sync::Arc<dyn Fn(f64) + Send + Sync>>,
    /// Checked as often as `progress` is called: once set (by Ctrl-C, say), the run stops
    /// at the next check and ends as "interrupted".
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("trace", &self.trace)
            .field("check_invariants", &self.check_invariants)
            .finish_non_exhaustive()
    }
}

/// What a run produces.
#[derive(Debug)]
pub struct RunOutput {
    /// Figures.
    pub result: RunResult,
    /// The trace, if one was recorded in memory.
    pub trace: Option<Trace>,
    /// Why writing the trace failed (the run itself completed).
    pub trace_error: Option<String>,
}

/// Builds the machine a scenario describes (preset, synthetic or host), with cost overrides.
pub fn build_machine(spec: &MachineSpec) -> Result<Machine, ScenarioError> {
    let mut m = if let Some(name) = &spec.preset {
        presets::preset(name).ok_or_else(|| {
            ScenarioError::new(
                "machine.preset",
                format!("unknown preset '{name}': expected one of {}", presets::PRESET_NAMES.join(", ")),
            )
        })?
    } else if let Some(t) = &spec.topo {
        let mut m = presets::topo(t.sockets, t.llcs, t.cores, t.smt);
        if let Some(arch) = t.arch {
            m.arch = arch;
        }
        m
    } else {
        crate::topology::sysfs::read_host(std::path::Path::new("/sys/devices/system/cpu"))
            .map_err(|e| ScenarioError::new("machine.host", e))?
    };
    if !spec.cost.is_empty() {
        m.cost = m.cost.with_overrides(&spec.cost).map_err(|e| ScenarioError::new("machine.cost", e))?;
    }
    Ok(m)
}

/// Runs a scenario with one seed (an in-memory trace if asked for).
pub fn run(scenario: &Scenario, seed: u64, opts: &RunOptions) -> Result<RunOutput, SimError> {
    crate::engine::Simulator::new(scenario, seed, opts.trace || scenario.run.trace)?.run(opts)
}

/// Runs a scenario with one seed, streaming its trace into `sink` as it goes.
pub fn run_traced(scenario: &Scenario, seed: u64, opts: &RunOptions, sink: Box<dyn crate::trace::TraceSink>) -> Result<RunOutput, SimError> {
    crate::engine::Simulator::with_sink(scenario, seed, Some(sink))?.run(opts)
}
