//! Named machines and the synthetic `topo(sockets, llcs, cores, smt)` builder.
//!
//! Mirrors: what `lscpu -e` and /sys/devices/system/cpu show on each machine.
//! Model: CPU numbering follows Linux's usual enumeration on x86 (every core's first
//! thread, then every core's second thread), so CPU i and i + cores are SMT siblings;
//! Arm phones number their little cores first, as Android does (CPU 0-3 = Cortex-A55).
//! Phone capacities are computed from the device tree as the kernel does
//! ([`dt_capacities`]). Each machine is one [`MachineRecord`], read by every consumer
//! (topology, cost table with each figure's source beside it, idle drivers, Energy
//! Model); the cost tables are the sheets of `preset_costs.rs`; none is fitted to a
//! seed's results. Each description states the shape and every assumption made where the
//! source machine was not fully described.
//!
//! ```text
//!  ryzen-7950x     1 socket   2 LLC x  8 cores x SMT2 =  32 CPUs  SMT MC PKG
//!  milan-72        1 socket   6 LLC x  6 cores x SMT2 =  72 CPUs  SMT MC PKG
//!  bergamo         1 socket  11 LLC x  8 cores x SMT2 = 176 CPUs  SMT MC PKG
//!  epyc-9654-2s    2 sockets 24 LLC x  8 cores x SMT2 = 384 CPUs  SMT MC PKG NUMA
//!  zen3-2s         2 sockets 16 LLC x  8 cores x SMT2 = 256 CPUs  SMT MC PKG NUMA
//!  pixel6          1 socket   1 LLC x  4+2+2 cores    =   8 CPUs  MC (asym)
//!  snapdragon-888  1 socket   1 LLC x  4+3+1 cores    =   8 CPUs  MC (asym)
//!  kunpeng-920-2s  2 sockets  4 LLC x 8 CLS x 4 cores = 128 CPUs  CLS MC NUMA NUMA
//!  xeon-80         2 sockets  2 LLC x 20 cores x SMT2 =  80 CPUs  SMT MC NUMA
//! ```

use super::preset_costs as costs;
use super::preset_energy as energy;
use super::preset_idle::{self as idle, AmdFirmware};
use super::preset_sources::CostSheet;
use super::{Arch, CpuTopo, Machine, VendorEnergyModel};
use crate::cpuidle::IdleDriver;
use crate::eas::schedutil::Governor;
use crate::energy_model::EmPerfDomain;

/// The governor of the phones' kernels: schedutil, Kconfig's default choice on arm64
/// (drivers/cpufreq/Kconfig, `default CPU_FREQ_DEFAULT_GOV_SCHEDUTIL if ARM64 || ARM`,
/// "cpufreq: Make schedutil the default for arm and arm64"), which Android's GKI
/// defconfig leaves as it is. With an Energy Model, energy-aware scheduling comes with it
/// (EAS runs only under schedutil). x86 and server records keep `performance`: they carry
/// no OPP table for a governor to choose from.
const ANDROID_GOVERNOR: Governor = Governor::Schedutil;

/// Shape of a homogeneous machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Packages.
    pub sockets: usize,
    /// NUMA nodes per package.
    pub nodes_per_socket: usize,
    /// LLCs per NUMA node.
    pub llcs_per_node: usize,
    /// Cores per LLC.
    pub cores_per_llc: usize,
    /// Hardware threads per core.
    pub smt: usize,
}

/// Builds the CPUs of a homogeneous machine, x86 numbering (siblings last).
pub fn homogeneous_cpus(shape: Shape, freq_mhz: u32, core_type: &str) -> Vec<CpuTopo> {
    let cores_per_node = shape.llcs_per_node * shape.cores_per_llc;
    let cores_per_socket = shape.nodes_per_socket * cores_per_node;
    let nr_cores = shape.sockets * cores_per_socket;
    let mut cpus = Vec::with_capacity(nr_cores * shape.smt);
    for thread in 0..shape.smt {
        for core in 0..nr_cores {
            cpus.push(CpuTopo {
                id: thread * nr_cores + core,
                core,
                llc: core / shape.cores_per_llc,
                node: core / cores_per_node,
                socket: core / cores_per_socket,
                capacity: 1024,
                freq_mhz,
                core_type: core_type.to_string(),
            });
        }
    }
    cpus
}

pub use super::preset_costs::generic_x86_costs;

/// Builds the synthetic machine `topo(sockets, llcs per socket, cores per LLC, smt)`.
pub fn topo(sockets: usize, llcs_per_socket: usize, cores_per_llc: usize, smt: usize) -> Machine {
    topo_arch(sockets, llcs_per_socket, cores_per_llc, smt, Arch::X86_64)
}

/// A synthetic homogeneous machine of either architecture. Both share one generic cost
/// table (a Zen 3-class server's latencies at 3 GHz), so that two machines differing only
/// in `arch` differ only in their mechanisms (the swap sweep compares arm64's broadcast
/// TLBI with x86's IPIs this way). Idle states are the architecture's own: acpi_idle as on
/// EPYC for x86, WFI and a PSCI core power-down for arm64 — an arm64 `topo` used to keep
/// the x86 states (an I/O-port C2 where arm64 has WFI, which stays in the DVM domain).
pub fn topo_arch(sockets: usize, llcs_per_socket: usize, cores_per_llc: usize, smt: usize, arch: Arch) -> Machine {
    let shape = Shape { sockets, nodes_per_socket: 1, llcs_per_node: llcs_per_socket, cores_per_llc, smt };
    generic_record(&format!("topo({sockets},{llcs_per_socket},{cores_per_llc},{smt})"), shape, 3000, arch)
        .build()
        .expect("a generic record is complete")
}

/// The record of a synthetic homogeneous machine of `arch` called `name`: the generic
/// (x86 server) cost sheet and the architecture's generic idle driver (`preset_idle::generic_idle_driver`); no Energy
/// Model.
pub fn generic_record(name: &str, shape: Shape, freq_mhz: u32, arch: Arch) -> MachineRecord {
    let (description, core_type) = match arch {
        Arch::X86_64 => ("synthetic homogeneous x86 machine with generic costs", "generic"),
        Arch::Arm64 => ("synthetic homogeneous arm64 machine with generic (x86 server) costs and PSCI idle states", "generic-arm64"),
    };
    MachineRecord {
        name: name.into(),
        description: description.into(),
        arch,
        layout: Layout::Homogeneous { shape, freq_mhz, core_type: core_type.into(), cluster_cores: None },
        cost: Some(generic_x86_costs()),
        idle: vec![(core_type.into(), idle::generic_idle_driver(core_type, arch))],
        energy: Vec::new(),
        vendor_energy: None,
        governor: Governor::Performance,
    }
}

/// One cluster of identical cores on a heterogeneous (big.LITTLE) SoC.
#[derive(Clone, Copy, Debug)]
pub struct Cluster {
    /// Cores in the cluster (one CPU each: no SMT on these designs).
    pub cores: usize,
    /// Core type name ("cortex-a55", ...).
    pub core_type: &'static str,
    /// `capacity-dmips-mhz` from the device tree.
    pub dmips_mhz: u64,
    /// Highest operating point, kHz (`cpuinfo_max_freq`).
    pub max_khz: u64,
}

/// Returns each cluster's `cpu_capacity` as the kernel computes it from the device tree:
/// `dmips_mhz × max frequency`, scaled so the largest is 1024, rounded down
/// (drivers/base/arch_topology.c: topology_normalize_cpu_scale()).
pub fn dt_capacities(clusters: &[Cluster]) -> Vec<u32> {
    let raw: Vec<u64> = clusters.iter().map(|c| c.dmips_mhz * c.max_khz).collect();
    let scale = raw.iter().copied().max().unwrap_or(1).max(1);
    raw.iter().map(|r| ((r << 10) / scale) as u32).collect()
}

/// Builds the CPUs of a one-socket phone SoC whose clusters all share one LLC, numbered
/// in cluster order (Android numbers the little cores first).
pub fn cluster_cpus(clusters: &[Cluster]) -> Vec<CpuTopo> {
    let caps = dt_capacities(clusters);
    let mut cpus = Vec::new();
    for (cl, cap) in clusters.iter().zip(caps) {
        for _ in 0..cl.cores {
            let id = cpus.len();
            cpus.push(CpuTopo {
                id,
                core: id,
                llc: 0,
                node: 0,
                socket: 0,
                capacity: cap,
                freq_mhz: (cl.max_khz / 1000) as u32,
                core_type: cl.core_type.to_string(),
            });
        }
    }
    cpus
}

/// How a record lays its CPUs out.
#[derive(Clone, Debug)]
pub enum Layout {
    /// A homogeneous machine, x86 numbering (siblings last), every CPU at `freq_mhz` of
    /// core type `core_type`; with `cluster_cores`, the cores of each LLC grouped into
    /// clusters of that many (the CLS level, `Machine::with_clusters`).
    Homogeneous {
        /// Sockets, nodes, LLCs, cores and threads.
        shape: Shape,
        /// Nominal clock of every CPU.
        freq_mhz: u32,
        /// Core type of every CPU.
        core_type: String,
        /// Cores per cluster (CLS level), if the LLCs are split into clusters.
        cluster_cores: Option<usize>,
    },
    /// A one-socket phone SoC whose clusters share one LLC ([`cluster_cpus`]).
    Clusters(Vec<Cluster>),
}

/// One machine: everything every consumer reads of it (topology, cost table, idle driver
/// of each core type, Energy Model). The figures' sources sit with the figures: the idle
/// states' in their `Provenance`, the cost table's filed beside each value in its sheet
/// (`preset_sources::CostSheet`). A piece a
/// consumer needs and the record lacks is an error naming the machine and the piece
/// ([`MachineRecord::build`]), never another machine's figures.
#[derive(Clone, Debug)]
pub struct MachineRecord {
    /// Preset name (`[machine] preset`).
    pub name: String,
    /// One line on what the machine is and every assumption made about it.
    pub description: String,
    /// Instruction-set family.
    pub arch: Arch,
    /// Its CPUs.
    pub layout: Layout,
    /// Cache sizes, latencies and operation costs, each with its source (`cost`).
    pub cost: Option<CostSheet>,
    /// The cpuidle driver of each core type (`idle`).
    pub idle: Vec<(String, IdleDriver)>,
    /// The Energy Model domain of each core type, as the mainline device tree gives it
    /// (`energy`); empty where the firmware describes no power (x86, ACPI servers).
    pub energy: Vec<(String, EmPerfDomain)>,
    /// The vendor kernel's Energy Model, opt-in per run (`[machine.energy_model] kernel
    /// = "vendor"`).
    pub vendor_energy: Option<VendorEnergyModel>,
    /// The cpufreq governor the machine's kernel starts with (`governor`).
    pub governor: Governor,
}

impl MachineRecord {
    /// Builds the machine, or names the piece the record lacks.
    pub fn build(&self) -> Result<Machine, String> {
        let name = &self.name;
        let missing = |piece: &str| format!("machine '{name}': its record has no {piece}");
        let cost = self.cost.clone().ok_or_else(|| missing("cost table (cost)"))?;
        let (cpus, cluster_cores) = match &self.layout {
            Layout::Homogeneous { shape, freq_mhz, core_type, cluster_cores } => (homogeneous_cpus(*shape, *freq_mhz, core_type), *cluster_cores),
            Layout::Clusters(clusters) => (cluster_cpus(clusters), None),
        };
        if cpus.is_empty() {
            return Err(missing("CPUs (layout)"));
        }
        let pieces = |t: &str| {
            let idle = self.idle.iter().find(|(ct, _)| ct == t).map(|(_, d)| d.clone());
            let idle = idle.ok_or_else(|| missing(&format!("idle driver for core type '{t}' (idle)")))?;
            let pd = if self.energy.is_empty() {
                None
            } else {
                let pd = self.energy.iter().find(|(ct, _)| ct == t).map(|(_, d)| d.clone());
                Some(pd.ok_or_else(|| missing(&format!("Energy Model domain for core type '{t}' (energy)")))?)
            };
            Ok((idle, pd))
        };
        let mut m = Machine::assemble(name, &self.description, self.arch, cpus, cost, self.vendor_energy, pieces)?;
        m.default_governor = self.governor;
        Ok(match cluster_cores {
            Some(n) => m.with_clusters(n),
            None => m,
        })
    }
}

/// The built-in records, in display order, and their names (`PRESET_NAMES`): a new
/// built-in machine is its record function and its line here.
macro_rules! records {
    ($($name:literal => $record:ident,)*) => {
        /// Names of every preset, in display order.
        pub const PRESET_NAMES: &[&str] = &[$($name),*];
        const RECORDS: &[fn() -> MachineRecord] = &[$($record),*];
    };
}

records! {
    "ryzen-7950x" => ryzen_7950x,
    "milan-72" => milan_72,
    "bergamo" => bergamo,
    "epyc-9654-2s" => epyc_9654_2s,
    "zen3-2s" => zen3_2s,
    "pixel6" => pixel6,
    "snapdragon-888" => snapdragon_888,
    "kunpeng-920-2s" => kunpeng_920_2s,
    "xeon-80" => xeon_80,
}

/// Records added at run time ([`register`]).
static REGISTERED: std::sync::RwLock<Vec<MachineRecord>> = std::sync::RwLock::new(Vec::new());

/// Adds a machine as one record, so that `preset(name)` (and `[machine] preset`) builds
/// it: refused if its name is taken or the record lacks a piece.
pub fn register(record: MachineRecord) -> Result<(), String> {
    if self::record(&record.name).is_some() {
        return Err(format!("machine '{}': a preset of that name exists", record.name));
    }
    record.build()?;
    REGISTERED.write().unwrap_or_else(|e| e.into_inner()).push(record);
    Ok(())
}

/// The record of the preset called `name` (built-in or registered).
pub fn record(name: &str) -> Option<MachineRecord> {
    if let Some(r) = RECORDS.iter().map(|f| f()).find(|r| r.name == name) {
        return Some(r);
    }
    REGISTERED.read().unwrap_or_else(|e| e.into_inner()).iter().find(|r| r.name == name).cloned()
}

/// Returns the preset called `name`.
pub fn preset(name: &str) -> Option<Machine> {
    // Built-in records are complete (tests/topology.rs builds each) and registered ones
    // were built once on registration, so a build error here is a bug.
    record(name).map(|r| r.build().unwrap_or_else(|e| panic!("{e}")))
}

/// A homogeneous x86 record with one core type and no Energy Model.
fn x86(name: &str, description: &str, shape: Shape, freq_mhz: u32, core_type: &str, cost: CostSheet, idle: IdleDriver) -> MachineRecord {
    MachineRecord {
        name: name.into(),
        description: description.into(),
        arch: Arch::X86_64,
        layout: Layout::Homogeneous { shape, freq_mhz, core_type: core_type.into(), cluster_cores: None },
        cost: Some(cost),
        idle: vec![(core_type.into(), idle)],
        energy: Vec::new(),
        vendor_energy: None,
        governor: Governor::Performance,
    }
}

/// AMD: 7950X has 2 CCDs, each one 8-core CCX with 32 MiB L3; base 4.5 GHz, boost 5.7
/// GHz (AMD product page).
fn ryzen_7950x() -> MachineRecord {
    x86(
        "ryzen-7950x",
        "AMD Ryzen 9 7950X (Zen 4): 1 socket, 2 CCD x 8 cores x SMT2 = 32 CPUs, 32 MiB L3 \
         per CCX; nominal clock = 4.5 GHz base (boost 5.7 GHz)",
        Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: 2, cores_per_llc: 8, smt: 2 },
        4500,
        "zen4",
        costs::zen4_desktop_costs(),
        idle::amd_acpi_idle(AmdFirmware::RyzenDesktop),
    )
}

fn milan_72() -> MachineRecord {
    x86(
        "milan-72",
        "AMD EPYC Milan (Zen 3), 1 socket, 1 node: ASSUMED 6 CCX x 6 cores x SMT2 = 72 CPUs \
         (the source names 72 cores and 6 CCX; its 6488% peak CPU allows at most 72 \
         logical CPUs), 32 MiB L3 per CCX, 3245 MHz (its CPU max MHz)",
        Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: 6, cores_per_llc: 6, smt: 2 },
        3245,
        "zen3",
        costs::zen3_server_costs(3245.0),
        idle::amd_acpi_idle(AmdFirmware::Epyc),
    )
}

fn bergamo() -> MachineRecord {
    x86(
        "bergamo",
        "AMD EPYC Bergamo (Zen 4c), 1 socket, 1 node: 11 CCX x 8 cores x SMT2 = 176 CPUs, \
         16 MiB L3 per CCX; CCXs pair on CCDs (2 per CCD) but share one IO-die link, so \
         a same-CCD CCX costs as another CCD and the pairing is not modeled; 2.25 GHz \
         (EPYC 9754 base) assumed",
        Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: 11, cores_per_llc: 8, smt: 2 },
        2250,
        "zen4c",
        costs::zen4_server_costs(2250.0, 16 * 1024),
        idle::amd_acpi_idle(AmdFirmware::Epyc),
    )
}

fn epyc_9654_2s() -> MachineRecord {
    x86(
        "epyc-9654-2s",
        "2x AMD EPYC 9654 (Genoa, Zen 4): 2 sockets x 12 CCD x 8 cores x SMT2 = 384 CPUs, \
         24 L3 of 32 MiB, NPS1 (one NUMA node per socket), 2.4 GHz base",
        Shape { sockets: 2, nodes_per_socket: 1, llcs_per_node: 12, cores_per_llc: 8, smt: 2 },
        2400,
        "zen4",
        costs::zen4_server_costs(2400.0, 32 * 1024),
        idle::amd_acpi_idle(AmdFirmware::Epyc),
    )
}

fn zen3_2s() -> MachineRecord {
    x86(
        "zen3-2s",
        "Zen 3 host of unstated size, ASSUMED 2x AMD EPYC 7713 (Milan): 2 sockets x 8 CCX \
         x 8 cores x SMT2 = 256 CPUs, 32 MiB L3 per CCX, NPS1, 2.0 GHz base",
        Shape { sockets: 2, nodes_per_socket: 1, llcs_per_node: 8, cores_per_llc: 8, smt: 2 },
        2000,
        "zen3",
        costs::zen3_server_costs(2000.0),
        idle::amd_acpi_idle(AmdFirmware::Epyc),
    )
}

/// [gs101] capacity-dmips-mhz 250/620/1024 and top OPPs 1803/2253/2802 MHz; idle
/// states "c2" (entry, exit, min-residency) us ANANKE (A55) 70/160/2000, ENYO (A76)
/// 150/190/2500, HERA (X1) 235/220/3500; the EM of mainline gs101.dtsi.
fn pixel6() -> MachineRecord {
    let types = ["cortex-a55", "cortex-a76", "cortex-x1"];
    MachineRecord {
        name: "pixel6".into(),
        description: "Google Pixel 6 (Tensor GS101, arm64): 4x Cortex-A55 1.80 GHz (CPU 0-3, capacity \
             160) + 2x A76 2.25 GHz (4-5, 498) + 2x X1 2.80 GHz (6-7, 1024), one 4 MiB DSU \
             L3; capacities computed from the mainline gs101 device tree"
            .into(),
        arch: Arch::Arm64,
        layout: Layout::Clusters(vec![
            Cluster { cores: 4, core_type: "cortex-a55", dmips_mhz: 250, max_khz: 1_803_000 },
            Cluster { cores: 2, core_type: "cortex-a76", dmips_mhz: 620, max_khz: 2_253_000 },
            Cluster { cores: 2, core_type: "cortex-x1", dmips_mhz: 1024, max_khz: 2_802_000 },
        ]),
        cost: Some(costs::gs101_costs()),
        idle: vec![
            ("cortex-a55".into(), idle::gs101_psci_idle(70, 160, 2000)),
            ("cortex-a76".into(), idle::gs101_psci_idle(150, 190, 2500)),
            ("cortex-x1".into(), idle::gs101_psci_idle(235, 220, 3500)),
        ],
        energy: types.iter().filter_map(|t| Some((t.to_string(), energy::gs101_perf_domain(t)?))).collect(),
        vendor_energy: None,
        governor: ANDROID_GOVERNOR,
    }
}

/// [lahaina] capacity-dmips-mhz 1024/1946/2048; top OPPs 1804.8/2419.2/2841.6 MHz
/// (Qualcomm: 1.80/2.42/2.84 GHz, multiples of the 19.2 MHz XO). [sm8350] idle states
/// (entry, exit, min-residency) us LITTLE_CPU_SLEEP_0 (A55) 360/531/3934 and
/// BIG_CPU_SLEEP_0 (A78, X1) 702/1061/4488. No mainline EM; the vendor kernel's is
/// opt-in (preset_energy::sd888_vendor_domain).
fn snapdragon_888() -> MachineRecord {
    MachineRecord {
        name: "snapdragon-888".into(),
        description: "Qualcomm Snapdragon 888 (SM8350, arm64): 4x Cortex-A55 1.80 GHz (CPU 0-3, \
             capacity 325) + 3x A78 2.42 GHz (4-6, 828) + 1x X1 2.84 GHz (7, 1024), one 4 MiB \
             L3; capacities computed from Qualcomm's lahaina device tree; no Energy Model under \
             mainline (sm8350.dtsi has none), the vendor kernel's with [machine.energy_model] \
             kernel = \"vendor\""
            .into(),
        arch: Arch::Arm64,
        layout: Layout::Clusters(vec![
            Cluster { cores: 4, core_type: "cortex-a55", dmips_mhz: 1024, max_khz: 1_804_800 },
            Cluster { cores: 3, core_type: "cortex-a78", dmips_mhz: 1946, max_khz: 2_419_200 },
            Cluster { cores: 1, core_type: "cortex-x1", dmips_mhz: 2048, max_khz: 2_841_600 },
        ]),
        cost: Some(costs::sd888_costs()),
        idle: vec![
            ("cortex-a55".into(), idle::sm8350_psci_idle(360, 531, 3934)),
            ("cortex-a78".into(), idle::sm8350_psci_idle(702, 1061, 4488)),
            ("cortex-x1".into(), idle::sm8350_psci_idle(702, 1061, 4488)),
        ],
        energy: Vec::new(),
        vendor_energy: Some(energy::sd888_vendor_domain),
        governor: ANDROID_GOVERNOR,
    }
}

/// Clusters (CCL) of 4 cores sharing L3 tags, 8 per die: the topology the CLS level was
/// added for (778c558f49a2, "sched: Add cluster scheduler level in core and related
/// Kconfig for ARM64"; the series' cover letters describe Kunpeng 920's 4-CPU clusters).
fn kunpeng_920_2s() -> MachineRecord {
    MachineRecord {
        name: "kunpeng-920-2s".into(),
        description: "2x HiSilicon Kunpeng 920 (TaiShan v110, arm64, no SMT): 2 sockets x 2 dies \
             (SCCL) x 8 clusters (CCL) x 4 cores = 128 CPUs, 32 MiB L3 per die, 4 NUMA nodes \
             (one per die), 2.6 GHz; the cluster level is a topology level only (no cost of \
             its own in the cost table)"
            .into(),
        arch: Arch::Arm64,
        layout: Layout::Homogeneous {
            shape: Shape { sockets: 2, nodes_per_socket: 2, llcs_per_node: 1, cores_per_llc: 32, smt: 1 },
            freq_mhz: 2600,
            core_type: "taishan-v110".into(),
            cluster_cores: Some(4),
        },
        cost: Some(costs::kunpeng920_costs()),
        idle: vec![("taishan-v110".into(), idle::arm_server_provisional("taishan-v110"))],
        energy: Vec::new(),
        vendor_energy: None,
        governor: Governor::Performance,
    }
}

fn xeon_80() -> MachineRecord {
    x86(
        "xeon-80",
        "80-CPU Intel Xeon server, ASSUMED 2 sockets x 20 cores x SMT2 (Skylake-SP / \
         Cascade Lake class, e.g. Xeon Gold 6148), one 27.5 MiB LLC and one NUMA node per \
         socket, 2.4 GHz assumed",
        Shape { sockets: 2, nodes_per_socket: 1, llcs_per_node: 1, cores_per_llc: 20, smt: 2 },
        2400,
        "skylake-sp",
        costs::skylake_sp_costs(2400.0),
        idle::skx_intel_idle(),
    )
}
