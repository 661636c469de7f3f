//! EEVDF (6.6 onward): lag, eligibility, virtual deadlines.
//!
//! Mirrors: kernel/sched/fair.c (6.6+): avg_vruntime(), entity_eligible(),
//! update_entity_lag(), place_entity() (PLACE_LAG, PLACE_DEADLINE_INITIAL),
//! update_deadline(), pick_eevdf() (RUN_TO_PARITY).
//! Model: the eligible-earliest-deadline search descends the runqueue's timeline
//! (fair/timeline.rs) along its eligible prefix, as the augmented rb-tree allows.

use super::calc_delta_fair;
use crate::engine::Simulator;
use crate::features::Feature;
use crate::task::{TaskId, TaskState};

impl Simulator {
    /// entity_eligible(): lag >= 0, i.e. vruntime <= V, computed without division.
    fn entity_eligible(&self, cpu: usize, p: TaskId) -> bool {
        let rq = &self.rqs[cpu];
        let key = self.tasks[p].se.vruntime as i128 - rq.min_vruntime as i128;
        key * rq.load as i128 <= rq.avg_vruntime_sum
    }

    /// update_entity_lag(): remember V - vruntime, clamped, when leaving the queue.
    pub(crate) fn update_entity_lag(&mut self, cpu: usize, p: TaskId) {
        let v = self.avg_vruntime(cpu) as i64;
        let se = self.tasks[p].se;
        let limit = calc_delta_fair((2 * se.slice).max(self.tick_ns), se.weight) as i64;
        self.tasks[p].se.vlag = (v - se.vruntime as i64).clamp(-limit, limit);
    }

    /// place_entity() for EEVDF: keep lag, compensating for the added weight.
    pub(crate) fn place_entity_eevdf(&mut self, cpu: usize, p: TaskId, initial: bool) {
        let base_slice = self.k.tunables.sched_base_slice_ns;
        let v = self.avg_vruntime(cpu) as i64;
        let load = self.rqs[cpu].load as i64;
        let se = &mut self.tasks[p].se;
        se.slice = base_slice;
        let mut vslice = calc_delta_fair(se.slice, se.weight) as i64;
        let mut lag = 0i64;
        if self.feat.has(Feature::PLACE_LAG) && load > 0 {
            lag = ((se.vlag as i128 * (load + se.weight as i64) as i128) / load as i128) as i64;
        }
        se.vruntime = (v - lag).max(0) as u64;
        if initial && self.feat.has(Feature::PLACE_DEADLINE_INITIAL) {
            vslice /= 2;
        }
        se.deadline = (se.vruntime as i64 + vslice) as u64;
    }

    /// update_deadline(): a task past its deadline gets a new one and yields.
    pub(crate) fn update_deadline(&mut self, cpu: usize, c: TaskId) {
        let se = &mut self.tasks[c].se;
        if (se.vruntime as i64 - se.deadline as i64) < 0 {
            return;
        }
        se.slice = self.k.tunables.sched_base_slice_ns;
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se.weight);
        se.protected = false;
        if !self.rqs[cpu].queue.is_empty() {
            self.resched_curr(cpu, cpu);
        }
    }

    /// pick_eevdf(): the eligible entity with the earliest deadline; with
    /// `include_curr` the running task competes (and RUN_TO_PARITY may keep it).
    pub(crate) fn pick_eevdf(&self, cpu: usize, include_curr: bool) -> Option<TaskId> {
        let rq = &self.rqs[cpu];
        let curr = rq
            .curr
            .filter(|&c| include_curr && self.tasks[c].state == TaskState::Running && self.entity_eligible(cpu, c));
        if let Some(c) = curr {
            if self.feat.has(Feature::RUN_TO_PARITY) && self.tasks[c].se.protected {
                return Some(c);
            }
        }
        // Eligible is vruntime <= V, a prefix of the timeline.
        let (min_v, load, sum) = (rq.min_vruntime as i128, rq.load as i128, rq.avg_vruntime_sum);
        let queued =
            self.queue_index.timeline.earliest_eligible(rq.queue.timeline, |v| (v as i128 - min_v) * load <= sum);
        let best = match (queued, curr) {
            (Some(q), Some(c)) => Some(q.min((self.tasks[c].se.deadline, c)).1),
            (Some((_, q)), None) => Some(q),
            (None, c) => c,
        };
        // Someone is always eligible; fall back to the leftmost if rounding says otherwise.
        best.or_else(|| self.queue_leftmost(cpu))
    }
}
