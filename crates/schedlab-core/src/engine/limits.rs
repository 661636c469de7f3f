//! Memory a run needs, estimated before it is built, and what the host can give it.
//!
//! Model: a run's memory grows with its tasks (task state, a random stream, per-task
//! figures in the result, their JSON and, from Python, the parsed result), its CPUs
//! (runqueues, sched domains, timer bases, cpuidle devices), cgroups x CPUs (bandwidth
//! state) and trace records. The per-item figures are measured, rounded up: an estimate
//! to refuse runs that cannot fit before they abort in an allocation, not an accounting.

use crate::time::Ns;

/// Bytes per task, measured: `schedlab run --json` (max RSS from /usr/bin/time) of
/// 200,000 one-step tasks on 16 CPUs took 697 MB against 40 MB with one task, 3.4 KiB
/// per task (its RunResult JSON is 286 bytes per task; Python's parsed result most of
/// the rest). Rounded up.
const PER_TASK: u64 = 3584;
/// Bytes per CPU, measured the same way: 512 CPUs against 16 CPUs with one task, 47.4 MB
/// against 40.0 MB, 15 KiB per CPU. Rounded up.
const PER_CPU: u64 = 16 * 1024;
/// Bandwidth state of one group on one CPU (cfs_rq runtime, throttle list slot): an
/// estimate from the layout, rounded up.
const PER_GROUP_CPU: u64 = 128;
/// What any run needs beside: an estimate covering the machine tables and the result
/// skeleton (the 40 MB of a one-task run are mostly the Python interpreter's own).
const BASE: u64 = 8 * 1024 * 1024;

/// Bytes one task takes.
pub fn per_task_bytes() -> u64 {
    PER_TASK
}

/// Bytes one CPU takes.
pub fn per_cpu_bytes() -> u64 {
    PER_CPU
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
