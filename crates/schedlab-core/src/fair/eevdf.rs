//! EEVDF (6.6 onward): lag, eligibility, virtual deadlines, per cfs_rq.
//!
//! Mirrors: kernel/sched/fair.c (6.6+): avg_vruntime(), entity_eligible(),
//! update_entity_lag(), place_entity() (PLACE_LAG, PLACE_DEADLINE_INITIAL),
//! update_deadline(), pick_eevdf() (RUN_TO_PARITY); custom slices (6.12+:
//! se->custom_slice, cfs_rq_min_slice(), cfs_rq_max_slice()) and the slice protection
//! (6.12's flag; 6.17's set_protect_slice() / update_protect_slice() / protect_slice() /
//! cancel_protect_slice() over se->vprot, read in 6.17 and 6.18.35 fair.c).
//! Model: the eligible-earliest-deadline search descends the cfs_rq's timeline
//! (state/timeline.rs) along its eligible prefix, as the augmented rb-tree allows.
//! Every function works on one cfs_rq `c` (a CPU's root or a group's).

use super::calc_delta_fair;
use crate::features::Feature;
use crate::state::timeline::EntityId;
use crate::state::Simulator;

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
        // The clamp's span: 6.18.35 / 7.0 take cfs_rq_max_slice() + TICK_NSEC (the entity
        // is still queued, so counted).
        let span = if self.feat.has(Feature::LAG_CLAMP_MAX_SLICE) {
            self.cfs_rq_slice_bounds(c).map_or(se.slice, |b| b.1) + self.tick.period_ns
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
        if !se.custom_slice {
            se.slice = base_slice;
        }
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
        if !se.custom_slice {
            se.slice = base_slice;
        }
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se.weight);
        se.protected = false;
        if self.fg.cfs[c].nr_queued > 1 {
            self.resched_curr(cpu, cpu);
            self.clear_buddies(c, e, cpu);
        }
    }

    /// update_curr()'s second reason to reschedule, for running entity `e` of `c`:
    /// others are queued and its protected slice is over; before 6.18 only once it
    /// is no longer eligible either (did_preempt_short()).
    pub(crate) fn resched_next_slice(&self, c: usize, e: EntityId) -> bool {
        if self.fg.cfs[c].nr_queued <= 1 || self.protect_slice(e) {
            return false;
        }
        if self.feat.has(Feature::RESCHED_NEXT_SLICE) {
            return true;
        }
        self.feat.has(Feature::PREEMPT_SHORT) && !self.entity_eligible(c, e)
    }

    /// pick_eevdf(): the eligible entity of cfs_rq `c` with the earliest deadline; with
    /// `include_curr` the running one competes and, with `protect`, its protected slice
    /// keeps it (6.12: under RUN_TO_PARITY; 6.17+: whatever set_protect_slice() gave it).
    pub(crate) fn pick_eevdf(&self, c: usize, include_curr: bool, protect: bool) -> Option<EntityId> {
        let q = &self.fg.cfs[c];
        let curr = q.curr.filter(|&x| include_curr && self.on_rq(x) && self.entity_eligible(c, x));
        if let Some(x) = curr {
            let parity = self.vprot_form() || self.feat.has(Feature::RUN_TO_PARITY);
            if protect && parity && self.protect_slice(x) {
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

    /// check_preempt_wakeup_fair()'s EEVDF decision between the matched entities `se`
    /// (running) and `pse` (the wakee's side), on `cpu`: whether to preempt.
    /// PREEMPT_SHORT: a wakee with a shorter slice than curr's overrides the protection.
    /// 6.12 (do_preempt_short()): if it is eligible and ahead of curr in deadline, or curr is
    /// no longer eligible, curr's protection ends whether or not the wakee then wins the
    /// pick. 6.17+: the pick ignores the protection, which ends only if the wakee wins;
    /// otherwise RUN_TO_PARITY shrinks it to the queue's shortest slice
    /// (update_protect_slice(); 6.18.2 does so after a shorter wakee only, 6.18.35 and
    /// 6.19 after any wakeup that does not preempt).
    pub(crate) fn wakeup_preempt_eevdf(&mut self, se: EntityId, pse: EntityId, cpu: usize) -> bool {
        let c = self.cfs_of(pse, cpu);
        let short = self.feat.has(Feature::PREEMPT_SHORT) && self.se(pse).slice < self.se(se).slice;
        if !self.vprot_form() {
            let before = (self.se(pse).deadline as i64).wrapping_sub(self.se(se).deadline as i64) < 0;
            if short && self.entity_eligible(c, pse) && (before || !self.entity_eligible(c, se)) {
                self.se_mut(se).protected = false;
            }
            return self.pick_eevdf(c, true, true) == Some(pse);
        }
        let rework = self.next_buddy_rework();
        if rework && !short && self.feat.has(Feature::NEXT_BUDDY) && !self.tasks_delayed(pse) {
            // set_preempt_buddy(): an older buddy with an earlier deadline stays.
            let keep = self.fg.cfs[c].next.is_some_and(|n| (self.se(n).deadline as i64).wrapping_sub(self.se(pse).deadline as i64) < 0);
            if !keep {
                self.set_next_buddy(pse, cpu);
            }
        }
        let buddy = if rework { self.pick_buddy(c) } else { None };
        if buddy.or_else(|| self.pick_eevdf(c, true, !short)) == Some(pse) {
            if short {
                self.se_mut(se).protected = false; // cancel_protect_slice()
            }
            return true;
        }
        if self.feat.has(Feature::RUN_TO_PARITY) && (short || self.next_buddy_rework()) {
            self.update_protect_slice(c, se);
        }
        false
    }

    /// The pick's buddy (pick_next_entity(); inside pick_eevdf() from the 6.18.35 / 6.19
    /// rework): cfs_rq->next if it is eligible and the pick honours it (PICK_BUDDY;
    /// before that feature existed, NEXT_BUDDY).
    pub(crate) fn pick_buddy(&self, c: usize) -> Option<EntityId> {
        let n = self.fg.cfs[c].next?;
        let on = self.feat.has(Feature::PICK_BUDDY)
            || (self.feat.has(Feature::NEXT_BUDDY) && !Feature::PICK_BUDDY_DEFAULT.eval(self.k.version, self.m.arch));
        (on && self.fg.cfs[c].nr_queued > 1 && self.entity_eligible(c, n)).then_some(n)
    }

    /// set_next_buddy(): `e` and each of its queued ancestors become their cfs_rq's next
    /// buddy, up to a SCHED_IDLE entity.
    pub(crate) fn set_next_buddy(&mut self, e: EntityId, cpu: usize) {
        let mut x = Some(e);
        while let Some(y) = x {
            if !self.on_rq(y) || (y < self.tasks.len() && self.has_idle_policy(y)) {
                return;
            }
            let c = self.cfs_of(y, cpu);
            self.fg.cfs[c].next = Some(y);
            x = self.parent_entity(y, cpu);
        }
    }

    /// clear_buddies(): `e` of `c` is no longer anyone's next, from its level up while
    /// its ancestors were.
    pub(crate) fn clear_buddies(&mut self, c: usize, e: EntityId, cpu: usize) {
        if self.fg.cfs[c].next != Some(e) {
            return;
        }
        let mut x = Some(e);
        while let Some(y) = x {
            let q = self.cfs_of(y, cpu);
            if self.fg.cfs[q].next != Some(y) {
                break;
            }
            self.fg.cfs[q].next = None;
            x = self.parent_entity(y, cpu);
        }
    }

    /// Mel Gorman's rework of check_preempt_wakeup_fair() ("sched/fair: Reimplement
    /// NEXT_BUDDY to align with EEVDF goals"): in 6.18.35's fair.c, not in 6.18.2's; 6.19
    /// mainline as the stable backport implies (not read here), so the first 6.18 stable
    /// carrying it lies in 6.18.3..6.18.35 and 6.18.35 is the earliest known.
    pub(crate) fn next_buddy_rework(&self) -> bool {
        crate::features::FeatureDefault::SinceWithStable((6, 19), ((6, 18), 35)).eval(self.k.version, self.m.arch)
    }

    fn tasks_delayed(&self, e: EntityId) -> bool {
        e < self.tasks.len() && self.tasks[e].sched_delayed
    }

    /// Whether the protection is 6.17's (se->vprot, sized by the queue's shortest slice:
    /// "sched/fair: Limit run to parity to the min slice of enqueued entities", in the
    /// 6.17 and 6.18 fair.c read) rather than 6.12's flag kept until the deadline moves.
    #[inline]
    pub(crate) fn vprot_form(&self) -> bool {
        self.k.version >= crate::kernel::KernelVersion::new(6, 17)
    }

    /// protect_slice(): the current entity still runs in its protected slice.
    #[inline]
    pub(crate) fn protect_slice(&self, e: EntityId) -> bool {
        let se = self.se(e);
        se.protected && se.vruntime < se.vprot
    }

    /// set_protect_slice() as set_next_entity() calls it, `e` just out of the tree and
    /// not yet curr: 6.17+ protect up to the deadline, or less when the queue holds a
    /// shorter slice (RUN_TO_PARITY) or the base quantum is shorter (without it).
    pub(crate) fn set_protect_slice(&mut self, c: usize, e: EntityId) {
        let vprot = if self.vprot_form() {
            let floor = if self.feat.has(Feature::RUN_TO_PARITY) {
                self.cfs_rq_slice_bounds(c).map_or(u64::MAX, |b| b.0)
            } else {
                // normalized_sysctl_sched_base_slice: the base slice without the CPU factor.
                self.k.tunables.sched_base_slice_ns / crate::kernel::tunable_scaling_factor(self.m.nr_cpus())
            };
            let se = self.se(e);
            let slice = floor.min(se.slice);
            if slice != se.slice {
                se.deadline.min(se.vruntime + calc_delta_fair(slice, se.weight))
            } else {
                se.deadline
            }
        } else {
            u64::MAX
        };
        let se = self.se_mut(e);
        se.protected = true;
        se.vprot = vprot;
    }

    /// update_protect_slice() (6.17+): a shorter slice joined the queue of the current
    /// entity `e` of `c`; its protection shrinks to that slice from now.
    pub(crate) fn update_protect_slice(&mut self, c: usize, e: EntityId) {
        let Some((min, _)) = self.cfs_rq_slice_bounds(c) else { return };
        let se = self.se_mut(e);
        se.vprot = se.vprot.min(se.vruntime + calc_delta_fair(min, se.weight));
    }

    /// cfs_rq_min_slice() and cfs_rq_max_slice() of `c`: over its queued entities and its
    /// curr if on the runqueue; None when it has none. Without custom slices every
    /// entity has the base slice; with them the tree is walked (the kernel keeps both in
    /// the augmented rb-tree).
    pub(crate) fn cfs_rq_slice_bounds(&self, c: usize) -> Option<(u64, u64)> {
        let q = &self.fg.cfs[c];
        let curr = q.curr.filter(|&x| self.on_rq(x));
        if !self.fg.custom_slices {
            return (curr.is_some() || !q.timeline.is_empty()).then_some((self.k.tunables.sched_base_slice_ns, self.k.tunables.sched_base_slice_ns));
        }
        let mut out: Option<(u64, u64)> = None;
        let mut add = |s: u64| out = Some(out.map_or((s, s), |(a, b)| (a.min(s), b.max(s))));
        if let Some(x) = curr {
            add(self.se(x).slice);
        }
        self.queue_index.timeline.for_each(q.timeline, |x| add(self.se(x).slice));
        out
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

    fn sim(toml: &str) -> Simulator {
        let s = Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// RUN_TO_PARITY with the queue's shortest slice: a 3 ms-slice hog picked while a
    /// 1 ms-slice task is queued is protected for 1 ms of its vruntime on 6.17+
    /// (set_protect_slice()), up to its deadline on 6.12 (and 6.18 gives the whole
    /// request when every queued slice is as long as its own).
    #[test]
    fn the_protection_is_the_shortest_queued_slice_from_6_17() {
        for (profile, short, want) in [("6.18", 1000, Some(1_000_000u64)), ("6.12", 1000, None), ("6.18", 3000, Some(3_000_000))] {
            let toml = format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"{profile}\"\nfeatures = {{ PLACE_DEADLINE_INITIAL = false }}\n\
                 [[tasks]]\nname = \"hog\"\nslice_us = 3000\nprogram = [{{ run = \"1s\" }}]\n\
                 [[tasks]]\nname = \"short\"\nslice_us = {short}\nstart = \"1ms\"\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let mut s = sim(&toml);
            // Run until the hog is picked anew with the other task queued.
            let mut seen = false;
            let mut was = s.rqs[0].curr;
            while s.now < 100_000_000 && s.step() {
                let cur = s.rqs[0].curr;
                if cur == Some(0) && was != Some(0) && s.tasks[1].se.on_rq {
                    let se = s.tasks[0].se;
                    assert!(se.protected, "{profile}: the hog is protected at its pick");
                    let left = se.deadline - se.vruntime;
                    match want {
                        Some(d) => {
                            assert!(left > 1_000_000, "{profile}: a fresh request ({left} ns of vruntime left)");
                            assert_eq!(se.vprot - se.vruntime, d.min(left), "{profile} beside a {short} us slice");
                        }
                        None => assert_eq!(se.vprot, u64::MAX, "{profile}: 6.12 protects until the deadline moves"),
                    }
                    seen = true;
                    break;
                }
                was = cur;
            }
            assert!(seen, "{profile}: the hog was picked with the other queued");
        }
    }

    /// cfs_rq_min_slice() up the hierarchy: a group entity takes its queue's shortest
    /// slice when its task is enqueued (enqueue_task_fair(), 6.12+), and the base slice
    /// without custom slices.
    #[test]
    fn a_group_entity_takes_its_queues_shortest_slice() {
        for (slice, want) in [("slice_us = 400\n", 400_000u64), ("", 700_000)] {
            let toml = format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.18\"\n[[groups]]\nname = \"g\"\n\
                 [[tasks]]\nname = \"a\"\ngroup = \"g\"\n{slice}program = [{{ run = \"1s\" }}]\n\
                 [[tasks]]\nname = \"b\"\ngroup = \"g\"\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let mut s = sim(&toml);
            while s.now < 10_000_000 && s.step() {}
            let gse = s.parent_entity(0, 0).expect("the task's group entity");
            assert_eq!(s.se(gse).slice, want, "{slice:?}");
        }
    }

    /// rt-app's custom-slice.json: thread0 is SCHED_OTHER with dl-runtime 100000 us,
    /// which rt-app passes as sched_attr.sched_runtime: a 100 ms slice on 6.12+ (the
    /// top of __setparam_fair()'s clamp), ignored by 6.6, clamped up from 50 us to 0.1 ms.
    #[test]
    fn rt_apps_runtime_on_a_fair_thread_is_its_slice_from_6_12() {
        use crate::interchange::rt_app::{import, RtAppOptions};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rt-app/policies/custom-slice.json");
        let text = std::fs::read_to_string(path).unwrap();
        let m: crate::scenario::MachineSpec = serde_json::from_str(r#"{"topo": {"cores": 4}}"#).unwrap();
        for (profile, runtime, want) in [("6.18", None, Some(100_000_000u64)), ("6.12", Some(50), Some(100_000)), ("6.6", None, None)] {
            let mut imp = import(&text, "custom-slice.json", &RtAppOptions { machine: Some(m.clone()) }).unwrap_or_else(|e| panic!("{e}"));
            imp.scenario.kernel.profile = profile.into();
            let t = imp.scenario.tasks.iter_mut().find(|t| t.name == "thread0").unwrap();
            if let Some(us) = runtime {
                t.sched_attr.as_mut().unwrap().runtime = Some(crate::time::Duration(us * 1_000));
            }
            let s = Simulator::new(&imp.scenario, 1, false).unwrap_or_else(|e| panic!("{e}"));
            let t = s.tasks.iter().position(|t| t.stats.name == "thread0").unwrap();
            let se = s.tasks[t].se;
            assert_eq!(se.custom_slice.then_some(se.slice), want, "{profile}");
        }
    }
}
