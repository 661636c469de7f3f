//! What a run is asked (options, limits beyond the scenario) and what it gives back.
//!
//! Defined under the engine, which honours them; `api` hands them on.

use crate::metrics::RunResult;
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
    /// Limits beyond the scenario's own (`run.max_events`); see [`Limits`].
    pub limits: Limits,
    /// Queue every event, even one that will be popped next (the exact elision of
    /// `state::events` off: the A/B check that it changes nothing but the speed).
    pub no_elision: bool,
    /// Record every find_energy_efficient_cpu() decision with its energy and the best
    /// allowed CPU's on the same snapshot (the LISA-style check, eas/check.rs): the
    /// decisions in [`RunOutput::eas_check`], `eas_check_*` keys in the summary. Off by
    /// default; runs without it pay one branch per feec call.
    pub eas_check: bool,
    /// Record rt-app's per-activation log of every task whose program marks its phases
    /// (`rt_app_phase`, as rt-app files import): [`RunOutput::rtapp_logs`].
    pub rtapp_logs: bool,
}

/// Where a run stops short of what its scenario asked, keeping a partial result (its
/// `engine.stopped_by` names the limit and `engine.partial` is true). Memory is also
/// checked before the run is built: a scenario whose estimate exceeds it is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Events (the lower of this and the scenario's `run.max_events`): "max_events".
    pub max_events: Option<u64>,
    /// Simulated time, ns: "max_sim_time".
    pub max_sim_ns: Option<u64>,
    /// Wall-clock time, ns, checked with the progress ticks (about every million
    /// events): "max_wall_time".
    pub max_wall_ns: Option<u64>,
    /// Memory, bytes; None = the host's available memory (`limits::available_memory`).
    /// Refused before the run when the estimate exceeds it; "max_memory" when a run
    /// grows past it (forks, a trace).
    pub max_memory: Option<u64>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("trace", &self.trace)
            .field("check_invariants", &self.check_invariants)
            .field("limits", &self.limits)
            .field("no_elision", &self.no_elision)
            .field("eas_check", &self.eas_check)
            .field("rtapp_logs", &self.rtapp_logs)
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
    /// Each task's longest stall (runs with `check_invariants` only).
    pub liveness: Option<crate::state::liveness::Liveness>,
    /// The feec decisions of the measured window (runs with `eas_check` only; empty when
    /// EAS never placed a wakeup).
    pub eas_check: Option<Vec<crate::eas::check::FeecDecision>>,
    /// Every closed pass of an rt-app phase, in closing order (runs with `rtapp_logs`).
    pub rtapp_logs: Option<Vec<crate::state::rtapp_log::PhasePass>>,
}
