//! The engine's side of energy-aware placement: the root domain's snapshot that
//! find_energy_efficient_cpu() reads at a wakeup, the overutilized flag where the kernel
//! updates it, and the load balancer standing aside while EAS places tasks.
//!
//! Mirrors: kernel/sched/fair.c select_task_rq_fair() (feec first for a wakeup when
//! sched_energy_enabled()), check_update_overutilized_status() (enqueue_task_fair() of a
//! task that is not new, task_tick_fair()), update_sd_lb_stats() (the root level sets or
//! clears rd->overutilized) and find_busiest_group()'s `out_balanced` while EAS is on and
//! the root domain is not overutilized.
//! Model: the snapshot is every CPU's root cfs_rq util_avg as it stands (the kernel reads
//! the remote CPUs' averages unsynced too), the rq's util_est sum, its clamps; the waking
//! task's util synced to now (sync_entity_load_avg()). The rules are eas/energy.rs.

use crate::eas::energy::{CpuSnap, EasSnapshot, TaskSnap};
use crate::eas::util_est::cpu_util;
use crate::state::task::TaskId;
use crate::state::Simulator;

impl Simulator {
    /// The cfs util of `cpu` as cpu_util(cpu, NULL, -1) with util_est.
    pub(crate) fn eas_cpu_util(&self, cpu: usize) -> u64 {
        let util_avg = self.fg.cfs[self.root_cfs(cpu)].avg.util_avg;
        let est = self.eas.rq_util_est[cpu].enqueued;
        cpu_util(cpu, util_avg, est, self.capacity(cpu), None, None, self.eas.util_est_on)
    }

    /// find_energy_efficient_cpu() for a waking `p` last on `prev`: None when EAS does
    /// not decide (off, or the root domain is overutilized).
    pub(crate) fn find_energy_efficient_cpu(&mut self, p: TaskId, prev: usize) -> Option<usize> {
        if !self.eas.feec || self.eas.rd.overutilized {
            return None;
        }
        let form = self.eas.form.expect("set with feec");
        let util_est = if self.eas.util_est_on { self.eas.task(p).util_est.task_util_est(form) } else { 0 };
        let task = TaskSnap {
            util_avg: self.task_util_synced(p),
            util_est,
            uclamp: self.eas.uclamp_of(p),
            prev_cpu: prev,
            allowed: (0..self.m.nr_cpus()).map(|c| self.tasks[p].cpus_allowed.test(c)).collect(),
        };
        let cpus = (0..self.m.nr_cpus())
            .map(|c| CpuSnap {
                capacity: self.capacity(c),
                util_avg: self.fg.cfs[self.root_cfs(c)].avg.util_avg,
                util_est: self.eas.rq_util_est[c].enqueued,
                uclamp: if self.eas.uclamp_used { self.eas.rq_uclamp(c) } else { None },
                pd: self.eas.pd_of_cpu[c],
            })
            .collect();
        // The domains' cost tables move into the snapshot and back (no copy per wakeup).
        let snap = EasSnapshot {
            cpus,
            pds: std::mem::take(&mut self.eas.pds),
            util_est_on: self.eas.util_est_on,
            uclamp_used: self.eas.uclamp_used,
        };
        let cpu = snap.find_energy_efficient_cpu(&task, false, self.eas.rules.expect("set with feec"));
        self.eas.pds = snap.pds;
        if cpu.is_some() {
            self.eas.feec_placements += 1;
        }
        cpu
    }

    /// cpu_overutilized() of `cpu` now.
    fn eas_cpu_overutilized(&self, cpu: usize) -> bool {
        let cl = if self.eas.uclamp_used { self.eas.rq_uclamp(cpu).unwrap_or_default() } else { Default::default() };
        crate::eas::energy::cpu_overutilized(self.eas_cpu_util(cpu), self.capacity(cpu), cl, self.eas.uclamp_used)
    }

    /// check_update_overutilized_status(): an enqueue (not a new task's) or a tick on
    /// `cpu` sets the flag when the CPU is overutilized; only the balancer clears it.
    pub(crate) fn check_update_overutilized_status(&mut self, cpu: usize) {
        if !self.eas.feec || self.eas.rd.overutilized {
            return;
        }
        let o = self.eas_cpu_overutilized(cpu);
        self.eas.rd.on_enqueue(o);
    }

    /// update_sd_lb_stats()'s flag at a load_balance() of `cpu` at `level` (the root
    /// level sets or clears it, a lower one may only set it), then whether
    /// find_busiest_group() stops there: EAS is on and nothing is overutilized.
    pub(crate) fn eas_balance_stands_aside(&mut self, cpu: usize, level: usize) -> bool {
        if !self.eas.feec {
            return false;
        }
        let any = self.m.domains[cpu][level].span.iter().any(|c| self.eas_cpu_overutilized(c));
        if level + 1 == self.m.domains[cpu].len() {
            self.eas.rd.on_root_balance([any]);
        } else {
            self.eas.rd.on_enqueue(any);
        }
        !self.eas.rd.overutilized
    }
}
