//! One run, advanced in public: build it, step it event by event or up to a time, look
//! at where it is, finish it into its result.
//!
//! Mirrors: nothing in the kernel (the passage of time, as a caller drives it).
//! Model: NeXosim's `step` / `step_until`: the run is a value the caller advances; the
//! run policy (progress, Ctrl-C, wall and memory limits, invariant checks) lives with
//! the caller ([`drive`], which `api::run` calls), not in the event loop. Stepping changes nothing: a run
//! stepped to its end gives the result `api::run` gives, bit for bit.

use crate::error::SimError;
use crate::scenario::Scenario;
use crate::time::Ns;

use super::options::{RunOptions, RunOutput};
use super::{limits, Simulator};
use crate::state::events::{EventClass, EventKind};

/// A run being advanced.
pub struct Simulation {
    sim: Simulator,
    max_sim: Ns,
    ended: Option<&'static str>,
}

impl Simulation {
    /// Builds the run of `scenario` with `seed`, tracing into `sink` if given, refused
    /// first if its estimated memory exceeds `memory` bytes.
    pub fn new(scenario: &Scenario, seed: u64, sink: Option<Box<dyn crate::trace::TraceSink>>, memory: Option<u64>) -> Result<Simulation, SimError> {
        Ok(Simulation::from_simulator(Simulator::build_with(scenario, seed, sink, memory)?))
    }

    /// [`Simulation::new`] of a scenario already validated (`api::load`,
    /// `Scenario::from_*_str`): it is not validated a second time.
    pub fn new_checked(
        scenario: &Scenario,
        seed: u64,
        sink: Option<Box<dyn crate::trace::TraceSink>>,
        memory: Option<u64>,
    ) -> Result<Simulation, SimError> {
        Ok(Simulation::from_simulator(super::build::build_checked(scenario, seed, sink, memory)?))
    }

    /// A run of a simulator already built (tests adjust one before it runs).
    pub(crate) fn from_simulator(mut sim: Simulator) -> Simulation {
        if let Some(end) = sim.end {
            sim.q.push(end, EventClass::Segment, EventKind::End);
        }
        Simulation { sim, max_sim: limits::sim_limit(None), ended: None }
    }

    /// Turns the exact elision of events on (the default) or off (see `state::events`).
    pub fn set_elision(&mut self, on: bool) {
        self.sim.q.set_inline(on);
    }

    /// Records every feec decision with the best placement on its snapshot (the
    /// LISA-style check; see `RunOptions::eas_check`).
    pub fn record_eas_check(&mut self) {
        self.sim.eas.check = Some(Vec::new());
    }

    /// Records rt-app's per-activation log (see `RunOptions::rtapp_logs`).
    pub fn record_rtapp_logs(&mut self) {
        self.sim.rtapp_log = Some(Box::default());
    }

    /// Stops the run after `n` events at most (the lower of this and the scenario's
    /// `run.max_events`).
    pub fn limit_events(&mut self, n: u64) {
        self.sim.max_events = self.sim.max_events.min(n);
    }

    /// Stops the run before any event later than `ns` of simulated time.
    pub fn limit_sim_time(&mut self, ns: u64) {
        self.max_sim = limits::sim_limit(Some(ns));
    }

    /// Simulated time of the last event processed.
    pub fn now(&self) -> Ns {
        self.sim.now
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.sim.events
    }

    /// The scenario's end time, if it runs for a duration.
    pub fn horizon(&self) -> Option<Ns> {
        self.sim.end
    }

    /// Why the run ended, once it has.
    pub fn ended(&self) -> Option<&'static str> {
        self.ended
    }

    /// Processes the next event: `Ok(None)` while the run goes on, `Ok(Some(why))` once
    /// it has ended (and from then on).
    #[inline]
    pub fn step(&mut self) -> Result<Option<&'static str>, SimError> {
        if self.ended.is_none() {
            self.ended = self.sim.advance(self.max_sim)?;
        }
        Ok(self.ended)
    }

    /// Processes every event due at or before `t`; returns why the run ended if it did.
    pub fn step_until(&mut self, t: Ns) -> Result<Option<&'static str>, SimError> {
        while self.ended.is_none() && self.sim.q.peek_time().is_some_and(|next| next <= t) {
            self.step()?;
        }
        if self.ended.is_none() && self.sim.q.peek_time().is_none() {
            self.step()?; // an empty queue ends the run now
        }
        Ok(self.ended)
    }

    /// Checks every invariant of the state now and tracks each task's longest stall.
    pub fn check_invariants(&mut self) -> Result<(), SimError> {
        self.sim
            .check_invariants()
            .map_err(|e| SimError::Internal(format!("invariant broken at t={} ns after {} events: {e}", self.sim.now, self.sim.events)))?;
        self.sim.track_liveness();
        Ok(())
    }

    /// Debug builds check a sample of events' invariants; release builds nothing.
    #[inline]
    pub fn check_invariants_sampled(&self) {
        #[cfg(debug_assertions)]
        self.sim.check_invariants_sampled();
    }

    /// The wall-time and memory limits: the one exceeded, if any.
    pub fn over_limit(&self, limits: &super::options::Limits, wall: &std::time::Instant) -> Option<&'static str> {
        self.sim.over_limit(limits, wall)
    }

    /// Ends the run (stopped by `stopped_by`, after `wall_ns` of wall time) and returns
    /// its figures.
    pub fn finish(self, stopped_by: &str, wall_ns: u64) -> RunOutput {
        self.sim.finish(stopped_by, wall_ns)
    }
}

/// The run policy around a [`Simulation`]: steps it to its end, checking invariants
/// after every event if asked (a sample of them in debug builds), and every 2^20 events
/// reports progress, stops on Ctrl-C ("interrupted") and on the wall-time and memory
/// limits, keeping the partial result.
pub fn drive(mut sim: Simulation, opts: &RunOptions) -> Result<RunOutput, SimError> {
    let wall = std::time::Instant::now();
    sim.set_elision(!opts.no_elision);
    if opts.eas_check {
        sim.record_eas_check();
    }
    if opts.rtapp_logs {
        sim.record_rtapp_logs();
    }
    if let Some(n) = opts.limits.max_events {
        sim.limit_events(n);
    }
    if let Some(ns) = opts.limits.max_sim_ns {
        sim.limit_sim_time(ns);
    }
    let horizon = sim.horizon().unwrap_or(0).max(1) as f64;
    let stopped_by = loop {
        if let Some(why) = sim.step()? {
            break why;
        }
        if opts.check_invariants {
            sim.check_invariants()?;
        } else {
            sim.check_invariants_sampled();
        }
        if sim.events() & 0xF_FFFF == 0 {
            if let Some(p) = &opts.progress {
                p(if sim.horizon().is_some() { sim.now() as f64 / horizon } else { f64::NAN });
            }
            if opts.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                break "interrupted";
            }
            if let Some(limit) = sim.over_limit(&opts.limits, &wall) {
                break limit;
            }
        }
    };
    Ok(sim.finish(stopped_by, wall.elapsed().as_nanos() as u64))
}
