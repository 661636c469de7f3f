//! One speed case, Rust only, for profilers: `cargo build --release -p schedlab-core
//! --example bench_case`, then `valgrind --tool=callgrind target/release/examples/bench_case
//! flat-384 --sim-ms 500`. No bare-heap timing and no Python, so a profile is the engine's
//! alone. The same file builds against older commits (it uses only `api::run`,
//! `bench::CASES` and `Scenario::from_toml_str`), so two versions run one driver
//! (docs/performance.md).
//!
//! usage: bench_case CASE|FILE.toml [--sim-ms MS] [--print] [--events]
//!   CASE       a `schedlab bench` case name; anything ending in .toml is a scenario file
//!   --sim-ms   stop at MS simulated milliseconds (the run's `max_sim_time` limit)
//!   --print    print the case's scenario TOML and run nothing
//!   --events   also print the events by kind and the modeled wakeups
//! Prints one line: case, events, simulated ns, wall s, of which the event loop.

use std::time::Instant;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::bench::CASES;
use schedlab_core::scenario::Scenario;

fn usage(why: &str) -> ! {
    let names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
    eprintln!("bench_case: {why}\nusage: bench_case CASE|FILE.toml [--sim-ms MS] [--print]  (cases: {})", names.join(", "));
    std::process::exit(2);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut what, mut sim_ms, mut print, mut by_kind) = (None::<String>, None::<u64>, false, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sim-ms" => {
                let v = args.next().unwrap_or_else(|| usage("--sim-ms: expected a number of milliseconds"));
                sim_ms = Some(v.parse().unwrap_or_else(|_| usage(&format!("--sim-ms: expected a whole number of milliseconds, got '{v}'"))));
            }
            "--print" => print = true,
            "--events" => by_kind = true,
            f if f.starts_with("--") => usage(&format!("unknown flag {f}")),
            _ if what.is_some() => usage("expected one case"),
            _ => what = Some(a),
        }
    }
    let what = what.unwrap_or_else(|| usage("expected a case name or a scenario file"));
    let (name, toml) = if what.ends_with(".toml") {
        let t = std::fs::read_to_string(&what).unwrap_or_else(|e| usage(&format!("{what}: {e}")));
        (what.clone(), t)
    } else {
        let c = CASES.iter().find(|c| c.name == what).unwrap_or_else(|| usage(&format!("unknown case '{what}'")));
        (c.name.to_string(), c.toml.to_string())
    };
    if print {
        print!("{toml}");
        return;
    }
    let scenario = Scenario::from_toml_str(&toml, &name).unwrap_or_else(|e| usage(&format!("{name}: {e}")));
    let mut opts = RunOptions::default();
    opts.limits.max_sim_ns = sim_ms.map(|ms| ms * 1_000_000);
    let start = Instant::now();
    let out = run(&scenario, 1, &opts).unwrap_or_else(|e| {
        eprintln!("bench_case: {name}: {e}");
        std::process::exit(1)
    });
    let wall = start.elapsed().as_secs_f64();
    let e = &out.result.engine;
    println!("case={name} events={} sim_ns={} wall_s={wall:.3} loop_s={:.3} stopped_by={}", e.events, e.sim_ns, e.wall_ns as f64 / 1e9, e.stopped_by);
    if by_kind {
        let wakeups: u64 = out.result.tasks.iter().map(|t| t.nr_wakeups).sum();
        for (kind, n) in &e.events_by_kind {
            println!("  {kind:<20} {n:>12} {:>8.3} per wakeup", *n as f64 / wakeups.max(1) as f64);
        }
        println!("  wakeups {wakeups}, events per wakeup {:.3}", e.events as f64 / wakeups.max(1) as f64);
        let sum = |f: fn(&schedlab_core::metrics::CpuStats) -> u64| -> u64 { out.result.cpus.iter().map(f).sum() };
        println!(
            "  newidle attempts {} skips {} pulls {}, periodic pulls {}, ticks {}",
            sum(|c| c.newidle_attempts),
            sum(|c| c.newidle_skips),
            sum(|c| c.newidle_pulls),
            sum(|c| c.periodic_pulls),
            sum(|c| c.ticks)
        );
    }
}
