//! Reads the host's own topology from sysfs.
//!
//! Mirrors: /sys/devices/system/cpu/{online, cpuN/topology/{core_id,physical_package_id,
//! thread_siblings_list}, cpuN/cache/indexM/{level,type,size,shared_cpu_list},
//! cpuN/cpu_capacity, cpuN/cpufreq/cpuinfo_max_freq} and
//! /sys/devices/system/node/nodeN/cpulist.
//! Model: only online CPUs are modeled, renumbered densely in ascending order when some
//! are offline. A core is a set of SMT siblings (`thread_siblings_list`, or the pair
//! (package, core_id) where that file is absent); the LLC is the L3 (`cache/index3`) or,
//! without one, the package; NUMA nodes come from the node directory or, without it, one
//! per package. Package, core, LLC and node ids are mapped to machine-wide indices in
//! order of first appearance. Costs are the generic table of the host's architecture,
//! with the cache sizes sysfs reports. The idle states are the host's own
//! (cpuN/cpuidle/stateK/{name,latency,residency} and cpuidle/current_driver): declared
//! figures, which also serve as the wake (no measurement of the host's silicon). The
//! running kernel (/proc/sys/kernel/osrelease, CONFIG_HZ from /proc/config.gz or
//! /boot/config-RELEASE) is what a host scenario runs by default.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::preset_costs::{generic_arm64_costs, generic_x86_costs};
use super::{Arch, CpuTopo, Machine};
use crate::cpumask::{CpuMask, MAX_CPUS};

/// Clock assumed when cpufreq does not report one, MHz (the synthetic machines' clock).
const DEFAULT_MHZ: u32 = 3000;

/// Reads the host machine from `root` (normally "/sys/devices/system/cpu").
///
/// NUMA nodes are read from the `node` directory beside `root`; the architecture is the
/// one this program was built for.
pub fn read_host(root: &Path) -> Result<Machine, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => Arch::X86_64,
        "aarch64" => Arch::Arm64,
        other => return Err(format!("host architecture '{other}' is not modeled: expected x86_64 or aarch64")),
    };
    let node_root = root.parent().map(|p| p.join("node"));
    read_tree(root, node_root.as_deref(), arch)
}

/// Reads a machine from a sysfs-shaped tree: `cpu_root` is the `.../system/cpu`
/// directory, `node_root` the `.../system/node` directory (absent = one node per package).
pub fn read_tree(cpu_root: &Path, node_root: Option<&Path>, arch: Arch) -> Result<Machine, String> {
    let online = online_cpus(cpu_root)?;
    if online.is_empty() {
        return Err(format!("{}: no online CPU found (expected cpuN directories)", cpu_root.display()));
    }
    // Dense simulator CPU number of each online kernel CPU number.
    let dense: BTreeMap<usize, usize> = online.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let node_of = read_nodes(node_root, &dense)?;

    struct Raw {
        package: i64,
        core_key: String,
        llc_key: String,
        capacity: u32,
        mhz: Option<u32>,
    }
    let mut raws = Vec::with_capacity(online.len());
    for &cpu in &online {
        let dir = cpu_root.join(format!("cpu{cpu}"));
        let topo = dir.join("topology");
        let package: i64 = parse(&topo.join("physical_package_id"), "an integer package id")?;
        // Some arm64 firmware reports -1 (unknown): one package.
        let package = package.max(0);
        let core_id: i64 = parse(&topo.join("core_id"), "an integer core id")?;
        let core_key = match read_optional(&topo.join("thread_siblings_list"))? {
            Some(text) => format!("siblings {}", parse_list(&topo.join("thread_siblings_list"), &text)?.to_list()),
            None => format!("package {package} core {core_id}"),
        };
        let llc_path = dir.join("cache/index3/shared_cpu_list");
        let llc_key = match read_optional(&llc_path)? {
            Some(text) => format!("llc {}", parse_list(&llc_path, &text)?.to_list()),
            None => format!("package {package}"),
        };
        let capacity = match read_optional(&dir.join("cpu_capacity"))? {
            Some(text) => parse_text(&dir.join("cpu_capacity"), &text, "an integer capacity (1..=1024)")?,
            None => 1024,
        };
        let freq_path = dir.join("cpufreq/cpuinfo_max_freq");
        let mhz = match read_optional(&freq_path)? {
            Some(text) => Some((parse_text::<u64>(&freq_path, &text, "a frequency in kHz")? / 1000) as u32),
            None => None,
        };
        raws.push(Raw { package, core_key, llc_key, capacity, mhz });
    }

    let mut sockets = Indexer::default();
    let mut cores = Indexer::default();
    let mut llcs = Indexer::default();
    let mut nodes = Indexer::default();
    let mut cpus = Vec::with_capacity(raws.len());
    let mut assumed_clock = false;
    for (id, r) in raws.iter().enumerate() {
        let socket = sockets.index(format!("{}", r.package));
        let node = match &node_of {
            Some(map) => nodes.index(format!("{}", map[id])),
            None => socket,
        };
        assumed_clock |= r.mhz.is_none();
        cpus.push(CpuTopo {
            id,
            core: cores.index(r.core_key.clone()),
            llc: llcs.index(r.llc_key.clone()),
            node,
            socket,
            capacity: r.capacity,
            freq_mhz: r.mhz.unwrap_or(DEFAULT_MHZ),
            core_type: "host".to_string(),
        });
    }

    let mut cost = match arch {
        Arch::X86_64 => generic_x86_costs(),
        Arch::Arm64 => generic_arm64_costs(),
    };
    let generic = cost.table.cache.clone();
    read_cache_sizes(&cpu_root.join(format!("cpu{}", online[0])), &mut cost.table.cache)?;
    let read = cost.table.cache.clone();
    let sysfs = super::preset_sources::declared("the host's /sys/devices/system/cpu/cpuN/cache/index*/size");
    for (key, was, now) in [
        (".cache.l1d_kib", generic.l1d_kib, read.l1d_kib),
        (".cache.l2_kib", generic.l2_kib, read.l2_kib),
        (".cache.llc_kib", generic.llc_kib, read.llc_kib),
    ] {
        if was != now {
            cost.file(key, f64::from(now), sysfs);
        }
    }

    let mut notes = Vec::new();
    if online.last().copied() != Some(online.len() - 1) {
        notes.push("offline CPUs skipped and the online ones renumbered densely".to_string());
    }
    if assumed_clock {
        notes.push(format!("clock not reported by cpufreq, {DEFAULT_MHZ} MHz assumed"));
    }
    let description = format!(
        "host read from {}: {} socket(s), {} node(s), {} LLC(s), {} core(s), {} CPU(s); generic {:?} costs{}{}",
        cpu_root.display(),
        sockets.len(),
        if node_of.is_some() { nodes.len() } else { sockets.len() },
        llcs.len(),
        cores.len(),
        cpus.len(),
        arch,
        if notes.is_empty() { "" } else { "; " },
        notes.join("; "),
    );
    let mut m = Machine::from_cpus("host", &description, arch, cpus, cost);
    let cpuidle = cpu_root.join(format!("cpu{}/cpuidle", online[0]));
    m.idle_drivers[0] = read_cpuidle(&cpuidle, &cpu_root.join("cpuidle/current_driver"))?;
    Ok(m)
}

/// The idle driver sysfs describes for one CPU: its states as declared. Without a
/// cpuidle driver ("none", or no cpuidle directory) the idle loop halts the CPU
/// directly (default_idle_call()): one halt state.
fn read_cpuidle(dir: &Path, driver_file: &Path) -> Result<crate::cpuidle::IdleDriver, String> {
    use crate::cpuidle::{IdleDriver, IdleState};
    use crate::provenance::{Kind, Provenance};
    let driver = read_optional(driver_file)?.map(|t| t.trim().to_string()).unwrap_or_else(|| "none".into());
    let mut states = Vec::new();
    for k in 0.. {
        let sdir = dir.join(format!("state{k}"));
        let Some(name) = read_optional(&sdir.join("name"))? else { break };
        let name = name.trim().to_string();
        let latency_us: u64 = parse(&sdir.join("latency"), "an exit latency in us")?;
        let residency_us: u64 = parse(&sdir.join("residency"), "a target residency in us")?;
        let source = format!("host sysfs {}", sdir.display());
        states.push(IdleState {
            polling: name == "POLL",
            watches_flags: name == "POLL",
            exit_latency_ns: latency_us * 1000,
            target_residency_ns: residency_us * 1000,
            declared: Provenance::exact(Kind::Declared, (latency_us * 1000) as f64, source.clone()),
            wake_ns: latency_us * 1000,
            wake: Provenance::new(Kind::Declared, 0.0, (latency_us * 1000) as f64, format!("{source}: declared only (no measurement of this host)")),
            // Which hardware state a host state is, sysfs does not say: none is assumed
            // to power the core down.
            loses_private_caches: false,
            leaves_coherency: false,
            io_port_entry: false,
            power_mw: 0.0,
            name,
        });
    }
    if states.is_empty() {
        // estimate: a halted CPU resumes in about a microsecond on bare metal; a guest's
        // HLT exits to the hypervisor, which must run the vCPU again (KVM polls a while
        // to avoid it): up to tens of microseconds.
        states.push(IdleState {
            name: "HLT".into(),
            exit_latency_ns: 0,
            target_residency_ns: 0,
            declared: Provenance::exact(Kind::Declared, 0.0, "no cpuidle driver: default_idle_call() halts"),
            wake_ns: 1000,
            wake: Provenance::new(Kind::Estimate, 500.0, 50_000.0, "halt without a cpuidle driver; a guest's HLT waits for its hypervisor"),
            polling: false,
            watches_flags: false,
            loses_private_caches: false,
            leaves_coherency: false,
            io_port_entry: false,
            power_mw: 0.0,
        });
    }
    Ok(IdleDriver {
        name: driver,
        states,
        source: format!("host: {}", dir.display()),
        core_flush_delay_ns: 0,
        core_flush_delay: Provenance::exact(Kind::Estimate, 0.0, "host states are not known to power cores down"),
        package: None,
        guest_halt: None,
    })
}

/// The kernel this program runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostKernel {
    /// `uname -r`.
    pub release: String,
    /// Its version as a profile, stable sublevel kept ("6.18.44").
    pub profile: String,
    /// CONFIG_HZ, where the kernel's configuration can be read.
    pub hz: Option<u32>,
    /// Where CONFIG_HZ was read, or why it was not.
    pub hz_source: String,
}

/// Reads the running kernel's release and CONFIG_HZ (/proc/config.gz, else
/// /boot/config-RELEASE).
pub fn host_kernel() -> Result<HostKernel, String> {
    let path = Path::new("/proc/sys/kernel/osrelease");
    let release = read_optional(path)?.ok_or_else(|| format!("{}: missing (not a Linux host?)", path.display()))?.trim().to_string();
    let profile = profile_of_release(&release).ok_or_else(|| format!("{}: '{release}' is not a kernel release", path.display()))?;
    let boot_config = format!("/boot/config-{release}");
    let configs =
        [("/proc/config.gz".to_string(), read_gz(Path::new("/proc/config.gz"))), (boot_config.clone(), std::fs::read_to_string(&boot_config).ok())];
    let found = configs.into_iter().find_map(|(src, text)| text.as_deref().and_then(config_hz).map(|hz| (hz, src)));
    let (hz, hz_source) = match found {
        Some((hz, src)) => (Some(hz), src),
        None => (None, "not found in /proc/config.gz or /boot/config-*".to_string()),
    };
    Ok(HostKernel { hz, hz_source, release, profile })
}

/// "6.18.44-fc-v782" -> "6.18.44": stable backports change features (NI_RANDOM), so
/// the sublevel is kept.
pub fn profile_of_release(release: &str) -> Option<String> {
    crate::kernel::KernelVersion::parse(release).ok().map(|v| v.to_string())
}

/// CONFIG_HZ=N of a kernel configuration.
pub fn config_hz(config: &str) -> Option<u32> {
    config.lines().find_map(|l| l.strip_prefix("CONFIG_HZ=")).and_then(|v| v.trim().parse().ok())
}

fn read_gz(path: &Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Maps ids (as text keys) to dense indices in order of first appearance.
#[derive(Default)]
struct Indexer {
    seen: BTreeMap<String, usize>,
}

impl Indexer {
    fn index(&mut self, key: String) -> usize {
        let next = self.seen.len();
        *self.seen.entry(key).or_insert(next)
    }

    fn len(&self) -> usize {
        self.seen.len()
    }
}

/// Returns the online CPUs, ascending: `online` if present, else every `cpuN` directory
/// with a `topology` subdirectory.
fn online_cpus(cpu_root: &Path) -> Result<Vec<usize>, String> {
    let online = cpu_root.join("online");
    if let Some(text) = read_optional(&online)? {
        return Ok(parse_list(&online, &text)?.iter().collect());
    }
    let entries = std::fs::read_dir(cpu_root).map_err(|e| format!("{}: cannot read the CPU directory ({e})", cpu_root.display()))?;
    let mut cpus = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<usize>().ok()) {
            if entry.path().join("topology").is_dir() {
                if n >= MAX_CPUS {
                    return Err(format!("{}: CPU {n} is beyond the {MAX_CPUS} CPUs modeled", entry.path().display()));
                }
                cpus.push(n);
            }
        }
    }
    cpus.sort_unstable();
    Ok(cpus)
}

/// Returns the node id of each dense CPU, or None when there is no node directory.
fn read_nodes(node_root: Option<&Path>, dense: &BTreeMap<usize, usize>) -> Result<Option<Vec<usize>>, String> {
    let Some(root) = node_root else { return Ok(None) };
    let Ok(entries) = std::fs::read_dir(root) else { return Ok(None) };
    let mut node_ids: Vec<usize> =
        entries.flatten().filter_map(|e| e.file_name().to_string_lossy().strip_prefix("node").and_then(|n| n.parse().ok())).collect();
    if node_ids.is_empty() {
        return Ok(None);
    }
    node_ids.sort_unstable();
    let mut node_of = vec![None; dense.len()];
    for node in node_ids {
        let path = root.join(format!("node{node}/cpulist"));
        let Some(text) = read_optional(&path)? else { continue };
        for cpu in parse_list(&path, &text)?.iter() {
            if let Some(&d) = dense.get(&cpu) {
                node_of[d] = Some(node);
            }
        }
    }
    let mut out = Vec::with_capacity(node_of.len());
    for (kernel_cpu, &d) in dense {
        match node_of[d] {
            Some(n) => out.push(n),
            None => {
                return Err(format!("{}: online CPU {kernel_cpu} is in no nodeN/cpulist (expected every online CPU in one node)", root.display()))
            }
        }
    }
    Ok(Some(out))
}

/// Overwrites the cache sizes sysfs reports for one CPU (L1 data, unified L2, L3).
fn read_cache_sizes(cpu_dir: &Path, cache: &mut crate::cost::CacheSizes) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(cpu_dir.join("cache")) else { return Ok(()) };
    let mut dirs: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("index"))).collect();
    dirs.sort();
    for dir in dirs {
        let (Some(level), Some(kind), Some(size)) =
            (read_optional(&dir.join("level"))?, read_optional(&dir.join("type"))?, read_optional(&dir.join("size"))?)
        else {
            continue;
        };
        let level: u32 = parse_text(&dir.join("level"), &level, "a cache level")?;
        let kib = parse_size_kib(&dir.join("size"), &size)?;
        match (level, kind.trim()) {
            (1, "Data") => cache.l1d_kib = kib,
            (2, "Unified") => cache.l2_kib = kib,
            (3, "Unified") => cache.llc_kib = kib,
            _ => {}
        }
    }
    Ok(())
}

/// Parses a sysfs cache size ("32K", "1024K", "32M").
fn parse_size_kib(path: &Path, text: &str) -> Result<u32, String> {
    let t = text.trim();
    let (digits, mult) = match t.as_bytes().last() {
        Some(b'K') => (&t[..t.len() - 1], 1),
        Some(b'M') => (&t[..t.len() - 1], 1024),
        _ => (t, 1),
    };
    digits
        .parse::<u32>()
        .ok()
        .and_then(|v| v.checked_mul(mult))
        .ok_or_else(|| format!("{}: expected a cache size such as '32K', got '{t}'", path.display()))
}

/// Reads a file that may be absent (None); other read errors are errors.
fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: cannot read ({e})", path.display())),
    }
}

/// Reads and parses a required file.
fn parse<T: std::str::FromStr>(path: &Path, expected: &str) -> Result<T, String> {
    match read_optional(path)? {
        Some(text) => parse_text(path, &text, expected),
        None => Err(format!("{}: missing, expected a file holding {expected}", path.display())),
    }
}

fn parse_text<T: std::str::FromStr>(path: &Path, text: &str, expected: &str) -> Result<T, String> {
    text.trim().parse().map_err(|_| format!("{}: expected {expected}, got '{}'", path.display(), text.trim()))
}

fn parse_list(path: &Path, text: &str) -> Result<CpuMask, String> {
    CpuMask::parse_list(text.trim()).map_err(|e| format!("{}: expected a CPU list such as '0-3,8', {e}", path.display()))
}
