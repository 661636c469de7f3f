//! The fair class: runqueue operations shared by CFS and EEVDF.
//!
//! Mirrors: kernel/sched/fair.c: enqueue_task_fair(), dequeue_task_fair(),
//! pick_next_task_fair(), put_prev_task_fair(), update_curr(), task_tick_fair(),
//! check_preempt_wakeup_fair() (wakeup_preempt), migrate_task_rq_fair().
//! Model: the policy-specific rules (vruntime/slices for CFS; lag, eligibility and
//! deadlines for EEVDF) live in `cfs` and `eevdf`; this module keeps the runqueue
//! sums both need (load, avg_vruntime) and dispatches on the kernel profile's policy.

mod cfs;
mod eevdf;
pub mod balance;
pub mod load_sums;
pub mod placement;
pub mod shared_runq;
pub mod timeline;

use crate::engine::Simulator;
use crate::kernel::FairPolicy;
use crate::task::{TaskId, TaskState};
use crate::time::Ns;

/// Every runqueue's min_vruntime starts here so placement behind it never underflows.
pub(crate) const VRUNTIME_BASE: u64 = 1 << 50;

/// Returns delta scaled by NICE_0 / weight (calc_delta_fair).
#[inline]
pub(crate) fn calc_delta_fair(delta: Ns, weight: u64) -> u64 {
    if weight == 1024 {
        delta
    } else {
        ((delta as u128 * 1024) / weight as u128) as u64
    }
}

/// Where each queued task sits in its runqueue's list, and the timeline nodes of all
/// runqueues (a task is queued on at most one).
#[derive(Clone, Debug, Default)]
pub(crate) struct QueueIndex {
    pos: Vec<u32>,
    pub(crate) timeline: timeline::Timeline,
    /// CPUs with at least one queued task (what find_busiest_queue can pull from).
    pub(crate) nonempty: crate::cpumask::CpuMask,
}

impl Simulator {
    #[inline]
    pub(crate) fn policy(&self) -> FairPolicy {
        self.k.policy
    }

    /// Queues `p` on `cpu` (__enqueue_entity plus the cfs_tasks list).
    pub(crate) fn queue_add(&mut self, cpu: usize, p: TaskId) {
        let q = &mut self.rqs[cpu].queue;
        let ix = &mut self.queue_index;
        if ix.pos.len() <= p {
            ix.pos.resize(p + 1, u32::MAX);
        }
        ix.pos[p] = q.tasks.len() as u32;
        q.tasks.push(p);
        ix.nonempty.set(cpu);
        let se = &self.tasks[p].se;
        ix.timeline.insert(&mut q.timeline, p, se.vruntime, se.deadline);
        self.srq_enqueue_entity(cpu, p);
    }

    /// Takes `p` off `cpu`'s queue; the list's last task fills its place.
    pub(crate) fn queue_del(&mut self, cpu: usize, p: TaskId) {
        let q = &mut self.rqs[cpu].queue;
        let ix = &mut self.queue_index;
        let i = ix.pos[p] as usize;
        debug_assert_eq!(q.tasks.get(i), Some(&p), "task {p} is not queued on CPU {cpu}");
        q.tasks.swap_remove(i);
        if let Some(&moved) = q.tasks.get(i) {
            ix.pos[moved] = i as u32;
        }
        if q.tasks.is_empty() {
            ix.nonempty.clear(cpu);
        }
        ix.timeline.remove(&mut q.timeline, p);
        self.swq_remove(p);
    }

    /// Takes `p` off `cpu`'s queue keeping the list's order.
    pub(crate) fn queue_del_in_order(&mut self, cpu: usize, p: TaskId) {
        let q = &mut self.rqs[cpu].queue;
        let ix = &mut self.queue_index;
        let i = ix.pos[p] as usize;
        q.tasks.remove(i);
        for (j, &t) in q.tasks.iter().enumerate().skip(i) {
            ix.pos[t] = j as u32;
        }
        if q.tasks.is_empty() {
            ix.nonempty.clear(cpu);
        }
        ix.timeline.remove(&mut q.timeline, p);
        self.swq_remove(p);
    }

    /// The queued task with the smallest vruntime (the timeline's leftmost).
    #[inline]
    pub(crate) fn queue_leftmost(&self, cpu: usize) -> Option<TaskId> {
        self.queue_index.timeline.leftmost(self.rqs[cpu].queue.timeline)
    }

    /// Adds an entity's weight and key to the runqueue sums (curr included).
    pub(crate) fn account_entity_enqueue(&mut self, cpu: usize, p: TaskId) {
        let se = self.tasks[p].se;
        let rq = &mut self.rqs[cpu];
        rq.load += se.weight;
        self.load_sums.load_changed(cpu, se.weight as i64);
        rq.avg_vruntime_sum += (se.vruntime as i128 - rq.min_vruntime as i128) * se.weight as i128;
    }

    /// Removes an entity's weight and key from the runqueue sums.
    pub(crate) fn account_entity_dequeue(&mut self, cpu: usize, p: TaskId) {
        let se = self.tasks[p].se;
        let rq = &mut self.rqs[cpu];
        rq.load -= se.weight;
        self.load_sums.load_changed(cpu, -(se.weight as i64));
        rq.avg_vruntime_sum -= (se.vruntime as i128 - rq.min_vruntime as i128) * se.weight as i128;
    }

    /// Returns the load-weighted average vruntime V of the runqueue (avg_vruntime).
    pub(crate) fn avg_vruntime(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        if rq.load == 0 {
            return rq.min_vruntime;
        }
        (rq.min_vruntime as i128 + rq.avg_vruntime_sum.div_euclid(rq.load as i128)) as u64
    }

    /// Advances min_vruntime to min(curr, leftmost), never backwards.
    pub(crate) fn update_min_vruntime(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        let curr = rq.curr.filter(|&c| self.tasks[c].state == TaskState::Running).map(|c| self.tasks[c].se.vruntime);
        let left = self.queue_leftmost(cpu).map(|t| self.tasks[t].se.vruntime);
        let candidate = match (curr, left) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        let rq = &mut self.rqs[cpu];
        if candidate > rq.min_vruntime {
            let d = candidate - rq.min_vruntime;
            rq.avg_vruntime_sum -= d as i128 * rq.load as i128;
            rq.min_vruntime = candidate;
        }
    }

    /// Fair-class part of update_curr: vruntime, min_vruntime, deadline, bandwidth.
    pub(crate) fn update_curr_fair(&mut self, cpu: usize, c: TaskId, delta: Ns) {
        let w = self.tasks[c].se.weight;
        let dv = calc_delta_fair(delta, w);
        self.tasks[c].se.vruntime += dv;
        if self.tasks[c].state == TaskState::Running {
            self.rqs[cpu].avg_vruntime_sum += dv as i128 * w as i128;
        }
        self.update_min_vruntime(cpu);
        if self.policy() == FairPolicy::Eevdf && self.tasks[c].state == TaskState::Running {
            self.update_deadline(cpu, c);
        }
    }

    /// Puts a woken, new or migrated task on `cpu`'s runqueue (enqueue_task_fair).
    pub(crate) fn activate_task(&mut self, cpu: usize, p: TaskId, wakeup: bool) {
        debug_assert_eq!(self.tasks[p].cpu, cpu);
        if wakeup {
            self.update_curr(cpu);
            self.place_entity(cpu, p);
        }
        self.account_entity_enqueue(cpu, p);
        self.queue_add(cpu, p);
        self.wc_waiting(cpu, p, 1);
        self.add_nr_running(cpu, 1);
        if self.bw_enqueue(cpu, p) {
            // Throttling the rest of the subtree may have reordered the queue.
            self.queue_del_in_order(cpu, p);
            self.wc_waiting(cpu, p, -1);
            self.throttle_task(cpu, p);
        }
    }

    /// Removes the running task `p` from the sums because it blocks or exits.
    pub(crate) fn dequeue_task_fair(&mut self, cpu: usize, p: TaskId) {
        debug_assert_eq!(self.rqs[cpu].curr, Some(p));
        self.update_curr(cpu);
        if self.policy() == FairPolicy::Eevdf {
            self.update_entity_lag(cpu, p);
        }
        self.account_entity_dequeue(cpu, p);
        self.tasks[p].state = TaskState::Blocked;
        self.add_nr_running(cpu, -1);
        self.bw_dequeue(cpu, p);
        self.swq_remove(p);
    }

    /// Takes a queued (not running) task off `cpu` for migration (detach_task).
    pub(crate) fn detach_task(&mut self, cpu: usize, p: TaskId) {
        self.queue_del(cpu, p);
        self.wc_waiting(cpu, p, -1);
        self.swq_remove(p);
        if self.policy() == FairPolicy::Eevdf {
            self.update_entity_lag(cpu, p);
        }
        self.account_entity_dequeue(cpu, p);
        self.add_nr_running(cpu, -1);
        self.bw_dequeue(cpu, p);
    }

    /// Puts a detached task on `dst` (attach_task), keeping its lag or relative vruntime.
    pub(crate) fn attach_task(&mut self, dst: usize, p: TaskId) {
        self.set_task_cpu(p, dst);
        self.update_curr(dst);
        if self.policy() == FairPolicy::Eevdf {
            self.place_entity_eevdf(dst, p, false);
        }
        self.activate_task(dst, p, false);
        if self.tasks[p].state == TaskState::Runnable {
            self.wakeup_preempt(dst, p, dst);
        }
    }

    /// Renormalizes a sleeping task's vruntime when its CPU changes (migrate_task_rq_fair).
    pub(crate) fn migrate_entity(&mut self, p: TaskId, src: usize, dst: usize) {
        if self.policy() == FairPolicy::Cfs {
            let (s, d) = (self.rqs[src].min_vruntime, self.rqs[dst].min_vruntime);
            let se = &mut self.tasks[p].se;
            se.vruntime = (se.vruntime as i128 - s as i128 + d as i128).max(0) as u64;
        }
    }

    /// Places a waking entity (place_entity without ENQUEUE_INITIAL).
    pub(crate) fn place_entity(&mut self, cpu: usize, p: TaskId) {
        match self.policy() {
            FairPolicy::Cfs => self.place_entity_cfs(cpu, p, false),
            FairPolicy::Eevdf => self.place_entity_eevdf(cpu, p, false),
        }
    }

    /// Places a new task (fork): START_DEBIT or PLACE_DEADLINE_INITIAL.
    pub(crate) fn place_new_entity(&mut self, cpu: usize, p: TaskId) {
        self.update_curr(cpu);
        self.tasks[p].se.vruntime = 0;
        match self.policy() {
            FairPolicy::Cfs => self.place_entity_cfs(cpu, p, true),
            FairPolicy::Eevdf => {
                self.tasks[p].se.vlag = 0;
                self.place_entity_eevdf(cpu, p, true)
            }
        }
    }

    /// Puts the preempted current task back on the queue (put_prev_task_fair), or on
    /// the throttled list if its group ran out of runtime.
    pub(crate) fn put_prev_task(&mut self, cpu: usize, p: TaskId) {
        let t = &mut self.tasks[p];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
        if self.bw_put_prev(cpu, p) {
            self.throttle_task(cpu, p);
        } else {
            self.queue_add(cpu, p);
            self.wc_waiting(cpu, p, 1);
        }
    }

    /// Picks and removes the next task to run from `cpu`'s queue (pick_next_task_fair).
    pub(crate) fn pick_next_task_fair(&mut self, cpu: usize) -> Option<TaskId> {
        if self.rqs[cpu].queue.is_empty() {
            return None;
        }
        let next = match self.policy() {
            FairPolicy::Cfs => self.pick_cfs(cpu),
            FairPolicy::Eevdf => self.pick_eevdf(cpu, false),
        }?;
        self.queue_del(cpu, next);
        self.wc_waiting(cpu, next, -1);
        self.swq_remove(next);
        Some(next)
    }

    /// Tick-time preemption check (task_tick_fair / entity_tick).
    pub(crate) fn task_tick_fair(&mut self, cpu: usize) {
        let Some(c) = self.rqs[cpu].curr else { return };
        if self.rqs[cpu].queue.is_empty() {
            return;
        }
        let preempt = match self.policy() {
            FairPolicy::Cfs => self.check_preempt_tick(cpu, c),
            FairPolicy::Eevdf => self.pick_eevdf(cpu, true) != Some(c),
        };
        if preempt {
            self.resched_curr(cpu, cpu);
        }
    }

    /// Decides whether woken/new `p` on `cpu` preempts the current task (wakeup_preempt).
    pub(crate) fn wakeup_preempt(&mut self, cpu: usize, p: TaskId, from_cpu: usize) {
        let Some(c) = self.rqs[cpu].curr else {
            self.resched_curr(cpu, from_cpu);
            return;
        };
        if !self.feat.has(crate::features::Feature::WAKEUP_PREEMPTION) || c == p {
            return;
        }
        self.update_curr(cpu);
        let preempt = match self.policy() {
            FairPolicy::Cfs => self.wakeup_preempt_entity(c, p),
            FairPolicy::Eevdf => self.pick_eevdf(cpu, true) == Some(p),
        };
        if preempt {
            self.resched_curr(cpu, from_cpu);
        }
    }

    /// Changes rq->nr_running and the root domain's overload count (rd->overload).
    pub(crate) fn add_nr_running(&mut self, cpu: usize, delta: isize) {
        self.load_sums.nr_running_changed(cpu, delta);
        let rq = &mut self.rqs[cpu];
        rq.nr_running = (rq.nr_running as isize + delta) as usize;
        let over = rq.nr_running > 1;
        if over != rq.overloaded {
            rq.overloaded = over;
            if over {
                self.nr_overloaded += 1;
            } else {
                self.nr_overloaded -= 1;
            }
        }
    }
}
