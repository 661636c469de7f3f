//! GRUB's inactive timer (issue 35): a deadline task that blocks keeps its bandwidth in
//! its CPU's running_bw until its 0-lag time (task_non_contending(),
//! inactive_task_timer()), so a reclaiming task beside it reclaims only what is really
//! idle.

use crate::common;

use schedlab_core::api::{run, RunOptions};

const MS: u64 = 1_000_000;

/// One CPU, 6.6 (Umax 0.95). R reserves 20 ms / 200 ms (10 %) with SCHED_FLAG_RECLAIM
/// and runs flat out; S reserves 20 ms / 100 ms and runs `s_program` (its earlier
/// deadlines put it first, so R runs in its sleeps). Returns (R's run, S's run) over 10 s.
fn beside(s_program: &str) -> (u64, u64) {
    let s = common::scenario(&format!(
        "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\n\
         [[tasks]]\nname = \"R\"\nsched_attr = {{ policy = \"SCHED_DEADLINE\", runtime = \"20ms\", period = \"200ms\", reclaim = true }}\n\
         program = [{{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"S\"\nsched_attr = {{ policy = \"SCHED_DEADLINE\", runtime = \"20ms\", period = \"100ms\" }}\n\
         program = {s_program}\n\
         [run]\nduration_s = 10\n"
    ));
    let r = run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result;
    (common::run_ns(&r, "R"), common::run_ns(&r, "S"))
}

/// S runs 1 ms and sleeps 2 ms, over its bandwidth (a third of the CPU against 20 %), so
/// it wakes before its 0-lag time every time and stays active throughout: R's runtime
/// drains at Umax - Uextra = 0.95 - (0.95 - 0.3) = 0.3 of the clock over Umax, so R
/// runs 20 ms x 0.95 / 0.3 = 63.3 ms of every 200 ms (3.167 s in 10 s; S's own 40 ms
/// fit beside it). Beside an S that ran 1 ms and exited, the bandwidth is all R's:
/// Umax, 9.5 s. Without the inactive timer S's 2 ms sleeps counted as inactive and R
/// reclaimed them too (4.49 s measured).
#[test]
fn a_brief_sleeper_keeps_its_bandwidth_active_until_its_zero_lag_time() {
    let (r_sleeper, s_sleeper) = beside("[{ loop = { body = [{ run = \"1ms\" }, { sleep = \"2ms\" }] } }]");
    let (r_left, _) = beside("[{ run = \"1ms\" }]");
    eprintln!("GRUB: R beside the brief sleeper {r_sleeper} ns (S {s_sleeper} ns), beside the one that left {r_left} ns");
    let want = 10_000 * MS * 95 / 300;
    assert!(r_sleeper.abs_diff(want) < want / 50, "R beside the brief sleeper: {r_sleeper} ns, GRUB's {want} ns");
    assert!(s_sleeper.abs_diff(2000 * MS) < 20 * MS, "S used its 20 %: {s_sleeper} ns");
    assert!(r_left > 9400 * MS, "R beside a task that left: {r_left} ns");
}
