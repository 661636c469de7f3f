//! The `Scenario`: the one description of a run (machine, kernel, workload, run).
//!
//! Model: TOML, JSON and Python dicts all deserialize into this type; validation
//! happens once, here, and every error names the field and what was expected.
//!
//! ```toml
//! [machine]
//! preset = "ryzen-7950x"            # or topo = { sockets = 1, llcs = 2, cores = 8, smt = 2 }
//! [kernel]
//! profile = "6.5"
//! features = { SHARED_RUNQ = true }
//! tunables = { sched_migration_cost_ns = 0 }
//! [workload]
//! kind = "make"
//! params = { jobs = 32, units = 2000 }
//! [run]
//! until = "workload_done"
//! seeds = [1, 2, 3]
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
pub mod background_spec;
pub use background_spec::{BackgroundProfile, BackgroundProfileSpec, BackgroundSourceSpec};
pub mod energy_model_spec;
pub mod firmware_spec;
pub use firmware_spec::FirmwareSpec;
pub mod rt_app_spec;
pub use energy_model_spec::{EnergyModelSpec, VoltageSpec};
pub mod program_spec;
pub use program_spec::*;
pub mod topo_spec;
use topo_spec::one;
pub use topo_spec::TopoSpec;
mod schedutil_spec;
use crate::kernel::TunableOverrides;
pub use crate::time::Duration;
use crate::time::Ns;
use crate::topology::presets;
pub use rt_app_spec::{MemSpec, SchedAttrSpec};
pub use schedutil_spec::{GovernorSpec, PerPolicy, SchedutilSpec, MAX_RATE_LIMIT_US};

/// The largest pid (include/linux/threads.h PID_MAX_LIMIT on 64-bit: 4 x 1024 x 1024).
pub const PID_MAX_LIMIT: usize = 4 * 1024 * 1024;

/// How the machine is chosen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    /// A preset name (`schedlab machines` lists them).
    pub preset: Option<String>,
    /// A synthetic homogeneous machine.
    pub topo: Option<TopoSpec>,
    /// Read the host's topology from sysfs.
    #[serde(default)]
    pub host: bool,
    /// Cost-table overrides by field name ("context_switch_ns", "cacheline.dram_ns").
    #[serde(default)]
    pub cost: BTreeMap<String, f64>,
    /// A virtual machine's hidden halt ladder (`cpuidle::guest_halt`), for every core type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_halt: Option<crate::cpuidle::guest_halt::GuestHaltSpec>,
    /// Which kernel's Energy Model the machine runs with (default: mainline's device tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_model: Option<EnergyModelSpec>,
    /// BIOS settings of idle (`[machine.firmware]`: package and core C-states).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<FirmwareSpec>,
}

impl MachineSpec {
    /// Builds the machine a scenario describes (preset, synthetic or host), with cost overrides.
    pub fn build(&self) -> Result<crate::topology::Machine, ScenarioError> {
        let spec = self;
        let mut m = if let Some(name) = &spec.preset {
            presets::preset(name).ok_or_else(|| {
                ScenarioError::new("machine.preset", format!("unknown preset '{name}': expected one of {}", presets::PRESET_NAMES.join(", ")))
            })?
        } else if let Some(t) = &spec.topo {
            presets::topo_arch(t.sockets, t.llcs, t.cores, t.smt, t.arch.unwrap_or(crate::topology::Arch::X86_64))
        } else {
            crate::topology::sysfs::read_host(std::path::Path::new("/sys/devices/system/cpu")).map_err(|e| ScenarioError::new("machine.host", e))?
        };
        if let Some(em) = &spec.energy_model {
            em.apply(&mut m)?;
        }
        if let Some(fw) = &spec.firmware {
            fw.apply(&mut m);
        }
        // `cpuidle.STATE.FIELD` keys change the machine's idle states; the rest its cost table.
        let (idle, cost): (BTreeMap<_, _>, BTreeMap<_, _>) =
            spec.cost.iter().map(|(k, v)| (k.clone(), *v)).partition(|(k, _)| k.starts_with("cpuidle."));
        for (key, us) in &idle {
            m.override_idle_state(&key["cpuidle.".len()..], *us).map_err(|e| ScenarioError::new("machine.cost", e))?;
        }
        if !cost.is_empty() {
            m.cost = m.cost.with_overrides(&cost).map_err(|e| ScenarioError::new("machine.cost", e))?;
        }
        if let Some(g) = &spec.guest_halt {
            let ladder = g.build().map_err(|e| ScenarioError::new("machine.guest_halt", e))?;
            for d in &mut m.idle_drivers {
                d.guest_halt = Some(ladder.clone());
            }
        }
        if !(m.cost.smt_slowdown >= 1.0) {
            return Err(ScenarioError::new(
                "machine.cost",
                format!(
                    "smt_slowdown must be at least 1 (a thread never gains from a busy sibling), got {}",
                    crate::cost::shown(m.cost.smt_slowdown)
                ),
            ));
        }
        Ok(m)
    }
}

/// Kernel version and configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSpec {
    /// Kernel version whose defaults apply ("5.4", "6.5", "6.13"); "host": the running
    /// kernel's. Left out: 6.6, or on a host machine the running kernel's.
    #[serde(default)]
    pub profile: String,
    /// Feature overrides by kernel name.
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
    /// Tunable overrides by kernel name.
    #[serde(default)]
    pub tunables: TunableOverrides,
    /// The cpufreq governor of every policy: `performance` (the top OPP throughout) or
    /// `schedutil` (frequency from utilization; needed for EAS, as in the kernel). Left
    /// out: the machine's kernel's default (schedutil on the phones, performance
    /// elsewhere: `schedlab machines NAME`). Only a machine with an Energy Model has OPPs
    /// to choose from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<GovernorSpec>,
    /// schedutil's rate limits per cpufreq policy (with `governor = "schedutil"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedutil: Option<SchedutilSpec>,
    /// A sched_ext scheduler loaded for the whole run (`[kernel.sched_ext]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_ext: Option<SchedExtSpec>,
    /// What else runs on the machine: `none` (the benchmark alone, the default) or
    /// `kernel` (the kernel's own periodic per-CPU work: workload/background.rs).
    #[serde(default, skip_serializing_if = "BackgroundSpec::is_none")]
    pub background: BackgroundSpec,
    /// The rest of a host's background, source by source (`[kernel.background_profile]`:
    /// a measured profile, `schedlab validate-host --record-background`, or an estimate).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "background_spec::profile_or_file")]
    pub background_profile: Option<BackgroundProfile>,
}

/// `[kernel] background`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackgroundSpec {
    /// Nothing but the scenario's tasks (a silent machine).
    #[default]
    None,
    /// The kernel's vmstat kworkers and watchdog stoppers on every CPU.
    Kernel,
}

impl BackgroundSpec {
    fn is_none(&self) -> bool {
        *self == BackgroundSpec::None
    }
}

/// `[kernel.sched_ext]`: the scheduler of the ext class (sched_ext, 6.12+).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedExtSpec {
    /// The scheduler, by name (`schedlab scx list`: the policies written here).
    pub scheduler: String,
    /// SCX_OPS_SWITCH_PARTIAL: only SCHED_EXT tasks join the class (else every fair task
    /// does, the kernel's default for a loaded scheduler).
    #[serde(default)]
    pub switch_partial: bool,
}

fn default_profile() -> String {
    "6.6".to_string()
}

impl KernelSpec {
    /// A [kernel] table left out of a file: the profile is settled once the machine is
    /// known (`Scenario::settle_kernel`).
    fn unsettled() -> Self {
        Self { profile: String::new(), ..Self::default() }
    }
}

impl Default for KernelSpec {
    fn default() -> Self {
        Self {
            profile: default_profile(),
            features: BTreeMap::new(),
            tunables: TunableOverrides::default(),
            governor: None,
            schedutil: None,
            sched_ext: None,
            background: BackgroundSpec::None,
            background_profile: None,
        }
    }
}

/// A cgroup (task group).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Name, unique; tasks refer to it.
    pub name: String,
    /// Parent group (the root group if absent).
    pub parent: Option<String>,
    /// cgroup v2 `cpu.max`: "QUOTA PERIOD" in µs, or "max PERIOD".
    pub cpu_max: Option<String>,
    /// cgroup v1 `cpu.cfs_quota_us` (-1 = unlimited).
    pub cfs_quota_us: Option<i64>,
    /// cgroup v1 `cpu.cfs_period_us` (default 100000).
    pub cfs_period_us: Option<u64>,
    /// `cpu.cfs_burst_us` (5.14+; default 0).
    pub cfs_burst_us: Option<u64>,
    /// cgroup v1 `cpu.shares` (2..262144, default 1024): the group's weight.
    pub cpu_shares: Option<u64>,
    /// cgroup v2 `cpu.weight` (1..10000, default 100): shares = weight x 1024 / 100.
    pub cpu_weight: Option<u64>,
    /// cgroup v2 `cpu.uclamp.min` (5.4+, percent 0..100, default 0): kept on every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uclamp_min: Option<f64>,
    /// cgroup v2 `cpu.uclamp.max` (percent 0..100, default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uclamp_max: Option<f64>,
}

impl GroupSpec {
    /// tg->shares from cpu.shares or cpu.weight, as the kernel converts and clamps them
    /// (sched_group_set_shares: clamp to [MIN_SHARES 2, MAX_SHARES 2^18];
    /// sched_weight_from_cgroup: DIV_ROUND_CLOSEST(weight x 1024, 100)); errors name the
    /// field relative to the group.
    pub fn shares(&self) -> Result<u64, (&'static str, String)> {
        match (self.cpu_shares, self.cpu_weight) {
            (Some(_), Some(_)) => Err(("cpu_weight", "give cpu_shares (cgroup v1) or cpu_weight (v2), not both".into())),
            (Some(s), None) => Ok(s.clamp(2, 1 << 18)),
            (None, Some(w)) if (1..=10_000).contains(&w) => Ok((w * 1024 + 50) / 100),
            (None, Some(w)) => Err(("cpu_weight", format!("{w} is outside 1..10000"))),
            (None, None) => Ok(1024),
        }
    }

    /// The requested clamps from cpu.uclamp.min/max: capacity_from_percent() (percent in
    /// hundredths, x 1024 / 10000 rounded to the closest); None when neither is given.
    pub fn uclamp(&self) -> Result<Option<(u64, u64)>, (&'static str, String)> {
        if self.uclamp_min.is_none() && self.uclamp_max.is_none() {
            return Ok(None);
        }
        let conv = |field: &'static str, v: Option<f64>, default: u64| match v {
            None => Ok(default),
            Some(p) if (0.0..=100.0).contains(&p) => {
                let hundredths = (p * 100.0).round() as u64;
                Ok((hundredths * 1024 + 5000) / 10_000)
            }
            Some(p) => Err((field, format!("{p}: expected a percentage 0..100"))),
        };
        Ok(Some((conv("uclamp_min", self.uclamp_min, 0)?, conv("uclamp_max", self.uclamp_max, 1024)?)))
    }
}

/// A task (or `count` identical tasks) with its program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Name (comm); copies get "-N" suffixes.
    pub name: String,
    /// Number of identical tasks.
    #[serde(default = "one")]
    pub count: usize,
    /// Nice value, -20..19.
    #[serde(default)]
    pub nice: i32,
    /// Allowed CPUs as a cpulist ("0-3,8"); absent = all.
    pub affinity: Option<String>,
    /// CPU the task starts on, bypassing fork placement (it may move later).
    pub cpu: Option<usize>,
    /// Pin copy i to the i-th CPU of `affinity` (or of the machine).
    #[serde(default)]
    pub pin_each: bool,
    /// Group name.
    pub group: Option<String>,
    /// Process (mm) the task's threads share; tasks of one process share it.
    pub process: Option<String>,
    /// Working-set size that must be refilled after a migration, KiB.
    #[serde(default)]
    pub footprint_kib: u64,
    /// Start time (absent = at 0).
    pub start: Option<Duration>,
    /// This task's timer slack (prctl PR_SET_TIMERSLACK); absent = the kernel's
    /// `timer_slack_ns` tunable (50 us).
    pub timer_slack: Option<Duration>,
    /// The task reads its own CPU-time clock (clock_gettime(CLOCK_THREAD_CPUTIME_ID))
    /// every this much of its `run` work: each read is a system call whose
    /// task_sched_runtime() runs update_curr(), so a slice or a bandwidth runtime that
    /// runs out is seen at once rather than at the next tick (validate-host's probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cputime_poll: Option<Duration>,
    /// Record this task's timer wakeup latencies (how late its user code runs after a
    /// timed sleep's due time, as cyclictest measures) in a histogram of this name,
    /// reported under `histograms.NAME` (copies: `NAME-N`) with 1-us bins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_histogram: Option<String>,
    /// sched_setattr() attributes: the task's policy (SCHED_FIFO/RR with its priority,
    /// SCHED_DEADLINE with its runtime/deadline/period) and its uclamp (util_min,
    /// util_max); an imported rt-app thread's, written back on export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_attr: Option<SchedAttrSpec>,
    /// A custom EEVDF slice in us (6.12+): sched_setattr()'s sched_runtime on a fair task,
    /// kept as se->slice instead of the base slice (`__setparam_fair()`), 100..100000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_us: Option<u64>,
    /// The pid the task has in results and traces (a replayed trace keeps its own);
    /// absent: the next free one. Only for a single task (count = 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<usize>,
    /// The program.
    pub program: Vec<OpSpec>,
}

/// A workload generator invocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Generator name (`schedlab workloads` lists them).
    #[serde(default)]
    pub kind: String,
    /// An rt-app JSON file (relative to the scenario's file) whose threads are the
    /// workload, instead of a generator; loading the scenario reads it in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt_app: Option<String>,
    /// Generator parameters; each generator validates its own.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    /// When every task has exited.
    WorkloadDone,
}

/// How long and how often to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Simulated seconds.
    pub duration_s: Option<f64>,
    /// End condition instead of (or as well as) a duration.
    pub until: Option<Until>,
    /// Seeds to run (each one run).
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// Record a trace.
    #[serde(default)]
    pub trace: bool,
    /// Stop after this many events (a guard against runaway scenarios).
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// Simulated seconds before figures start counting (the warm-up).
    #[serde(default)]
    pub warmup_s: Option<f64>,
}

fn default_seeds() -> Vec<u64> {
    vec![1]
}

fn default_max_events() -> u64 {
    2_000_000_000
}

impl Default for RunSpec {
    fn default() -> Self {
        Self { duration_s: None, until: None, seeds: default_seeds(), trace: false, max_events: default_max_events(), warmup_s: None }
    }
}

/// A complete run description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name.
    #[serde(default)]
    pub name: String,
    /// What the scenario shows.
    #[serde(default)]
    pub description: String,
    /// Machine.
    pub machine: MachineSpec,
    /// Kernel.
    #[serde(default = "KernelSpec::unsettled")]
    pub kernel: KernelSpec,
    /// cgroups.
    #[serde(default)]
    pub groups: Vec<GroupSpec>,
    /// A generator.
    pub workload: Option<WorkloadSpec>,
    /// Explicit tasks.
    #[serde(default)]
    pub tasks: Vec<TaskSpec>,
    /// Templates that `fork` instantiates.
    #[serde(default)]
    pub templates: Vec<TaskSpec>,
    /// Background kernel timers (driver watchdogs, periodic housekeeping) that re-arm
    /// themselves from their callback.
    #[serde(default)]
    pub timers: Vec<KernelTimerSpec>,
    /// Run length and seeds.
    #[serde(default)]
    pub run: RunSpec,
    /// The `global` object of an imported rt-app file (pi_enabled, calibration,
    /// mem_buffer_size, ...), kept to be written back by export; not read by a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt_app: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Scenario {
    /// Parses TOML text; `origin` names the file in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(text).map_err(|e| toml_error(text, origin, &e))?;
        let mut s: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = crate::error::printable(&e.path().to_string());
            let inner = e.into_inner();
            let mut err = toml_error(text, origin, &inner);
            err.field = field;
            err
        })?;
        s.settle_kernel().map_err(|e| e.with_origin(origin))?;
        s.validate().map_err(|e| e.with_origin(origin))?;
        Ok(s)
    }

    /// Parses JSON text; `origin` names the source in errors.
    pub fn from_json_str(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let mut s: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let field = crate::error::printable(&e.path().to_string());
            let inner = e.into_inner();
            ScenarioError {
                origin: origin.to_string(),
                location: format!(":{}:{}", inner.line(), inner.column()),
                field,
                message: crate::error::printable(&strip_position(&inner.to_string())),
            }
        })?;
        s.settle_kernel().map_err(|e| e.with_origin(origin))?;
        s.validate().map_err(|e| e.with_origin(origin))?;
        Ok(s)
    }

    /// Fills the kernel a scenario left implicit: no profile means 6.6, except on a host
    /// machine, which runs the host's kernel (profile "host" anywhere): its version and,
    /// unless the scenario sets one, its CONFIG_HZ.
    pub fn settle_kernel(&mut self) -> Result<(), ScenarioError> {
        let wants_host = self.kernel.profile == "host" || (self.kernel.profile.is_empty() && self.machine.host);
        if !wants_host {
            if self.kernel.profile.is_empty() {
                self.kernel.profile = default_profile();
            }
            return Ok(());
        }
        let host = crate::topology::sysfs::host_kernel().map_err(|e| ScenarioError::new("kernel.profile", e))?;
        self.kernel.profile = host.profile;
        if self.kernel.tunables.hz.is_none() {
            self.kernel.tunables.hz = host.hz;
        }
        Ok(())
    }

    /// Checks what serde cannot: ranges, references and the presence of a workload.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let m = &self.machine;
        let chosen = m.preset.is_some() as u8 + m.topo.is_some() as u8 + m.host as u8;
        if chosen != 1 {
            return Err(ScenarioError::new("machine", "expected exactly one of preset, topo or host = true"));
        }
        if let Some(t) = &m.topo {
            t.check().map_err(|e| ScenarioError::new("machine.topo", e))?;
        }
        // A host machine runs the host's release, which may be newer than the profiles
        // schedlab knows; a profile written by hand must name a release that exists.
        let parse = if m.host { crate::kernel::KernelVersion::parse } else { crate::kernel::KernelVersion::parse_profile };
        parse(&self.kernel.profile).map_err(|e| ScenarioError::new("kernel.profile", e))?;
        for name in self.kernel.features.keys() {
            if crate::features::Features::lookup(name).is_none() {
                return Err(ScenarioError::new(format!("kernel.features.{name}"), "unknown feature: `schedlab features` lists them"));
            }
        }
        if let Some(p) = self.kernel.background_profile.as_ref().and_then(|p| p.spec()) {
            p.validate()?;
        }
        if let Some(w) = &self.workload {
            match (&w.rt_app, w.kind.is_empty()) {
                (Some(_), false) => return Err(ScenarioError::new("workload", "give kind (a generator) or rt_app (a file), not both")),
                (None, true) => {
                    return Err(ScenarioError::new(
                        "workload.kind",
                        "expected a generator name (`schedlab workloads` lists them) or rt_app = \"file.json\"",
                    ))
                }
                _ => {}
            }
        }
        if self.workload.is_none() && self.tasks.is_empty() {
            return Err(ScenarioError::new("workload", "the scenario has no workload: give [workload] or [[tasks]]"));
        }
        let r = &self.run;
        match r.duration_s {
            Some(d) if !(d.is_finite() && d > 0.0) => {
                return Err(ScenarioError::new("run.duration_s", format!("expected a positive number of seconds, got {}", crate::cost::shown(d))))
            }
            Some(d) if d * crate::time::NSEC_PER_SEC as f64 > crate::time::MAX_DURATION_NS as f64 => {
                return Err(ScenarioError::new(
                    "run.duration_s",
                    format!(
                        "{} s is longer than the {} s a run may be",
                        crate::cost::shown(d),
                        crate::time::MAX_DURATION_NS / crate::time::NSEC_PER_SEC
                    ),
                ))
            }
            None if r.until.is_none() => return Err(ScenarioError::new("run", "expected duration_s or until = \"workload_done\"")),
            _ => {}
        }
        if r.seeds.is_empty() {
            return Err(ScenarioError::new("run.seeds", "expected at least one seed"));
        }
        if let Some(w) = r.warmup_s {
            if !(w.is_finite() && w >= 0.0) {
                return Err(ScenarioError::new("run.warmup_s", format!("expected a number of seconds >= 0, got {w}")));
            }
            match r.duration_s {
                Some(d) if w >= d => return Err(ScenarioError::new("run.warmup_s", format!("expected less than duration_s ({d} s), got {w}"))),
                None => return Err(ScenarioError::new("run.warmup_s", "needs duration_s (a run until workload_done has no fixed window)")),
                _ => {}
            }
        }
        self.validate_groups()?;
        for (i, t) in self.timers.iter().enumerate() {
            if t.period.0 == 0 {
                return Err(ScenarioError::new(format!("timers[{i}].period"), "expected a positive duration"));
            }
        }
        for (i, t) in self.tasks.iter().chain(self.templates.iter()).enumerate() {
            self.validate_task(i, t)?;
        }
        Ok(())
    }

    fn validate_groups(&self) -> Result<(), ScenarioError> {
        let mut seen: Vec<&str> = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            let field = |f: &str| format!("groups[{i}].{f}");
            if g.name.is_empty() || g.name == "root" || seen.contains(&g.name.as_str()) {
                return Err(ScenarioError::new(field("name"), format!("'{}' must be unique, non-empty and not 'root'", g.name)));
            }
            if let Some(p) = &g.parent {
                if !seen.contains(&p.as_str()) {
                    return Err(ScenarioError::new(field("parent"), format!("unknown group '{p}': parents must be listed before children")));
                }
            }
            seen.push(&g.name);
            BandwidthSpec::from_group(g).map_err(|(f, msg)| ScenarioError::new(field(f), msg))?;
            g.shares().map_err(|(f, msg)| ScenarioError::new(field(f), msg))?;
        }
        Ok(())
    }

    fn validate_task(&self, i: usize, t: &TaskSpec) -> Result<(), ScenarioError> {
        let field = |f: &str| format!("tasks[{i}].{f}");
        if t.count == 0 {
            return Err(ScenarioError::new(field("count"), "expected at least 1"));
        }
        if !(-20..=19).contains(&t.nice) {
            return Err(ScenarioError::new(field("nice"), format!("{} is outside -20..19", t.nice)));
        }
        if let Some(a) = &t.affinity {
            crate::cpumask::CpuMask::parse_list(a).map_err(|e| ScenarioError::new(field("affinity"), e))?;
        }
        if let Some(g) = &t.group {
            if !self.groups.iter().any(|x| &x.name == g) {
                return Err(ScenarioError::new(field("group"), format!("unknown group '{g}'")));
            }
        }
        if t.program.is_empty() {
            return Err(ScenarioError::new(field("program"), "expected at least one step"));
        }
        if let Some(a) = &t.sched_attr {
            a.class_attr().map_err(|(f, msg)| ScenarioError::new(field(&format!("sched_attr.{f}")), msg))?;
        }
        if let Some(us) = t.slice_us {
            rt_app_spec::check_slice_us(us, &self.kernel.profile).map_err(|msg| ScenarioError::new(field("slice_us"), msg))?;
        }
        if let Some(d) = t.cputime_poll {
            // One event a poll: below 100 ns a run would be all polls.
            if d.0 < 100 {
                return Err(ScenarioError::new(field("cputime_poll"), format!("{} ns: expected at least 100ns", d.0)));
            }
        }
        if let Some(pid) = t.pid {
            if pid == 0 || pid > PID_MAX_LIMIT || t.count != 1 {
                return Err(ScenarioError::new(field("pid"), format!("{pid}: expected 1..{} for a single task (count = 1)", PID_MAX_LIMIT)));
            }
            if self.tasks.iter().take(i).any(|o| o.pid == Some(pid)) {
                return Err(ScenarioError::new(field("pid"), format!("{pid} is already another task's")));
            }
        }
        Ok(())
    }
}

fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn toml_error(text: &str, origin: &str, e: &toml::de::Error) -> ScenarioError {
    let location = e
        .span()
        .map(|s| {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |p| p + 1) + 1;
            format!(":{line}:{col}")
        })
        .unwrap_or_default();
    ScenarioError { origin: origin.to_string(), location, field: String::new(), message: crate::error::printable(e.message().trim()) }
}

/// A group's bandwidth limits as the scenario wrote them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandwidthSpec {
    /// Runtime per period; None = unlimited (RUNTIME_INF).
    pub quota_ns: Option<Ns>,
    /// Period length.
    pub period_ns: Ns,
    /// Burst (5.14+): unused quota that may accumulate.
    pub burst_ns: Ns,
}

impl BandwidthSpec {
    /// Reads and checks a group's limits; errors name the field (relative to the group).
    pub fn from_group(g: &GroupSpec) -> Result<BandwidthSpec, (&'static str, String)> {
        let (mut quota_us, mut period_us) = (g.cfs_quota_us.unwrap_or(-1), g.cfs_period_us.unwrap_or(100_000));
        if let Some(max) = &g.cpu_max {
            if g.cfs_quota_us.is_some() || g.cfs_period_us.is_some() {
                return Err(("cpu_max", "give either cpu_max or cfs_quota_us/cfs_period_us, not both".into()));
            }
            let mut it = max.split_whitespace();
            let q = it.next().unwrap_or("");
            quota_us = if q == "max" {
                -1
            } else {
                q.parse().map_err(|_| ("cpu_max", format!("'{max}': expected \"QUOTA PERIOD\" in µs or \"max PERIOD\"")))?
            };
            if let Some(p) = it.next() {
                period_us = p.parse().map_err(|_| ("cpu_max", format!("'{max}': the period must be an integer in µs")))?;
            }
        }
        // Kernel limits (tg_set_cfs_bandwidth): period 1 ms .. 1 s, quota >= 1 ms.
        if !(1_000..=1_000_000).contains(&period_us) {
            return Err(("cfs_period_us", format!("{period_us} µs is outside the kernel's 1000..1000000")));
        }
        if quota_us != -1 && quota_us < 1_000 {
            return Err(("cfs_quota_us", format!("{quota_us} µs: expected -1 (unlimited) or at least 1000")));
        }
        let burst_us = g.cfs_burst_us.unwrap_or(0);
        if quota_us != -1 && burst_us > quota_us as u64 {
            return Err(("cfs_burst_us", format!("{burst_us} µs exceeds the quota {quota_us} µs")));
        }
        Ok(BandwidthSpec {
            quota_ns: (quota_us != -1).then(|| quota_us as Ns * crate::time::NSEC_PER_USEC),
            period_ns: period_us * crate::time::NSEC_PER_USEC,
            burst_ns: burst_us * crate::time::NSEC_PER_USEC,
        })
    }
}
