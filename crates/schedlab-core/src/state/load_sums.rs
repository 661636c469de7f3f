//! Sums of runnable tasks, load, PELT averages and idle CPUs per sched group, kept up
//! to date.
//!
//! Mirrors: what update_sd_lb_stats()/update_sg_lb_stats() add up on every balance
//! pass (sum_nr_running, group_load, group_capacity, idle_cpus), and
//! sd_llc_shared->has_idle_cores (the kernel's hint, kept as the kernel keeps it).
//! Model: the kernel re-adds every CPU of a domain on each pass; the simulator keeps
//! each group's sums current as runqueues change (every CPU belongs to one group per
//! level), so a pass costs O(groups) of simulator time while the balancing CPU is still
//! charged the kernel's cost: one remote cache-line read per CPU of the domain. A domain
//! of many groups also keeps a busiest-group tree (`busiest_tree.rs`), so its pass
//! re-ranks only the groups that changed since the last one.

use crate::cpumask::CpuId;
use crate::state::busiest_tree::{BusiestTree, Rank};
use crate::time::Ns;
use crate::topology::Machine;

/// Domains of at least this many groups find their busiest group through a
/// [`BusiestTree`]; smaller ones are scanned (a scan of a few groups is cheaper).
pub const BUSIEST_TREE_MIN_GROUPS: usize = 32;

/// A domain's busiest-group tree and the sums over all its groups (the whole span).
#[derive(Clone, Debug)]
struct ListTree {
    tree: BusiestTree,
    load: u64,
    load_avg: u64,
    capacity: u64,
}

/// A group's sums changed: mark it in the trees that hold it (`leaves`, its (list,
/// leaf) pairs) and move those domains' load sums by `load` and `load_avg`.
fn touch_trees(trees: &mut [Option<ListTree>], leaves: &[(u32, u32)], load: i64, load_avg: i64) {
    for &(t, leaf) in leaves {
        let lt = trees[t as usize].as_mut().expect("a group has leaves only in trees made");
        lt.tree.mark(leaf);
        lt.load = (lt.load as i64 + load) as u64;
        lt.load_avg = (lt.load_avg as i64 + load_avg) as u64;
    }
}

/// What a domain's tree tells a balance pass.
#[derive(Clone, Copy, Debug)]
pub struct TreePick {
    /// The busiest group other than the local one, if any has tasks.
    pub busiest: Option<u32>,
    /// Σ load over the domain's groups.
    pub load: u64,
    /// Σ PELT load_avg over them.
    pub load_avg: u64,
    /// Σ capacity over them.
    pub capacity: u64,
}

/// The figures of one sched group.
#[derive(Clone, Debug, Default)]
pub struct GroupSums {
    /// CPUs of the group.
    pub cpus: Vec<CpuId>,
    /// The same CPUs as a mask.
    pub mask: crate::cpumask::CpuMask,
    /// Runnable tasks on its CPUs.
    pub nr_running: usize,
    /// Sum of their weights.
    pub load: u64,
    /// Σ cpu_load(): the root cfs_rqs' PELT load_avg, as last updated (a CPU's figure
    /// moves when its averages are updated, as the kernel's blocked load does).
    pub load_avg: u64,
    /// Σ cpu_util_cfs() (the root cfs_rqs' util_avg).
    pub util_avg: u64,
    /// Σ cpu_runnable() (the root cfs_rqs' runnable_avg).
    pub runnable_avg: u64,
    /// CPUs with nothing runnable.
    pub idle_cpus: usize,
    /// Sum of CPU capacities.
    pub capacity: u64,
    /// CPUs.
    pub weight: usize,
}

/// Every group's sums, each (CPU, level)'s groups, and per-CPU state.
#[derive(Clone, Debug, Default)]
pub struct LoadSums {
    /// The line distances the scan prices include (bit = `Distance as u8`): what a pass
    /// reads of the cost table, with `miss_parallelism`.
    pub(crate) scan_distances: u8,
    groups: Vec<GroupSums>,
    /// The group list of each (CPU, level), as an index into `lists`: group ids in the
    /// domain's group order, one list per span (the domains share their group lists).
    sd_list: Vec<Vec<u32>>,
    lists: Vec<std::sync::Arc<[u32]>>,
    /// Each list's busiest-group tree, made at the first pass that needs it (lists of
    /// at least `tree_min_groups` groups).
    trees: Vec<Option<ListTree>>,
    /// The (list, leaf) of each group in every tree made.
    group_leaves: Vec<Vec<(u32, u32)>>,
    /// [`BUSIEST_TREE_MIN_GROUPS`]; tests lower it to check trees against the scan.
    pub(crate) tree_min_groups: usize,
    /// Groups each CPU belongs to (one per level at most, deduplicated).
    cpu_groups: Vec<Vec<u32>>,
    cpu_nr_running: Vec<u32>,
    /// Per CPU, its rq's queued weight and its root cfs_rq's PELT load_avg, as the group
    /// sums last took them: fork placement's per-CPU key read from two dense arrays
    /// instead of a runqueue and a cfs_rq per CPU of the group.
    cpu_load: Vec<u64>,
    cpu_load_avg: Vec<u64>,
    cpu_llc: Vec<u32>,
    /// sd_llc_shared->has_idle_cores: a hint, set when a CPU goes idle with its SMT
    /// siblings idle and cleared by a wakeup scan that finds no idle core, so it can
    /// be stale either way, as the kernel's is.
    has_idle_cores: Vec<bool>,
    /// CPUs with something runnable per LLC (sd_llc_shared->nr_busy_cpus).
    llc_busy: Vec<u32>,
    /// Per (CPU, level): the lines a balance pass reads from every CPU of the level's
    /// span, priced at their distance from the reading CPU (before overlap), and the
    /// latency of the farthest one (CostTable::read_pass_ns's exposed miss).
    scan_lines_ns: Vec<Vec<(f64, f64)>>,
    /// The misses a core keeps in flight (the cost table's miss_parallelism).
    miss_parallelism: f64,
}

/// derived: update_sg_lb_stats() (and fork placement's update_sg_wakeup_stats()) read,
/// per CPU, the runqueue's first line (nr_running, ttwu_pending; from 7.0 also
/// cpu_capacity, curr and idle: 89951fc1f820 "sched: Reorder some fields in struct rq"),
/// the root cfs_rq's counts (h_nr_running) and its sched_avg line (load, runnable and
/// util averages). Band 3-5 (before 7.0, idle_cpu()'s rq->curr and the overutilized
/// check's rq->cpu_capacity are lines of their own).
pub(crate) const LB_LINES_PER_CPU: f64 = 3.0;

impl LoadSums {
    /// Prepares the sums for a machine whose CPUs are all idle.
    pub fn new(m: &Machine) -> Self {
        let mut ids: std::collections::BTreeMap<(CpuId, usize), u32> = std::collections::BTreeMap::new();
        let mut groups: Vec<GroupSums> = Vec::new();
        let mut cpu_groups = vec![Vec::new(); m.nr_cpus()];
        // One list per shared group list of the domains (keyed by its address).
        let mut list_of: std::collections::HashMap<*const crate::cpumask::CpuMask, u32> = Default::default();
        let mut lists: Vec<std::sync::Arc<[u32]>> = Vec::new();
        let sd_list = m
            .domains
            .iter()
            .map(|doms| {
                doms.iter()
                    .map(|sd| {
                        *list_of.entry(sd.groups.as_ptr()).or_insert_with(|| {
                            let list = sd
                                .groups
                                .iter()
                                .map(|g| {
                                    *ids.entry((g.first().unwrap_or(0), g.weight())).or_insert_with(|| {
                                        let id = groups.len() as u32;
                                        let cpus: Vec<CpuId> = g.iter().collect();
                                        for &c in &cpus {
                                            cpu_groups[c].push(id);
                                        }
                                        groups.push(GroupSums {
                                            idle_cpus: cpus.len(),
                                            weight: cpus.len(),
                                            capacity: cpus.iter().map(|&c| m.cpus[c].capacity as u64).sum(),
                                            cpus,
                                            mask: *g,
                                            ..Default::default()
                                        });
                                        id
                                    })
                                })
                                .collect();
                            lists.push(list);
                            lists.len() as u32 - 1
                        })
                    })
                    .collect()
            })
            .collect();
        let distances = std::cell::Cell::new(0u8);
        let scan_lines_ns = (0..m.nr_cpus())
            .map(|cpu| {
                m.domains[cpu]
                    .iter()
                    .map(|sd| {
                        let at = |c: CpuId| {
                            let d = m.distance(cpu, c);
                            distances.set(distances.get() | 1 << d as u8);
                            m.cost.cacheline.at(d)
                        };
                        let total: f64 = sd.span.iter().map(|c| LB_LINES_PER_CPU * at(c)).sum();
                        (total, sd.span.iter().map(at).fold(0.0, f64::max))
                    })
                    .collect()
            })
            .collect();
        Self {
            trees: vec![None; lists.len()],
            group_leaves: vec![Vec::new(); groups.len()],
            sd_list,
            lists,
            tree_min_groups: BUSIEST_TREE_MIN_GROUPS,
            groups,
            cpu_groups,
            cpu_nr_running: vec![0; m.nr_cpus()],
            cpu_load: vec![0; m.nr_cpus()],
            cpu_load_avg: vec![0; m.nr_cpus()],
            cpu_llc: m.cpus.iter().map(|c| c.llc as u32).collect(),
            scan_lines_ns,
            scan_distances: distances.get(),
            miss_parallelism: m.cost.miss_parallelism,
            llc_busy: vec![0; m.llc_span.len()],
            // Every CPU went idle at boot with its siblings idle.
            has_idle_cores: vec![true; m.llc_span.len()],
        }
    }

    /// Returns a group's sums.
    #[inline]
    pub fn group(&self, gid: u32) -> &GroupSums {
        &self.groups[gid as usize]
    }

    /// `cpu`'s runnable tasks, queued weight and root PELT load_avg (rq->nr_running,
    /// rq's load, cpu_load()), as the sums took them.
    #[inline]
    pub fn cpu_figures(&self, cpu: CpuId) -> (usize, u64, u64) {
        (self.cpu_nr_running[cpu] as usize, self.cpu_load[cpu], self.cpu_load_avg[cpu])
    }

    /// Returns the group ids of `cpu`'s domain at `level`.
    #[inline]
    pub fn sd_groups(&self, cpu: CpuId, level: usize) -> &[u32] {
        &self.lists[self.sd_list[cpu][level] as usize]
    }

    /// The cost to `cpu` of reading the runqueues of its domain at `level` in a pass
    /// that already read those of `read_below` (a lower level: its lines hit). The reads
    /// of one pass are independent loads (CostTable::read_pass_ns); the farthest line
    /// of a level is in the part its lower levels did not read.
    #[inline]
    pub fn scan_cost(&self, cpu: CpuId, level: usize, read_below: Option<usize>) -> Ns {
        let lines = &self.scan_lines_ns[cpu];
        let (total, longest) = lines[level];
        let ns = total - read_below.filter(|&b| b < level).map_or(0.0, |b| lines[b].0);
        crate::cost::read_pass_ns(self.miss_parallelism, longest, ns) as Ns
    }

    /// Applies a change of `cpu`'s nr_running by `delta`.
    pub fn nr_running_changed(&mut self, cpu: CpuId, delta: isize) {
        let before = self.cpu_nr_running[cpu] as isize;
        let after = before + delta;
        self.cpu_nr_running[cpu] = after as u32;
        let idle_delta: isize = match (before == 0, after == 0) {
            (true, false) => -1,
            (false, true) => 1,
            _ => 0,
        };
        for &g in &self.cpu_groups[cpu] {
            let gs = &mut self.groups[g as usize];
            gs.nr_running = (gs.nr_running as isize + delta) as usize;
            gs.idle_cpus = (gs.idle_cpus as isize + idle_delta) as usize;
            touch_trees(&mut self.trees, &self.group_leaves[g as usize], 0, 0);
        }
        let llc = self.cpu_llc[cpu] as usize;
        self.llc_busy[llc] = (self.llc_busy[llc] as isize - idle_delta) as u32;
    }

    /// Applies a change of `cpu`'s load.
    pub fn load_changed(&mut self, cpu: CpuId, delta: i64) {
        self.cpu_load[cpu] = (self.cpu_load[cpu] as i64 + delta) as u64;
        for &g in &self.cpu_groups[cpu] {
            let gs = &mut self.groups[g as usize];
            gs.load = (gs.load as i64 + delta) as u64;
            touch_trees(&mut self.trees, &self.group_leaves[g as usize], delta, 0);
        }
    }

    /// Applies a change of `cpu`'s root PELT averages.
    pub fn pelt_changed(&mut self, cpu: CpuId, load: i64, util: i64, runnable: i64) {
        if load == 0 && util == 0 && runnable == 0 {
            return;
        }
        self.cpu_load_avg[cpu] = (self.cpu_load_avg[cpu] as i64 + load) as u64;
        for &g in &self.cpu_groups[cpu] {
            let gs = &mut self.groups[g as usize];
            gs.load_avg = (gs.load_avg as i64 + load) as u64;
            gs.util_avg = (gs.util_avg as i64 + util) as u64;
            gs.runnable_avg = (gs.runnable_avg as i64 + runnable) as u64;
            touch_trees(&mut self.trees, &self.group_leaves[g as usize], 0, load);
        }
    }

    /// The busiest group of `cpu`'s domain at `level` other than the group at `local`
    /// (its index in the domain's list), ranked by `rank_of`, with the domain's sums; None
    /// for a domain of fewer than `tree_min_groups` groups (scan those). The tree is
    /// made at its first use, and every group it covers is re-ranked then.
    pub fn tree_pick(&mut self, cpu: CpuId, level: usize, local: usize, rank_of: impl Fn(&GroupSums) -> Rank) -> Option<TreePick> {
        let id = self.sd_list[cpu][level] as usize;
        let list = &self.lists[id];
        if list.len() < self.tree_min_groups {
            return None;
        }
        if self.trees[id].is_none() {
            let sum = |f: fn(&GroupSums) -> u64| list.iter().map(|&g| f(&self.groups[g as usize])).sum::<u64>();
            let lt =
                ListTree { tree: BusiestTree::new(list.len()), load: sum(|g| g.load), load_avg: sum(|g| g.load_avg), capacity: sum(|g| g.capacity) };
            for (leaf, &g) in list.iter().enumerate() {
                self.group_leaves[g as usize].push((id as u32, leaf as u32));
            }
            self.trees[id] = Some(lt);
        }
        let (groups, list) = (&self.groups, &self.lists[id]);
        let lt = self.trees[id].as_mut().expect("made above");
        lt.tree.refresh(|leaf| rank_of(&groups[list[leaf] as usize]));
        let busiest = lt.tree.best_except(local).map(|leaf| list[leaf]);
        Some(TreePick { busiest, load: lt.load, load_avg: lt.load_avg, capacity: lt.capacity })
    }

    /// CPUs of the LLC with something runnable (sd_llc_shared->nr_busy_cpus).
    pub fn llc_busy_cpus(&self, llc: usize) -> u32 {
        self.llc_busy[llc]
    }

    /// test_idle_cores(): the LLC's has_idle_cores hint.
    #[inline]
    pub fn test_idle_cores(&self, llc: usize) -> bool {
        self.has_idle_cores[llc]
    }

    /// set_idle_cores().
    #[inline]
    pub fn set_idle_cores(&mut self, llc: usize, idle: bool) {
        self.has_idle_cores[llc] = idle;
    }
}
