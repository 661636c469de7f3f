//! `fibtest`: indeedeng/fibtest, the bandwidth seed's benchmark.
//!
//! Mirrors: fibtest.c and runfibtest (github.com/indeedeng/fibtest, read, not run):
//!
//! ```text
//!  runfibtest: cgroup v1 cpu,cpuacct "user.slice/fibtest", cfs_quota_us = 10000 (period
//!              left at 100000); the shell joins it, then `fibtest -t THREADS -s 5`
//!  main:       endtime = CLOCK_REALTIME_COARSE + 5 s
//!              for tnum in 0..THREADS: pthread_create(fast or slow); pin it to CPU tnum
//!              pthread_join all; print sum of iterations / 1e6
//!  fast:       while !done(): 1,000,000 x { i++; c = a + b; a = b; b = c }
//!  slow:       while !done(): 100 x { same }; usleep(10000)
//! ```
//!
//! Model: the main thread (in the cgroup: its CPU time counts against the quota) creates
//! the threads one after the other, each `pthread_create` + `pthread_setaffinity_np`
//! costing `create` of main's time, so thread i starts at (i + 1) x `create`. A fast
//! thread runs 1M-iteration chunks back to back; a slow thread runs its 100 iterations
//! and sleeps in nanosleep (system call entry, hrtimer with the task's 50 us slack, exit:
//! the engine's timer layer). An iteration is `cycles_per_iteration` core cycles at the
//! CPU's clock: the loop's dependency chain is one add (b feeds the next c), so about one
//! cycle (estimate; the README's single-thread run, 1573 M iterations in 501 ms of CPU,
//! is 3.1 per ns, i.e. one per cycle at ~3 GHz).
//!
//! The score is fibtest's: the iterations every thread completed, in millions. A fast
//! thread checks done() only between chunks, so the chunk it is in when the time is up is
//! completed and counted (it finishes after the run's end; the run stops at `seconds`).
//! done() reads CLOCK_REALTIME_COARSE, which advances by ticks: not modeled (the end
//! moves by less than a tick).
//!
//! Optional background kernel activity on CPU 0 (`cpu0_background_hz` wakeups per second
//! of `cpu0_background_work` each, exponential gaps, outside the cgroup): kworkers, RCU
//! callbacks and the timer softirq of a real machine. Each wakeup accounts the running
//! fast thread's runtime (update_curr at enqueue), which ends a run on credit early.

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
    #[serde(default = "super::count::<1>")]
    fast_threads: usize,
    /// Run length (-s).
    #[serde(default = "five")]
    seconds: f64,
    /// cpu.cfs_quota_us of the fibtest cgroup (runfibtest sets 10000).
    #[serde(default = "quota")]
    quota_us: i64,
    /// cpu.cfs_period_us.
    #[serde(default = "super::num::<100000>")]
    period_us: u64,
    /// cpu.cfs_burst_us.
    #[serde(default)]
    burst_us: u64,
    /// Core cycles per Fibonacci iteration.
    #[serde(default = "cpi")]
    cycles_per_iteration: f64,
    /// Iterations a slow thread runs per wakeup.
    #[serde(default = "super::num::<100>")]
    slow_iterations: u64,
    /// Iterations a fast thread runs between two done() checks.
    #[serde(default = "super::num::<1000000>")]
    fast_chunk: u64,
    /// The slow threads' sleep (usleep(10000)).
    #[serde(default = "slow_sleep")]
    slow_sleep: Duration,
    /// Main thread's time per created thread (pthread_create + pthread_setaffinity_np);
    /// 0 starts every thread at t = 0.
    #[serde(default = "create")]
    create: Duration,
    /// Background kernel wakeups per second on CPU 0 (0 = none).
    #[serde(default)]
    cpu0_background_hz: f64,
    /// CPU time of each background wakeup.
    #[serde(default = "bg_work")]
    cpu0_background_work: Duration,
}

fn five() -> f64 {
    5.0
}
fn quota() -> i64 {
    10_000
}
fn cpi() -> f64 {
    1.0
}
fn slow_sleep() -> Duration {
    Duration(10_000_000)
}
fn create() -> Duration {
    // estimate: clone() of a thread (CLONE_VM: no page-table copy) with its 8 MiB stack
    // mmap and guard page, plus sched_setaffinity migrating the new thread: tens of us.
    Duration(20_000)
}
fn bg_work() -> Duration {
    // estimate: a short kworker / rcuc / timer-softirq run.
    Duration(10_000)
}

/// ns of `iters` Fibonacci iterations at `mhz`, as work at capacity 1024 on a CPU of
/// capacity `cap`.
fn iterations_ns(iters: u64, cpi: f64, mhz: u32, cap: u32) -> u64 {
    let ns = iters as f64 * cpi * 1000.0 / mhz.max(1) as f64;
    (ns * cap as f64 / 1024.0).round().max(1.0) as u64
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: Params = params(v)?;
    let threads = p.threads.unwrap_or(m.nr_cpus());
    if threads == 0 || p.fast_threads > threads || !(p.seconds > 0.0) {
        return Err(ScenarioError::new("workload.params", "expected threads >= 1, fast_threads <= threads, seconds > 0"));
    }
    if !(p.cycles_per_iteration > 0.0) || p.fast_chunk == 0 || p.slow_iterations == 0 {
        return Err(ScenarioError::new("workload.params", "expected cycles_per_iteration > 0, fast_chunk >= 1, slow_iterations >= 1"));
    }
    if !(p.cpu0_background_hz >= 0.0) {
        return Err(ScenarioError::new("workload.params.cpu0_background_hz", "expected a rate >= 0"));
    }
    let forever = |body| OpSpec::Loop(LoopSpec { count: None, body });
    let mut tasks = Vec::new();
    let mut chunks = Vec::new();
    for i in 0..threads {
        let cpu = i % m.nr_cpus();
        let (mhz, cap) = (m.cpus[cpu].freq_mhz, m.cpus[cpu].capacity);
        let fast = cpu < p.fast_threads;
        let program = if fast {
            let chunk = iterations_ns(p.fast_chunk, p.cycles_per_iteration, mhz, cap);
            chunks.push((format!("fast-{i}"), chunk, p.fast_chunk));
            vec![forever(vec![OpSpec::Run(Duration(chunk))])]
        } else {
            let burst = iterations_ns(p.slow_iterations, p.cycles_per_iteration, mhz, cap);
            chunks.push((format!("slow-{i}"), burst, p.slow_iterations));
            vec![forever(vec![OpSpec::Run(Duration(burst)), OpSpec::Sleep(p.slow_sleep)])]
        };
        let mut t = task(if fast { "fast" } else { "slow" }, program);
        t.name = format!("{}-{i}", t.name);
        t.affinity = Some(cpu.to_string());
        t.group = Some("fibtest".into());
        t.process = Some("fibtest".into());
        if p.create.0 > 0 {
            t.start = Some(Duration((i as u64 + 1) * p.create.0));
        }
        tasks.push(t);
    }
    if p.create.0 > 0 {
        // fibtest's main thread: creates the threads, then waits in pthread_join.
        let mut main = task("fibtest-main", vec![OpSpec::Run(Duration(threads as u64 * p.create.0))]);
        main.group = Some("fibtest".into());
        main.process = Some("fibtest".into());
        tasks.push(main);
    }
    if p.cpu0_background_hz > 0.0 {
        let gap = (1e9 / p.cpu0_background_hz).round().max(1.0) as u64;
        let mut bg = task("kworker-cpu0", vec![forever(vec![OpSpec::SleepExp(Duration(gap)), OpSpec::Run(p.cpu0_background_work)])]);
        bg.affinity = Some("0".into());
        tasks.push(bg);
    }
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
            let mut iterations = 0.0;
            let mut fast_ns = 0u64;
            for t in &r.tasks {
                let Some((_, ns, iters)) = chunks.iter().find(|c| c.0 == t.name) else { continue };
                // Chunks done; the one in progress at the end is finished and counted.
                let done = t.work_done_ns.div_ceil(*ns);
                iterations += (done * iters) as f64;
                if t.name.starts_with("fast") {
                    fast_ns += t.work_done_ns;
                }
            }
            out.insert("iterations_m".into(), iterations / 1e6);
            out.insert("fast_work_ms".into(), fast_ns as f64 / 1e6);
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
