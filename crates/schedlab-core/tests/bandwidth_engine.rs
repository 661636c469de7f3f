//! CFS bandwidth control driven by the engine (the state machine has its own tests).

mod common;

use common::run_toml;

fn limited(profile: &str, groups: &str, tasks: &str, seconds: f64) -> schedlab_core::RunResult {
    run_toml(
        &format!("[machine]\ntopo = {{ cores = 4 }}\n[kernel]\nprofile = \"{profile}\"\n{groups}\n{tasks}\n[run]\nduration_s = {seconds}\n"),
        1,
    )
}

#[test]
fn one_cpu_bound_task_uses_exactly_its_quota() {
    for profile in ["3.10", "4.14", "5.3", "5.4", "6.6"] {
        for (quota, period) in [(20_000, 100_000), (50_000, 200_000)] {
            let r = limited(
                profile,
                &format!("[[groups]]\nname = \"g\"\ncfs_quota_us = {quota}\ncfs_period_us = {period}"),
                "[[tasks]]\nname = \"hog\"\ngroup = \"g\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]",
                100.0 * period as f64 / 1e6,
            );
            let g = r.groups.iter().find(|g| g.name == "g").unwrap();
            let share = g.usage_ns as f64 / r.engine.sim_ns as f64;
            let expected = quota as f64 / period as f64;
            assert!((share - expected).abs() / expected < 0.01, "{profile}: share {share} vs {expected}");
            assert!(g.nr_periods >= 99, "{profile}: {} periods", g.nr_periods);
            assert_eq!(g.nr_throttled, g.nr_periods, "{profile}");
        }
    }
}

#[test]
fn a_group_below_its_quota_is_never_throttled() {
    let r = limited(
        "5.4",
        "[[groups]]\nname = \"g\"\ncpu_max = \"50000 100000\"",
        "[[tasks]]\nname = \"w\"\ncount = 3\ngroup = \"g\"\nprogram = [{ loop = { body = [{ run = \"1ms\" }, { sleep = \"9ms\" }] } }]",
        2.0,
    );
    let g = r.groups.iter().find(|g| g.name == "g").unwrap();
    assert!(g.usage_ns > 0);
    assert_eq!(g.nr_throttled, 0);
    assert_eq!(g.throttled_time, 0);
}

#[test]
fn a_child_is_throttled_when_its_parent_runs_out() {
    let r = limited(
        "6.6",
        "[[groups]]\nname = \"parent\"\ncfs_quota_us = 10000\n[[groups]]\nname = \"child\"\nparent = \"parent\"",
        "[[tasks]]\nname = \"hog\"\ngroup = \"child\"\nprogram = [{ run = \"1000s\" }]",
        1.0,
    );
    let child = r.groups.iter().find(|g| g.name == "child").unwrap();
    let parent = r.groups.iter().find(|g| g.name == "parent").unwrap();
    assert!(parent.nr_throttled >= 9);
    let share = child.usage_ns as f64 / r.engine.sim_ns as f64;
    assert!((share - 0.1).abs() < 0.01, "child limited by the parent's 10%: {share}");
}

#[test]
fn fibtest_without_expiry_gets_more_of_the_quota() {
    let fib = |profile: &str| {
        run_toml(
            &format!(
                "[machine]\npreset = \"xeon-80\"\n[kernel]\nprofile = \"{profile}\"\n\
                 [workload]\nkind = \"fibtest\"\nparams = {{ threads = 16, seconds = 2.0 }}\n[run]\nduration_s = 2.0\n"
            ),
            1,
        )
        .workload
    };
    let (before, after) = (fib("5.3"), fib("5.4"));
    assert!(after["fast_work_ms"] > 2.0 * before["fast_work_ms"], "{before:?} vs {after:?}");
    // The quota still holds: at most 2 s × 10 % plus one min_cfs_rq_runtime per CPU.
    assert!(after["usage_ms"] <= 200.0 + 16.0 * 1.0 + 1e-6, "{after:?}");
}
