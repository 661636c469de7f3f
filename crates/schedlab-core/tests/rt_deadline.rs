//! SCHED_DEADLINE on the engine (issue 35): admission, CBS, EDF and GRUB.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::RunResult;

fn run_checked(toml: &str, seed: u64) -> Result<RunResult, String> {
    let s = common::scenario(toml);
    run(&s, seed, &RunOptions { check_invariants: true, ..Default::default() }).map(|o| o.result).map_err(|e| e.to_string())
}

const MS: u64 = 1_000_000;

/// A periodic deadline task: `work` each `period`, reserving `runtime` of it.
fn dl_task(name: &str, work_ms: u64, runtime_ms: u64, period_ms: u64, extra: &str) -> String {
    format!(
        "[[tasks]]\nname = \"{name}\"\nsched_attr = {{ policy = \"SCHED_DEADLINE\", runtime = \"{runtime_ms}ms\", period = \"{period_ms}ms\", deadline = \"{period_ms}ms\"{extra} }}\n\
         program = [{{ loop = {{ body = [{{ run = \"{work_ms}ms\" }}, {{ periodic = {{ period = \"{period_ms}ms\" }} }}] }} }}]\n"
    )
}

/// Three deadline tasks of 0.7 CPU in all, admitted on one CPU beside a FIFO hog at
/// priority 99 and a fair hog, each job's work inside its reservation (a switch's
/// overhead to spare): in 10 s no job finishes after its deadline and no reservation
/// runs out. Without the deadline class above RT, the FIFO hog takes the CPU.
#[test]
fn admitted_deadline_tasks_never_miss_a_deadline() {
    let text = format!(
        "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\n{}{}{}\
         [[tasks]]\nname = \"fifo\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 99 }}\nprogram = [{{ run = \"100s\" }}]\n\
         [[tasks]]\nname = \"fair\"\nprogram = [{{ run = \"100s\" }}]\n[run]\nduration_s = 10\n",
        dl_task("a", 8, 10, 50, ""),
        dl_task("b", 17, 20, 100, ""),
        dl_task("c", 26, 30, 100, ""),
    );
    let r = run_checked(&text, 1).unwrap();
    assert_eq!(r.summary["dl_misses"], 0.0, "{:?}", r.summary);
    assert_eq!(r.summary["dl_overruns"], 0.0, "{:?}", r.summary);
    // Every job ran: 200 of a, 100 each of b and c.
    assert!(common::run_ns(&r, "a") >= 199 * 8 * MS, "a ran {}", common::run_ns(&r, "a"));
    assert!(common::run_ns(&r, "c") >= 99 * 26 * MS, "c ran {}", common::run_ns(&r, "c"));
}

/// 1.2 CPUs of deadline bandwidth on one CPU: the third task is refused at load, as
/// sched_setattr() refuses it (EBUSY); with sched_rt_runtime_us = -1 nothing is.
#[test]
fn a_deadline_set_above_the_limit_is_refused_with_ebusy() {
    let set = format!("{}{}{}", dl_task("a", 30, 40, 100, ""), dl_task("b", 30, 40, 100, ""), dl_task("c", 30, 40, 100, ""));
    let e = run_checked(&format!("[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\n{set}[run]\nduration_s = 1\n"), 1).unwrap_err();
    assert!(e.contains("tasks[2].sched_attr") && e.contains("task 'c'") && e.contains("EBUSY as sched_setattr()"), "{e}");
    // Two fit under 0.95.
    let two = format!("{}{}", dl_task("a", 30, 40, 100, ""), dl_task("b", 30, 40, 100, ""));
    run_checked(&format!("[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\n{two}[run]\nduration_s = 1\n"), 1).unwrap();
    run_checked(
        &format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\ntunables = {{ sched_rt_runtime_us = -1 }}\n{set}[run]\nduration_s = 1\n"
        ),
        1,
    )
    .unwrap();
}

/// A lone deadline hog reserving 10 ms every 100 ms: the CBS holds it to 10 % of the
/// CPU; with SCHED_FLAG_RECLAIM GRUB lets it use the idle bandwidth, up to Umax (95 %).
#[test]
fn grub_lets_a_lone_deadline_task_use_idle_bandwidth() {
    let hog = |reclaim: bool| {
        let r = run_checked(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\n\
                 [[tasks]]\nname = \"d\"\nsched_attr = {{ policy = \"SCHED_DEADLINE\", runtime = \"10ms\", period = \"100ms\", reclaim = {reclaim} }}\n\
                 program = [{{ run = \"100s\" }}]\n[run]\nduration_s = 2\n"
            ),
            1,
        )
        .unwrap();
        common::run_ns(&r, "d")
    };
    let (plain, grub) = (hog(false), hog(true));
    assert!(plain.abs_diff(200 * MS) <= 2 * MS, "CBS alone: {plain} ns of 2 s");
    assert!(grub > 1800 * MS && grub <= 1905 * MS, "GRUB: {grub} ns of 2 s (plain {plain})");
}
