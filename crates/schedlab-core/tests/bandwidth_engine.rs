//! CFS bandwidth control driven by the engine (the state machine has its own tests).

use crate::common;

use common::run_toml;

fn limited(profile: &str, groups: &str, tasks: &str, seconds: f64) -> schedlab_core::RunResult {
    limited_with(profile, "", groups, tasks, seconds)
}

/// As `limited`, with `features` (TOML inline-table entries) overriding the profile's.
fn limited_with(profile: &str, features: &str, groups: &str, tasks: &str, seconds: f64) -> schedlab_core::RunResult {
    run_toml(
        &format!(
            "[machine]\ntopo = {{ cores = 4 }}\n[kernel]\nprofile = \"{profile}\"\nfeatures = {{ {features} }}\n{groups}\n{tasks}\n[run]\nduration_s = {seconds}\n"
        ),
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

fn group_of<'a>(r: &'a schedlab_core::RunResult, name: &str) -> &'a schedlab_core::metrics::GroupStats {
    r.groups.iter().find(|g| g.name == name).unwrap()
}

/// Four CPU-bound threads on four CPUs under one quota, throttled every period. From
/// 6.2 the period timer unthrottles only its own CPU directly; the others wait for the
/// CSD it sends them, so throttled_time grows per remote cfs_rq and period by the CSD's
/// delivery: an IPI and the exit from the idle state the throttled CPU went into.
#[test]
fn async_unthrottle_delays_remote_cfs_rqs_by_a_csd() {
    let run = |on: bool| {
        limited_with(
            "6.6",
            &format!("BW_ASYNC_UNTHROTTLE = {on}"),
            "[[groups]]\nname = \"g\"\ncfs_quota_us = 40000\ncfs_period_us = 100000",
            "[[tasks]]\nname = \"hog\"\ncount = 4\npin_each = true\naffinity = \"0-3\"\ngroup = \"g\"\nprogram = [{ run = \"1000s\" }]",
            2.0,
        )
    };
    let (sync, asy) = (run(false), run(true));
    let (gs, ga) = (group_of(&sync, "g"), group_of(&asy, "g"));
    assert!(gs.nr_throttled >= 19 && ga.nr_throttled >= 19, "{gs:?} {ga:?}");
    let extra = ga.throttled_time as f64 - gs.throttled_time as f64;
    // Three remote cfs_rqs per period, each waiting one IPI and an idle exit (the
    // provisional C6 of topo machines: 100 us), never a tick.
    let per = extra / (3.0 * ga.nr_throttled as f64);
    assert!(per > 1_000.0 && per < 500_000.0, "extra throttled time per remote unthrottle: {per} ns");
}

/// 6.18's task-based throttle: when the group runs out, its queued thread is not taken
/// off at once; it is picked, switched in, and held as it returns to user space. So a
/// CPU shared by two threads of a throttled group switches more often than before.
#[test]
fn task_based_throttle_holds_queued_tasks_as_they_are_picked() {
    let run = |on: bool| {
        limited_with(
            "6.18",
            &format!("BW_TASK_THROTTLE = {on}"),
            "[[groups]]\nname = \"g\"\ncfs_quota_us = 20000\ncfs_period_us = 100000",
            "[[tasks]]\nname = \"hog\"\ncount = 2\naffinity = \"1\"\ngroup = \"g\"\nprogram = [{ run = \"1000s\" }]",
            2.0,
        )
    };
    let (old, new) = (run(false), run(true));
    let switches = |r: &schedlab_core::RunResult| r.tasks.iter().map(|t| t.nr_switches).sum::<u64>();
    let (go, gn) = (group_of(&old, "g"), group_of(&new, "g"));
    assert!(gn.nr_throttled >= 19 && go.nr_throttled >= 19);
    assert!(switches(&new) >= switches(&old) + gn.nr_throttled, "{} vs {}", switches(&new), switches(&old));
    // The quota still holds, give or take the kernel exits of the held threads.
    let share = gn.usage_ns as f64 / new.engine.sim_ns as f64;
    assert!((share - 0.2).abs() < 0.005, "{share}");
    assert!(gn.throttled_time > 0 && gn.throttled_time <= go.throttled_time, "{} vs {}", gn.throttled_time, go.throttled_time);
}

/// A thread whose second burst of the period uses up the quota (by the few us of its
/// switches) as it goes to sleep leaves its group throttled while empty; it sleeps past
/// the refill. From 6.6 that accrues no throttled_time (79462e8c879a); before, the time
/// to the refill counts.
#[test]
fn a_group_throttled_while_its_tasks_sleep_accrues_no_throttled_time_from_6_6() {
    let run = |profile: &str| {
        let r = limited(
            profile,
            "[[groups]]\nname = \"g\"\ncfs_quota_us = 10000\ncfs_period_us = 100000",
            "[[tasks]]\nname = \"w\"\ngroup = \"g\"\naffinity = \"1\"\nprogram = [{ loop = { body = [{ run = \"5ms\" }, { sleep = \"1ms\" }, { run = \"5ms\" }, { sleep = \"250ms\" }] } }]",
            3.0,
        );
        group_of(&r, "g").clone()
    };
    let (old, new) = (run("6.5"), run("6.6"));
    assert!(old.nr_throttled > 0 && new.nr_throttled > 0, "{old:?} {new:?}");
    // Before: to the refill, half a period on average.
    assert!(old.throttled_time > 20_000_000 * old.nr_throttled, "{old:?}");
    assert_eq!(new.throttled_time, 0, "{new:?}");
}

/// cpu.max then cpu.max.burst written on an idle group: the first period may use
/// quota + burst (5.14+), and that use is counted in nr_bursts/burst_time.
#[test]
fn burst_written_on_an_idle_group_lets_the_first_period_use_quota_plus_burst() {
    let run = |profile: &str| {
        let r = limited(
            profile,
            "[[groups]]\nname = \"g\"\ncfs_quota_us = 10000\ncfs_period_us = 100000\ncfs_burst_us = 10000",
            "[[tasks]]\nname = \"hog\"\ngroup = \"g\"\naffinity = \"1\"\nprogram = [{ run = \"1000s\" }]",
            0.15,
        );
        group_of(&r, "g").clone()
    };
    let (before, after) = (run("5.13"), run("5.14"));
    // Up to 150 ms: the first period's 10 ms (+10 ms burst) and half of the second.
    assert!((before.usage_ns as f64 - 20e6).abs() < 1e6, "{before:?}");
    assert!((after.usage_ns as f64 - 30e6).abs() < 1e6, "{after:?}");
    assert_eq!((before.nr_bursts, before.burst_time), (0, 0));
    assert_eq!(after.nr_bursts, 1, "{after:?}");
    assert!((after.burst_time as f64 - 10e6).abs() < 1e6, "{after:?}");
}

/// fibtest with a quota nobody reaches, `threads` threads, `extra` more params.
fn fib_unlimited(extra: &str, seconds: f64) -> schedlab_core::RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"xeon-80\"\n[kernel]\nprofile = \"5.4\"\n\
             [workload]\nkind = \"fibtest\"\nparams = {{ threads = 4, seconds = {seconds}, quota_us = -1 {extra} }}\n\
             [run]\nduration_s = {seconds}\n"
        ),
        1,
    )
}

#[test]
fn a_slow_fibtest_iteration_costs_at_least_its_system_calls() {
    // 100 iterations take ~40 ns; the usleep(10000) around them costs a nanosleep entry,
    // an hrtimer start and the exit, so a slow thread's CPU time per wakeup is at least
    // those paths (plus the wakeup and context switch) however cheap the iterations are.
    let r = fib_unlimited("", 1.0);
    let k = schedlab_core::topology::presets::preset("xeon-80").unwrap().cost.kernel;
    let floor = (k.syscall_entry_ns + k.hrtimer_start_ns + k.syscall_exit_ns) as u64;
    let slow = r.tasks.iter().find(|t| t.name == "slow-1").expect("slow-1");
    let iterations = (slow.work_done_ns as f64 / 40.0).round(); // ~100 cycles per burst at 2.5 GHz
    assert!(slow.nr_wakeups >= 90, "{slow:?}"); // about one per 10 ms and its slack
    assert!(slow.run_ns >= slow.nr_wakeups * floor, "run {} ns for {} wakeups (floor {floor} ns each)", slow.run_ns, slow.nr_wakeups);
    assert!(slow.run_ns > slow.work_done_ns + slow.nr_wakeups * floor - 1, "{slow:?} {iterations}");
    // The score counts 100 iterations per wakeup of each slow thread, and the fast
    // thread's chunks of 1M (the one in progress counted whole).
    let it = r.workload["iterations_m"];
    assert!(it > 0.0 && (it * 1e6) % 100.0 < 1e-3, "{it}");
}

#[test]
fn fibtest_threads_start_one_creation_apart_and_background_work_runs_on_cpu0() {
    let r = fib_unlimited(", create = \"50us\", cpu0_background_hz = 1000.0", 0.2);
    let start = |name: &str| r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name}")).start_ns;
    assert_eq!((start("fast-0"), start("slow-1"), start("slow-3")), (50_000, 100_000, 200_000));
    let main = r.tasks.iter().find(|t| t.name == "fibtest-main").expect("main thread");
    assert!(main.run_ns >= 4 * 50_000 && main.exit_ns.is_some(), "{main:?}");
    let bg = r.tasks.iter().find(|t| t.name == "kworker-cpu0").expect("background task");
    assert!(bg.nr_wakeups > 100 && bg.run_ns > 100 * 10_000, "{bg:?}");
    // Without the option there is no background task.
    assert!(fib_unlimited("", 0.01).tasks.iter().all(|t| t.name != "kworker-cpu0"));
}

#[test]
fn an_explicit_tick_phase_replaces_the_seeds_draw() {
    let phase = |extra: &str, seed| {
        let r = run_toml(
            &format!(
                "[machine]\npreset = \"xeon-80\"\n[kernel]\nprofile = \"5.3\"\n{extra}\n\
                 [workload]\nkind = \"fibtest\"\nparams = {{ threads = 16, seconds = 1.0 }}\n[run]\nduration_s = 1.0\n"
            ),
            seed,
        );
        r.workload["iterations_m"]
    };
    // The expiring case depends on the tick phase: seeds differ, a fixed phase does not.
    let fixed = "tunables = { tick_phase_ns = 300000 }";
    assert_eq!(phase(fixed, 1), phase(fixed, 2));
    let drawn: Vec<f64> = (1..=4).map(|s| phase("", s)).collect();
    assert!(drawn.iter().any(|&x| x != drawn[0]), "{drawn:?}");
}
