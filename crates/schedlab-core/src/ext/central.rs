//! scx_central: one CPU makes every scheduling decision.
//!
//! Mirrors: tools/sched_ext/scx_central.bpf.c (re-expressed). Wakeups are steered to
//! the central CPU; enqueue pushes the task on one global queue (a BPF queue map of
//! 4,096 entries; a full queue overflows into a fallback DSQ) and kicks the central
//! CPU unless the task is running; the central CPU's dispatch serves every CPU that
//! asked for a task (its `gimme` flag), inserting the queue's next task that may run
//! there into that CPU's local DSQ with an infinite slice and kicking it if idle; any
//! other CPU's dispatch takes from the fallback DSQ or raises its flag and kicks the
//! central CPU. A 1 ms timer on the central CPU preempts the CPUs whose task has run
//! past the slice (20 ms) when something is pending. `.flags = SCX_OPS_ENQ_LAST`
//! (and ENQ_EXITING, which the model's exits do not need); `timeout_ms` 25,000.
//! Model: the loader pins nothing (the scenario's tasks may run on the central CPU);
//! `bpf_task_from_pid()` never fails (tasks are not reaped while queued).

use std::collections::VecDeque;

use super::{DsqId, EnqFlags, ExtOps, Kfuncs, KickFlags, OpsFlags, SCX_SLICE_DFL, SCX_SLICE_INF};
use crate::state::task::TaskId;
use crate::time::Ns;

/// FALLBACK_DSQ_ID.
const FALLBACK_DSQ: u64 = 0;
/// The central queue's max_entries.
const QUEUE_ENTRIES: usize = 4096;
/// TIMER_INTERVAL_NS.
const TIMER_INTERVAL_NS: Ns = 1_000_000;
/// BPF_MAX_LOOPS of the queue-popping loop (bpf_repeat's bound, 8M).
const MAX_LOOPS: usize = 8 * 1024 * 1024;

/// scx_central's state.
pub struct Central {
    central_cpu: usize,
    queue: VecDeque<TaskId>,
    /// cpu_gimme_task.
    gimme: Vec<bool>,
    /// cpu_started_at (0: idle).
    started_at: Vec<Ns>,
    nr_timers: u64,
    /// nr_overflows, nr_mismatches, nr_retries (the scheduler's own statistics).
    pub overflows: u64,
    /// Tasks the queue's head could not run on the serving CPU.
    pub mismatches: u64,
    /// Dispatches that ran out of dispatch slots and kicked the central CPU again.
    pub retries: u64,
}

impl Central {
    /// The scheduler with its central CPU on a machine of `nr_cpus`.
    pub fn new(central_cpu: usize, nr_cpus: usize) -> Central {
        Central {
            central_cpu,
            queue: VecDeque::new(),
            gimme: vec![false; nr_cpus],
            started_at: vec![0; nr_cpus],
            nr_timers: 0,
            overflows: 0,
            mismatches: 0,
            retries: 0,
        }
    }

    /// dispatch_to_cpu(): the queue's next task that may run on `cpu` into its local
    /// DSQ; the ones that may not go to the fallback DSQ.
    fn dispatch_to_cpu(&mut self, k: &mut dyn Kfuncs, cpu: usize) -> bool {
        for _ in 0..MAX_LOOPS {
            let Some(p) = self.queue.pop_front() else { break };
            if !k.task_allowed_on(p, cpu) {
                self.mismatches += 1;
                k.dsq_insert(p, DsqId::User(FALLBACK_DSQ), SCX_SLICE_INF, EnqFlags::default());
                if k.dispatch_nr_slots() == 0 {
                    break;
                }
                continue;
            }
            k.dsq_insert(p, DsqId::LocalOn(cpu), SCX_SLICE_INF, EnqFlags::default());
            if cpu != self.central_cpu {
                k.kick_cpu(cpu, KickFlags { idle: true, preempt: false });
            }
            return true;
        }
        false
    }
}

impl ExtOps for Central {
    fn name(&self) -> &'static str {
        "central"
    }

    fn flags(&self) -> OpsFlags {
        OpsFlags { enq_last: true, ..Default::default() }
    }

    fn timeout_ms(&self) -> u64 {
        25_000
    }

    fn init(&mut self, k: &mut dyn Kfuncs) -> Result<(), String> {
        k.create_dsq(FALLBACK_DSQ)?;
        k.timer_start(TIMER_INTERVAL_NS);
        Ok(())
    }

    fn select_cpu(&mut self, _k: &mut dyn Kfuncs, _p: TaskId, _prev_cpu: usize, _wake_flags: super::WakeFlags) -> usize {
        // A hint: the kernel falls back if the task may not run there.
        self.central_cpu
    }

    fn enqueue(&mut self, k: &mut dyn Kfuncs, p: TaskId, flags: EnqFlags) {
        if k.is_percpu_kthread(p) {
            k.dsq_insert(p, DsqId::Local, SCX_SLICE_INF, EnqFlags { preempt: true, ..flags });
            return;
        }
        if self.queue.len() >= QUEUE_ENTRIES {
            self.overflows += 1;
            k.dsq_insert(p, DsqId::User(FALLBACK_DSQ), SCX_SLICE_INF, flags);
            return;
        }
        self.queue.push_back(p);
        if !k.task_running(p) {
            k.kick_cpu(self.central_cpu, KickFlags { idle: false, preempt: true });
        }
    }

    fn dequeue(&mut self, _k: &mut dyn Kfuncs, p: TaskId) {
        // A queue map cannot be searched: the kernel's scx_central leaves a dequeued
        // task's pid there and finds it gone (or elsewhere) when it pops it. Dropping it
        // here is the same outcome without the stale entry.
        self.queue.retain(|&q| q != p);
    }

    fn dispatch(&mut self, k: &mut dyn Kfuncs, cpu: usize, _prev: Option<TaskId>) {
        if cpu == self.central_cpu {
            for c in 0..k.nr_cpus() {
                if k.dispatch_nr_slots() == 0 {
                    break;
                }
                if self.gimme[c] && self.dispatch_to_cpu(k, c) {
                    self.gimme[c] = false;
                }
            }
            if k.dispatch_nr_slots() == 0 {
                // Out of slots: some CPUs were skipped, and this one still needs a task.
                self.retries += 1;
                k.kick_cpu(self.central_cpu, KickFlags { idle: false, preempt: true });
                return;
            }
            if k.dsq_move_to_local(FALLBACK_DSQ) {
                return;
            }
            self.dispatch_to_cpu(k, self.central_cpu);
        } else {
            if k.dsq_move_to_local(FALLBACK_DSQ) {
                return;
            }
            self.gimme[cpu] = true;
            k.kick_cpu(self.central_cpu, KickFlags { idle: false, preempt: true });
        }
    }

    fn running(&mut self, k: &mut dyn Kfuncs, p: TaskId) {
        let cpu = k.task_cpu(p);
        self.started_at[cpu] = k.now().max(1);
    }

    fn stopping(&mut self, k: &mut dyn Kfuncs, p: TaskId, _runnable: bool) {
        let cpu = k.task_cpu(p);
        self.started_at[cpu] = 0;
    }

    fn timer(&mut self, k: &mut dyn Kfuncs) {
        let now = k.now();
        let mut to_kick = self.queue.len();
        let n = k.nr_cpus();
        for i in 0..n {
            let cpu = ((self.nr_timers as usize) + i) % n;
            if cpu == self.central_cpu {
                continue;
            }
            // Only CPUs whose task exhausted its slice, and only if something waits.
            let started = self.started_at[cpu];
            if started != 0 && now < started + SCX_SLICE_DFL {
                continue;
            }
            if k.dsq_nr_queued(DsqId::User(FALLBACK_DSQ)) > 0 || k.dsq_nr_queued(DsqId::LocalOn(cpu)) > 0 {
                // pending here
            } else if to_kick > 0 {
                to_kick -= 1;
            } else {
                continue;
            }
            k.kick_cpu(cpu, KickFlags { idle: false, preempt: true });
        }
        k.timer_start(TIMER_INTERVAL_NS);
        self.nr_timers += 1;
    }
}
