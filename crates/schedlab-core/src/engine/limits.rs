//! Memory a run needs, estimated before it is built, and what the host can give it.
//!
//! Model: a run's memory grows with its tasks (task_struct-like state, a random stream,
//! per-task figures in the result and their JSON), its CPUs (runqueues, sched domains,
//! timer bases, cpuidle devices), cgroups x CPUs (bandwidth state) and trace records.
//! The per-item figures are sizes of the engine's own types plus a measured allowance
//! for what they own on the heap (see `PER_TASK_HEAP`, `PER_CPU_HEAP`): an estimate to
//! refuse runs that cannot fit before they abort in an allocation, not an accounting.

use crate::time::Ns;

/// Heap a task owns beyond its structs: two copies of its name, its queue slots, and its
/// entry in the RunResult JSON the bindings hand over (~250 bytes per task measured with
/// `schedlab run --json` on 10,000 one-step tasks). An estimate, rounded up.
const PER_TASK_HEAP: u64 = 512;
/// Heap a CPU owns: timer wheel bases (3 bases x 9 levels x 64 buckets in the pull
/// model), sched domain states, cpuidle counters, its result entry and JSON. Estimated
/// from the types' layout, rounded up; see docs/errors.md for the measurement.
const PER_CPU_HEAP: u64 = 64 * 1024;
/// Bandwidth state of one group on one CPU (cfs_rq runtime, throttle list slot).
const PER_GROUP_CPU: u64 = 128;
/// What any run needs beside (machine tables, the result skeleton).
const BASE: u64 = 8 * 1024 * 1024;

/// Bytes one task takes (structs plus heap allowance).
pub fn per_task_bytes() -> u64 {
    (std::mem::size_of::<crate::task::Task>()
        + std::mem::size_of::<super::rng::Stream>()
        + std::mem::size_of::<crate::metrics::TaskStats>()) as u64
        + PER_TASK_HEAP
}

/// Bytes one CPU takes.
pub fn per_cpu_bytes() -> u64 {
    (std::mem::size_of::<crate::rq::Rq>() + std::mem::size_of::<crate::metrics::CpuStats>()) as u64 + PER_CPU_HEAP
}

/// Bytes one trace record takes while recorded (the writers stream them out).
pub fn per_trace_record_bytes() -> u64 {
    std::mem::size_of::<crate::trace::TraceRecord>() as u64
}

/// Estimated bytes of a run of `tasks` tasks on `cpus` CPUs with `groups` cgroups.
pub fn estimate(tasks: u64, cpus: u64, groups: u64) -> u64 {
    BASE.saturating_add(tasks.saturating_mul(per_task_bytes()))
        .saturating_add(cpus.saturating_mul(per_cpu_bytes()))
        .saturating_add(groups.saturating_mul(cpus).saturating_mul(PER_GROUP_CPU))
}

/// The memory this process may still take: the least of MemAvailable, the address-space
/// and data-segment rlimits (what `ulimit -v` sets) and the cgroup v2 memory.max
/// headroom. None when none of them can be read (not Linux).
pub fn available_memory() -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut take = |v: Option<u64>| {
        if let Some(v) = v {
            best = Some(best.map_or(v, |b| b.min(v)));
        }
    };
    take(meminfo_available());
    take(rlimit("Max address space").map(|lim| lim.saturating_sub(self_vm("VmSize:").unwrap_or(0))));
    take(rlimit("Max data size").map(|lim| lim.saturating_sub(self_vm("VmData:").unwrap_or(0))));
    take(cgroup_headroom());
    best
}

fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// A soft limit from /proc/self/limits ("unlimited" = None), bytes.
fn rlimit(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// A "VmXxx:  N kB" figure of this process, bytes.
fn self_vm(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// memory.max - memory.current of this process's cgroup (v2), if limited.
fn cgroup_headroom() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let max: u64 = std::fs::read_to_string(dir.join("memory.max")).ok()?.trim().parse().ok()?;
    let current: u64 = std::fs::read_to_string(dir.join("memory.current")).ok()?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// "1.5 GiB", "640 MiB", "12 KiB".
pub fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} bytes")
    } else if v >= 100.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Simulated-time limit as the run loop compares it: the one asked for, and never past
/// [`crate::time::MAX_SIM_NS`] (where the clock would come near overflowing).
pub(crate) fn sim_limit(max_sim_ns: Option<u64>) -> Ns {
    max_sim_ns.unwrap_or(Ns::MAX).min(crate::time::MAX_SIM_NS)
}
