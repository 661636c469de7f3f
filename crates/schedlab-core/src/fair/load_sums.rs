//! Sums of runnable tasks, load, PELT averages and idle CPUs per sched group, kept up
//! to date.
//!
//! Mirrors: what update_sd_lb_stats()/update_sg_lb_stats() add up on every balance
//! pass (sum_nr_running, group_load, group_capacity, idle_cpus), and
//! sd_llc_shared->has_idle_cores (the kernel's hint, kept as the kernel keeps it).
//! Model: the kernel re-adds every CPU of a domain on each pass; the simulator keeps
//! each group's sums current as runqueues change (every CPU belongs to one group per
//! level), so a pass costs O(groups) of simulator time while the balancing CPU is still
//! charged the kernel's cost: one remote cache-line read per CPU of the domain.

use crate::cpumask::CpuId;
use crate::time::Ns;
use crate::topology::Machine;

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
    groups: Vec<GroupSums>,
    /// Group ids of each (CPU, level), in the domain's group order (shared, as the
    /// domains share their group lists).
    sd_groups: Vec<Vec<std::sync::Arc<[u32]>>>,
    /// Groups each CPU belongs to (one per level at most, deduplicated).
    cpu_groups: Vec<Vec<u32>>,
    cpu_nr_running: Vec<u32>,
    cpu_llc: Vec<u32>,
    /// sd_llc_shared->has_idle_cores: a hint, set when a CPU goes idle with its SMT
    /// siblings idle and cleared by a wakeup scan that finds no idle core, so it can
    /// be stale either way, as the kernel's is.
    has_idle_cores: Vec<bool>,
    /// CPUs with something runnable per LLC (sd_llc_shared->nr_busy_cpus).
    llc_busy: Vec<u32>,
    /// Cost of one balance pass at each (CPU, level): a remote line per CPU examined.
    scan_cost: Vec<Vec<Ns>>,
}

impl LoadSums {
    /// Prepares the sums for a machine whose CPUs are all idle.
    pub fn new(m: &Machine) -> Self {
        let mut ids: std::collections::BTreeMap<(CpuId, usize), u32> = std::collections::BTreeMap::new();
        let mut groups: Vec<GroupSums> = Vec::new();
        let mut cpu_groups = vec![Vec::new(); m.nr_cpus()];
        let mut by_list: std::collections::HashMap<*const crate::cpumask::CpuMask, std::sync::Arc<[u32]>> =
            Default::default();
        let sd_groups = m
            .domains
            .iter()
            .map(|doms| {
                doms.iter()
                    .map(|sd| {
                        let list = by_list.entry(sd.groups.as_ptr()).or_insert_with(|| {
                        sd.groups
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
                            .collect()
                        });
                        list.clone()
                    })
                    .collect()
            })
            .collect();
        let scan_cost = (0..m.nr_cpus())
            .map(|cpu| {
                m.domains[cpu]
                    .iter()
                    .map(|sd| {
                        let ns: f64 = sd.span.iter().map(|c| m.cost.cacheline.at(m.distance(cpu, c))).sum();
                        (ns / m.cost.miss_parallelism.max(1.0)) as Ns
                    })
                    .collect()
            })
            .collect();
        Self {
            groups,
            sd_groups,
            cpu_groups,
            cpu_nr_running: vec![0; m.nr_cpus()],
            cpu_llc: m.cpus.iter().map(|c| c.llc as u32).collect(),
            scan_cost,
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

    /// Returns the group ids of `cpu`'s domain at `level`.
    #[inline]
    pub fn sd_groups(&self, cpu: CpuId, level: usize) -> &[u32] {
        &self.sd_groups[cpu][level]
    }

    /// Returns the cost of one balance pass of `cpu` at `level`.
    #[inline]
    pub fn scan_cost(&self, cpu: CpuId, level: usize) -> Ns {
        self.scan_cost[cpu][level]
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
            let g = &mut self.groups[g as usize];
            g.nr_running = (g.nr_running as isize + delta) as usize;
            g.idle_cpus = (g.idle_cpus as isize + idle_delta) as usize;
        }
        let llc = self.cpu_llc[cpu] as usize;
        self.llc_busy[llc] = (self.llc_busy[llc] as isize - idle_delta) as u32;
    }

    /// Applies a change of `cpu`'s load.
    pub fn load_changed(&mut self, cpu: CpuId, delta: i64) {
        for &g in &self.cpu_groups[cpu] {
            let g = &mut self.groups[g as usize];
            g.load = (g.load as i64 + delta) as u64;
        }
    }

    /// Applies a change of `cpu`'s root PELT averages.
    pub fn pelt_changed(&mut self, cpu: CpuId, load: i64, util: i64, runnable: i64) {
        if load == 0 && util == 0 && runnable == 0 {
            return;
        }
        for &g in &self.cpu_groups[cpu] {
            let g = &mut self.groups[g as usize];
            g.load_avg = (g.load_avg as i64 + load) as u64;
            g.util_avg = (g.util_avg as i64 + util) as u64;
            g.runnable_avg = (g.runnable_avg as i64 + runnable) as u64;
        }
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
