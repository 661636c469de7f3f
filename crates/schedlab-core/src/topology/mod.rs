//! The modeled machine: sockets, NUMA nodes, LLCs, cores, SMT siblings, capacities.
//!
//! Mirrors: include/linux/topology.h, arch_topology (cpu_capacity), and the sysfs view
//! under /sys/devices/system/cpu/cpuN/topology and cache/.
//! Model: a machine is read-only during a run; CPU numbering is the kernel's
//! enumeration order (presets follow each vendor's usual Linux numbering, e.g. AMD
//! enumerates all first threads of every core before the SMT siblings).
//!
//! ```text
//!  socket ── node ── LLC (CCX / L3 / DSU) ── core ── SMT thread (= CPU)
//!  distance(a, b):  SameCpu < SmtSibling < SameLlc < SamePackage < OtherPackage
//! ```

pub mod domains;
pub mod preset_costs;
pub mod preset_energy;
pub mod preset_idle;
pub mod preset_sources;
pub mod presets;
pub mod sysfs;

use serde::Serialize;

use crate::cost::CostTable;
pub use crate::cost::Distance;
use crate::cpumask::{CpuId, CpuMask};
pub use domains::{DomainLevel, SchedDomain, SdFlags};

/// A vendor kernel's Energy Model: the performance domain of a core type at a voltage
/// band end (None for a core type it does not cover).
pub type VendorEnergyModel = fn(&str, preset_energy::VoltageEnd) -> Option<crate::energy_model::EmPerfDomain>;

/// Instruction-set family; decides how TLB shootdown and IPIs behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// x86-64: TLB shootdown by IPI to CPUs in mm_cpumask.
    X86_64,
    /// arm64: broadcast TLBI + DSB completion over the inner-shareable domain.
    Arm64,
}

/// Where one CPU sits in the machine.
#[derive(Clone, Debug, Serialize)]
pub struct CpuTopo {
    /// CPU number.
    pub id: CpuId,
    /// Physical core index (machine-wide).
    pub core: usize,
    /// Last-level-cache index (machine-wide).
    pub llc: usize,
    /// NUMA node index.
    pub node: usize,
    /// Package (socket) index.
    pub socket: usize,
    /// Capacity relative to the machine's biggest CPU (SCHED_CAPACITY_SCALE = 1024).
    pub capacity: u32,
    /// Nominal clock in MHz (cycles-to-ns conversions use it).
    pub freq_mhz: u32,
    /// Core type name ("zen4", "cortex-x1", "cortex-a55", ...).
    pub core_type: String,
}

/// A complete machine: topology, sched domains and cost table.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Preset or description name.
    pub name: String,
    /// One line on what the machine is and where its figures come from.
    pub description: String,
    /// Instruction-set family.
    pub arch: Arch,
    /// Every CPU, indexed by CPU number.
    pub cpus: Vec<CpuTopo>,
    /// Cache sizes, latencies and operation costs.
    pub cost: CostTable,
    /// cpuidle state tables, one per core type.
    pub idle_drivers: Vec<crate::cpuidle::IdleDriver>,
    /// Index into `idle_drivers` of each CPU (one driver per core type).
    pub cpu_idle_driver: Vec<usize>,
    /// Energy Model performance domain of each core type, indexed like `idle_drivers`
    /// (None where the machine's firmware describes no power).
    pub perf_domains: Vec<Option<crate::energy_model::EmPerfDomain>>,
    /// The value filed for each cost-table leaf and its source, kind and band
    /// (`preset_sources::cost_sources` reports a leaf changed since as an override).
    #[serde(skip)]
    pub cost_sources: std::sync::Arc<preset_sources::CostSources>,
    /// The Energy Model the machine's vendor kernel registers, where its record has one.
    #[serde(skip)]
    pub vendor_energy: Option<VendorEnergyModel>,
    /// The cpufreq governor its kernel starts (CONFIG_CPU_FREQ_DEFAULT_GOV_*), run where
    /// a scenario names none (`[kernel] governor`).
    #[serde(skip)]
    pub default_governor: crate::eas::schedutil::Governor,
    /// CPUs of each LLC, indexed by LLC.
    #[serde(skip)]
    pub llc_span: Vec<CpuMask>,
    /// CPUs of each core (SMT siblings), indexed by core.
    #[serde(skip)]
    pub core_span: Vec<CpuMask>,
    /// The same CPUs as lists, ascending (a core's few siblings are walked on every
    /// wakeup scan, and a list is shorter to walk than a mask's words).
    #[serde(skip)]
    pub core_cpus: Vec<Vec<CpuId>>,
    /// CPUs of each NUMA node, indexed by node.
    #[serde(skip)]
    pub node_span: Vec<CpuMask>,
    /// CPUs of each CPU's cluster (cores sharing an L2 or L3 tags inside an LLC, the
    /// kernel's cluster_cpus), indexed by CPU; its core where the machine has none.
    #[serde(skip)]
    pub cluster_span: Vec<CpuMask>,
    /// Sched-domain hierarchy of each CPU, lowest level first.
    #[serde(skip)]
    pub domains: Vec<Vec<SchedDomain>>,
    /// Each CPU's (core, LLC, socket), packed: `distance` runs for every CPU a wakeup
    /// scan or a balance pass reads, and `cpus` entries are five times the size.
    #[serde(skip)]
    places: Vec<[u32; 3]>,
}

impl Machine {
    /// Builds a synthetic or host machine from its CPUs and cost sheet, deriving spans
    /// and sched domains: it takes the generic idle states of its `arch`
    /// (`preset_idle::generic_idle_driver`) and no Energy Model. Named machines are built
    /// from their records (`presets::MachineRecord`).
    pub fn from_cpus(name: &str, description: &str, arch: Arch, cpus: Vec<CpuTopo>, cost: preset_sources::CostSheet) -> Machine {
        let pieces = |t: &str| Ok((preset_idle::generic_idle_driver(t, arch), None));
        Machine::assemble(name, description, arch, cpus, cost, None, pieces).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Builds a machine from its CPUs, its cost sheet (refused if incomplete:
    /// `CostSheet::check`) and, per core type, its idle driver and Energy Model domain
    /// (`pieces`, asked once per core type, in CPU order); an error of `pieces` is the
    /// machine's.
    pub(crate) fn assemble(
        name: &str,
        description: &str,
        arch: Arch,
        cpus: Vec<CpuTopo>,
        cost: preset_sources::CostSheet,
        vendor_energy: Option<VendorEnergyModel>,
        mut pieces: impl FnMut(&str) -> Result<(crate::cpuidle::IdleDriver, Option<crate::energy_model::EmPerfDomain>), String>,
    ) -> Result<Machine, String> {
        cost.check(name)?;
        let span = |key: fn(&CpuTopo) -> usize| {
            let n = cpus.iter().map(key).max().map_or(0, |m| m + 1);
            let mut v = vec![CpuMask::new(); n];
            for c in &cpus {
                v[key(c)].set(c.id);
            }
            v
        };
        let llc_span = span(|c| c.llc);
        let core_span = span(|c| c.core);
        let core_cpus = core_span.iter().map(|m| m.iter().collect()).collect();
        let node_span = span(|c| c.node);
        let mut idle_drivers: Vec<crate::cpuidle::IdleDriver> = Vec::new();
        let mut perf_domains = Vec::new();
        let mut types: Vec<&str> = Vec::new();
        let mut cpu_idle_driver = Vec::with_capacity(cpus.len());
        for c in &cpus {
            let i = match types.iter().position(|t| *t == c.core_type) {
                Some(i) => i,
                None => {
                    types.push(&c.core_type);
                    let (driver, pd) = pieces(&c.core_type)?;
                    idle_drivers.push(driver);
                    perf_domains.push(pd);
                    idle_drivers.len() - 1
                }
            };
            cpu_idle_driver.push(i);
        }
        let mut m = Machine {
            name: name.to_string(),
            description: description.to_string(),
            arch,
            cpus,
            cost: cost.table,
            idle_drivers,
            cpu_idle_driver,
            perf_domains,
            cost_sources: cost.sources,
            vendor_energy,
            default_governor: crate::eas::schedutil::Governor::Performance,
            llc_span,
            core_span,
            core_cpus,
            node_span,
            cluster_span: Vec::new(),
            domains: Vec::new(),
            places: Vec::new(),
        };
        m.places = m.cpus.iter().map(|c| [c.core as u32, c.llc as u32, c.socket as u32]).collect();
        m.cluster_span = m.cpus.iter().map(|c| m.core_span[c.core]).collect();
        m.domains = domains::build(&m);
        Ok(m)
    }

    /// Groups the cores of each LLC into clusters of `cores` consecutive cores (the
    /// CLS sched-domain level, CONFIG_SCHED_CLUSTER) and rebuilds the domains.
    pub fn with_clusters(mut self, cores: usize) -> Machine {
        let mut span = vec![CpuMask::new(); self.cpus.len()];
        for llc in &self.llc_span {
            let mut llc_cores: Vec<usize> = llc.iter().map(|c| self.cpus[c].core).collect();
            llc_cores.dedup();
            for chunk in llc_cores.chunks(cores.max(1)) {
                let mut m = CpuMask::new();
                for &core in chunk {
                    m = m.or(&self.core_span[core]);
                }
                for c in m.iter() {
                    span[c] = m;
                }
            }
        }
        self.cluster_span = span;
        self.domains = domains::build(&self);
        self
    }

    /// Drops the cluster level (a kernel without CONFIG_SCHED_CLUSTER, before 5.16).
    pub fn without_clusters(&mut self) {
        if self.has_clusters() {
            self.cluster_span = self.cpus.iter().map(|c| self.core_span[c.core]).collect();
            self.domains = domains::build(self);
        }
    }

    /// Tells whether some cluster holds more than one core.
    pub fn has_clusters(&self) -> bool {
        self.cpus.iter().any(|c| self.cluster_span[c.id] != self.core_span[c.core])
    }

    /// Replaces the machine's Energy Model with the one its vendor kernel registers, at
    /// voltage band end `voltage(core_type)` for each cluster. Only the Snapdragon 888
    /// has one modeled (mainline's sm8350.dtsi gives it none; Qualcomm's kernel builds it
    /// from the cpufreq hardware's LUT: `preset_energy::sd888_vendor_domain`).
    pub fn use_vendor_energy_model(&mut self, voltage: impl Fn(&str) -> preset_energy::VoltageEnd) -> Result<(), String> {
        let Some(vendor) = self.vendor_energy else {
            return Err(format!(
                "machine {} has no vendor kernel's Energy Model modeled (only snapdragon-888 does; pixel6's comes from mainline gs101.dtsi)",
                self.name
            ));
        };
        for cpu in 0..self.nr_cpus() {
            let d = self.cpu_idle_driver[cpu];
            let t = self.cpus[cpu].core_type.clone();
            self.perf_domains[d] = vendor(&t, voltage(&t));
        }
        Ok(())
    }

    /// The Energy Model performance domain of `cpu`, if the machine has one.
    pub fn perf_domain(&self, cpu: CpuId) -> Option<&crate::energy_model::EmPerfDomain> {
        self.perf_domains[self.cpu_idle_driver[cpu]].as_ref()
    }

    /// Overrides one figure of a named idle state, in every core type that has the
    /// state: `key` is `STATE.FIELD` (the part of a `cpuidle.STATE.FIELD` cost key after
    /// `cpuidle.`), with FIELD one of `exit_latency_us` and `target_residency_us` (what
    /// the governors see, as sysfs shows them) or `wake_us` (what a wakeup takes on the
    /// hardware). The figure's provenance becomes `override`.
    pub fn override_idle_state(&mut self, key: &str, us: f64) -> Result<(), String> {
        let (state, field) = key.rsplit_once('.').ok_or_else(|| format!("'cpuidle.{key}': expected cpuidle.STATE.FIELD, e.g. cpuidle.C2.wake_us"))?;
        // Up to 1000 s: a larger value would saturate the nanosecond field in silence.
        if !us.is_finite() || !(0.0..=1e9).contains(&us) {
            return Err(format!("'cpuidle.{key}' must be a non-negative number of microseconds up to 1e9 (1000 s), got {}", crate::cost::shown(us)));
        }
        if !matches!(field, "exit_latency_us" | "target_residency_us" | "wake_us") {
            return Err(format!("'cpuidle.{key}': unknown field '{field}', expected exit_latency_us, target_residency_us or wake_us"));
        }
        let ns = (us * 1000.0).round() as crate::time::Ns;
        let mut found = false;
        for s in self.idle_drivers.iter_mut().flat_map(|d| d.states.iter_mut()).filter(|s| s.name == state) {
            found = true;
            let set = crate::provenance::Provenance::overridden(ns as f64);
            match field {
                "exit_latency_us" => {
                    s.exit_latency_ns = ns;
                    s.declared = set;
                }
                "target_residency_us" => s.target_residency_ns = ns,
                _ => {
                    s.wake_ns = ns;
                    s.wake = set;
                }
            }
        }
        if !found {
            let mut names: Vec<&str> = Vec::new();
            for s in self.idle_drivers.iter().flat_map(|d| d.states.iter()) {
                if !names.contains(&s.name.as_str()) {
                    names.push(&s.name);
                }
            }
            return Err(format!("'cpuidle.{key}': machine {} has no idle state '{state}' (it has {})", self.name, names.join(", ")));
        }
        Ok(())
    }

    /// Returns the number of CPUs.
    #[inline]
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Returns the mask of every CPU.
    pub fn all_cpus(&self) -> CpuMask {
        CpuMask::first_n(self.nr_cpus())
    }

    /// The LLCs of socket `socket`, ascending.
    pub fn llcs_of_socket(&self, socket: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.llc_span.len()).filter(move |&l| self.llc_span[l].first().is_some_and(|c| self.cpus[c].socket == socket))
    }

    /// Returns the number of sockets.
    pub fn nr_sockets(&self) -> usize {
        self.cpus.iter().map(|c| c.socket).max().map_or(0, |m| m + 1)
    }

    /// Returns the sharing distance between two CPUs.
    #[inline]
    pub fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        let (x, y) = (self.places[a], self.places[b]);
        Distance::classify(a == b, x[0] == y[0], x[1] == y[1], x[2] == y[2])
    }

    /// Tells whether two CPUs share a last-level cache (`cpus_share_cache`).
    #[inline]
    pub fn share_llc(&self, a: CpuId, b: CpuId) -> bool {
        self.cpus[a].llc == self.cpus[b].llc
    }

    /// Returns the CPUs sharing `cpu`'s LLC (`sd_llc` span).
    #[inline]
    pub fn llc_mask(&self, cpu: CpuId) -> &CpuMask {
        &self.llc_span[self.cpus[cpu].llc]
    }

    /// Returns `cpu` and its SMT siblings.
    #[inline]
    pub fn smt_mask(&self, cpu: CpuId) -> &CpuMask {
        &self.core_span[self.cpus[cpu].core]
    }

    /// Returns `cpu` and its SMT siblings, ascending (the CPUs of `smt_mask`).
    #[inline]
    pub fn smt_siblings(&self, cpu: CpuId) -> &[CpuId] {
        &self.core_cpus[self.cpus[cpu].core]
    }

    /// Tells whether the machine has SMT (more than one thread in some core).
    pub fn has_smt(&self) -> bool {
        self.core_span.iter().any(|m| m.weight() > 1)
    }

    /// Tells whether CPU capacities differ (big.LITTLE: asymmetric capacity).
    pub fn is_asymmetric(&self) -> bool {
        self.cpus.iter().any(|c| c.capacity != self.cpus[0].capacity)
    }

    /// Returns a one-line summary ("2 sockets, 24 LLCs, 192 cores, 384 CPUs").
    pub fn summary(&self) -> String {
        format!(
            "{} socket(s), {} node(s), {} LLC(s), {} core(s), {} CPU(s), {:?}",
            self.nr_sockets(),
            self.node_span.len(),
            self.llc_span.len(),
            self.core_span.len(),
            self.nr_cpus(),
            self.arch
        )
    }
}
