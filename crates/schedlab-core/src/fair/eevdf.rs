//! EEVDF (6.6 onward): lag, eligibility, virtual deadlines, per cfs_rq.
//!
//! Mirrors: kernel/sched/fair.c (6.6+): avg_vruntime(), entity_eligible(),
//! update_entity_lag(), place_entity() (PLACE_LAG, PLACE_DEADLINE_INITIAL),
//! update_deadline(), pick_eevdf() (RUN_TO_PARITY).
//! Model: the eligible-earliest-deadline search descends the cfs_rq's timeline
//! (state/timeline.rs) along its eligible prefix, as the augmented rb-tree allows.
//! Every function works on one cfs_rq `c` (a CPU's root or a group's).

use super::calc_delta_fair;
use crate::state::timeline::EntityId;
use crate::state::Simulator;
use crate::features::Feature;

impl Simulator {
    /// entity_eligible(): lag >= 0, i.e. vruntime <= V, computed without division.
    pub(crate) fn entity_eligible(&self, c: usize, e: EntityId) -> bool {
        let q = &self.fg.cfs[c];
        let key = self.se(e).vruntime as i128 - q.min_vruntime as i128;
        key * q.load as i128 <= q.avg_vruntime_sum
    }

    /// update_entity_lag(): remember V - vruntime, clamped, when leaving the queue.
    pub(crate) fn update_entity_lag(&mut self, c: usize, e: EntityId) {
        let v = self.place_reference(c).0;
        let se = *self.se(e);
        // The clamp's span: 6.18.35 / 7.0 take cfs_rq_max_slice() + TICK_NSEC; every entity
        // has the base slice in schedlab, so the queue's longest slice is this one's.
        let span = if self.feat.has(Feature::LAG_CLAMP_MAX_SLICE) {
            se.slice + self.tick.period_ns
        } else {
            (2 * se.slice).max(self.tick.period_ns)
        };
        let limit = calc_delta_fair(span, se.weight) as i64;
        self.se_mut(e).vlag = (v - se.vruntime as i64).clamp(-limit, limit);
    }

    /// place_entity() for EEVDF: keep lag, compensating for the added weight.
    pub(crate) fn place_entity_eevdf(&mut self, c: usize, e: EntityId, initial: bool) {
        let base_slice = self.k.tunables.sched_base_slice_ns;
        let (v, load) = self.place_reference(c);
        let lag_on = self.feat.has(Feature::PLACE_LAG);
        let initial_half = initial && self.feat.has(Feature::PLACE_DEADLINE_INITIAL);
        let se = self.se_mut(e);
        se.slice = base_slice;
        let mut vslice = calc_delta_fair(se.slice, se.weight) as i64;
        let mut lag = 0i64;
        if lag_on && load > 0 {
            lag = ((se.vlag as i128 * (load + se.weight as i64) as i128) / load as i128) as i64;
        }
        se.vruntime = (v - lag).max(0) as u64;
        if se.rel_deadline {
            // PLACE_REL_DEADLINE: a migrated task keeps what was left of its request.
            se.deadline = se.deadline.wrapping_add(se.vruntime);
            se.rel_deadline = false;
            return;
        }
        if initial_half {
            vslice /= 2;
        }
        se.deadline = (se.vruntime as i64 + vslice) as u64;
    }

    /// avg_vruntime() and load.weight as place_entity() and update_entity_lag() see
    /// them. Before 6.18 a
    /// throttled cfs_rq keeps its tasks in its tree (only the group's entity leaves its
    /// parent), so a task woken onto it is placed among them; the model keeps them on
    /// the CPU's throttled list instead, and counts them back in here. Without that, a
    /// task that slept or woke while its cfs_rq was throttled had its lag measured
    /// against itself alone (zero) and was placed ahead of every throttled one, each
    /// period (a starvation the liveness property found on one CPU).
    fn place_reference(&self, c: usize) -> (i64, i64) {
        let q = &self.fg.cfs[c];
        let (mut load, mut sum) = (q.load as i128, q.avg_vruntime_sum);
        if self.bw.control.as_ref().is_some_and(|b| !b.mode().task_throttle) {
            let cpu = c % self.m.nr_cpus();
            for &t in &self.rqs[cpu].throttled {
                if self.cfs_of(t, cpu) == c {
                    let se = &self.tasks[t].se;
                    load += se.weight as i128;
                    sum += (se.vruntime as i128 - q.min_vruntime as i128) * se.weight as i128;
                }
            }
        }
        if load == 0 {
            return (q.min_vruntime as i64, 0);
        }
        ((q.min_vruntime as i128 + sum.div_euclid(load)) as i64, load as i64)
    }

    /// update_deadline(): a running entity past its deadline gets a new one and, if its
    /// cfs_rq has others, yields (resched).
    pub(crate) fn update_deadline(&mut self, c: usize, e: EntityId, cpu: usize) {
        let base_slice = self.k.tunables.sched_base_slice_ns;
        let se = self.se_mut(e);
        if (se.vruntime as i64 - se.deadline as i64) < 0 {
            return;
        }
        se.slice = base_slice;
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se.weight);
        se.protected = false;
        if self.fg.cfs[c].nr_queued > 1 {
            self.resched_curr(cpu, cpu);
        }
    }

    /// update_curr()'s second reason to reschedule, for running entity `e` of `c`:
    /// others are queued and its protected slice is over; before 6.18 only once it
    /// is no longer eligible either (did_preempt_short()).
    pub(crate) fn resched_next_slice(&self, c: usize, e: EntityId) -> bool {
        if self.fg.cfs[c].nr_queued <= 1 || self.se(e).protected {
            return false;
        }
        if self.feat.has(Feature::RESCHED_NEXT_SLICE) {
            return true;
        }
        self.feat.has(Feature::PREEMPT_SHORT) && !self.entity_eligible(c, e)
    }

    /// pick_eevdf(): the eligible entity of cfs_rq `c` with the earliest deadline; with
    /// `include_curr` the running one competes (and RUN_TO_PARITY may keep it).
    pub(crate) fn pick_eevdf(&self, c: usize, include_curr: bool) -> Option<EntityId> {
        let q = &self.fg.cfs[c];
        let curr = q.curr.filter(|&x| include_curr && self.on_rq(x) && self.entity_eligible(c, x));
        if let Some(x) = curr {
            if self.feat.has(Feature::RUN_TO_PARITY) && self.se(x).protected {
                return Some(x);
            }
        }
        // Eligible is vruntime <= V, a prefix of the timeline.
        let (min_v, load, sum) = (q.min_vruntime as i128, q.load as i128, q.avg_vruntime_sum);
        let queued = self.queue_index.timeline.earliest_eligible(q.timeline, |v| (v as i128 - min_v) * load <= sum);
        let best = match (queued, curr) {
            (Some(qd), Some(x)) => Some(qd.min((self.se(x).deadline, x)).1),
            (Some((_, qd)), None) => Some(qd),
            (None, x) => x,
        };
        // Someone is always eligible; fall back to the leftmost if rounding says otherwise.
        best.or_else(|| self.cfs_leftmost(c))
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// LAG_CLAMP_MAX_SLICE: at HZ 250 and the 0.7 ms base slice, a leaving nice-0 task's
    /// lag is clamped at 4 ms (max(2 x 0.7 ms, 4 ms)) by 6.18.2 and at 4.7 ms (0.7 ms +
    /// 4 ms) by 6.18.35, either way.
    #[test]
    fn lag_clamp_follows_the_version() {
        for (profile, limit) in [("6.18.2", 4_000_000i64), ("6.18.35", 4_700_000)] {
            let toml = format!(
                "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 1 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 tunables = {{ hz = 250 }}\n\
                 [[tasks]]\nname = \"t\"\ncount = 2\ncpu = 0\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let s = Scenario::from_toml_str(&toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
            let mut sim = Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sim.tasks[0].se.slice, 700_000, "{profile}: the base slice");
            let c = sim.cfs_of(0, 0);
            let v = sim.tasks[0].se.vruntime;
            for (shift, want) in [(1_000_000_000i64, -limit), (-1_000_000_000, limit)] {
                sim.tasks[0].se.vruntime = (v as i64 + shift) as u64;
                sim.update_entity_lag(c, 0);
                assert_eq!(sim.tasks[0].se.vlag, want, "{profile}: vruntime moved by {shift}");
            }
            sim.tasks[0].se.vruntime = v;
        }
    }

    /// PLACE_REL_DEADLINE: a queued task moved by load balance keeps its deadline's
    /// distance from its vruntime (here the half slice PLACE_DEADLINE_INITIAL gave it)
    /// from 6.12; 6.11 restarts a full slice on the new CPU.
    #[test]
    fn a_migrated_task_keeps_its_relative_deadline_from_6_12() {
        for (profile, keeps) in [("6.12", true), ("6.11", false)] {
            let toml = format!(
                "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 2 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"t\"\ncount = 3\ncpu = 1\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let s = Scenario::from_toml_str(&toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
            let mut sim = Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"));
            let p = *sim.rqs[1].queue.tasks.iter().find(|&&t| sim.rqs[1].curr != Some(t)).expect("a queued task");
            let se = sim.tasks[p].se;
            let before = se.deadline - se.vruntime;
            assert_eq!(before, se.slice / 2, "{profile}: a new task's half slice");
            sim.detach_task(1, p);
            sim.attach_task(0, p);
            let se = sim.tasks[p].se;
            assert!(!se.rel_deadline);
            let after = se.deadline - se.vruntime;
            assert_eq!(after, if keeps { before } else { se.slice }, "{profile}");
        }
    }
}
