//! CFS (kernels up to 6.5): vruntime order, slices from the targeted latency.
//!
//! Mirrors: kernel/sched/fair.c (≤6.5): __sched_period(), sched_slice(),
//! sched_vslice(), place_entity() (START_DEBIT, GENTLE_FAIR_SLEEPERS),
//! check_preempt_tick(), wakeup_preempt_entity() / wakeup_gran(), pick_next_entity().
//! Model: no buddies under CFS. The kernel's CFS pick_next_entity() takes cfs_rq->next,
//! then cfs_rq->last, when within a wakeup granularity of the leftmost, and
//! check_preempt_wakeup() sets the next buddy on every wakeup preemption (NEXT_BUDDY
//! only adds the wakeups that do not preempt) and the last buddy under LAST_BUDDY (on by
//! default before 6.6), and dequeue_task_fair() sets a sleeping task's group as next:
//! none of that is modeled (it would move every CFS result). EEVDF's buddies (6.6+:
//! NEXT_BUDDY, PICK_BUDDY, the dequeue buddy) are in `eevdf` and `mod`. The period
//! counts the CPU's runnable tasks (ALT_PERIOD, 5.13+); the slice is then divided at each
//! level by the entity's share of its cfs_rq's load.

use super::calc_delta_fair;
use crate::features::Feature;
use crate::state::timeline::EntityId;
use crate::state::Simulator;
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

    /// Returns sched_slice(): the wall-clock slice of entity `e` on `cpu`; `on_rq` says
    /// whether `e` itself is already counted in its cfs_rq (its parents say for themselves).
    pub(crate) fn sched_slice(&self, e: EntityId, cpu: usize, on_rq: bool) -> Ns {
        let nr = self.rqs[cpu].nr_running + usize::from(!on_rq);
        let mut slice = self.sched_period(nr.max(1) as u64) as u128;
        let mut x = e;
        loop {
            let q = &self.fg.cfs[self.cfs_of(x, cpu)];
            let w = self.se(x).weight;
            let counted = if x == e { on_rq } else { self.on_rq(x) };
            let load = if counted { q.load } else { q.load + w };
            slice = slice * w as u128 / load.max(1) as u128;
            match self.parent_entity(x, cpu) {
                Some(pe) => x = pe,
                None => break,
            }
        }
        slice as Ns
    }

    /// place_entity() for CFS on cfs_rq `c`.
    pub(crate) fn place_entity_cfs(&mut self, c: usize, e: EntityId, initial: bool, cpu: usize) {
        let mut vruntime = self.fg.cfs[c].min_vruntime;
        if initial && self.feat.has(Feature::START_DEBIT) {
            vruntime += calc_delta_fair(self.sched_slice(e, cpu, false), self.se(e).weight);
        }
        if !initial {
            let mut thresh = self.k.tunables.sched_latency_ns;
            if self.feat.has(Feature::GENTLE_FAIR_SLEEPERS) {
                thresh /= 2;
            }
            vruntime = vruntime.saturating_sub(thresh);
        }
        let se = self.se_mut(e);
        se.vruntime = se.vruntime.max(vruntime);
    }

    /// check_preempt_tick(): has the current entity of `c` had its slice, or fallen far
    /// ahead of the leftmost?
    pub(crate) fn check_preempt_tick(&self, c: usize, e: EntityId, cpu: usize) -> bool {
        let se = self.se(e);
        let ideal = self.sched_slice(e, cpu, true);
        let ran = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if ran > ideal {
            return true;
        }
        if ran < self.k.tunables.sched_min_granularity_ns {
            return false;
        }
        let Some(left) = self.cfs_leftmost(c) else { return false };
        let delta = se.vruntime as i64 - self.se(left).vruntime as i64;
        delta > ideal as i64
    }

    /// wakeup_preempt_entity(): preempt if the woken entity is more than a (weighted)
    /// wakeup granularity behind the current one in vruntime.
    pub(crate) fn wakeup_preempt_entity(&self, curr: EntityId, p: EntityId) -> bool {
        let vdiff = self.se(curr).vruntime as i64 - self.se(p).vruntime as i64;
        if vdiff <= 0 {
            return false;
        }
        let gran = calc_delta_fair(self.k.tunables.sched_wakeup_granularity_ns, self.se(p).weight);
        vdiff > gran as i64
    }
}
