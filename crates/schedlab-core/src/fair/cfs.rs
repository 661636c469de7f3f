//! CFS (kernels up to 6.5): vruntime order, slices from the targeted latency.
//!
//! Mirrors: kernel/sched/fair.c (≤6.5): __sched_period(), sched_slice(),
//! sched_vslice(), place_entity() (START_DEBIT, GENTLE_FAIR_SLEEPERS),
//! check_preempt_tick(), wakeup_preempt_entity() / wakeup_gran(), pick_next_entity().
//! Model: no buddies (NEXT_BUDDY off by default; LAST_BUDDY skip is not modeled).

use super::calc_delta_fair;
use crate::engine::Simulator;
use crate::features::Feature;
use crate::task::TaskId;
use crate::time::Ns;

impl Simulator {
    /// Returns __sched_period(nr): the latency target stretched past sched_nr_latency.
    fn sched_period(&self, nr: u64) -> Ns {
        let t = &self.k.tunables;
        if nr > self.k.sched_nr_latency() {
            nr * t.sched_min_granularity_ns
        } else {
            t.sched_latency_ns
        }
    }

    /// Returns sched_slice(): the wall-clock slice of `p` on `cpu`'s runqueue.
    pub(crate) fn sched_slice(&self, cpu: usize, p: TaskId, on_rq: bool) -> Ns {
        let rq = &self.rqs[cpu];
        let w = self.tasks[p].se.weight;
        let (nr, load) = if on_rq { (rq.nr_running, rq.load) } else { (rq.nr_running + 1, rq.load + w) };
        let period = self.sched_period(nr.max(1) as u64);
        ((period as u128 * w as u128) / load.max(1) as u128) as Ns
    }

    /// place_entity() for CFS.
    pub(crate) fn place_entity_cfs(&mut self, cpu: usize, p: TaskId, initial: bool) {
        let mut vruntime = self.rqs[cpu].min_vruntime;
        if initial && self.feat.has(Feature::START_DEBIT) {
            vruntime += calc_delta_fair(self.sched_slice(cpu, p, false), self.tasks[p].se.weight);
        }
        if !initial {
            let mut thresh = self.k.tunables.sched_latency_ns;
            if self.feat.has(Feature::GENTLE_FAIR_SLEEPERS) {
                thresh /= 2;
            }
            vruntime = vruntime.saturating_sub(thresh);
        }
        let se = &mut self.tasks[p].se;
        se.vruntime = se.vruntime.max(vruntime);
    }

    /// Picks the queued task with the smallest vruntime (ties: lowest pid).
    pub(crate) fn pick_cfs(&self, cpu: usize) -> Option<TaskId> {
        self.queue_leftmost(cpu)
    }

    /// check_preempt_tick(): has the current task had its slice, or fallen far ahead?
    pub(crate) fn check_preempt_tick(&self, cpu: usize, c: TaskId) -> bool {
        let se = &self.tasks[c].se;
        let ideal = self.sched_slice(cpu, c, true);
        let ran = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if ran > ideal {
            return true;
        }
        if ran < self.k.tunables.sched_min_granularity_ns {
            return false;
        }
        let Some(left) = self.pick_cfs(cpu) else { return false };
        let delta = se.vruntime as i64 - self.tasks[left].se.vruntime as i64;
        delta > ideal as i64
    }

    /// wakeup_preempt_entity(): preempt if the woken task is more than a (weighted)
    /// wakeup granularity behind the current one in vruntime.
    pub(crate) fn wakeup_preempt_entity(&self, curr: TaskId, p: TaskId) -> bool {
        let vdiff = self.tasks[curr].se.vruntime as i64 - self.tasks[p].se.vruntime as i64;
        if vdiff <= 0 {
            return false;
        }
        let gran = calc_delta_fair(self.k.tunables.sched_wakeup_granularity_ns, self.tasks[p].se.weight);
        vdiff > gran as i64
    }
}
