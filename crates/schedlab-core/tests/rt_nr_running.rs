//! rq->nr_running counts the RT and deadline tasks (issue 35; sched/class.rs
//! class_nr_sync()), so the fair class's balancing sees a CPU they keep busy.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::RunResult;

const MS: u64 = 1_000_000;

fn run_checked(toml: &str) -> RunResult {
    let s = common::scenario(toml);
    run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result
}

/// A fair task started on CPU 0 behind a pinned FIFO hog (no RT throttling), CPU 1
/// idle: CPU 0 has two runnable tasks (nr_running 2), so its tick kicks the idle CPU's
/// nohz balance, which pulls the fair task; counting fair tasks only, CPU 0 would look
/// like one task on one CPU and the fair task would starve.
#[test]
fn a_fair_task_queued_behind_an_rt_hog_is_pulled_to_an_idle_cpu() {
    for (profile, features) in [("6.6", "RT_THROTTLING = false"), ("6.12", "DL_SERVER = false")] {
        let r = run_checked(&format!(
            "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"{profile}\"\nfeatures = {{ {features} }}\n\
             [[tasks]]\nname = \"fifo\"\naffinity = \"0\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 50 }}\nprogram = [{{ run = \"100s\" }}]\n\
             [[tasks]]\nname = \"fair\"\ncpu = 0\nstart = \"1ms\"\nprogram = [{{ run = \"100s\" }}]\n\
             [run]\nduration_s = 1\n"
        ));
        let fair = common::run_ns(&r, "fair");
        assert!(fair > 900 * MS, "{profile}: the fair task ran {fair} ns of 1 s");
        let cpu0 = &r.cpus[0];
        assert_eq!(cpu0.nr_running_end, 1, "{profile}: CPU 0 ends with its RT hog counted");
    }
}
