//! The simulator's event loop: building a run, advancing it one event at a time, and
//! closing its books.
//!
//! Mirrors: the passage of time in a kernel: hrtimers, the tick, IPIs and the
//! interleaving of CPUs. The run's data is `crate::state` (the kernel's sched.h); the
//! scheduling logic lives in `sched` (core.c) and `fair` (fair.c), as `impl Simulator`
//! blocks over it.
//! Model: one event queue for the whole machine; an idle CPU has no pending event at
//! all (NOHZ idle: its tick is stopped); a busy CPU has its tick and the end of its
//! current task's step. Same scenario and seed give bit-identical results.

mod build;
mod finish;
mod invariants;
pub mod limits;
pub mod liveness;
pub mod options;
mod simulation;
pub(crate) mod warmup;
pub use simulation::{drive, Simulation};

use crate::error::SimError;
use crate::scenario::Scenario;
use crate::state::events::{EventCount, EventKind};
use crate::time::Ns;
use options::{RunOptions, RunOutput};

pub use crate::state::Simulator;

impl Simulator {
    /// Builds a run from a scenario (validated again here) and a seed.
    pub fn new(s: &Scenario, seed: u64, trace: bool) -> Result<Simulator, SimError> {
        Self::build_with(s, seed, trace.then(|| Box::new(crate::trace::Trace::default()) as _), None)
    }

    /// Builds a run whose trace streams into `sink`.
    pub fn with_sink(s: &Scenario, seed: u64, sink: Option<Box<dyn crate::trace::TraceSink>>) -> Result<Simulator, SimError> {
        Self::build_with(s, seed, sink, None)
    }

    /// Builds a run tracing into `sink`, refusing first one whose estimated memory
    /// exceeds `memory` bytes (see [`limits::estimate`]).
    pub fn build_with(s: &Scenario, seed: u64, sink: Option<Box<dyn crate::trace::TraceSink>>, memory: Option<u64>) -> Result<Simulator, SimError> {
        build::build(s, seed, sink, memory)
    }

    /// Runs to the end condition and returns the figures ([`drive`] over a
    /// [`Simulation`] of this state).
    pub fn run(self, opts: &RunOptions) -> Result<RunOutput, SimError> {
        drive(Simulation::from_simulator(self), opts)
    }

    /// Processes the next event unless the run has ended: `Ok(None)` while it goes on,
    /// `Ok(Some(why))` once it has ended ("workload_done", "duration", "deadlock",
    /// "max_events", "max_sim_time"). Everything a run does happens here; what is
    /// around it (progress, Ctrl-C, wall and memory limits, invariant checks) is the
    /// caller's policy ([`Simulation`], `api::run`).
    #[inline]
    pub(crate) fn advance(&mut self, max_sim: Ns) -> Result<Option<&'static str>, SimError> {
        if self.until_done && self.live_tasks == 0 {
            return Ok(Some("workload_done"));
        }
        if self.events >= self.max_events {
            return Ok(Some("max_events"));
        }
        if self.deadlock {
            return Ok(Some("deadlock"));
        }
        let Some((t, ev)) = self.q.pop() else {
            return Ok(Some(if self.live_tasks == 0 { "workload_done" } else { "deadlock" }));
        };
        debug_assert!(t >= self.now, "time went backwards");
        if t > max_sim {
            self.now = self.now.max(max_sim);
            return Ok(Some("max_sim_time"));
        }
        self.measurement_tick(t);
        self.now = t;
        self.events += 1;
        self.stats.events_by_kind[ev.counter()] += 1;
        if ev == EventKind::End {
            return Ok(Some("duration"));
        }
        self.dispatch(ev);
        if self.bw.control.is_some() {
            self.bw_lock_log();
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(None),
        }
    }

    /// The wall-time and memory limits, checked with the progress ticks.
    pub(crate) fn over_limit(&self, limits: &options::Limits, wall: &std::time::Instant) -> Option<&'static str> {
        if limits.max_wall_ns.is_some_and(|max| wall.elapsed().as_nanos() >= max as u128) {
            return Some("max_wall_time");
        }
        if let Some(max) = limits.max_memory {
            let records = self.trace.as_ref().map_or(0, |t| t.buffered_records());
            let need = limits::estimate(self.tasks.len() as u64, self.m.nr_cpus() as u64, self.groups.len() as u64)
                .saturating_add(records.saturating_mul(limits::per_trace_record_bytes()));
            if need > max {
                return Some("max_memory");
            }
        }
        None
    }

    fn dispatch(&mut self, ev: EventKind) {
        match ev {
            EventKind::SegmentEnd { cpu, gen } => {
                let cpu = cpu as usize;
                if self.rqs[cpu].seg_gen == gen {
                    self.segment_end(cpu);
                } else {
                    self.count_stale(ev, EventCount::SegmentEndStale);
                }
            }
            EventKind::Hrtimer { cpu, seq } => self.hrtimer_event(cpu as usize, seq),
            EventKind::TimerIrq { cpu, tick } => self.timer_irq_handler(cpu as usize, tick),
            EventKind::TaskStart { task } => {
                let task = task as usize;
                let cpu = self.tasks[task].cpu;
                self.wake_up_new_task(task, cpu, None);
            }
            EventKind::Tick { cpu, gen } => {
                let cpu = cpu as usize;
                if self.rqs[cpu].tick_gen == gen {
                    self.scheduler_tick(cpu);
                } else {
                    self.count_stale(ev, EventCount::TickStale);
                }
            }
            EventKind::Resched { cpu } => {
                let cpu = cpu as usize;
                self.rqs[cpu].resched_pending = false;
                // A task on its way to sleep reaches schedule() at the end of its path.
                if self.rqs[cpu].curr.is_none_or(|c| self.tasks[c].blocking.is_none()) {
                    self.schedule(cpu);
                }
            }
            EventKind::Bandwidth { group, slack } => self.bw_timer(group as usize, slack),
            EventKind::BwCsd { cpu } => self.bw_csd(cpu as usize),
            EventKind::RtPushIpi { cpu } => self.rto_push_irq_work_func(cpu as usize),
            EventKind::End => {}
        }
    }

    /// Counts a popped event whose generation was stale under `stale` instead of its kind.
    #[inline]
    pub(crate) fn count_stale(&mut self, ev: EventKind, stale: EventCount) {
        self.stats.events_by_kind[ev.counter()] -= 1;
        self.stats.events_by_kind[stale] += 1;
    }

    /// Processes the next event (tests drive the engine step by step); false when none.
    #[cfg(test)]
    pub(crate) fn step(&mut self) -> bool {
        let Some((t, ev)) = self.q.pop() else { return false };
        self.now = t;
        self.events += 1;
        if ev != EventKind::End {
            self.dispatch(ev);
        }
        true
    }

    /// Returns the capacity of a CPU.
    #[inline]
    pub(crate) fn capacity(&self, cpu: usize) -> u64 {
        self.m.cpus[cpu].capacity as u64
    }

    /// The cost table's `smt_slowdown` in thousandths, if a thread on `cpu` is slowed
    /// now: another hardware thread of its core runs a task.
    #[inline]
    pub(crate) fn smt_slowdown_milli(&self, cpu: usize) -> Option<u64> {
        if !self.has_smt {
            return None; // no sibling to slow it
        }
        let slowdown = cost!(self, smt_slowdown);
        if slowdown == 1.0 {
            return None;
        }
        let busy_sibling = self.m.smt_siblings(cpu).iter().any(|&s| s != cpu && self.rqs[s].curr.is_some());
        busy_sibling.then(|| (slowdown * 1000.0).round() as u64)
    }
}
