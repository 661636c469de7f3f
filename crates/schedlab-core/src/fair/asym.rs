//! Asymmetric CPU capacity (big.LITTLE): misfit tasks and capacity-aware wakeups.
//!
//! Mirrors: kernel/sched/fair.c: fits_capacity() (util x 1280 < capacity x 1024),
//! task_fits_cpu(), update_misfit_status() (4.20, 3b1baa6496e6 "sched/fair: Add
//! 'group_misfit_task' load-balance type": rq->misfit_task_load, group_misfit_task,
//! migrate_misfit, need_active_balance() for misfits, check_misfit_status() in the nohz
//! kick), select_idle_capacity() and the asym_fits_cpu() checks of
//! select_idle_sibling(), in each version's form (see [`AsymFit`]).
//! Model: a task's utilization is task_util_est(): its PELT util_avg (synced to now for
//! wakeups, as sync_entity_load_avg() does) or its util_est if larger, with its
//! effective uclamp_min/max; util_est and the clamps are kept on these runs (with PELT on
//! an asymmetric machine) and under schedutil (sched/cpufreq.rs). Without PELT there
//! is no utilization and every task fits. No thermal pressure: capacity_of() and
//! get_actual_cpu_capacity() are the original capacity. Energy-aware placement
//! (find_energy_efficient_cpu) is fair/energy.rs, under schedutil only.

use crate::cpumask::CpuId;
use crate::features::Feature;
use crate::state::task::TaskId;
use crate::state::Simulator;
use crate::topology::SdFlags;

/// capacity_margin: a task fits a CPU when util x 1280 < capacity x 1024 (fits_capacity).
pub(crate) fn fits_capacity(util: u64, capacity: u64) -> bool {
    util * 1280 < capacity * 1024
}

/// capacity_greater(): `a` is more than ~5% above `b` (a x 1024 > b x 1078).
pub(crate) fn capacity_greater(a: u64, b: u64) -> bool {
    a * 1024 > b * 1078
}

impl Simulator {
    /// sched_asym_cpucap_active() with misfit handling on.
    #[inline]
    pub(crate) fn misfit_active(&self) -> bool {
        self.balance.asym_capacity && self.feat.has(Feature::MISFIT)
    }

    /// A task's utilization (its util_avg; 0 without PELT).
    fn task_util(&self, p: TaskId) -> u64 {
        if self.pelt_on() {
            self.tasks[p].se.avg.util_avg
        } else {
            0
        }
    }

    /// The task's utilization decayed to now (sync_entity_load_avg() for a sleeper).
    pub(crate) fn task_util_synced(&self, p: TaskId) -> u64 {
        if !self.pelt_on() {
            return 0;
        }
        let mut a = self.tasks[p].se.avg;
        if a.last_update_time != 0 && !self.tasks[p].se.on_rq && a.update_sum(self.now, 0, 0, false, 1024) {
            a.update_avg(self.tasks[p].se.weight);
        }
        a.util_avg
    }

    /// The largest capacity among the CPUs `p` may run on (p->max_allowed_capacity).
    fn max_allowed_capacity(&self, p: TaskId) -> u64 {
        self.tasks[p].cpus_allowed.iter().map(|c| self.capacity(c)).max().unwrap_or(0)
    }

    /// task_fits_cpu(): does `p` fit `cpu` with the 20 % margin? It reads task_util_est()
    /// (the larger of util_avg and util_est, since misfit came in 4.20) and the task's
    /// effective clamps: 6.2+ util_fits_cpu() > 0 (b48e16a69792, "sched/uclamp: Make
    /// task_fits_capacity() use util_fits_cpu()": uclamp_max at or under the capacity
    /// fits, a uclamp_min above it does not); 5.6-6.1 the util clamped first,
    /// uclamp_task_util() (a7008c07a568, "sched/fair: Make task_fits_capacity() consider
    /// uclamp restrictions", 5.6).
    fn task_fits_cpu(&self, p: TaskId, cpu: CpuId) -> bool {
        let t = self.asym_task_util(p, self.task_util(p));
        let v = self.k.version;
        let form = if v >= crate::kernel::KernelVersion::new(6, 2) {
            AsymFit::UtilFitsCpu
        } else if v >= crate::kernel::KernelVersion::new(5, 6) {
            AsymFit::Clamped
        } else {
            AsymFit::UtilEst
        };
        form.fits(&t, self.capacity(cpu), self.eas.uclamp_used) > 0
    }

    /// task_util_est(p) from `util_avg` (util_est on runs that keep it) and
    /// uclamp_eff_value(p, UCLAMP_MIN / MAX) (none without a clamp).
    fn asym_task_util(&self, p: TaskId, util_avg: u64) -> AsymTaskUtil {
        let mut util = util_avg;
        if let (true, Some(form), Some(t)) = (self.eas.util_est_on, self.eas.form, self.eas.tasks.get(p)) {
            util = crate::eas::util_est::task_util_est(util, &t.util_est, form);
        }
        let c = if self.eas.uclamp_used { self.eas.uclamp_of(p, self.task_group(p)) } else { crate::eas::Uclamp::NONE };
        AsymTaskUtil { util, min: c.min, max: c.max }
    }

    /// The fit test of the wakeup path a profile has.
    pub(crate) fn asym_fit_form(&self) -> AsymFit {
        if self.feat.has(Feature::ASYM_UTIL_FITS_CPU) {
            if self.feat.has(Feature::ASYM_FITS_UCLAMP_MIN_HINT) {
                AsymFit::UtilFitsCpuHint
            } else {
                AsymFit::UtilFitsCpu
            }
        } else if self.k.version >= crate::kernel::KernelVersion::new(5, 6) {
            AsymFit::Clamped
        } else {
            AsymFit::UtilEst
        }
    }

    /// update_misfit_status(): is the task running (or picked) on `cpu` too big for it,
    /// with a bigger CPU in its affinity? Records its load as the CPU's misfit load.
    pub(crate) fn update_misfit_status(&mut self, cpu: CpuId, p: Option<TaskId>) {
        if !self.misfit_active() {
            return;
        }
        let load = match p {
            Some(p) if self.tasks[p].nr_cpus_allowed > 1 && self.capacity(cpu) != self.max_allowed_capacity(p) && !self.task_fits_cpu(p, cpu) => {
                self.task_h_load(p).max(1)
            }
            _ => 0,
        };
        let rq = &mut self.rqs[cpu];
        match (rq.misfit_task_load > 0, load > 0) {
            (false, true) => self.balance.nr_misfit += 1,
            (true, false) => self.balance.nr_misfit -= 1,
            _ => {}
        }
        self.rqs[cpu].misfit_task_load = load;
    }

    /// A group's largest misfit load and its CPUs' largest capacity (update_sg_lb_stats).
    pub(crate) fn group_misfit(&self, cpus: &[CpuId]) -> (u64, u64) {
        let misfit = cpus.iter().map(|&c| self.rqs[c].misfit_task_load).max().unwrap_or(0);
        let max_cap = cpus.iter().map(|&c| self.capacity(c)).max().unwrap_or(0);
        (misfit, max_cap)
    }

    /// check_misfit_status(): a misfit here that a bigger CPU could take (nohz kick).
    pub(crate) fn check_misfit_status(&self, cpu: CpuId) -> bool {
        self.rqs[cpu].misfit_task_load > 0 && self.capacity(cpu) < self.rd.max_cpu_capacity
    }

    /// Whether wakeups take the asymmetric-capacity path.
    #[inline]
    pub(crate) fn asym_wakeup(&self) -> bool {
        self.balance.asym_capacity && self.feat.has(Feature::SIS_ASYM_CAPACITY)
    }

    /// select_idle_sibling() on an asymmetric machine: 5.10+ (SIS_ASYM_PREV_FIRST) target,
    /// prev and the recently used CPU if idle and asym_fits_cpu(); then (5.7+ at once)
    /// select_idle_capacity() over the lowest domain of mixed capacities, else the target.
    pub(crate) fn select_idle_sibling_asym(&mut self, p: TaskId, prev: CpuId, target: CpuId, reader: CpuId) -> CpuId {
        let t = self.asym_task_util(p, self.task_util_synced(p));
        let idle = |s: &Self, c: CpuId| (s.available_idle_cpu(c) || s.sched_idle_cpu(c)) && s.tasks[p].cpus_allowed.test(c);
        let form = self.asym_fit_form();
        let fit = |s: &Self, c: CpuId| form.fits(&t, s.capacity(c), s.eas.uclamp_used);
        if self.feat.has(Feature::SIS_ASYM_PREV_FIRST) {
            // asym_fits_cpu(): a full fit (6.3+ wants > 0; the older forms say 1 or 0).
            let fits = |s: &Self, c: CpuId| fit(s, c) > 0;
            if idle(self, target) && fits(self, target) {
                return target;
            }
            if prev != target && self.m.share_llc(prev, target) && idle(self, prev) && fits(self, prev) {
                return prev;
            }
            let recent = self.tasks[p].recent_used_cpu;
            self.tasks[p].recent_used_cpu = prev;
            if recent != prev && recent != target && self.m.share_llc(recent, target) && idle(self, recent) && fits(self, recent) {
                return recent;
            }
        }
        let Some(sd) = self.m.domains[target].iter().find(|d| d.flags.has(SdFlags::ASYM_CPUCAPACITY)) else {
            return target;
        };
        // select_idle_capacity(): wrap from the target; the first idle CPU the task fully
        // fits, else the idle CPU that fits best (6.3+: -1 before 0), of the largest
        // capacity at that level.
        let cpus = sd.span.and(&self.tasks[p].cpus_allowed);
        let order = cpus.iter_wrap(target);
        let (mut best, mut best_cap, mut best_fits, mut examined, mut cost) = (None, 0, 0, 0u64, super::placement::ReadPass::default());
        let mut found = None;
        for c in order {
            examined += 1;
            cost.add(1.0, self.line_latency(reader, c));
            if !self.available_idle_cpu(c) && !self.sched_idle_cpu(c) {
                continue;
            }
            let fits = fit(self, c);
            if fits > 0 {
                found = Some(c);
                break;
            }
            let cap = self.capacity(c);
            if fits < best_fits || (fits == best_fits && cap > best_cap) {
                (best, best_cap, best_fits) = (Some(c), cap, fits);
            }
        }
        self.charge_waker(reader, examined, cost);
        found.or(best).unwrap_or(target)
    }
}

/// A task's utilization as the asymmetric paths read it.
#[derive(Clone, Copy, Debug)]
struct AsymTaskUtil {
    /// task_util_est().
    util: u64,
    /// uclamp_eff_value(p, UCLAMP_MIN).
    min: u64,
    /// uclamp_eff_value(p, UCLAMP_MAX).
    max: u64,
}

impl AsymTaskUtil {
    /// uclamp_task_util(): task_util_est() clamped into [uclamp_min, uclamp_max].
    fn clamped(&self) -> u64 {
        self.util.clamp(self.min.min(self.max), self.max)
    }
}

/// The fit test of the asymmetric wakeup path (asym_fits_cpu(), select_idle_capacity()).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AsymFit {
    /// Before 5.6: fits_capacity(task_util_est(p)) (task_fits_capacity() of 4.20's
    /// misfit; the wakeup scan itself is 5.7+, so only a scenario switching
    /// SIS_ASYM_CAPACITY on for an older profile reads it here).
    UtilEst,
    /// 5.6-6.1: fits_capacity(uclamp_task_util(p)) (a7008c07a568, 5.6; b4c9c9f15649's
    /// asym_fits_capacity(), 5.10).
    Clamped,
    /// 6.2: util_fits_cpu(task_util_est(p), uclamp_min, uclamp_max) as a bool, a
    /// uclamp_min above a CPU's capacity not fitting it (b759caa1d9f6 "sched/uclamp: Make select_idle_capacity() use util_fits_cpu()",
    /// a2e7f03ed28f "sched/uclamp: Make asym_fits_capacity() use util_fits_cpu()").
    UtilFitsCpu,
    /// 6.3+: util_fits_cpu() with -1 for "fits only without uclamp_min": asym_fits_cpu()
    /// wants > 0, select_idle_capacity() keeps the best -1 CPU by capacity
    /// (e5ed0550c04c "sched/fair: unlink misfit task from cpu overutilized").
    UtilFitsCpuHint,
}

impl AsymFit {
    /// The fit of a task to a CPU of capacity `cap` in this form: 1 fits, 0 does not, -1
    /// fits but not its uclamp_min hint (6.3+ only: 6.2 says 0 there).
    fn fits(self, t: &AsymTaskUtil, cap: u64, uclamp_used: bool) -> i32 {
        let util_fits_cpu = || crate::eas::energy::util_fits_cpu(t.util, t.min, t.max, cap, uclamp_used);
        match self {
            AsymFit::UtilFitsCpuHint => util_fits_cpu(),
            // 6.2's util_fits_cpu() was a bool: a uclamp_min above the capacity of a CPU
            // short of SCHED_CAPACITY_SCALE did not fit (what 6.3 made -1).
            AsymFit::UtilFitsCpu => (util_fits_cpu() > 0) as i32,
            AsymFit::Clamped => fits_capacity(t.clamped(), cap) as i32,
            AsymFit::UtilEst => fits_capacity(t.util, cap) as i32,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// Kunpeng 920, cluster 0 = CPUs 0-3: hogs busy on CPUs 2 and 3, the rest idle. A wakeup targeting CPU 2 scans from CPU 3: the plain LLC scan finds
    /// CPU 4 (another cluster), the 6.7 scan the target's cluster first and finds CPU 0.
    #[test]
    fn the_wakeup_scan_tries_the_targets_cluster_first() {
        for (profile, want) in [("6.6", 4), ("6.7", 0)] {
            let text = format!(
                "[machine]\npreset = \"kunpeng-920-2s\"\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"h\"\ncount = 2\npin_each = true\naffinity = \"2-3\"\nprogram = [{{ run = \"1s\" }}]\n\
                 [[tasks]]\nname = \"p\"\ncpu = 2\nstart = \"1s\"\nprogram = [{{ run = \"1ms\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let mut s = Simulator::new(&Scenario::from_toml_str(&text, "<test>").unwrap(), 1, false).unwrap();
            while s.now < 5_000_000 && s.step() {}
            assert!(s.rqs[2].curr.is_some() && s.rqs[3].curr.is_some() && s.rqs[0].curr.is_none());
            let p = 2;
            s.tasks[p].recent_used_cpu = 2;
            let cpu = s.select_task_rq_fair(p, 2, 2, None, false, false);
            assert_eq!(cpu, want, "{profile}");
        }
    }
}
