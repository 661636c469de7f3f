//! `[run] warmup_s` and the stationarity check (engine/warmup.rs).

use crate::common;

use common::{run_toml, scenario};
use schedlab_core::api::{run, RunOptions};

const HOGS: &str = r#"
[machine]
topo = { cores = 2 }
[[groups]]
name = "g"
cpu_max = "50000 100000"
[[tasks]]
name = "hog"
count = 3
group = "g"
program = [{ loop = { body = [{ run = "700us" }, { sleep_exp = "300us" }] } }]
"#;

fn with_run(body: &str, run: &str) -> String {
    format!("{body}[run]\n{run}\n")
}

#[test]
fn warmup_changes_no_decision_and_counts_only_the_window() {
    let whole = run_toml(&with_run(HOGS, "duration_s = 2.0"), 4);
    let late = run_toml(&with_run(HOGS, "duration_s = 2.0\nwarmup_s = 0.75"), 4);
    // The same run: no event of its own, nothing in the model touched.
    assert_eq!(whole.engine.events, late.engine.events);
    assert_eq!(whole.engine.sim_ns, late.engine.sim_ns);
    let window = 1_250_000_000u64;
    assert_eq!(late.summary["sim_seconds"], 1.25);
    assert_eq!(late.summary["warmup_seconds"], 0.75);
    // Time is conserved over the window, per CPU and between tasks and CPUs.
    for c in &late.cpus {
        assert_eq!(c.busy_ns + c.idle_ns, window, "CPU {}", c.cpu);
    }
    let ran: u64 = late.tasks.iter().map(|t| t.run_ns).sum();
    let busy: u64 = late.cpus.iter().map(|c| c.busy_ns).sum();
    assert_eq!(ran, busy);
    assert_eq!(late.groups[1].usage_ns, ran);
    // The window's share of each counter, never more than the whole run's.
    for (a, b) in whole.tasks.iter().zip(&late.tasks) {
        assert!(b.run_ns < a.run_ns && b.nr_switches < a.nr_switches, "{}", a.name);
    }
    let (gw, gl) = (&whole.groups[1], &late.groups[1]);
    assert!(gl.nr_periods < gw.nr_periods && gl.throttled_time < gw.throttled_time);
    // 0.5 CPU of quota: over the window the group used about that (the quota invariant).
    let cpus_used = gl.usage_ns as f64 / window as f64;
    assert!((cpus_used - 0.5).abs() < 0.05, "{cpus_used}");
    assert!(late.histograms["wakeup_latency"].count < whole.histograms["wakeup_latency"].count);
}

#[test]
fn a_drifting_run_says_so_and_a_steady_one_does_not() {
    // Steady: the same hogs, long enough for ten blocks of many periods.
    let steady = run_toml(&with_run(HOGS, "duration_s = 4.0\nwarmup_s = 0.5"), 1);
    assert!(steady.warnings.is_empty(), "{:?}", steady.warnings);
    // Drifting: a second wave of hogs starts two thirds into the run.
    let drift = format!("{HOGS}[[tasks]]\nname = \"late\"\ncount = 2\nstart = \"3s\"\nprogram = [{{ run = \"10s\" }}]\n");
    let r = run_toml(&with_run(&drift, "duration_s = 4.0\nwarmup_s = 0.5"), 1);
    assert!(r.warnings.iter().any(|w| w.starts_with("not stationary: utilization")), "{:?}", r.warnings);
}

#[test]
fn warmup_must_fit_in_a_fixed_duration() {
    for (run, want) in [
        ("duration_s = 1.0\nwarmup_s = 1.0", "expected less than duration_s"),
        ("duration_s = 1.0\nwarmup_s = -1", "expected a number of seconds >= 0"),
        ("until = \"workload_done\"\nwarmup_s = 0.1", "needs duration_s"),
    ] {
        let s = schedlab_core::Scenario::from_toml_str(&with_run(HOGS, run), "<test>");
        let e = s.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("run.warmup_s") && e.contains(want), "{run}: {e}");
    }
    // A valid one runs.
    let s = scenario(&with_run(HOGS, "duration_s = 0.2\nwarmup_s = 0.1"));
    assert!(run(&s, 1, &RunOptions::default()).is_ok());
}

/// Energy is computed at the end of a run; the warm-up's baseline must compute it up to
/// its own end, or the window's energy includes the warm-up. A steady periodic set on a
/// Pixel 6 spends about as much in each second, so the last second of two is about half
/// the whole, under either governor (the schedutil run's per-cluster figures too).
#[test]
fn the_warmup_is_taken_out_of_energy() {
    for governor in ["performance", "schedutil"] {
        let body = format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"{governor}\"\n\
             [[tasks]]\nname = \"p\"\ncount = 3\nprogram = [{{ loop = {{ body = [{{ run = \"2ms\" }}, {{ sleep = \"8ms\" }}] }} }}]\n"
        );
        let whole = run_toml(&with_run(&body, "duration_s = 2.0"), 1);
        let late = run_toml(&with_run(&body, "duration_s = 2.0\nwarmup_s = 1.0"), 1);
        for (k, v) in whole.summary.iter().filter(|(k, _)| k.starts_with("energy_")) {
            let w = late.summary[k];
            if *v > 10.0 {
                let share = w / v;
                assert!((0.45..0.55).contains(&share), "{governor}: {k} {w:.1} of {v:.1} mJ in the second half");
            }
        }
    }
}

/// A generator's rates divide the window's counts by the window, not by the whole run:
/// tbench's ops/s, schbench's RPS and a thread pool's requests/s of a steady run come
/// out about the same with a warm-up as without one (dividing by the whole run gave
/// ~60 % with 40 % of warm-up).
#[test]
fn generator_rates_are_over_the_measured_window() {
    for (kind, params, metric) in [
        ("dbench_pairs", "pairs = 2", "ops_per_s"),
        ("schbench", "message_threads = 1\nthreads = 2", "rps"),
        ("threadpool", "threads = 2\nservice = \"200us\"\ninterval = \"1ms\"", "requests_per_s"),
    ] {
        let toml =
            |run: &str| format!("[machine]\ntopo = {{ cores = 4 }}\n[workload]\nkind = \"{kind}\"\n[workload.params]\n{params}\n[run]\n{run}\n");
        let whole = run_toml(&toml("duration_s = 1.0"), 3);
        let late = run_toml(&toml("duration_s = 1.0\nwarmup_s = 0.4"), 3);
        let (a, b) = (whole.workload[metric], late.workload[metric]);
        assert!(a > 0.0, "{kind}: no {metric}");
        assert!((b / a - 1.0).abs() < 0.15, "{kind}: {metric} {b} with a 0.4 s warm-up against {a} without");
    }
}
