//! Every cfs_rq and group entity: the fair class's per-(task group, CPU) state.
//!
//! Mirrors: kernel/sched/sched.h `struct cfs_rq`, `struct task_group` (tg->cfs_rq[cpu],
//! tg->se[cpu], tg->shares); the behaviour over it is `fair::group`.

use crate::state::task::SchedEntity;
use crate::state::timeline::{EntityId, TimelineRoot, GROUP_SE};
use crate::time::Ns;

/// The smallest weight a group entity gets (MIN_SHARES, in unscaled load units).
pub(crate) const MIN_SHARES: u64 = 2;
/// The default and largest cpu.shares (scale_load_down(ROOT_TASK_GROUP_LOAD), MAX_SHARES).
pub const DEFAULT_SHARES: u64 = 1024;
/// The largest cpu.shares (MAX_SHARES = 1 << 18).
pub const MAX_SHARES: u64 = 1 << 18;

/// The fair-class part of one cfs_rq.
#[derive(Clone, Debug, Default)]
pub struct CfsRqState {
    /// Sum of the weights of its entities on the runqueue, curr included (load.weight).
    pub load: u64,
    /// min_vruntime.
    pub min_vruntime: u64,
    /// Σ (vruntime - min_vruntime) x weight over its entities, curr included.
    pub avg_vruntime_sum: i128,
    /// Its entities but curr, by (vruntime, id).
    pub timeline: TimelineRoot,
    /// The entity running at this level (set_next_entity .. put_prev_entity).
    pub curr: Option<EntityId>,
    /// Entities on the runqueue, curr included (nr_queued).
    pub nr_queued: u32,
    /// The next buddy (cfs_rq->next): the entity a pick prefers while it is eligible.
    pub next: Option<EntityId>,
    /// Tasks runnable in this cfs_rq's hierarchy (h_nr_running).
    pub h_nr_running: u32,
    /// This cfs_rq's contribution to its group's load sum (tg_load_avg_contrib).
    pub tg_contrib: u64,
    /// PELT averages of the cfs_rq (`fair::pelt`).
    pub avg: super::pelt::SchedAvg,
}

/// Every group's cfs_rqs and entities.
#[derive(Clone, Debug, Default)]
pub struct FairGroups {
    pub(crate) nr_cpus: usize,
    /// FAIR_GROUP_SCHED: groups have entities (else every task is on the root cfs_rq).
    pub(crate) enabled: bool,
    pub(crate) parent: Vec<Option<usize>>,
    /// Depth of each group (root 0).
    pub(crate) depth: Vec<u32>,
    /// tg->shares in unscaled load units (1024 = cpu.shares 1024 = cpu.weight 100).
    pub(crate) shares: Vec<u64>,
    /// cfs_rq by `g * nr_cpus + cpu`.
    pub(crate) cfs: Vec<CfsRqState>,
    /// Group entity by the same index (entries of group 0 unused).
    pub(crate) gse: Vec<SchedEntity>,
    /// Whether each group entity is on its parent's runqueue (se->on_rq).
    pub(crate) gse_on_rq: Vec<bool>,
    /// tg->load_avg: Σ of the group's cfs_rqs' contributions.
    pub(crate) tg_load: Vec<u64>,
    /// Some task has a custom slice (6.12+): slices differ, so a queue's shortest and
    /// longest are looked up instead of being the base slice.
    pub(crate) custom_slices: bool,
    /// The wakeup being checked is a new task's (WF_FORK).
    pub(crate) wf_fork: bool,
}

impl FairGroups {
    /// Builds the hierarchy: `parents[g]` for each group (root first), cpu.shares each.
    pub fn new(parents: &[Option<usize>], shares: &[u64], nr_cpus: usize, enabled: bool, base_vruntime: u64) -> Self {
        let n = parents.len();
        let mut depth = vec![0; n];
        for g in 1..n {
            depth[g] = parents[g].map_or(0, |p| depth[p] + 1);
        }
        let cfs = vec![CfsRqState { min_vruntime: base_vruntime, ..Default::default() }; n * nr_cpus];
        FairGroups {
            nr_cpus,
            enabled,
            parent: parents.to_vec(),
            depth,
            shares: shares.to_vec(),
            cfs,
            gse: vec![SchedEntity { weight: DEFAULT_SHARES, ..Default::default() }; n * nr_cpus],
            gse_on_rq: vec![false; n * nr_cpus],
            tg_load: vec![0; n],
            custom_slices: false,
            wf_fork: false,
        }
    }

    /// The cfs_rq of group `g` on `cpu`.
    #[inline]
    pub fn cfs_index(&self, g: usize, cpu: usize) -> usize {
        g * self.nr_cpus + cpu
    }

    /// The group a cfs_rq belongs to.
    #[inline]
    pub fn group_of_cfs(&self, c: usize) -> usize {
        c / self.nr_cpus
    }
}

/// Tells whether an entity id is a group entity.
#[inline]
pub(crate) fn is_group(e: EntityId) -> bool {
    e & GROUP_SE != 0
}

/// Every runqueue's min_vruntime starts here so placement behind it never underflows.
pub(crate) const VRUNTIME_BASE: u64 = 1 << 50;

/// Returns delta scaled by NICE_0 / weight (calc_delta_fair).
#[inline]
pub(crate) fn calc_delta_fair(delta: Ns, weight: u64) -> u64 {
    if weight == 1024 {
        delta
    } else {
        ((delta as u128 * 1024) / weight.max(1) as u128) as u64
    }
}

/// Where each queued task sits in its runqueue's list, and the timeline nodes of all
/// runqueues (an entity is queued on at most one).
#[derive(Clone, Debug, Default)]
pub(crate) struct QueueIndex {
    pub(crate) pos: Vec<u32>,
    pub(crate) timeline: crate::state::timeline::Timeline,
    /// CPUs with at least one queued task (what find_busiest_queue can pull from).
    pub(crate) nonempty: crate::cpumask::CpuMask,
}
