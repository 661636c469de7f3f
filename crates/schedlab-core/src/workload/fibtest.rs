//! `fibtest`: indeedeng/fibtest, the bandwidth seed's benchmark.
//!
//! Model: `threads` threads in one cgroup, thread i pinned to CPU i mod nr_cpus; thread
//! 0 (the fast one) computes Fibonacci additions without pause; the others (slow) do
//! 100 additions and usleep(10 ms), in a loop, for `seconds`. Reported: the fast
//! thread's work (CPU time at capacity 1024, proportional to its iterations), the
//! group's CPU usage and cpu.stat throttling. An addition's cost cancels out of the
//! before/after ratio; the slow burst is short enough that its exact length does not
//! matter (it only has to be far below a slice).

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{Duration, GroupSpec, LoopSpec, OpSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// Threads (-t); default: the machine's CPU count.
    threads: Option<usize>,
    /// Fast threads (-f).
    #[serde(default = "one")]
    fast_threads: usize,
    /// Run length (-s).
    #[serde(default = "five")]
    seconds: f64,
    /// cpu.cfs_quota_us of the fibtest cgroup (runfibtest sets 10000).
    #[serde(default = "quota")]
    quota_us: i64,
    /// cpu.cfs_period_us.
    #[serde(default = "period")]
    period_us: u64,
    /// cpu.cfs_burst_us.
    #[serde(default)]
    burst_us: u64,
    /// CPU time of the slow threads' 100 additions.
    #[serde(default = "slow_work")]
    slow_work: Duration,
    /// The slow threads' sleep (usleep(10000)).
    #[serde(default = "slow_sleep")]
    slow_sleep: Duration,
}

fn one() -> usize {
    1
}
fn five() -> f64 {
    5.0
}
fn quota() -> i64 {
    10_000
}
fn period() -> u64 {
    100_000
}
fn slow_work() -> Duration {
    // 100 dependent additions plus loop overhead: well under a microsecond on any core.
    Duration(1_000)
}
fn slow_sleep() -> Duration {
    Duration(10_000_000)
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: Params = params(v)?;
    let threads = p.threads.unwrap_or(m.nr_cpus());
    if threads == 0 || p.fast_threads > threads || p.seconds.is_nan() || p.seconds <= 0.0 {
        return Err(ScenarioError::new("workload.params", "expected threads >= 1, fast_threads <= threads, seconds > 0"));
    }
    let forever = |body| OpSpec::Loop(LoopSpec { count: None, body });
    let tasks = (0..threads)
        .map(|i| {
            let cpu = i % m.nr_cpus();
            let fast = cpu < p.fast_threads;
            let program = if fast {
                vec![forever(vec![OpSpec::Run(Duration(1_000_000))])]
            } else {
                vec![forever(vec![OpSpec::Run(p.slow_work), OpSpec::Sleep(p.slow_sleep)])]
            };
            let mut t = task(if fast { "fast" } else { "slow" }, program);
            t.name = format!("{}-{i}", t.name);
            t.affinity = Some(cpu.to_string());
            t.group = Some("fibtest".into());
            t.process = None;
            t
        })
        .collect();
    let group = GroupSpec {
        name: "fibtest".into(),
        parent: None,
        cpu_max: None,
        cfs_quota_us: Some(p.quota_us),
        cfs_period_us: Some(p.period_us),
        cfs_burst_us: Some(p.burst_us),
        ..GroupSpec::default()
    };
    let seconds = p.seconds;
    Ok(Generated {
        tasks,
        templates: vec![],
        groups: vec![group],
        timers: vec![],
        reporter: Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            let fast: u64 = r.tasks.iter().filter(|t| t.name.starts_with("fast")).map(|t| t.work_done_ns).sum();
            out.insert("fast_work_ms".into(), fast as f64 / 1e6);
            if let Some(g) = r.groups.iter().find(|g| g.name == "fibtest") {
                out.insert("usage_ms".into(), g.usage_ns as f64 / 1e6);
                out.insert("nr_periods".into(), g.nr_periods as f64);
                out.insert("nr_throttled".into(), g.nr_throttled as f64);
                out.insert("throttled_time_s".into(), g.throttled_time as f64 / 1e9);
                out.insert("quota_ms_total".into(), g.quota_ns.map_or(f64::NAN, |q| q as f64 / 1e6 * seconds * 1e9 / g.period_ns as f64));
            }
            out
        }),
    })
}
