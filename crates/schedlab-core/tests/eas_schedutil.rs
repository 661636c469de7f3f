//! schedutil on the Pixel 6's clusters (its kernel's default governor): work runs at the
//! speed of the OPP the governor picks, and the performance governor keeps the top OPP's
//! timing.

use crate::common;

use common::run_toml;
use schedlab_core::RunResult;

/// One task pinned to an X1 (CPU 7): `work_us` of work every 10 ms, 1 s of warm-up then
/// 2 s measured.
fn x1_task(governor: &str, work_us: u64) -> RunResult {
    let sleep_us = 10_000 - work_us;
    run_toml(
        &format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\n{governor}\n[[tasks]]\nname = \"t\"\ncpu = 7\naffinity = \"7\"\nprogram = [{{ loop = {{ body = [{{ run = \"{work_us}us\" }}, {{ sleep = \"{sleep_us}us\" }}] }} }}]\n[run]\nduration_s = 3.0\nwarmup_s = 1.0\n"
        ),
        1,
    )
}

/// The analytic case: 2 ms of work every 10 ms is a util of ~205 (PELT swings it about
/// 190-225 over a period); schedutil asks 1.25 x util / 1024 x 2802 MHz = 650-770 MHz,
/// the lowest OPP at or above is 851 MHz, so each 2 ms of work takes 2 x 2802 / 851 ms.
/// The ratio of run time to work done is max_freq / freq against the performance
/// governor's 1.
#[test]
fn work_takes_max_over_freq_longer_at_the_opp_schedutil_picks() {
    let ratio = |r: &RunResult| r.tasks[0].run_ns as f64 / r.tasks[0].work_done_ns as f64;
    let su = x1_task("governor = \"schedutil\"", 2000);
    let perf = x1_task("governor = \"performance\"", 2000);
    let expected = 2802.0 / 851.0;
    let got = ratio(&su) / ratio(&perf);
    assert!((got / expected - 1.0).abs() < 0.005, "run/work at schedutil's OPP {got}, expected {expected}");
    assert!((ratio(&perf) - 1.0).abs() < 0.01, "top OPP: run time = work: {}", ratio(&perf));
    let opps: Vec<_> = su.summary.iter().filter(|(k, v)| k.starts_with("opp_busy_cortex-x1_") && **v > 1e-3).collect();
    assert_eq!(opps.len(), 1, "one OPP in the measured window: {opps:?}");
    assert_eq!(opps[0].0, "opp_busy_cortex-x1_851mhz_seconds");
}

/// The phone's default governor is schedutil: leaving it out gives the byte-identical
/// result of naming it; performance keeps the top OPP, with no cpufreq figures.
#[test]
fn the_performance_governor_keeps_the_top_opp_timing() {
    // The whole result but the engine's wall time.
    let json = |r: &RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v["engine"]["wall_ns"] = 0.into();
        v.to_string()
    };
    let default = x1_task("", 2000);
    let su = x1_task("governor = \"schedutil\"", 2000);
    let perf = x1_task("governor = \"performance\"", 2000);
    assert_eq!(json(&default), json(&su));
    assert!(!perf.summary.contains_key("cpufreq_changes"));
    assert_ne!(perf.tasks[0].run_ns, su.tasks[0].run_ns);
    // Less power at a lower OPP for the same work: schedutil spends less energy.
    assert!(su.summary["energy_cpu_mj"] < perf.summary["energy_cpu_mj"]);
}
