//! Engine benchmark: events per second, simulated seconds per wall second, peak memory.
//!
//! Run: `cargo run --release -p schedlab-core --example bench [-- a|b]`
//! (a) Bergamo (176 CPUs) running a make -j176 fork-heavy build;
//! (b) 384 CPUs with 768 tasks alternating short runs and sleeps.

use schedlab_core::api::{run, RunOptions};
use schedlab_core::Scenario;

const BERGAMO_MAKE: &str = r#"
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
"#;

const RUN_SLEEP_384: &str = r#"
name = "bench-384-run-sleep"
[machine]
topo = { sockets = 2, llcs = 12, cores = 8, smt = 2 }
[kernel]
profile = "6.6"
[[tasks]]
name = "worker"
count = 768
program = [{ loop = { body = [{ run_exp = "200us" }, { sleep_exp = "200us" }] } }]
[run]
duration_s = 2.0
"#;

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "ab".into());
    for (key, text) in [("a", BERGAMO_MAKE), ("b", RUN_SLEEP_384)] {
        if !which.contains(key) {
            continue;
        }
        let s = Scenario::from_toml_str(text, key).expect("bench scenario is valid");
        let out = run(&s, 1, &RunOptions::default()).expect("bench run");
        let e = &out.result.engine;
        let wall = e.wall_ns as f64 / 1e9;
        println!(
            "({key}) {}: {} events in {:.2} s wall = {:.2} M events/s; {:.3} simulated s = {:.2} sim-s per wall-s; peak RSS {} MiB",
            s.name,
            e.events,
            wall,
            e.events as f64 / wall / 1e6,
            e.sim_ns as f64 / 1e9,
            e.sim_ns as f64 / 1e9 / wall,
            peak_rss_kib() / 1024
        );
    }
}
