//! The Energy Model's estimate of a placement's energy, the energy-aware wakeup
//! (find_energy_efficient_cpu()) and the overutilized state that switches it off.
//!
//! Mirrors: include/linux/energy_model.h em_cpu_energy(), em_pd_get_efficient_state();
//! kernel/power/energy_model.c em_compute_costs() (cost = power x max_freq / freq);
//! kernel/sched/fair.c compute_energy(), eenv_task_busy_time(), eenv_pd_busy_time(),
//! eenv_pd_max_util(), util_fits_cpu(), find_energy_efficient_cpu(), cpu_overutilized(),
//! update_overutilized_status() and the root-domain flag update_sd_lb_stats() sets.
//! Text read: fair.c at the 5.8-era revision (feec with the 6 % margin: "pick the best
//! CPU ... if it saves at least 6 % of the energy used by prev_cpu", fits_capacity() on
//! the clamped util, per-pd compute_energy()). The 6.x rules are re-expressed from the
//! commits: b812fc9768e0 (6.0, "sched/fair: Remove the energy margin in feec()": the
//! cheapest candidate wins outright), 3e8c6c9aac42 (6.0, "Remove task_util from effective
//! utilization in feec()": the energy_env busy times, the pd's busy time capped at the
//! pd's capacity), 244226035a1f (6.2, "sched/uclamp: Fix fits_capacity() check in
//! feec()": util_fits_cpu() with its -1 "fits but not the uclamp_min hint" result and
//! the fits-first candidate ordering; backported to 5.10/5.15 stable).
//! Model: a snapshot of per-CPU utilization, capacity, rq clamps and performance domain
//! stands for the root domain at the wakeup; every CPU of the snapshot is in
//! sd_asym_cpucapacity and online. No thermal pressure (actual capacity = original), no
//! RT/DL/IRQ utilization (effective_cpu_util() reduces to the cfs util), no
//! EM_PERF_DOMAIN_SKIP_INEFFICIENCIES (every OPP is a candidate; on the phones' device
//! trees the cost never falls with frequency, so none is inefficient). The 6.8 rework
//! that moved the 1.25 headroom from em_cpu_energy() into sugov_effective_cpu_perf()
//! gives the same OPP without uclamp; the 6.2-6.7 order (clamp, then x1.25) is modeled.

use super::schedutil::{map_util_freq, map_util_perf};
use super::util_est::{cpu_util, TaskAt};
use super::{fits_capacity, uclamp_rq_util_with, Uclamp};
use crate::energy_model::EmPerfDomain;

/// One OPP with its cost (`struct em_perf_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmCostState {
    /// Frequency, kHz.
    pub frequency_khz: u64,
    /// Power, micro-watts.
    pub power_uw: u64,
    /// em_compute_costs(): power x max_freq / freq, the energy per unit of work at this
    /// OPP in the units of power at the top frequency.
    pub cost: u64,
}

/// A performance domain as EAS reads it: its OPPs with costs and its CPUs' capacity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerfDomainCosts {
    /// The OPPs, ascending.
    pub states: Vec<EmCostState>,
    /// arch_scale_cpu_capacity() of the domain's CPUs (one value: a pd is one core type).
    pub scale_cpu: u64,
}

impl PerfDomainCosts {
    /// em_compute_costs() over the EM of a device tree.
    pub fn from_em(pd: &EmPerfDomain, scale_cpu: u64) -> Self {
        let fmax = pd.states.last().map_or(1, |s| s.frequency_khz);
        let states = pd
            .states
            .iter()
            .map(|s| EmCostState { frequency_khz: s.frequency_khz, power_uw: s.power_uw, cost: s.power_uw * fmax / s.frequency_khz })
            .collect();
        PerfDomainCosts { states, scale_cpu }
    }

    /// The OPP frequencies, kHz (the cpufreq table).
    pub fn table_khz(&self) -> Vec<u64> {
        self.states.iter().map(|s| s.frequency_khz).collect()
    }

    /// em_pd_get_efficient_state(): the lowest OPP at or above `freq_khz` (the top one if
    /// none is).
    pub fn efficient_state(&self, freq_khz: u64) -> &EmCostState {
        let top = self.states.last().expect("an EM has at least one OPP");
        self.states.iter().find(|s| s.frequency_khz >= freq_khz).unwrap_or(top)
    }

    /// em_cpu_energy(): the OPP the domain's most utilized CPU needs (with the 1.25
    /// headroom, capped at `allowed_cpu_cap`), then cost x sum_util / scale_cpu.
    pub fn em_cpu_energy(&self, max_util: u64, sum_util: u64, allowed_cpu_cap: u64) -> u64 {
        let max_util = map_util_perf(max_util).min(allowed_cpu_cap);
        let top = self.states.last().expect("an EM has at least one OPP");
        let freq = map_util_freq(max_util, top.frequency_khz, self.scale_cpu);
        self.efficient_state(freq).cost * sum_util / self.scale_cpu
    }
}

/// One CPU of the snapshot.
#[derive(Clone, Copy, Debug)]
pub struct CpuSnap {
    /// capacity_of() = arch_scale_cpu_capacity() here (no RT/IRQ/thermal pressure).
    pub capacity: u64,
    /// The root cfs_rq's util_avg (a sleeping task's util stays in its last CPU's).
    pub util_avg: u64,
    /// The root cfs_rq's util_est sum of enqueued tasks.
    pub util_est: u64,
    /// The rq's aggregated clamps (None: no runnable task, uclamp_rq_is_idle()).
    pub uclamp: Option<Uclamp>,
    /// Index of the CPU's performance domain.
    pub pd: usize,
}

/// The waking task.
#[derive(Clone, Debug)]
pub struct TaskSnap {
    /// task_util(p).
    pub util_avg: u64,
    /// _task_util_est(p).
    pub util_est: u64,
    /// uclamp_eff_value(p, MIN / MAX).
    pub uclamp: Uclamp,
    /// The CPU it last ran on.
    pub prev_cpu: usize,
    /// p->cpus_ptr, by CPU.
    pub allowed: Vec<bool>,
}

/// Which kernel's selection rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeecRules {
    /// 5.0 to 5.19: fits_capacity() filter; prev_cpu kept unless the best saves more than
    /// (prev_delta + base_energy) / 16 (the "6 %" margin, >> 4).
    Margin,
    /// 6.0+ (with 6.2's util_fits_cpu() ordering): the cheapest candidate that fits best.
    V6,
}

impl FeecRules {
    /// The rules a kernel version has.
    pub fn of(v: crate::kernel::KernelVersion) -> FeecRules {
        if v >= crate::kernel::KernelVersion::new(6, 0) {
            FeecRules::V6
        } else {
            FeecRules::Margin
        }
    }
}

/// The root domain at a wakeup.
#[derive(Clone, Debug)]
pub struct EasSnapshot {
    /// Every CPU, by CPU number.
    pub cpus: Vec<CpuSnap>,
    /// The performance domains.
    pub pds: Vec<PerfDomainCosts>,
    /// UTIL_EST.
    pub util_est_on: bool,
    /// uclamp_is_used(): some task or group set a clamp.
    pub uclamp_used: bool,
}

impl EasSnapshot {
    fn task_at(&self, p: &TaskSnap) -> TaskAt {
        TaskAt { cpu: p.prev_cpu, util_avg: p.util_avg, util_est: p.util_est, queued: false }
    }

    /// cpu_util(cpu, p, dst_cpu) on the snapshot.
    pub fn cpu_util(&self, cpu: usize, p: &TaskSnap, dst: Option<usize>) -> u64 {
        let c = &self.cpus[cpu];
        cpu_util(cpu, c.util_avg, c.util_est, c.capacity, Some(self.task_at(p)), dst, self.util_est_on)
    }

    /// The CPUs of domain `pd`.
    pub fn pd_cpus(&self, pd: usize) -> impl Iterator<Item = usize> + '_ {
        self.cpus.iter().enumerate().filter(move |(_, c)| c.pd == pd).map(|(i, _)| i)
    }

    /// eenv_task_busy_time(): the task's util as busy time, capped at prev_cpu's capacity.
    pub fn task_busy_time(&self, p: &TaskSnap) -> u64 {
        p.util_avg.max(p.util_est).min(self.cpus[p.prev_cpu].capacity)
    }

    /// compute_energy(): the energy of domain `pd` with p on `dst` (None: p nowhere, the
    /// base energy). Busy time is the pd's utilization without p (plus p's when placed
    /// in this pd), capped at the pd's capacity; the OPP is the max over its CPUs of the
    /// clamped util (p's clamps joining its destination's).
    pub fn compute_energy(&self, pd: usize, p: &TaskSnap, dst: Option<usize>) -> u64 {
        let costs = &self.pds[pd];
        let pd_cap: u64 = self.pd_cpus(pd).map(|c| self.cpus[c].capacity).sum();
        let mut busy: u64 = self.pd_cpus(pd).map(|c| self.cpu_util(c, p, None)).sum();
        busy = busy.min(pd_cap);
        if dst.is_some_and(|d| self.cpus[d].pd == pd) {
            busy = (busy + self.task_busy_time(p)).min(pd_cap);
        }
        let max_util = self
            .pd_cpus(pd)
            .map(|c| {
                let util = self.cpu_util(c, p, dst);
                if !self.uclamp_used {
                    return util;
                }
                let tsk = (dst == Some(c)).then_some(p.uclamp);
                uclamp_rq_util_with(util, self.cpus[c].uclamp, tsk).min(self.cpus[c].capacity)
            })
            .max()
            .unwrap_or(0);
        costs.em_cpu_energy(max_util.min(costs.scale_cpu), busy, costs.scale_cpu)
    }

    /// The total energy of the root domain with p on `dst`.
    pub fn total_energy(&self, p: &TaskSnap, dst: usize) -> u64 {
        (0..self.pds.len()).map(|pd| self.compute_energy(pd, p, if self.cpus[dst].pd == pd { Some(dst) } else { None })).sum()
    }

    /// util_fits_cpu() for `cpu`: 1 fits, 0 does not, -1 fits but not the uclamp_min hint.
    pub fn util_fits_cpu(&self, util: u64, uclamp_min: u64, uclamp_max: u64, cpu: usize) -> i32 {
        util_fits_cpu(util, uclamp_min, uclamp_max, self.cpus[cpu].capacity, self.uclamp_used)
    }

    /// cpu_overutilized() (6.2+): the CPU's util does not fit it, rq clamps considered.
    pub fn cpu_overutilized(&self, cpu: usize) -> bool {
        let c = &self.cpus[cpu];
        let util = cpu_util(cpu, c.util_avg, c.util_est, c.capacity, None, None, self.util_est_on);
        let cl = c.uclamp.unwrap_or(Uclamp::NONE);
        cpu_overutilized(util, c.capacity, cl, self.uclamp_used)
    }

    /// find_energy_efficient_cpu(): None when EAS does not decide (the root domain is
    /// overutilized; the caller takes the normal wakeup path), else the CPU.
    pub fn find_energy_efficient_cpu(&self, p: &TaskSnap, overutilized: bool, rules: FeecRules) -> Option<usize> {
        if overutilized || self.pds.is_empty() {
            return None;
        }
        let p_min = if self.uclamp_used { p.uclamp.min } else { 0 };
        // task_util_est() == 0 and no uclamp_min: nothing to place by energy.
        if p.util_avg.max(p.util_est) == 0 && p_min == 0 {
            return Some(p.prev_cpu);
        }
        Some(match rules {
            FeecRules::Margin => self.feec_margin(p),
            FeecRules::V6 => self.feec_v6(p),
        })
    }

    fn feec_margin(&self, p: &TaskSnap) -> usize {
        let (mut prev_delta, mut best_delta) = (u64::MAX, u64::MAX);
        let mut best_cpu = p.prev_cpu;
        let mut base_energy = 0;
        for pd in 0..self.pds.len() {
            let base_pd = self.compute_energy(pd, p, None);
            base_energy += base_pd;
            let (mut max_spare, mut max_spare_cpu) = (0u64, None);
            for cpu in self.pd_cpus(pd).filter(|&c| p.allowed[c]) {
                let util = self.cpu_util(cpu, p, Some(cpu));
                let cap = self.cpus[cpu].capacity;
                let spare = cap.saturating_sub(util);
                let clamped = if self.uclamp_used { uclamp_rq_util_with(util, self.cpus[cpu].uclamp, Some(p.uclamp)) } else { util };
                if !fits_capacity(clamped, cap) {
                    continue;
                }
                if cpu == p.prev_cpu {
                    prev_delta = self.compute_energy(pd, p, Some(cpu)).saturating_sub(base_pd);
                    best_delta = best_delta.min(prev_delta);
                }
                if spare > max_spare {
                    max_spare = spare;
                    max_spare_cpu = Some(cpu);
                }
            }
            if let Some(c) = max_spare_cpu.filter(|&c| c != p.prev_cpu) {
                let cur = self.compute_energy(pd, p, Some(c)).saturating_sub(base_pd);
                if cur < best_delta {
                    best_delta = cur;
                    best_cpu = c;
                }
            }
        }
        if prev_delta == u64::MAX || prev_delta - best_delta > (prev_delta + base_energy) >> 4 {
            best_cpu
        } else {
            p.prev_cpu
        }
    }

    fn feec_v6(&self, p: &TaskSnap) -> usize {
        let (p_min, p_max) = if self.uclamp_used { (p.uclamp.min, p.uclamp.max) } else { (0, super::SCHED_CAPACITY_SCALE) };
        let (mut prev_delta, mut best_delta) = (u64::MAX, u64::MAX);
        let (mut prev_fits, mut best_fits) = (-1i32, -1i32);
        let (mut prev_cap, mut best_cap) = (0u64, 0u64);
        let mut best_cpu = p.prev_cpu;
        for pd in 0..self.pds.len() {
            let (mut max_spare, mut max_spare_cpu, mut max_fits) = (-1i64, None, -1i32);
            let mut prev_spare = -1i64;
            // cpu_actual_cap: one value per domain here (no thermal pressure).
            let pd_cap_of_cpu = self.pds[pd].scale_cpu;
            for cpu in self.pd_cpus(pd).filter(|&c| p.allowed[c]) {
                let util = self.cpu_util(cpu, p, Some(cpu));
                let cap = self.cpus[cpu].capacity;
                let (mut umin, mut umax) = (p_min, p_max);
                if let (true, Some(rq)) = (self.uclamp_used, self.cpus[cpu].uclamp) {
                    umin = umin.max(rq.min);
                    umax = umax.max(rq.max);
                }
                let fits = self.util_fits_cpu(util, umin, umax, cpu);
                if fits == 0 {
                    continue;
                }
                let spare = cap.saturating_sub(util) as i64;
                if cpu == p.prev_cpu {
                    prev_spare = spare;
                    prev_fits = fits;
                } else if fits > max_fits || (fits == max_fits && spare > max_spare) {
                    max_spare = spare;
                    max_spare_cpu = Some(cpu);
                    max_fits = fits;
                }
            }
            if max_spare_cpu.is_none() && prev_spare < 0 {
                continue;
            }
            let base = self.compute_energy(pd, p, None);
            if prev_spare > -1 {
                // Energy with p never falls below the base here (util only grows), so the
                // kernel's "CPU utilization has changed" bail-out cannot trigger.
                prev_delta = self.compute_energy(pd, p, Some(p.prev_cpu)).saturating_sub(base);
                prev_cap = pd_cap_of_cpu;
                best_delta = best_delta.min(prev_delta);
            }
            let Some(c) = max_spare_cpu.filter(|_| max_spare > prev_spare) else { continue };
            if max_fits < best_fits || (max_fits < 0 && pd_cap_of_cpu <= best_cap) {
                continue;
            }
            let cur = self.compute_energy(pd, p, Some(c)).saturating_sub(base);
            if max_fits > 0 && best_fits > 0 && cur >= best_delta {
                continue;
            }
            best_delta = cur;
            best_cpu = c;
            best_fits = max_fits;
            best_cap = pd_cap_of_cpu;
        }
        if best_fits > prev_fits || (best_fits > 0 && best_delta < prev_delta) || (best_fits < 0 && best_cap > prev_cap) {
            best_cpu
        } else {
            p.prev_cpu
        }
    }
}

/// util_fits_cpu() (fair.c, 6.2+) without thermal pressure: 1 when `util` fits the CPU's
/// capacity with 20 % headroom (or uclamp_max caps it to what the CPU has), -1 when it
/// fits but uclamp_min asks for more than the CPU can give, 0 when it does not fit.
pub fn util_fits_cpu(util: u64, uclamp_min: u64, uclamp_max: u64, capacity: u64, uclamp_used: bool) -> i32 {
    let fits = fits_capacity(util, capacity);
    if !uclamp_used {
        return fits as i32;
    }
    // A uclamp_max at or under the CPU's capacity makes any util fit, except on the
    // biggest CPU with no real cap (max = 1024 there is no constraint).
    let max_is_no_cap = capacity == super::SCHED_CAPACITY_SCALE && uclamp_max == super::SCHED_CAPACITY_SCALE;
    let fits = fits || (!max_is_no_cap && uclamp_max <= capacity);
    let uclamp_min = uclamp_min.min(uclamp_max);
    if fits && util < uclamp_min && uclamp_min > capacity {
        return -1;
    }
    fits as i32
}

/// cpu_overutilized(): the CPU's utilization does not fit its capacity; with uclamp
/// (6.2+), util_fits_cpu() on the rq's clamps, where -1 counts as fitting.
pub fn cpu_overutilized(util: u64, capacity: u64, rq_clamp: Uclamp, uclamp_used: bool) -> bool {
    util_fits_cpu(util, rq_clamp.min, rq_clamp.max, capacity, uclamp_used) == 0
}

/// The root domain's overutilized flag (`rd->overutilized`): set at an enqueue that
/// finds its CPU overutilized (update_overutilized_status(), not on a new task's first
/// enqueue), recomputed over all CPUs by the load balancer at the root level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RootDomainOverutilized {
    /// The flag: EAS is off while set.
    pub overutilized: bool,
}

impl RootDomainOverutilized {
    /// update_overutilized_status() at a wakeup enqueue on a CPU: only ever sets.
    pub fn on_enqueue(&mut self, cpu_overutilized: bool) {
        self.overutilized |= cpu_overutilized;
    }

    /// update_sd_lb_stats() at the root domain level: the flag becomes whether any CPU is
    /// overutilized now (set or cleared).
    pub fn on_root_balance<I: IntoIterator<Item = bool>>(&mut self, cpus_overutilized: I) {
        self.overutilized = cpus_overutilized.into_iter().any(|o| o);
    }
}
