//! Priority-inheritance chains (issue 35): rt_mutex_adjust_prio_chain() passes a boost
//! through a boosted owner that is itself blocked on another mutex.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::trace::TraceEvent;

const MS: u64 = 1_000_000;

/// One CPU, no RT throttling or fair server. A (fair) takes M1 and needs 10 ms in it;
/// B (fair) takes M2, then waits on M1; a FIFO 10 hog arrives at 5 ms and starves both
/// fair tasks; C (FIFO 50) waits on M2 at 6 ms. With the chain C boosts B, and B, blocked
/// on M1, passes the boost on to A: A runs at 50 over the hog until it releases M1, then
/// B (still boosted by C) runs and releases M2, and C gets it. Returns (A's run, the
/// first switch away from A after C arrived: when and to whom, C's work done).
fn chain(pi: bool) -> (u64, Option<(u64, usize)>, u64) {
    let s = common::scenario(&format!(
        "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.12\"\nfeatures = {{ DL_SERVER = false }}\n\
         [rt_app]\npi_enabled = {pi}\n\
         [[tasks]]\nname = \"A\"\nprogram = [{{ lock = \"m1\" }}, {{ run = \"10ms\" }}, {{ unlock = \"m1\" }}, {{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"B\"\nstart = \"1ms\"\nprogram = [{{ lock = \"m2\" }}, {{ lock = \"m1\" }}, {{ run = \"1ms\" }}, {{ unlock = \"m1\" }}, {{ unlock = \"m2\" }}, {{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"hog\"\nstart = \"5ms\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 10 }}\nprogram = [{{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"C\"\nstart = \"6ms\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 50 }}\n\
         program = [{{ lock = \"m2\" }}, {{ run = \"1ms\" }}, {{ unlock = \"m2\" }}, {{ sleep = \"100s\" }}]\n\
         [run]\nduration_s = 0.5\n"
    ));
    let out = run(&s, 1, &RunOptions { trace: true, check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    let r = &out.result;
    let t = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap().clone();
    // pids: A 1, B 2, hog 3, C 4.
    let a_off = out.trace.unwrap().records.iter().find_map(|r| match r.event {
        TraceEvent::Switch { prev: 1, next, .. } if r.ts > 6 * MS => Some((r.ts, next)),
        _ => None,
    });
    (t("A").run_ns, a_off, t("C").work_done_ns)
}

#[test]
fn a_boost_passes_through_a_boosted_owner_blocked_on_another_mutex() {
    let (a, a_off, c) = chain(true);
    assert_eq!(c, MS, "C got M2 and ran its 1 ms");
    // A ran its 10 ms critical section (part before the hog, the rest boosted at 50),
    // and once it released M1 it fell back to the fair class and B, given M1 and still
    // boosted by C, took the CPU over the hog.
    assert!((10 * MS..11 * MS).contains(&a), "A ran {a} ns");
    let (at, next) = a_off.expect("A left the CPU");
    eprintln!("PI chain: A ran {a} ns, released M1 and switched to pid {next} at {at} ns; C did {c} ns");
    assert_eq!(next, 2, "B, boosted, ran after A at {at} ns");
    assert!(at < 12 * MS, "A released M1 at {at} ns");
}

#[test]
fn without_priority_inheritance_the_chain_stalls() {
    let (a, _, c) = chain(false);
    assert_eq!(c, 0, "C never gets M2 (A ran {a} ns)");
    assert!(a < 6 * MS, "the hog starves A from 5 ms: {a} ns");
}

/// The new owner of a mutex takes what its remaining waiters lend: A (fair) holds M; B
/// (fair) waits on it first, C (FIFO 50) after, beside a FIFO 10 hog on one CPU. A,
/// boosted by C, releases M to B (waiters in arrival order), and B runs at C's priority
/// until it hands M to C. Without the new owner's boost the hog starves B and C waits
/// for good.
#[test]
fn the_new_owner_inherits_from_the_waiters_left_behind() {
    let r = common::run_toml(
        "[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.12\"\nfeatures = { DL_SERVER = false }\n\
         [rt_app]\npi_enabled = true\n\
         [[tasks]]\nname = \"A\"\nprogram = [{ lock = \"m\" }, { run = \"10ms\" }, { unlock = \"m\" }, { run = \"100s\" }]\n\
         [[tasks]]\nname = \"B\"\nstart = \"1ms\"\nprogram = [{ lock = \"m\" }, { run = \"1ms\" }, { unlock = \"m\" }, { run = \"100s\" }]\n\
         [[tasks]]\nname = \"hog\"\nstart = \"5ms\"\nsched_attr = { policy = \"SCHED_FIFO\", priority = 10 }\nprogram = [{ run = \"100s\" }]\n\
         [[tasks]]\nname = \"C\"\nstart = \"6ms\"\nsched_attr = { policy = \"SCHED_FIFO\", priority = 50 }\n\
         program = [{ lock = \"m\" }, { run = \"1ms\" }, { unlock = \"m\" }, { sleep = \"100s\" }]\n\
         [run]\nduration_s = 0.5\n",
        1,
    );
    let t = |n: &str| r.tasks.iter().find(|t| t.name == n).unwrap().clone();
    assert_eq!(t("C").work_done_ns, MS, "C got M after B");
    assert!(t("B").run_ns < 3 * MS, "B ran its 1 ms boosted, then the hog took over: {} ns", t("B").run_ns);
}
