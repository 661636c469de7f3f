//! Group scheduling: a cfs_rq per (task group, CPU) and the entity that stands for it
//! in its parent's cfs_rq, weighted by the group's cpu.shares / cpu.weight.
//!
//! Mirrors: kernel/sched/fair.c (CONFIG_FAIR_GROUP_SCHED): struct cfs_rq per tg and CPU,
//! tg->se[cpu], for_each_sched_entity(), group_cfs_rq()/cfs_rq_of()/parent_entity(),
//! find_matching_se(), calc_group_shares(), update_cfs_group(), reweight_entity(),
//! task_h_load(); kernel/sched/core.c sched_group_set_shares() (cpu.shares, 2..262144)
//! and cpu_weight_write_u64() (cpu.weight 1..10000 -> shares x 1024 / 100).
//! Model: ids: the root is group 0; cfs_rq `g * nr_cpus + cpu`; the group entity of a
//! non-root group on a CPU has the same index, tagged with [`GROUP_SE`]. A group's
//! weight on a CPU is tg->shares x (this cfs_rq's load) / (the group's load over all
//! CPUs), clamped to [2, shares], recomputed where the kernel calls update_cfs_group()
//! (enqueue, dequeue, the tick). The loads are the PELT load averages where PELT is on
//! (`fair::pelt`), else the queued weights (the kernel's pre-PELT rule, 2.6.x).
//! With the feature FAIR_GROUP_SCHED off every task sits on its CPU's root cfs_rq.

use crate::state::cfs_rq::{is_group, MIN_SHARES};
use crate::state::task::{SchedEntity, TaskId, TaskState};
use crate::state::timeline::{EntityId, GROUP_SE};
use crate::state::Simulator;
impl Simulator {
    /// The group whose cfs_rq holds task `p` (the root when group scheduling is off).
    #[inline]
    pub(crate) fn task_group(&self, p: TaskId) -> usize {
        if self.fg.enabled {
            self.tasks[p].group
        } else {
            0
        }
    }

    /// The sched_entity of a task or group entity.
    #[inline]
    pub(crate) fn se(&self, e: EntityId) -> &SchedEntity {
        if is_group(e) {
            &self.fg.gse[e & !GROUP_SE]
        } else {
            &self.tasks[e].se
        }
    }

    #[inline]
    pub(crate) fn se_mut(&mut self, e: EntityId) -> &mut SchedEntity {
        if is_group(e) {
            &mut self.fg.gse[e & !GROUP_SE]
        } else {
            &mut self.tasks[e].se
        }
    }

    /// se->on_rq.
    #[inline]
    pub(crate) fn on_rq(&self, e: EntityId) -> bool {
        if is_group(e) {
            self.fg.gse_on_rq[e & !GROUP_SE]
        } else {
            self.tasks[e].se.on_rq
        }
    }

    /// cfs_rq_of(): the cfs_rq entity `e` is (or would be) queued on, on `cpu`.
    #[inline]
    pub(crate) fn cfs_of(&self, e: EntityId, cpu: usize) -> usize {
        if is_group(e) {
            let g = self.fg.group_of_cfs(e & !GROUP_SE);
            self.fg.cfs_index(self.fg.parent[g].unwrap_or(0), cpu)
        } else {
            self.fg.cfs_index(self.task_group(e), cpu)
        }
    }

    /// parent_entity(): the group entity that owns the cfs_rq `e` is on (None at the root).
    #[inline]
    pub(crate) fn parent_entity(&self, e: EntityId, cpu: usize) -> Option<EntityId> {
        let c = self.cfs_of(e, cpu);
        (self.fg.group_of_cfs(c) != 0).then_some(GROUP_SE | c)
    }

    /// The root cfs_rq of a CPU.
    #[inline]
    pub(crate) fn root_cfs(&self, cpu: usize) -> usize {
        cpu
    }

    /// The depth of an entity's cfs_rq (root 0).
    fn se_depth(&self, e: EntityId, cpu: usize) -> u32 {
        self.fg.depth[self.fg.group_of_cfs(self.cfs_of(e, cpu))]
    }

    /// find_matching_se(): walks two entities up to the first cfs_rq they share.
    pub(crate) fn find_matching_se(&self, mut a: EntityId, mut b: EntityId, cpu: usize) -> (EntityId, EntityId) {
        let (mut da, mut db) = (self.se_depth(a, cpu), self.se_depth(b, cpu));
        while da > db {
            a = self.parent_entity(a, cpu).expect("deeper than the root");
            da -= 1;
        }
        while db > da {
            b = self.parent_entity(b, cpu).expect("deeper than the root");
            db -= 1;
        }
        while self.cfs_of(a, cpu) != self.cfs_of(b, cpu) {
            a = self.parent_entity(a, cpu).expect("below the root");
            b = self.parent_entity(b, cpu).expect("below the root");
        }
        (a, b)
    }

    /// The load a group's weight is computed from on one CPU (calc_group_shares' `load`).
    fn group_share_load(&self, c: usize) -> u64 {
        let q = &self.fg.cfs[c];
        if self.pelt_on() {
            q.load.max(q.avg.load_avg)
        } else {
            q.load
        }
    }

    /// update_tg_load_avg(): refreshes a group cfs_rq's contribution to tg->load_avg
    /// (the kernel skips changes under 1/64 of the contribution).
    pub(crate) fn update_tg_load_avg(&mut self, c: usize) {
        let g = self.fg.group_of_cfs(c);
        if g == 0 {
            return;
        }
        let now = if self.pelt_on() { self.fg.cfs[c].avg.load_avg } else { self.fg.cfs[c].load };
        let old = self.fg.cfs[c].tg_contrib;
        let delta = now.abs_diff(old);
        if self.pelt_on() && delta <= old / 64 {
            return;
        }
        self.fg.tg_load[g] = self.fg.tg_load[g] + now - old;
        self.fg.cfs[c].tg_contrib = now;
    }

    /// calc_group_shares(): the weight of group entity `e` (`GROUP_SE | cfs index`).
    fn calc_group_shares(&self, e: EntityId) -> u64 {
        let c = e & !GROUP_SE;
        let g = self.fg.group_of_cfs(c);
        let tg_shares = self.fg.shares[g];
        let load = self.group_share_load(c);
        let tg_weight = self.fg.tg_load[g] - self.fg.cfs[c].tg_contrib + load;
        let shares = if tg_weight > 0 { (tg_shares as u128 * load as u128 / tg_weight as u128) as u64 } else { tg_shares };
        shares.clamp(MIN_SHARES, tg_shares)
    }

    /// update_cfs_group(): re-weights a group entity from its group's current loads.
    pub(crate) fn update_cfs_group(&mut self, e: EntityId, cpu: usize) {
        if !is_group(e) {
            return;
        }
        let w = self.calc_group_shares(e);
        self.reweight_entity(cpu, e, w);
    }

    /// task_h_load(): the task's share of its CPU's root load, through every level
    /// (its weight, or PELT load, times each group entity's over its cfs_rq's).
    pub(crate) fn task_h_load(&self, p: TaskId) -> u64 {
        let cpu = self.tasks[p].cpu;
        let pelt = self.pelt_on();
        let own = |s: &Self, e: EntityId| if pelt { s.se(e).avg.load_avg } else { s.se(e).weight };
        let cfs_load = |s: &Self, c: usize| if pelt { s.fg.cfs[c].avg.load_avg } else { s.fg.cfs[c].load };
        let mut load = own(self, p) as u128;
        let mut e = p;
        while let Some(pe) = self.parent_entity(e, cpu) {
            let below = cfs_load(self, self.cfs_of(e, cpu)) as u128 + 1;
            load = load * own(self, pe) as u128 / below;
            e = pe;
        }
        load as u64
    }

    /// Checks every cfs_rq: load, nr_queued and the tree match its entities.
    pub(crate) fn check_fair(&self) -> Result<(), String> {
        let nr = self.m.nr_cpus();
        let mut load = vec![0u64; self.fg.cfs.len()];
        let mut queued = vec![0u32; self.fg.cfs.len()];
        let mut count = |c: usize, w: u64| {
            load[c] += w;
            queued[c] += 1;
        };
        for (p, t) in self.tasks.iter().enumerate() {
            if t.sched.class() != crate::state::task::SchedClass::Fair {
                continue; // not the fair class's (sched/class.rs checks them)
            }
            let runnable = matches!(t.state, TaskState::Running | TaskState::Runnable);
            if t.se.on_rq != (runnable || t.sched_delayed) || (t.sched_delayed && runnable) {
                return Err(format!("task {p} in state {:?} has on_rq = {}, delayed = {}", t.state, t.se.on_rq, t.sched_delayed));
            }
            if t.se.on_rq {
                count(self.cfs_of(p, t.cpu), t.se.weight);
            }
        }
        for i in nr..self.fg.gse.len() {
            if self.fg.gse_on_rq[i] {
                count(self.cfs_of(GROUP_SE | i, i % nr), self.fg.gse[i].weight);
                if self.fg.cfs[i].nr_queued == 0 {
                    return Err(format!("group entity {i} is queued but its cfs_rq is empty"));
                }
            } else if self.fg.cfs[i].nr_queued > 0 {
                return Err(format!("cfs_rq {i} has entities but its group entity is not queued"));
            }
        }
        for (c, q) in self.fg.cfs.iter().enumerate() {
            if q.load != load[c] || q.nr_queued != queued[c] {
                return Err(format!("cfs_rq {c}: load {} / nr_queued {} but its entities say {} / {}", q.load, q.nr_queued, load[c], queued[c]));
            }
            let curr_queued = q.curr.is_some_and(|e| self.on_rq(e)) as u32;
            let in_tree = self.queue_index.timeline.count(q.timeline) as u32;
            if in_tree + curr_queued != q.nr_queued {
                return Err(format!("cfs_rq {c}: {in_tree} entities in the tree, curr queued {curr_queued}, nr_queued {}", q.nr_queued));
            }
            if let Some(e) = self.queue_index.timeline.leftmost(q.timeline) {
                if Some(e) == q.curr || !self.on_rq(e) {
                    return Err(format!("cfs_rq {c}: entity {e} in the tree is curr or not queued"));
                }
            }
        }
        for cpu in 0..nr {
            // Every cfs_rq's curr is on the path of the CPU's running task (or none).
            let mut path = vec![None; self.fg.parent.len()];
            if let Some(p) = self.rqs[cpu].curr {
                let mut e = p;
                loop {
                    path[self.fg.group_of_cfs(self.cfs_of(e, cpu))] = Some(e);
                    match self.parent_entity(e, cpu) {
                        Some(pe) => e = pe,
                        None => break,
                    }
                }
            }
            for (g, want) in path.iter().enumerate() {
                let curr = self.fg.cfs[self.fg.cfs_index(g, cpu)].curr;
                if curr.is_some() && curr != *want {
                    return Err(format!("CPU {cpu}: group {g}'s cfs_rq has curr {curr:?} off the running task's path"));
                }
            }
            if self.rqs[cpu].load != self.fg.cfs[self.root_cfs(cpu)].load {
                return Err(format!("CPU {cpu}: rq load {} is not its root cfs_rq's {}", self.rqs[cpu].load, self.fg.cfs[cpu].load));
            }
        }
        Ok(())
    }
}
