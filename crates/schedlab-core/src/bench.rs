//! The engine's speed suite: fixed scenarios timed in one process.
//!
//! Model: each case is run once, start to end (building the machine, the domains and
//! the tasks included). Its wall time is also given as a multiple of what a bare
//! binary heap of event keys would need for the case's events (one pop and one push
//! per event at 1,000 pending), timed in the same process just before: the machine's
//! speed drifts by 2x from hour to hour, that ratio does not. `schedlab bench` and
//! `cargo bench -p schedlab-core` print this suite.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use serde::Serialize;

use crate::api::{run, RunOptions};
use crate::scenario::{BackgroundSpec, Scenario};

/// One scenario of the suite.
#[derive(Clone, Copy, Debug)]
pub struct BenchCase {
    /// Short name (`schedlab bench --case NAME`).
    pub name: &'static str,
    /// What it stresses.
    pub what: &'static str,
    /// The scenario, TOML.
    pub toml: &'static str,
    /// Simulated milliseconds under `--quick` (the run's `max_sim_time` limit): the whole
    /// quick suite stays under a minute, for CI, while every mechanism still runs.
    pub quick_ms: u64,
}

/// 768 tasks alternating 500 us runs and 500 us sleeps (shared/bench/scx_flat.toml: the
/// case the sched_ext simulator was compared on), on a given topology and duration.
macro_rules! run_sleep_case {
    ($name:literal, $topo:literal, $tasks:literal, $secs:literal) => {
        run_sleep_case!($name, $topo, $tasks, $secs, "6.6")
    };
    ($name:literal, $topo:literal, $tasks:literal, $secs:literal, $profile:literal) => {
        concat!(
            "name = \"",
            $name,
            "\"\n",
            "[machine]\ntopo = ",
            $topo,
            "\n",
            "[kernel]\nprofile = \"",
            $profile,
            "\"\n",
            "[[tasks]]\nname = \"worker\"\ncount = ",
            $tasks,
            "\n",
            "program = [{ loop = { body = [{ run = \"500us\" }, { sleep = \"500us\" }] } }]\n",
            "[run]\nduration_s = ",
            $secs,
            "\n"
        )
    };
}

/// Many tasks, mostly runnable: deep runqueues (pick, min_vruntime, balance over them).
macro_rules! many_tasks_case {
    ($name:literal, $topo:literal, $tasks:literal) => {
        concat!(
            "name = \"",
            $name,
            "\"\n",
            "[machine]\ntopo = ",
            $topo,
            "\n",
            "[kernel]\nprofile = \"6.6\"\n",
            "[[tasks]]\nname = \"worker\"\ncount = ",
            $tasks,
            "\n",
            "program = [{ loop = { body = [{ run_exp = \"2ms\" }, { sleep_exp = \"10ms\" }] } }]\n",
            "[run]\nduration_s = 1.0\n"
        )
    };
}

/// The suite, in the order it runs.
pub const CASES: &[BenchCase] = &[
    BenchCase {
        name: "flat-128",
        what: "256 run/sleep tasks, 128 CPUs in one LLC, 5 s (flat128_256t.toml: the scx-sim peer case)",
        toml: run_sleep_case!("bench-flat-128", "{ sockets = 1, llcs = 1, cores = 128, smt = 1 }", "256", "5.0"),
        quick_ms: 2000,
    },
    BenchCase {
        name: "flat-384",
        what: "768 run/sleep tasks, 384 CPUs in one LLC, 5 s (scx_flat.toml)",
        toml: run_sleep_case!("bench-flat-384", "{ sockets = 1, llcs = 1, cores = 384, smt = 1 }", "768", "5.0"),
        quick_ms: 1000,
    },
    BenchCase {
        name: "2s-384",
        what: "the same tasks on 2 sockets x 12 LLCs x 8 cores x 2 threads, 5 s",
        toml: run_sleep_case!("bench-2s-384", "{ sockets = 2, llcs = 12, cores = 8, smt = 2 }", "768", "5.0"),
        quick_ms: 1000,
    },
    BenchCase {
        name: "flat-1024",
        what: "2 run/sleep tasks per CPU, 1024 CPUs in one LLC, 1 s",
        toml: run_sleep_case!("bench-flat-1024", "{ sockets = 1, llcs = 1, cores = 1024, smt = 1 }", "2048", "1.0"),
        quick_ms: 200,
    },
    BenchCase {
        name: "flat-2048",
        what: "2 run/sleep tasks per CPU, 2048 CPUs in one LLC, 1 s",
        toml: run_sleep_case!("bench-flat-2048", "{ sockets = 1, llcs = 1, cores = 2048, smt = 1 }", "4096", "1.0"),
        quick_ms: 100,
    },
    BenchCase {
        name: "bergamo-make",
        what: "make -j176, 20,000 units on Bergamo (fork-heavy)",
        toml: r#"
name = "bench-bergamo-make"
[machine]
preset = "bergamo"
[kernel]
profile = "6.6"
[workload]
kind = "make"
params = { jobs = 176, units = 20000, unit_mean = "30ms" }
[run]
until = "workload_done"
"#,
        quick_ms: 1000,
    },
    BenchCase {
        name: "64x100k",
        what: "100,000 tasks on 64 CPUs (2 x 4 LLCs x 4 cores x 2 threads), 1 s",
        toml: many_tasks_case!("bench-64x100k", "{ sockets = 2, llcs = 4, cores = 4, smt = 2 }", "100000"),
        quick_ms: 1000,
    },
    BenchCase {
        name: "1024x100k",
        what: "100,000 tasks on 1024 CPUs (4 x 16 LLCs x 8 cores x 2 threads), 1 s",
        toml: many_tasks_case!("bench-1024x100k", "{ sockets = 4, llcs = 16, cores = 8, smt = 2 }", "100000"),
        quick_ms: 300,
    },
    BenchCase {
        name: "fibtest",
        what: "the fibtest experiment: 80 threads under 10 ms / 100 ms on xeon-80, 5 s",
        toml: r#"
name = "bench-fibtest"
[machine]
preset = "xeon-80"
[kernel]
profile = "5.3"
[workload]
kind = "fibtest"
params = { threads = 80, seconds = 5.0, quota_us = 10000, period_us = 100000 }
[run]
duration_s = 5.0
"#,
        quick_ms: 2000,
    },
    BenchCase {
        name: "mm_cid",
        what: "the mm_cid experiment: 192 rseq threads 200 ms apart on epyc-9654-2s",
        toml: r#"
name = "bench-mm_cid"
[machine]
preset = "epyc-9654-2s"
[kernel]
profile = "6.13"
features = { MM_CID = true, MM_CID_CACHE_LOCAL = true }
tunables = { cpuidle_max_state = 0 }
[workload]
kind = "rseq_burst"
params = { cpus = "0-191", delay = "200ms", index = "mm_cid", area_bytes = 16384, warmup = 20000, loops = 5 }
[run]
until = "workload_done"
"#,
        quick_ms: 1000,
    },
    BenchCase {
        name: "pixel6-eas",
        what: "EAS on the Pixel 6 under schedutil: 16 tasks of 100 us every 2 ms and 2 of 3 ms every 16.7 ms (mostly not overutilized), 5 s",
        toml: r#"
name = "bench-pixel6-eas"
[machine]
preset = "pixel6"
[kernel]
profile = "6.6"
governor = "schedutil"
features = { ENERGY_AWARE = true }
[[tasks]]
name = "small"
count = 16
program = [{ loop = { body = [{ run = "100us" }, { periodic = { period = "2ms" } }] } }]
[[tasks]]
name = "ui"
count = 2
program = [{ loop = { body = [{ run = "3ms" }, { periodic = { period = "16667us" } }] } }]
[run]
duration_s = 5.0
"#,
        quick_ms: 1000,
    },
    BenchCase {
        name: "rt",
        what: "RT push and push-IPI pull (RT_PUSH_IPI): 96 SCHED_FIFO tasks at two priorities beside 64 fair ones, 64 CPUs (4 LLCs x 8 cores x 2 threads), 6.12, 2 s",
        toml: r#"
name = "bench-rt"
[machine]
topo = { sockets = 1, llcs = 4, cores = 8, smt = 2 }
[kernel]
profile = "6.12"
[[tasks]]
name = "fifo-hi"
count = 48
sched_attr = { policy = "SCHED_FIFO", priority = 80 }
program = [{ loop = { body = [{ run_exp = "200us" }, { sleep_exp = "800us" }] } }]
[[tasks]]
name = "fifo-lo"
count = 48
sched_attr = { policy = "SCHED_FIFO", priority = 20 }
program = [{ loop = { body = [{ run_exp = "200us" }, { sleep_exp = "800us" }] } }]
[[tasks]]
name = "fair"
count = 64
program = [{ loop = { body = [{ run = "500us" }, { sleep = "500us" }] } }]
[run]
duration_s = 2.0
"#,
        quick_ms: 500,
    },
    BenchCase {
        name: "shared-runq",
        what: "shared_runq v3 (sharded per-LLC wakequeues): 256 run/sleep tasks on 128 CPUs (8 LLCs x 8 cores x 2 threads), 6.5, 2 s",
        toml: r#"
name = "bench-shared-runq"
[machine]
topo = { sockets = 1, llcs = 8, cores = 8, smt = 2 }
[kernel]
profile = "6.5"
features = { SHARED_RUNQ_V3 = true }
[[tasks]]
name = "worker"
count = 256
program = [{ loop = { body = [{ run = "500us" }, { sleep = "500us" }] } }]
[run]
duration_s = 2.0
"#,
        quick_ms: 1000,
    },
    BenchCase {
        name: "scx-128",
        what: "the peer case (256 run/sleep tasks, 128 CPUs, 5 s) under sched_ext's scx_simple, 6.12",
        toml: r#"
name = "bench-scx-128"
[machine]
topo = { sockets = 1, llcs = 1, cores = 128, smt = 1 }
[kernel]
profile = "6.12"
sched_ext = { scheduler = "simple" }
[[tasks]]
name = "worker"
count = 256
program = [{ loop = { body = [{ run = "500us" }, { sleep = "500us" }] } }]
[run]
duration_s = 5.0
"#,
        quick_ms: 2000,
    },
    BenchCase {
        name: "eevdf-128-6.12",
        what: "the same under EEVDF on 6.12 (scx-128's baseline)",
        toml: run_sleep_case!("bench-eevdf-128", "{ sockets = 1, llcs = 1, cores = 128, smt = 1 }", "256", "5.0", "6.12"),
        quick_ms: 2000,
    },
];

/// What one case measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// Case name.
    pub case: String,
    /// What it stresses.
    pub what: String,
    /// CPUs of the machine.
    pub cpus: usize,
    /// Tasks at the end of the run.
    pub tasks: usize,
    /// Events the engine processed.
    pub events: u64,
    /// Of those, by kind (`EventCount`'s names; stale generations apart).
    pub events_by_kind: std::collections::BTreeMap<String, u64>,
    /// Wakeups the run modeled (try_to_wake_up of a sleeping task).
    pub wakeups: u64,
    /// Simulated seconds.
    pub sim_s: f64,
    /// Wall seconds, building the run included.
    pub wall_s: f64,
    /// Of which building the machine, domains and tasks.
    pub build_s: f64,
    /// Events per wall second (whole run).
    pub events_per_s: f64,
    /// Simulated seconds per wall second.
    pub sim_s_per_wall_s: f64,
    /// Wall time over what the bare heap alone needs for `events` pops and pushes.
    pub heap_multiple: f64,
    /// Peak resident memory of the process during the case, MiB (Linux; 0 elsewhere).
    pub peak_rss_mib: f64,
    /// Resident memory before the case, MiB: the part of the peak that is not the run's.
    pub base_rss_mib: f64,
    /// Why the case could not run, if it could not.
    pub error: Option<String>,
}

/// The suite's figures.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// Nanoseconds per pop+push of a bare `BinaryHeap` of 128-bit keys at 1,000 pending.
    pub heap_ns_per_op: f64,
    /// One row per case run.
    pub rows: Vec<BenchRow>,
}

/// Times a bare binary heap of event keys: `ops` pop+push pairs at `pending` entries,
/// with keys advancing like event times (each push lands at a random distance ahead).
pub fn time_bare_heap(pending: usize, ops: u64) -> f64 {
    let mut rng = crate::rng::Stream::new(1, "bench-heap");
    let mut heap: BinaryHeap<Reverse<u128>> = BinaryHeap::with_capacity(pending + 1);
    for i in 0..pending as u64 {
        heap.push(Reverse(((rng.below(1_000_000) as u128) << 64) | i as u128));
    }
    let start = Instant::now();
    let mut seq = pending as u64;
    let mut sink = 0u128;
    for _ in 0..ops {
        let Reverse(k) = heap.pop().expect("heap is never empty");
        sink ^= k;
        seq += 1;
        let now = (k >> 64) as u64;
        heap.push(Reverse((((now + 1 + rng.below(1_000_000)) as u128) << 64) | seq as u128));
    }
    let ns = start.elapsed().as_nanos() as f64 / ops as f64;
    std::hint::black_box(sink);
    ns
}

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok())))
        .unwrap_or(0)
}

/// Resets the process's peak RSS to its current RSS (Linux: clear_refs 5), so each
/// case's peak is its own.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs one case (`opts` carries progress and cancellation; an interrupted case is an
/// error row); `quick` stops it at the case's `quick_ms` simulated.
pub fn run_case(case: &BenchCase, heap_ns_per_op: f64, opts: &RunOptions, quick: bool) -> BenchRow {
    run_case_on(case, heap_ns_per_op, opts, quick, BackgroundSpec::None)
}

/// [`run_case`] with `background` as the case's `[kernel] background` (`schedlab bench
/// --background kernel`: what the kernel's own work costs the engine).
pub fn run_case_on(case: &BenchCase, heap_ns_per_op: f64, opts: &RunOptions, quick: bool, background: BackgroundSpec) -> BenchRow {
    let mut row = BenchRow {
        case: case.name.into(),
        what: case.what.into(),
        cpus: 0,
        tasks: 0,
        events: 0,
        events_by_kind: Default::default(),
        wakeups: 0,
        sim_s: 0.0,
        wall_s: 0.0,
        build_s: 0.0,
        events_per_s: 0.0,
        sim_s_per_wall_s: 0.0,
        heap_multiple: 0.0,
        peak_rss_mib: 0.0,
        base_rss_mib: 0.0,
        error: None,
    };
    let mut scenario = match Scenario::from_toml_str(case.toml, case.name) {
        Ok(s) => s,
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    };
    scenario.kernel.background = background;
    let mut opts = opts.clone();
    if quick {
        let cap = case.quick_ms * 1_000_000;
        opts.limits.max_sim_ns = Some(opts.limits.max_sim_ns.map_or(cap, |m| m.min(cap)));
    }
    let opts = &opts;
    reset_peak_rss();
    row.base_rss_mib = rss_kib("VmRSS:") as f64 / 1024.0;
    let start = Instant::now();
    let out = run(&scenario, 1, opts);
    row.wall_s = start.elapsed().as_secs_f64();
    row.peak_rss_mib = rss_kib("VmHWM:") as f64 / 1024.0;
    match out {
        Ok(out) if out.result.engine.stopped_by == "interrupted" => row.error = Some("interrupted".into()),
        Ok(out) => {
            let r = out.result;
            row.cpus = r.nr_cpus;
            row.tasks = r.tasks.len();
            row.events = r.engine.events;
            row.events_by_kind = r.engine.events_by_kind.clone();
            row.wakeups = r.summary.get("wakeups").copied().unwrap_or(0.0) as u64;
            row.sim_s = r.engine.sim_ns as f64 / 1e9;
            row.build_s = (row.wall_s - r.engine.wall_ns as f64 / 1e9).max(0.0);
            row.events_per_s = row.events as f64 / row.wall_s;
            row.sim_s_per_wall_s = row.sim_s / row.wall_s;
            row.heap_multiple = row.wall_s / (row.events as f64 * heap_ns_per_op / 1e9);
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

/// The cases named in `only` (every case if it is empty), in suite order, or an error
/// naming an unknown one.
pub fn select(only: &[String]) -> Result<Vec<&'static BenchCase>, String> {
    if let Some(bad) = only.iter().find(|n| !CASES.iter().any(|c| c.name == n.as_str())) {
        let names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
        return Err(format!("unknown bench case '{bad}': expected one of {}", names.join(", ")));
    }
    Ok(CASES.iter().filter(|c| only.is_empty() || only.iter().any(|n| n == c.name)).collect())
}

/// Pop+push pairs timed for the bare heap: long enough to be stable, short next to the
/// cases.
pub const HEAP_OPS: u64 = 20_000_000;

/// The same under `--quick` (a tenth of the time, as the quick cases are short).
pub const HEAP_OPS_QUICK: u64 = 2_000_000;

/// Runs the cases whose names are in `only` (all if empty), calling `each` after each.
pub fn run_suite(only: &[String], each: impl FnMut(&BenchRow)) -> Result<BenchReport, String> {
    run_suite_with(only, &RunOptions::default(), false, each)
}

/// [`run_suite`] with run options (`--no-elision`: the A/B of the exact elision) and
/// `quick` (each case stopped at its `quick_ms`, the heap timed over HEAP_OPS_QUICK).
pub fn run_suite_with(only: &[String], opts: &RunOptions, quick: bool, mut each: impl FnMut(&BenchRow)) -> Result<BenchReport, String> {
    let cases = select(only)?;
    let heap_ns_per_op = time_bare_heap(1000, if quick { HEAP_OPS_QUICK } else { HEAP_OPS });
    let mut rows = Vec::new();
    for case in cases {
        let row = run_case(case, heap_ns_per_op, opts, quick);
        each(&row);
        rows.push(row);
    }
    Ok(BenchReport { heap_ns_per_op, rows })
}

/// The report as a table for people.
pub fn format_table(r: &BenchReport) -> String {
    let mut s = format!("bare heap: {:.1} ns per pop+push at 1,000 pending ({:.1} M/s)\n", r.heap_ns_per_op, 1e3 / r.heap_ns_per_op);
    s += &format!(
        "{:<13} {:>5} {:>7} {:>11} {:>8} {:>7} {:>9} {:>9} {:>7} {:>9}\n",
        "case", "cpus", "tasks", "events", "wall s", "build s", "M ev/s", "sim/wall", "x heap", "peak MiB"
    );
    for row in &r.rows {
        if let Some(e) = &row.error {
            s += &format!("{:<13} error: {e}\n", row.case);
            continue;
        }
        s += &format!(
            "{:<13} {:>5} {:>7} {:>11} {:>8.2} {:>7.2} {:>9.2} {:>9.3} {:>7.1} {:>9.0}\n",
            row.case,
            row.cpus,
            row.tasks,
            row.events,
            row.wall_s,
            row.build_s,
            row.events_per_s / 1e6,
            row.sim_s_per_wall_s,
            row.heap_multiple,
            row.peak_rss_mib
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_is_a_valid_scenario_within_the_cpu_limit_or_names_it() {
        for c in CASES {
            match Scenario::from_toml_str(c.toml, c.name) {
                Ok(_) => {}
                Err(e) => assert!(e.to_string().contains("CPU"), "{}: {e}", c.name),
            }
        }
    }

    #[test]
    fn unknown_case_is_an_error_naming_the_known_ones() {
        let e = run_suite(&["nope".into()], |_| {}).unwrap_err();
        assert!(e.contains("nope") && e.contains("flat-384"), "{e}");
    }
}
