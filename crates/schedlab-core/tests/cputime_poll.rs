//! A task that reads its own CPU-time clock (`cputime_poll`): each read is a
//! clock_gettime(CLOCK_THREAD_CPUTIME_ID) system call whose task_sched_runtime() runs
//! update_curr(), so the kernel sees an EEVDF slice or a group's runtime run out at the
//! read, not at the next tick (issue 29 item 2: validate-host's probe spins this way).

use crate::common;

fn two_hogs(poll: &str, quota: &str) -> String {
    format!(
        "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.18\"\ntunables = {{ hz = 250 }}\n\
         [[groups]]\nname = \"g\"\n{quota}\n\
         [[tasks]]\nname = \"h\"\ncount = 2\ngroup = \"g\"\n{poll}\nprogram = [{{ run = \"1000s\" }}]\n\
         [run]\nduration_s = 2.0\n"
    )
}

fn switches(r: &schedlab_core::RunResult) -> u64 {
    r.tasks.iter().map(|t| t.nr_switches).sum()
}

/// Two hogs on one CPU (6.18, base slice 0.7 ms at 1 CPU, HZ 250): without reads the
/// slice's end is noticed at the tick, one switch per 4 ms; reading the clock every
/// 3 us the running hog is preempted when its slice ends, one switch per 0.7 ms.
#[test]
fn reading_the_cputime_clock_ends_the_slice_at_once() {
    let ticked = common::run_toml(&two_hogs("", ""), 1);
    let polled = common::run_toml(&two_hogs("cputime_poll = \"3us\"", ""), 1);
    let (t, p) = (switches(&ticked) as f64 / 2.0, switches(&polled) as f64 / 2.0);
    assert!((230.0..=260.0).contains(&t), "{t} switches/s without reads: expected one a tick (250/s)");
    assert!((1300.0..=1500.0).contains(&p), "{p} switches/s reading the clock: expected one a 0.7 ms slice");
    // Same work: the CPU is shared either way.
    let (a, b) = (polled.tasks[0].run_ns as f64, polled.tasks[1].run_ns as f64);
    assert!((a / b - 1.0).abs() < 0.01, "shares {a} {b}");
}

/// Under a quota the running hog is throttled at the read after its cfs_rq's runtime
/// runs out: the group overruns its pool by at most a read, where a tick-driven
/// accounting overruns by up to a tick (repaid in the next period).
#[test]
fn reading_the_cputime_clock_throttles_at_the_read() {
    let quota = "cfs_quota_us = 10000\ncfs_period_us = 100000";
    let polled = common::run_toml(&two_hogs("cputime_poll = \"3us\"", quota), 1);
    let ticked = common::run_toml(&two_hogs("", quota), 1);
    let overrun = |r: &schedlab_core::RunResult| {
        let g = r.groups.iter().find(|g| g.name == "g").unwrap();
        // Usage beyond the quota of the periods so far (the first period's pool included).
        g.usage_ns as i64 - (g.nr_periods as i64 + 1) * 10_000_000
    };
    let (p, t) = (overrun(&polled), overrun(&ticked));
    assert!(p.abs() <= 10_000, "reading every 3 us: {p} ns beyond the quota");
    assert!(t > 100_000, "tick accounting: {t} ns beyond the quota");
}
