//! Energy-aware scheduling on the Pixel 6 (4 A55 of capacity 160, 2 A76 of 498, 2 X1 of
//! 1024; gs101's Energy Model): feec at wakeup, uclamp, energy against placement by
//! capacity alone. Each case is run with the mechanism and without it (ENERGY_AWARE off,
//! or no clamp), the same schedutil governor in both.

use crate::common;

use common::run_toml;
use schedlab_core::RunResult;

/// A periodic task (rt-app's run + timer): `work_us` of work (at capacity 1024) every
/// `period_ms` on an absolute grid, started on `cpu`.
fn periodic(name: &str, cpu: usize, work_us: u64, period_ms: u64, extra: &str) -> String {
    format!("[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\n{extra}program = [{{ loop = {{ body = [{{ run = \"{work_us}us\" }}, {{ periodic = {{ period = \"{period_ms}ms\" }} }}] }} }}]\n")
}

/// `seconds` measured after a second of warm-up (a new task's first util is a guess).
fn pixel6(features: &str, governor: &str, tasks: &str, seconds: f64) -> RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"{governor}\"\nfeatures = {{ {features} }}\n{tasks}[run]\nduration_s = {}\nwarmup_s = 1.0\n", seconds + 1.0
        ),
        1,
    )
}

/// Busy time of CPUs `lo..hi` (A55 0-3, A76 4-5, X1 6-7) over the whole run's.
fn share(r: &RunResult, lo: usize, hi: usize) -> f64 {
    let all: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
    r.cpus[lo..hi].iter().map(|c| c.busy_ns).sum::<u64>() as f64 / all.max(1) as f64
}

/// A 10 %-util task (10 % of the A55's capacity: 160 x 0.1 of 1024 per period) started
/// on an X1: EAS moves it to a little CPU at its first wakeups; without EAS the idle X1
/// it last ran on fits it, so it stays there.
#[test]
fn a_small_task_runs_on_little_cpus_with_eas() {
    let t = periodic("small", 7, 156, 10, "");
    let with = pixel6("", "schedutil", &t, 1.0);
    let without = pixel6("ENERGY_AWARE = false", "schedutil", &t, 1.0);
    assert!(share(&with, 0, 4) > 0.9, "EAS: on the A55s: {}", share(&with, 0, 4));
    assert!(share(&without, 6, 8) > 0.9, "no EAS: stays on the X1: {}", share(&without, 6, 8));
    assert!(with.summary["eas_feec_placements"] > 50.0);
}

/// A 90 %-util task (90 % of an A55's capacity: 144 of 1024, too big for an A55 with
/// the 20 % headroom) started on an X1: EAS moves it to the cheapest CPU it fits, an
/// A76, never a little one; without EAS the idle X1 it last ran on fits it, so it stays.
#[test]
fn a_big_task_runs_on_big_cpus_with_eas() {
    let t = periodic("big", 7, 1440, 10, "");
    let with = pixel6("", "schedutil", &t, 1.0);
    let without = pixel6("ENERGY_AWARE = false", "schedutil", &t, 1.0);
    assert!(share(&with, 4, 6) > 0.9, "EAS: on an A76: {}", share(&with, 4, 6));
    assert!(share(&with, 0, 4) < 0.01, "EAS: never on an A55: {}", share(&with, 0, 4));
    assert!(share(&without, 6, 8) > 0.9, "no EAS: stays on the X1: {}", share(&without, 6, 8));
}

/// uclamp_min = 1024 (sched_setattr util_min): the same small task is placed on an X1,
/// the only CPU whose capacity meets the clamp (util_fits_cpu()'s -1 elsewhere).
#[test]
fn uclamp_min_1024_moves_a_small_task_to_an_x1() {
    let boosted = pixel6("", "schedutil", &periodic("ui", 0, 156, 10, "sched_attr = { util_min = 1024 }\n"), 1.0);
    let plain = pixel6("", "schedutil", &periodic("ui", 0, 156, 10, ""), 1.0);
    assert!(share(&boosted, 6, 8) > 0.9, "boosted: on an X1: {}", share(&boosted, 6, 8));
    assert!(share(&plain, 0, 4) > 0.9, "plain: on the A55s: {}", share(&plain, 0, 4));
}

/// The periodic set (four tasks of 10-20 % of an A55, one of 80 % of an A76) costs less
/// energy with EAS than with placement by capacity alone, at the same governor.
#[test]
fn eas_spends_less_energy_on_a_periodic_set() {
    let mut t = String::new();
    for (i, work) in [156u64, 200, 250, 312].iter().enumerate() {
        t += &periodic(&format!("small{i}"), 4 + i % 4, *work, 10, "");
    }
    t += &periodic("medium", 0, 3890, 10, "");
    let with = pixel6("", "schedutil", &t, 2.0);
    let without = pixel6("ENERGY_AWARE = false", "schedutil", &t, 2.0);
    let (e_on, e_off) = (with.summary["energy_cpu_mj"], without.summary["energy_cpu_mj"]);
    assert!(e_on < e_off, "EAS {e_on} mJ vs {e_off} mJ");
    // Not by doing less: the work done with EAS is within 1 % of the other's (every period's work gets done).
    let work = |r: &RunResult| r.tasks.iter().map(|t| t.work_done_ns).sum::<u64>() as f64;
    assert!(work(&with) > 0.99 * work(&without), "{} vs {}", work(&with), work(&without));
}

/// A phone runs as its kernel does (issue 50): with no `[kernel] governor` the Pixel 6
/// takes its kernel's default, schedutil, and EAS with it, so the small task started on
/// an X1 moves to the A55s and the OPPs change; `governor = "performance"` keeps the top
/// OPP and, with EAS off under it, the task on the X1.
#[test]
fn a_phone_defaults_to_schedutil_and_eas() {
    let t = periodic("small", 7, 156, 10, "");
    let run = |kernel: &str| {
        run_toml(&format!("[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\n{kernel}{t}[run]\nduration_s = 2.0\nwarmup_s = 1.0\n"), 1)
    };
    let default = run("");
    let performance = run("governor = \"performance\"\n");
    assert!(share(&default, 0, 4) > 0.9, "default: on the A55s: {}", share(&default, 0, 4));
    assert!(default.summary["eas_feec_placements"] > 50.0 && default.summary["cpufreq_changes"] > 0.0);
    assert!(share(&performance, 6, 8) > 0.9, "performance: stays on the X1: {}", share(&performance, 6, 8));
    let counter = |k: &str| performance.summary.get(k).copied().unwrap_or(0.0);
    assert_eq!((counter("eas_feec_placements"), counter("cpufreq_changes")), (0.0, 0.0));
    // The machine says so, and a server keeps performance.
    let preset = |n: &str| schedlab_core::topology::presets::preset(n).unwrap().default_governor;
    use schedlab_core::eas::schedutil::Governor;
    assert_eq!(
        (preset("pixel6"), preset("snapdragon-888"), preset("epyc-9654-2s")),
        (Governor::Schedutil, Governor::Schedutil, Governor::Performance)
    );
}
