//! The shared wakequeue (swqueue RFC v1, later SHARED_RUNQ): a per-LLC FIFO of woken tasks
//! that a CPU about to go idle pulls from before newidle balance.
//!
//! Mirrors: the seed's kernel/sched/fair.c additions: swqueue_enqueue() at the end of
//! enqueue_task_fair() for ENQUEUE_WAKEUP && !ENQUEUE_MIGRATED && nr_cpus_allowed > 1,
//! swqueue_remove_task() when a task is picked or dequeued, and swqueue_pick_next_task()
//! in pick_next_task_fair()'s idle path, ahead of newidle_balance(), with no avg_idle,
//! overload or cache-hot gate. SHARED_RUNQ_STEAL adds the RFC's stated next step: when
//! the own LLC's queue is empty, pull from the other LLCs of the node.
//! Model: removal is lazy (a flag on the task; stale entries are skipped at pop), which
//! is equivalent to unlinking. Unlike v1, a task is only pulled to a CPU it is allowed
//! on (v2's fix). Each enqueue and pop takes the queue's lock: one same-LLC cache-line
//! transfer; a pull also pays the migration.

use std::collections::VecDeque;

use crate::cpumask::CpuId;
use crate::engine::Simulator;
use crate::features::Feature;
use crate::task::{TaskId, TaskState};

/// The per-LLC queues.
#[derive(Clone, Debug, Default)]
pub struct SharedRunq {
    queues: Vec<VecDeque<TaskId>>,
    queued: Vec<bool>,
}

impl SharedRunq {
    fn mark(&mut self, p: TaskId, on: bool) {
        if self.queued.len() <= p {
            self.queued.resize(p + 1, false);
        }
        self.queued[p] = on;
    }
}

impl Simulator {
    fn swq_lock_cost(&mut self, cpu: CpuId) {
        let ns = self.m.cost.cacheline.same_llc_ns as u64;
        if let Some(c) = self.rqs[cpu].curr {
            self.tasks[c].overhead_ns += ns;
        }
    }

    /// swqueue_enqueue(): a task woken on the CPU it last ran on joins its LLC's queue.
    pub(crate) fn swq_enqueue(&mut self, p: TaskId, cpu: CpuId, waker_cpu: CpuId) {
        if !self.feat.has(Feature::SHARED_RUNQ) || self.tasks[p].nr_cpus_allowed <= 1 {
            return;
        }
        let llc = self.m.cpus[cpu].llc;
        let q = &mut self.swq;
        if q.queues.is_empty() {
            q.queues = vec![VecDeque::new(); self.m.llc_span.len()];
        }
        q.queues[llc].push_back(p);
        q.mark(p, true);
        self.swq_lock_cost(waker_cpu);
    }

    /// swqueue_remove_task(): the task was picked, went to sleep or left the class.
    #[inline]
    pub(crate) fn swq_remove(&mut self, p: TaskId) {
        if self.swq.queued.get(p).copied().unwrap_or(false) {
            self.swq.queued[p] = false;
        }
    }

    /// swqueue_pick_next_task(): pull the oldest woken task of this LLC (or, with
    /// SHARED_RUNQ_STEAL, of the node) to `cpu`; true if one was pulled.
    pub(crate) fn swq_pull(&mut self, cpu: CpuId) -> bool {
        if !self.feat.has(Feature::SHARED_RUNQ) || self.swq.queues.is_empty() {
            return false;
        }
        let own = self.m.cpus[cpu].llc;
        let mut order = vec![own];
        if self.feat.has(Feature::SHARED_RUNQ_STEAL) {
            let node = self.m.cpus[cpu].node;
            order.extend((0..self.m.llc_span.len()).filter(|&l| {
                l != own && self.m.llc_span[l].first().is_some_and(|c| self.m.cpus[c].node == node)
            }));
        }
        for llc in order {
            while let Some(p) = self.swq.queues[llc].pop_front() {
                if !self.swq.queued.get(p).copied().unwrap_or(false) {
                    continue; // already removed (lazily)
                }
                self.swq.queued[p] = false;
                let src = self.tasks[p].cpu;
                // The lock and the list head: one line from the LLC (or node) it lives in.
                let line = self.m.cost.cacheline.at(self.m.distance(cpu, src)) as u64;
                if self.tasks[p].state != TaskState::Runnable || !self.tasks[p].cpus_allowed.test(cpu) || src == cpu {
                    continue;
                }
                self.trace_event(cpu, crate::trace::TraceEvent::SharedRunqPull { pid: p + 1, from_cpu: src });
                self.detach_task(src, p);
                self.tasks[p].overhead_ns += self.m.cost.migration_ns as u64 + line;
                self.attach_task(cpu, p);
                self.rqs[cpu].stats.shared_runq_pulls += 1;
                return true;
            }
        }
        false
    }
}
