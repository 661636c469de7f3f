//! Kernel profiles: which fair class, which defaults, which tunables a version had.
//!
//! Mirrors: kernel/sched/fair.c sysctl defaults and update_sysctl()/get_update_sysctl_factor()
//! (SCHED_TUNABLESCALING_LOG), kernel/sched/topology.c sd_init() busy_factor.
//! Model: a profile is a version number; everything version-dependent is derived from
//! it here or in features.rs, and any tunable may be overridden by its kernel name.

use serde::{Deserialize, Serialize};

use crate::time::Ns;

/// A mainline kernel version (major.minor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct KernelVersion {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl KernelVersion {
    /// Creates a version.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// Parses "6.5" (a trailing ".N" patch level or "-suffix" is ignored).
    pub fn parse(text: &str) -> Result<Self, String> {
        let core = text.trim().split(['-', '+']).next().unwrap_or("");
        let mut parts = core.split('.');
        let num = |p: Option<&str>| p.and_then(|s| s.parse::<u32>().ok());
        match (num(parts.next()), num(parts.next())) {
            (Some(major), Some(minor)) if (3..=7).contains(&major) => Ok(Self { major, minor }),
            _ => Err(format!("'{text}' is not a kernel version like \"6.5\" (3.x to 7.x)")),
        }
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The fair-class policy a kernel version runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FairPolicy {
    /// Completely Fair Scheduler (up to 6.5).
    Cfs,
    /// Earliest Eligible Virtual Deadline First (6.6 onward).
    Eevdf,
}

/// Scheduler tunables, effective values, kernel names and units.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tunables {
    /// Timer interrupt frequency (CONFIG_HZ).
    pub hz: u32,
    /// Phase of the tick grid: the first tick fires this long after boot (modulo the
    /// tick period), on every CPU (no skew_tick). None: drawn from the seed, as a
    /// boot's timing would be.
    pub tick_phase_ns: Option<Ns>,
    /// CFS targeted preemption latency (`latency_ns`).
    pub sched_latency_ns: Ns,
    /// CFS minimum preemption granularity (`min_granularity_ns`).
    pub sched_min_granularity_ns: Ns,
    /// CFS wakeup preemption granularity (`wakeup_granularity_ns`).
    pub sched_wakeup_granularity_ns: Ns,
    /// EEVDF base slice (`base_slice_ns`).
    pub sched_base_slice_ns: Ns,
    /// Cache-hot threshold for migration decisions (`migration_cost_ns`, not scaled).
    pub sched_migration_cost_ns: Ns,
    /// Tasks moved per load-balance pass at most (`nr_migrate`).
    pub sched_nr_migrate: u32,
    /// Bandwidth slice handed to a CPU from a group's pool, µs.
    pub sched_cfs_bandwidth_slice_us: u64,
    /// Balance-interval multiplier while busy (sd->busy_factor).
    pub busy_factor: u32,
    /// cpuidle governor (the `cpuidle.governor=` boot option): "menu" or "teo".
    pub cpuidle_governor: crate::cpuidle::GovernorKind,
    /// Deepest idle state index allowed (states above are disabled in sysfs, as with
    /// `processor.max_cstate` / `cpuidle.off=1` for 0); None = all.
    pub cpuidle_max_state: Option<usize>,
    /// PM QoS CPU resume latency limit, ns; None = no limit.
    pub cpuidle_latency_req_ns: Option<Ns>,
    /// Default timer slack of tasks' hrtimer sleeps (init_task.timer_slack_ns).
    pub timer_slack_ns: Ns,
    /// kernel.timer_migration sysctl: the push heuristic (before 6.9) or the pull
    /// hierarchy (6.9+) is in force; 0 keeps every timer on its CPU.
    pub timer_migration: bool,
    /// CPUs excluded from timer housekeeping (the nohz_full= boot option, cpulist).
    pub nohz_full: Option<String>,
    /// kernel.watchdog_thresh sysctl, seconds: the soft-lockup detector's per-CPU
    /// hrtimer fires every 2 x thresh / 5 s on every housekeeping CPU; 0 disables it.
    pub watchdog_thresh: u64,
    /// arm64 batched TLB flush only with at least this many online CPUs (the v4-v6
    /// review threshold); None = always defer (as merged in 6.5).
    pub tlb_batch_min_cpus: Option<usize>,
    /// arm64 KPTI (kernel unmapped at EL0): every user TLB flush issues a second TLBI for
    /// the user ASID. None = off: every arm64 CPU of the presets reports CSV3 or is on the
    /// kernel's kpti_safe_list; a KASLR kernel on CPUs without E0PD (kaslr_requires_kpti,
    /// e.g. Android GKI on Cortex-A78/X1) runs with it on.
    pub kpti: Option<bool>,
    /// ARM64_WORKAROUND_REPEAT_TLBI (TLBI; DSB ISH; TLBI for every TLBI, and no batched
    /// flush in 6.5+). None = as the kernel decides: on if any CPU has an erratum the
    /// profile's kernel works around (Cortex-A76 #1286807; Cortex-A55 #2441007 and
    /// Cortex-A510 #2441009 from 6.1).
    pub arm64_repeat_tlbi: Option<bool>,
    /// CPUs per shard of the shared runqueue (SHARED_RUNQ_SHARD_SZ, 6 in v2-v4).
    pub shared_runq_shard_sz: usize,
}

/// Overrides of [`Tunables`], as a scenario writes them (kernel names; debugfs names
/// accepted as aliases). Writing a value sets the effective value, as debugfs does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TunableOverrides {
    /// See [`Tunables::hz`].
    pub hz: Option<u32>,
    /// See [`Tunables::tick_phase_ns`].
    pub tick_phase_ns: Option<Ns>,
    /// See [`Tunables::sched_latency_ns`].
    #[serde(alias = "latency_ns")]
    pub sched_latency_ns: Option<Ns>,
    /// See [`Tunables::sched_min_granularity_ns`].
    #[serde(alias = "min_granularity_ns")]
    pub sched_min_granularity_ns: Option<Ns>,
    /// See [`Tunables::sched_wakeup_granularity_ns`].
    #[serde(alias = "wakeup_granularity_ns")]
    pub sched_wakeup_granularity_ns: Option<Ns>,
    /// See [`Tunables::sched_base_slice_ns`].
    #[serde(alias = "base_slice_ns")]
    pub sched_base_slice_ns: Option<Ns>,
    /// See [`Tunables::sched_migration_cost_ns`].
    #[serde(alias = "migration_cost_ns")]
    pub sched_migration_cost_ns: Option<Ns>,
    /// See [`Tunables::sched_nr_migrate`].
    #[serde(alias = "nr_migrate")]
    pub sched_nr_migrate: Option<u32>,
    /// See [`Tunables::sched_cfs_bandwidth_slice_us`].
    pub sched_cfs_bandwidth_slice_us: Option<u64>,
    /// See [`Tunables::busy_factor`].
    pub busy_factor: Option<u32>,
    /// See [`Tunables::cpuidle_governor`].
    pub cpuidle_governor: Option<String>,
    /// See [`Tunables::cpuidle_max_state`].
    pub cpuidle_max_state: Option<usize>,
    /// See [`Tunables::cpuidle_latency_req_ns`].
    pub cpuidle_latency_req_ns: Option<Ns>,
    /// See [`Tunables::timer_slack_ns`].
    pub timer_slack_ns: Option<Ns>,
    /// See [`Tunables::timer_migration`] (0 or 1 as the sysctl, or a boolean).
    pub timer_migration: Option<crate::kernel::SysctlBool>,
    /// See [`Tunables::nohz_full`].
    pub nohz_full: Option<String>,
    /// See [`Tunables::watchdog_thresh`].
    pub watchdog_thresh: Option<u64>,
    /// See [`Tunables::tlb_batch_min_cpus`].
    pub tlb_batch_min_cpus: Option<usize>,
    /// See [`Tunables::kpti`].
    pub kpti: Option<SysctlBool>,
    /// See [`Tunables::arm64_repeat_tlbi`].
    pub arm64_repeat_tlbi: Option<SysctlBool>,
    /// See [`Tunables::shared_runq_shard_sz`].
    pub shared_runq_shard_sz: Option<usize>,
}

/// A sysctl boolean as written: 0/1 or false/true.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SysctlBool(pub bool);

impl<'de> Deserialize<'de> for SysctlBool {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Int(i64),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(b) => Ok(SysctlBool(b)),
            Raw::Int(0) => Ok(SysctlBool(false)),
            Raw::Int(1) => Ok(SysctlBool(true)),
            Raw::Int(n) => Err(serde::de::Error::custom(format!("expected 0 or 1, got {n}"))),
        }
    }
}

/// A kernel profile resolved for one machine.
#[derive(Clone, Debug, Serialize)]
pub struct KernelConfig {
    /// Version the defaults come from.
    pub version: KernelVersion,
    /// Fair-class policy.
    pub policy: FairPolicy,
    /// Effective tunables.
    pub tunables: Tunables,
}

/// Returns the SCHED_TUNABLESCALING_LOG factor: 1 + ilog2(min(ncpus, 8)).
pub fn tunable_scaling_factor(nr_cpus: usize) -> u64 {
    1 + (nr_cpus.clamp(1, 8) as u64).ilog2() as u64
}

impl KernelConfig {
    /// Resolves a version's defaults on a machine of `nr_cpus`, then applies overrides.
    pub fn resolve(version: KernelVersion, nr_cpus: usize, o: &TunableOverrides) -> Result<KernelConfig, String> {
        let factor = tunable_scaling_factor(nr_cpus);
        let eevdf = version >= KernelVersion::new(6, 6);
        // 6.15 lowered the base slice to 0.7 ms (commit 2ae891b82695) to avoid an extra tick.
        let base_slice = if version >= KernelVersion::new(6, 15) { 700_000 } else { 750_000 };
        let t = Tunables {
            hz: o.hz.unwrap_or(1000),
            tick_phase_ns: o.tick_phase_ns,
            sched_latency_ns: o.sched_latency_ns.unwrap_or(6_000_000 * factor),
            sched_min_granularity_ns: o.sched_min_granularity_ns.unwrap_or(750_000 * factor),
            sched_wakeup_granularity_ns: o.sched_wakeup_granularity_ns.unwrap_or(1_000_000 * factor),
            sched_base_slice_ns: o.sched_base_slice_ns.unwrap_or(base_slice * factor),
            sched_migration_cost_ns: o.sched_migration_cost_ns.unwrap_or(500_000),
            sched_nr_migrate: o.sched_nr_migrate.unwrap_or(32),
            sched_cfs_bandwidth_slice_us: o.sched_cfs_bandwidth_slice_us.unwrap_or(5_000),
            // Guittot's 5.10 change halved busy_factor from 32 to 16.
            busy_factor: o.busy_factor.unwrap_or(if version >= KernelVersion::new(5, 10) { 16 } else { 32 }),
            // menu is the default governor where both are built in (rating 20 vs 19).
            cpuidle_governor: match &o.cpuidle_governor {
                Some(g) => crate::cpuidle::GovernorKind::parse(g).map_err(|e| format!("kernel.tunables.cpuidle_governor: {e}"))?,
                None => crate::cpuidle::GovernorKind::Menu,
            },
            cpuidle_max_state: o.cpuidle_max_state,
            cpuidle_latency_req_ns: o.cpuidle_latency_req_ns,
            // init_task.timer_slack_ns = 50000 (include/linux/init_task.h / init/init_task.c).
            timer_slack_ns: o.timer_slack_ns.unwrap_or(50_000),
            timer_migration: o.timer_migration.is_none_or(|b| b.0),
            nohz_full: o.nohz_full.clone(),
            // kernel/watchdog.c: watchdog_thresh = 10.
            watchdog_thresh: o.watchdog_thresh.unwrap_or(10),
            tlb_batch_min_cpus: o.tlb_batch_min_cpus,
            kpti: o.kpti.map(|b| b.0),
            arm64_repeat_tlbi: o.arm64_repeat_tlbi.map(|b| b.0),
            // The series' #define SHARED_RUNQ_SHARD_SZ 6 ("would likely work better as a
            // configurable knob via debugfs").
            shared_runq_shard_sz: o.shared_runq_shard_sz.unwrap_or(6),
        };
        if ![100, 250, 300, 1000].contains(&t.hz) {
            return Err(format!("kernel.tunables.hz = {}: expected one of 100, 250, 300, 1000", t.hz));
        }
        if t.sched_min_granularity_ns == 0 || t.sched_base_slice_ns == 0 || t.sched_latency_ns == 0 {
            return Err("kernel.tunables: latency, min_granularity and base_slice must be positive".into());
        }
        if t.shared_runq_shard_sz == 0 {
            return Err("kernel.tunables.shared_runq_shard_sz must be at least 1".into());
        }
        if t.sched_cfs_bandwidth_slice_us == 0 {
            return Err("kernel.tunables.sched_cfs_bandwidth_slice_us must be positive".into());
        }
        Ok(KernelConfig { version, policy: if eevdf { FairPolicy::Eevdf } else { FairPolicy::Cfs }, tunables: t })
    }

    /// Returns `sched_nr_latency` = latency / min_granularity.
    pub fn sched_nr_latency(&self) -> u64 {
        (self.tunables.sched_latency_ns / self.tunables.sched_min_granularity_ns).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_caps_at_eight_cpus() {
        assert_eq!(tunable_scaling_factor(1), 1);
        assert_eq!(tunable_scaling_factor(2), 2);
        assert_eq!(tunable_scaling_factor(7), 3);
        assert_eq!(tunable_scaling_factor(384), 4);
        let k = KernelConfig::resolve(KernelVersion::new(6, 5), 384, &TunableOverrides::default()).unwrap();
        assert_eq!(k.tunables.sched_latency_ns, 24_000_000);
        assert_eq!(k.policy, FairPolicy::Cfs);
        let k = KernelConfig::resolve(KernelVersion::parse("6.15.2").unwrap(), 16, &TunableOverrides::default()).unwrap();
        assert_eq!(k.tunables.sched_base_slice_ns, 2_800_000);
        assert_eq!(k.policy, FairPolicy::Eevdf);
        assert!(KernelVersion::parse("banana").is_err());
    }
}
