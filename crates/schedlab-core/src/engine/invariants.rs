//! Consistency checks of the whole state, run after events in debug builds and tests.
//!
//! Checked: every runnable task is on exactly one runqueue or running on exactly one
//! CPU; a task's CPU is the runqueue that holds it; nr_running and load match the
//! tasks; pinned tasks are on allowed CPUs; every pending timer sits in the base its
//! record names; in the timer migration hierarchy every group with an active child has
//! a migrator among its active children; a CPU with a stopped tick is idle and has its
//! next timer event programmed; every wheel timer and hrtimer armed is pending, was
//! cancelled or fired, once; no two running threads of one mm hold one cid; a group
//! with a quota used no more between two refills than the pool and the per-CPU slices
//! could hold (`Simulator::bw_check_window`).

use super::Simulator;

impl Simulator {
    /// Runs `check_invariants` after every event on small runs, else every 4096 events.
    #[cfg(debug_assertions)]
    pub(super) fn check_invariants_sampled(&self) {
        let small = self.tasks.len() <= 256 && self.m.nr_cpus() <= 64;
        if small || self.events % 4096 == 0 {
            if let Err(e) = self.check_invariants() {
                panic!("invariant broken at t={} after {} events: {e}", self.now, self.events);
            }
        }
    }

    /// Returns a description of the first broken invariant, if any.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.swq.check(|p| self.tasks[p].state)?;
        for &cls in crate::sched::class::CLASS_ORDER {
            crate::sched::class::for_class!(cls, |C| <C as crate::sched::class::SchedClassOps>::check_invariants(self))?;
        }
        self.timers.check()?;
        self.mm.check(|cpu| self.rqs[cpu].curr)?;
        if let Some(e) = &self.bw.violation {
            return Err(e.clone());
        }
        for (cpu, rq) in self.rqs.iter().enumerate() {
            if rq.tick_stopped && rq.curr.is_some() {
                return Err(format!("CPU {cpu} runs a task with its tick stopped"));
            }
            if rq.curr.is_some() && !rq.tick_armed {
                return Err(format!("CPU {cpu} runs a task without a tick"));
            }
            if let Some(tm) = &self.timers.tmigr {
                // A CPU leaves the hierarchy's active set exactly when it stops its tick.
                if tm.cpus[cpu].idle != rq.tick_stopped {
                    return Err(format!("CPU {cpu}: tick_stopped={} but tmigr idle={}", rq.tick_stopped, tm.cpus[cpu].idle));
                }
            }
        }
        Ok(())
    }
}
