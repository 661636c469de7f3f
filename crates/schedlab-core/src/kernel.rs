//! Kernel profiles: which fair class, which defaults, which tunables a version had.
//!
//! Mirrors: kernel/sched/fair.c sysctl defaults and update_sysctl()/get_update_sysctl_factor()
//! (SCHED_TUNABLESCALING_LOG), kernel/sched/topology.c sd_init() busy_factor.
//! Model: a profile is a version number; everything version-dependent is derived from
//! it here or in features.rs, and any tunable may be overridden by its kernel name.

use serde::{Deserialize, Serialize};

use crate::time::Ns;

/// A kernel version: a mainline release (major.minor), or a stable release of one
/// (major.minor.sublevel) where a stable backport changes behaviour.
///
/// Ordering: "6.18" (the mainline release, sublevel 0) < "6.18.35" < "6.19". A profile
/// without a sublevel is the mainline release, so stable backports are off in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct KernelVersion {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Stable sublevel (the Makefile's SUBLEVEL), when the profile names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sublevel: Option<u32>,
}

impl KernelVersion {
    /// Creates a mainline version.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor, sublevel: None }
    }

    /// Creates a stable version.
    pub const fn stable(major: u32, minor: u32, sublevel: u32) -> Self {
        Self { major, minor, sublevel: Some(sublevel) }
    }

    /// The stable sublevel, 0 for the mainline release.
    pub fn sublevel_or_zero(self) -> u32 {
        self.sublevel.unwrap_or(0)
    }

    /// Parses "6.5" or "6.18.35" (a "-suffix" such as "-fc-v782" is ignored).
    pub fn parse(text: &str) -> Result<Self, String> {
        let core = text.trim().split(['-', '+']).next().unwrap_or("");
        let mut parts = core.split('.');
        let num = |p: Option<&str>| p.and_then(|s| s.parse::<u32>().ok());
        let bad = || format!("'{text}' is not a kernel version like \"6.5\" or \"6.18.35\" (3.x to 7.x)");
        let (Some(major), Some(minor)) = (num(parts.next()), num(parts.next())) else { return Err(bad()) };
        if !(3..=7).contains(&major) {
            return Err(bad());
        }
        let sublevel = match parts.next() {
            None => None,
            Some(s) => Some(s.parse::<u32>().map_err(|_| bad())?),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Self { major, minor, sublevel })
    }
}

/// The last mainline release of each major series, up to the newest release a profile
/// may name: 3.0-3.19, 4.0-4.20, 5.0-5.19, 6.0-6.19 (Linus moves on to the next major
/// after a .19 or .20), then 7.0, the newest version any feature default dates from
/// (features.rs). A stable sublevel of a release is any number.
const LAST_MINOR: [(u32, u32); 5] = [(3, 19), (4, 20), (5, 19), (6, 19), (7, 0)];

/// The newest kernel release a profile may name.
pub const NEWEST_PROFILE: KernelVersion = KernelVersion::new(7, 0);

impl KernelVersion {
    /// Parses a profile as a scenario names it: a version ([`KernelVersion::parse`]) of a
    /// mainline release that exists, up to [`NEWEST_PROFILE`]; "6.66" or "7.9" would run
    /// as the nearest known kernel without a word, so they are refused.
    pub fn parse_profile(text: &str) -> Result<Self, String> {
        let v = Self::parse(text)?;
        let last = LAST_MINOR.iter().find(|(major, _)| *major == v.major).map(|&(_, minor)| minor);
        match last {
            Some(last) if v.minor <= last => Ok(v),
            Some(last) if v.major < NEWEST_PROFILE.major => Err(format!(
                "'{text}' is not a kernel release: the {}.x series ended at {}.{last} (the newest profile is {NEWEST_PROFILE})",
                v.major, v.major
            )),
            _ => Err(format!("'{text}' is newer than the newest kernel profile schedlab knows, {NEWEST_PROFILE}")),
        }
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.sublevel {
            Some(s) => write!(f, "{}.{}.{}", self.major, self.minor, s),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
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

/// What a tunable's default may depend on.
pub struct ProfileContext {
    /// The profile's kernel version.
    pub version: KernelVersion,
    /// SCHED_TUNABLESCALING_LOG's factor for the machine's CPU count.
    pub factor: u64,
}

impl ProfileContext {
    fn since(&self, major: u32, minor: u32) -> bool {
        self.version >= KernelVersion::new(major, minor)
    }
}

/// A tunable's entry in [`TUNABLE_TABLE`], for listings and documentation.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TunableInfo {
    /// Kernel (sysctl or debugfs) name, the key a scenario writes.
    pub name: &'static str,
    /// The other name accepted (the debugfs name where the sysctl one is the key).
    pub alias: Option<&'static str>,
    /// Unit of the value ("" for counts, names and switches).
    pub unit: &'static str,
    /// What it is, and where its default comes from.
    pub doc: &'static str,
}

/// An override written as is is the effective value.
fn same<T: Clone>(v: &T) -> Result<T, String> {
    Ok(v.clone())
}

/// An override of a tunable that is unset by default.
fn some<T: Clone>(v: &T) -> Result<Option<T>, String> {
    Ok(Some(v.clone()))
}

/// The tunables table: one line per tunable, as `features.rs` is for features. Each line
/// gives the effective type, the type a scenario writes, the unit, the default (from the
/// profile's version and CPU-count factor), how an override becomes the effective value,
/// and the doc. It generates [`Tunables`], [`TunableOverrides`] and [`TUNABLE_TABLE`].
macro_rules! tunables {
    ($( $(#[alias = $alias:literal])? $name:ident : $eff:ty, written $ov:ty, unit $unit:literal,
        default $default:expr, set $set:expr, $doc:literal; )*) => {
        /// Scheduler tunables, effective values, kernel names and units.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct Tunables { $( #[doc = $doc] pub $name: $eff, )* }

        /// Overrides of [`Tunables`], as a scenario writes them (kernel names; debugfs
        /// names accepted as aliases). Writing a value sets the effective value, as
        /// debugfs does.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct TunableOverrides {
            $(
                #[doc = concat!("See [`Tunables::", stringify!($name), "`].")]
                $(#[serde(alias = $alias)])?
                // Unset tunables are left out when a scenario is written back, so a
                // change made under the alias is not a duplicate of a null field.
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $name: Option<$ov>,
            )*
        }

        /// Every tunable: name, alias, unit, doc.
        pub const TUNABLE_TABLE: &[TunableInfo] = &[
            $( TunableInfo { name: stringify!($name), alias: tunables!(@alias $($alias)?), unit: $unit, doc: $doc }, )*
        ];

        impl Tunables {
            /// The profile's defaults with a scenario's overrides applied.
            fn resolve(ctx: &ProfileContext, o: &TunableOverrides) -> Result<Tunables, String> {
                Ok(Tunables { $(
                    $name: match &o.$name {
                        Some(v) => {
                            let set: fn(&$ov) -> Result<$eff, String> = $set;
                            set(v).map_err(|e| format!("kernel.tunables.{}: {e}", stringify!($name)))?
                        }
                        None => {
                            let default: fn(&ProfileContext) -> $eff = $default;
                            default(ctx)
                        }
                    },
                )* })
            }
        }
    };
    (@alias $alias:literal) => { Some($alias) };
    (@alias) => { None };
}

tunables! {
    hz: u32, written u32, unit "Hz", default |_| 1000, set same,
        "Timer interrupt frequency (CONFIG_HZ).";
    tick_phase_ns: Option<Ns>, written Ns, unit "ns", default |_| None, set some,
        "Phase of the tick grid: the first tick fires this long after boot (modulo the tick period), on every CPU (no skew_tick). None: drawn from the seed, as a boot's timing would be.";
    #[alias = "latency_ns"]
    sched_latency_ns: Ns, written Ns, unit "ns", default |c| 6_000_000 * c.factor, set same,
        "CFS targeted preemption latency (`latency_ns`; 6 ms x the CPU-count factor).";
    #[alias = "min_granularity_ns"]
    sched_min_granularity_ns: Ns, written Ns, unit "ns", default |c| 750_000 * c.factor, set same,
        "CFS minimum preemption granularity (`min_granularity_ns`; 0.75 ms x the factor).";
    #[alias = "wakeup_granularity_ns"]
    sched_wakeup_granularity_ns: Ns, written Ns, unit "ns", default |c| 1_000_000 * c.factor, set same,
        "CFS wakeup preemption granularity (`wakeup_granularity_ns`; 1 ms x the factor).";
    #[alias = "base_slice_ns"]
    sched_base_slice_ns: Ns, written Ns, unit "ns",
        default |c| if c.since(6, 15) { 700_000 * c.factor } else { 750_000 * c.factor }, set same,
        "EEVDF base slice (`base_slice_ns`; 0.75 ms x the factor, 0.7 ms from 6.15: commit 2ae891b82695 avoids an extra tick).";
    #[alias = "migration_cost_ns"]
    sched_migration_cost_ns: Ns, written Ns, unit "ns", default |_| 500_000, set same,
        "Cache-hot threshold for migration decisions (`migration_cost_ns`, not scaled).";
    #[alias = "nr_migrate"]
    sched_nr_migrate: u32, written u32, unit "tasks", default |_| 32, set same,
        "Tasks moved per load-balance pass at most (`nr_migrate`).";
    sched_cfs_bandwidth_slice_us: u64, written u64, unit "us", default |_| 5_000, set same,
        "Bandwidth slice handed to a CPU from a group's pool.";
    busy_factor: u32, written u32, unit "", default |c| if c.since(5, 10) { 16 } else { 32 }, set same,
        "Balance-interval multiplier while busy (sd->busy_factor; Guittot's 5.10 change halved it from 32 to 16).";
    cpuidle_governor: crate::cpuidle::GovernorKind, written String, unit "",
        default |_| crate::cpuidle::GovernorKind::Menu, set |g| crate::cpuidle::GovernorKind::parse(g),
        "cpuidle governor (the `cpuidle.governor=` boot option): \"menu\" (the default where both are built in: rating 20 vs 19) or \"teo\".";
    cpuidle_max_state: Option<usize>, written usize, unit "", default |_| None, set some,
        "Deepest idle state index allowed (states above are disabled in sysfs, as with `processor.max_cstate` / `cpuidle.off=1` for 0); None = all.";
    cpuidle_latency_req_ns: Option<Ns>, written Ns, unit "ns", default |_| None, set some,
        "PM QoS CPU resume latency limit; None = no limit.";
    timer_slack_ns: Ns, written Ns, unit "ns", default |_| 50_000, set same,
        "Default timer slack of tasks' hrtimer sleeps (init_task.timer_slack_ns = 50000).";
    timer_migration: bool, written SysctlBool, unit "", default |_| true, set |b| Ok(b.0),
        "kernel.timer_migration sysctl: the push heuristic (before 6.9) or the pull hierarchy (6.9+) is in force; 0 keeps every timer on its CPU.";
    nohz_full: Option<String>, written String, unit "cpulist", default |_| None, set some,
        "CPUs excluded from timer housekeeping (the nohz_full= boot option).";
    watchdog_thresh: u64, written u64, unit "s", default |_| 10, set same,
        "kernel.watchdog_thresh sysctl (kernel/watchdog.c: 10): the soft-lockup detector's per-CPU hrtimer fires every 2 x thresh / 5 s on every housekeeping CPU; 0 disables it.";
    tlb_batch_min_cpus: Option<usize>, written usize, unit "CPUs", default |_| None, set some,
        "arm64 batched TLB flush only with at least this many online CPUs (the v4-v6 review threshold); None = always defer (as merged in 6.5).";
    kpti: Option<bool>, written SysctlBool, unit "", default |_| None, set |b| Ok(Some(b.0)),
        "arm64 KPTI (kernel unmapped at EL0): every user TLB flush issues a second TLBI for the user ASID. None = off: every arm64 CPU of the presets reports CSV3 or is on the kernel's kpti_safe_list; a KASLR kernel on CPUs without E0PD (kaslr_requires_kpti, e.g. Android GKI on Cortex-A78/X1) runs with it on.";
    arm64_repeat_tlbi: Option<bool>, written SysctlBool, unit "", default |_| None, set |b| Ok(Some(b.0)),
        "ARM64_WORKAROUND_REPEAT_TLBI (TLBI; DSB ISH; TLBI for every TLBI, and no batched flush in 6.5+). None = as the kernel decides: on if any CPU has an erratum the profile's kernel works around (Cortex-A76 #1286807; Cortex-A55 #2441007 and Cortex-A510 #2441009 from 6.1).";
    sched_rt_runtime_us: i64, written i64, unit "us", default |_| 950_000, set same,
        "kernel.sched_rt_runtime_us sysctl (core.c sysctl_sched_rt_runtime: 950000): RT time allowed per rt period (RT throttling, before 6.12) and the deadline admission limit; -1 is no limit (RUNTIME_INF).";
    sched_rt_period_us: u64, written u64, unit "us", default |_| 1_000_000, set same,
        "kernel.sched_rt_period_us sysctl (core.c sysctl_sched_rt_period: 1000000).";
    sched_rr_timeslice_ms: u64, written u64, unit "ms", default |_| 100, set same,
        "kernel.sched_rr_timeslice_ms sysctl: SCHED_RR's slice (RR_TIMESLICE, include/linux/sched/rt.h: 100 ms).";
    fair_server_runtime_ns: Ns, written Ns, unit "ns", default |_| 50_000_000, set same,
        "debugfs sched/fair_server/cpuN/runtime: the fair deadline server's runtime per period (deadline.c fair_server_init(): 50 ms; 6.12+).";
    fair_server_period_ns: Ns, written Ns, unit "ns", default |_| 1_000_000_000, set same,
        "debugfs sched/fair_server/cpuN/period: the fair deadline server's period (1 s; 6.12+).";
    shared_runq_shard_sz: usize, written usize, unit "CPUs", default |_| 6, set same,
        "CPUs per shard of the shared runqueue (the series' #define SHARED_RUNQ_SHARD_SZ 6, 'would likely work better as a configurable knob via debugfs').";
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
        let ctx = ProfileContext { version, factor: tunable_scaling_factor(nr_cpus) };
        let eevdf = version >= KernelVersion::new(6, 6);
        let t = Tunables::resolve(&ctx, o)?;
        if ![100, 250, 300, 1000].contains(&t.hz) {
            return Err(format!("kernel.tunables.hz = {}: expected one of 100, 250, 300, 1000", t.hz));
        }
        if t.sched_min_granularity_ns == 0 || t.sched_base_slice_ns == 0 || t.sched_latency_ns == 0 {
            return Err("kernel.tunables: latency, min_granularity and base_slice must be positive".into());
        }
        if t.shared_runq_shard_sz == 0 {
            return Err("kernel.tunables.shared_runq_shard_sz must be at least 1".into());
        }
        if t.sched_rt_period_us == 0 || t.sched_rt_runtime_us < -1 || t.sched_rt_runtime_us > t.sched_rt_period_us as i64 {
            return Err(format!(
                "kernel.tunables.sched_rt_runtime_us = {} of sched_rt_period_us = {}: expected -1 or 0..period, and a positive period (EINVAL as the sysctl)",
                t.sched_rt_runtime_us, t.sched_rt_period_us
            ));
        }
        if t.sched_rr_timeslice_ms == 0 {
            return Err("kernel.tunables.sched_rr_timeslice_ms must be positive".into());
        }
        if t.fair_server_period_ns == 0 || t.fair_server_runtime_ns > t.fair_server_period_ns {
            return Err("kernel.tunables.fair_server_runtime_ns: expected 0..fair_server_period_ns and a positive period".into());
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

    #[test]
    fn a_stable_sublevel_orders_between_its_mainline_release_and_the_next() {
        let v = |s: &str| KernelVersion::parse(s).unwrap();
        assert_eq!(v("6.18.44-fc-v782"), KernelVersion::stable(6, 18, 44));
        assert_eq!(v("6.18").to_string(), "6.18");
        assert_eq!(v("6.18.35").to_string(), "6.18.35");
        assert!(v("6.18") < v("6.18.0") && v("6.18.0") < v("6.18.35"));
        assert!(v("6.18.35") < v("6.18.44") && v("6.18.44") < v("6.19"));
        for bad in ["6.18.x", "6.18.1.2", "6", "2.6.32"] {
            assert!(KernelVersion::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_profile_names_a_release_that_exists() {
        for ok in ["3.0", "3.19", "4.20", "5.19", "6.19", "6.18.35", "7.0", "7.0.3"] {
            assert!(KernelVersion::parse_profile(ok).is_ok(), "{ok}");
        }
        let e = KernelVersion::parse_profile("6.66").unwrap_err();
        assert!(e.contains("6.x series ended at 6.19") && e.contains("7.0"), "{e}");
        for bad in ["3.20", "4.21", "5.20", "7.1", "7.9"] {
            assert!(KernelVersion::parse_profile(bad).is_err(), "{bad}");
        }
        assert!(KernelVersion::parse_profile("7.9").unwrap_err().contains("newest kernel profile schedlab knows, 7.0"));
    }

    #[test]
    fn overrides_by_kernel_name_or_alias_set_the_effective_value() {
        let o: TunableOverrides =
            serde_json::from_str(r#"{"migration_cost_ns": 0, "timer_migration": 0, "kpti": true, "cpuidle_governor": "teo"}"#).unwrap();
        let t = KernelConfig::resolve(KernelVersion::new(5, 4), 64, &o).unwrap().tunables;
        assert_eq!(t.sched_migration_cost_ns, 0);
        assert!(!t.timer_migration);
        assert_eq!(t.kpti, Some(true));
        assert_eq!(t.cpuidle_governor, crate::cpuidle::GovernorKind::Teo);
        assert_eq!(t.busy_factor, 32, "5.4 predates the 5.10 halving");
        let bad: TunableOverrides = serde_json::from_str(r#"{"cpuidle_governor": "ladderx"}"#).unwrap();
        let e = KernelConfig::resolve(KernelVersion::new(6, 6), 8, &bad).unwrap_err();
        assert!(e.starts_with("kernel.tunables.cpuidle_governor: "), "{e}");
        assert!(serde_json::from_str::<TunableOverrides>(r#"{"latency": 1}"#).is_err());
    }
}
