//! Global EDF for SCHED_DEADLINE (issue 35; sched/dl_balance.rs over rt/cpudl.rs):
//! push after a pick and at wakeup, pull when a deadline task leaves, find_later_rq().

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::RunResult;

const MS: u64 = 1_000_000;

fn run_checked(toml: &str) -> RunResult {
    let s = common::scenario(toml);
    run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result
}

/// A periodic deadline task: `work_us` each `period_ms`, reserving `runtime_ms`,
/// created on CPU `cpu` at `start_us`.
fn dl_task(name: &str, work_us: u64, runtime_ms: u64, period_ms: u64, cpu: usize, start_us: u64) -> String {
    format!(
        "[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\nstart = \"{start_us}us\"\nsched_attr = {{ policy = \"SCHED_DEADLINE\", runtime = \"{runtime_ms}ms\", period = \"{period_ms}ms\" }}\n\
         program = [{{ loop = {{ body = [{{ run = \"{work_us}us\" }}, {{ periodic = {{ period = \"{period_ms}ms\" }} }}] }} }}]\n"
    )
}

fn task<'a>(r: &'a RunResult, name: &str) -> &'a schedlab_core::metrics::TaskStats {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// Three deadline tasks of 1.1 CPUs in all (0.4, 0.4, 0.3; under the global EDF bound
/// m - (m - 1) u_max = 1.6 on 2 CPUs), all created on CPU 0: the pushes after each
/// pick spread them, and in 10 s no job misses its deadline. Left on CPU 0 (no push),
/// 1.1 CPUs of work on one CPU miss.
#[test]
fn an_admitted_set_created_on_one_cpu_spreads_and_never_misses() {
    let r = run_checked(&format!(
        "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.12\"\n{}{}{}[run]\nduration_s = 10\n",
        dl_task("a", 3800, 4, 10, 0, 0),
        dl_task("b", 3800, 4, 10, 0, 0),
        dl_task("c", 5800, 6, 20, 0, 0),
    ));
    assert_eq!(r.summary["dl_misses"], 0.0, "{:?}", r.summary);
    assert!(r.summary["dl_pushes"] + r.summary["dl_pulls"] >= 1.0, "{:?}", r.summary);
    for (n, jobs, work) in [("a", 1000, 3800), ("b", 1000, 3800), ("c", 500, 5800)] {
        assert!(common::run_ns(&r, n) >= (jobs - 1) * work * 1000, "{n} ran {}", common::run_ns(&r, n));
    }
}

/// On 2 CPUs, x (deadline 100 ms) runs on CPU 0 and y (deadline 50 ms) on CPU 1; z
/// (deadline 10 ms) wakes on CPU 1 and preempts y there; the push after z's pick moves
/// y to CPU 0, whose running deadline (x's) is the latest: y preempts x. Without the
/// push, y waits behind z on CPU 1 while x runs on. When z sleeps, CPU 1 pulls x.
#[test]
fn a_preempted_deadline_task_is_pushed_to_the_cpu_running_the_latest_deadline() {
    let r = run_checked(&format!(
        "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.12\"\n{}{}{}[run]\nduration_s = 0.05\n",
        dl_task("x", 30_000, 30, 100, 0, 0),
        dl_task("y", 20_000, 20, 50, 1, 0),
        dl_task("z", 2_000, 2, 10, 1, 5_000),
    ));
    let (x, y, z) = (task(&r, "x"), task(&r, "y"), task(&r, "z"));
    assert!(y.nr_migrations >= 1, "y migrations {}", y.nr_migrations);
    assert_eq!(z.nr_migrations, 0, "z stays where it woke");
    // y lost no time to z: it moved at once and finished its 20 ms by 20 ms + a switch.
    assert!(y.wait_ns < MS / 2, "y waited {} ns", y.wait_ns);
    // x gave CPU 0 to y (and took CPU 1 back by a pull once z slept).
    assert!(x.wait_ns >= MS, "x waited {} ns", x.wait_ns);
    assert!(r.summary["dl_pushes"] >= 1.0 && r.summary["dl_pulls"] >= 1.0, "{:?}", r.summary);
    assert_eq!(r.summary["dl_misses"], 0.0, "{:?}", r.summary);
}

/// A task waking where a deadline task with an earlier deadline runs goes to the CPU
/// whose earliest deadline is the latest (find_later_rq()'s cpudl maximum): z (deadline
/// 60 ms) wakes on CPU 1 beside y (50 ms) and takes CPU 0 from x (100 ms).
#[test]
fn a_waking_task_takes_the_cpu_running_the_latest_deadline() {
    let r = run_checked(&format!(
        "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.12\"\n{}{}{}[run]\nduration_s = 0.05\n",
        dl_task("x", 30_000, 30, 100, 0, 0),
        dl_task("y", 20_000, 20, 50, 1, 0),
        "[[tasks]]\nname = \"z\"\ncpu = 1\nsched_attr = { policy = \"SCHED_DEADLINE\", runtime = \"2ms\", period = \"60ms\" }\n\
         program = [{ sleep = \"5ms\" }, { run = \"2ms\" }, { sleep = \"1s\" }]\n",
    ));
    let (x, y, z) = (task(&r, "x"), task(&r, "y"), task(&r, "z"));
    assert!(z.nr_migrations >= 1, "z migrations {}", z.nr_migrations);
    assert!(z.wait_ns < MS / 2 && y.wait_ns < MS / 2, "z waited {} ns, y {} ns", z.wait_ns, y.wait_ns);
    assert!(x.wait_ns >= 2 * MS - MS / 2, "x waited {} ns", x.wait_ns);
}
