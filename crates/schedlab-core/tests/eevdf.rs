//! EEVDF mechanisms seen from a run: delayed dequeue (6.12+).

mod common;

use common::run_toml;

/// A task running 1 ms and sleeping 3 ms beside a hog on one CPU goes to sleep with
/// negative lag (it ran 1 ms while the hog waited). Without
/// DELAY_DEQUEUE it keeps that lag through the sleep and wakes behind, waiting for the
/// hog's slice; with it (and DELAY_ZERO) the hog runs it off while it sleeps, so it
/// wakes with none and preempts: its slow wakeups are faster. (A 2 ms / 2 ms task runs
/// in slices alternating with the hog and sleeps with little lag: no difference.)
#[test]
fn delayed_dequeue_spends_negative_lag_during_the_sleep() {
    let run = |on: bool| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.12\"\nfeatures = {{ DELAY_DEQUEUE = {on} }}\n\
                 [[tasks]]\nname = \"hog\"\nprogram = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"b\"\nprogram = [{{ loop = {{ body = [{{ run = \"1ms\" }}, {{ sleep = \"3ms\" }}] }} }}]\n\
                 [run]\nduration_s = 5\n"
            ),
            1,
        );
        r.histograms["wakeup_latency"].p99_ns
    };
    let (with, without) = (run(true), run(false));
    assert!((with as f64) < 0.9 * without as f64, "p99 wakeup latency {with} ns with delayed dequeue vs {without} ns without");
}

/// Delayed dequeue inside a task group: bursty threads of one cgroup on two CPUs keep
/// running (every invariant checked after every event).
#[test]
fn delayed_dequeue_in_a_group_keeps_every_thread_running() {
    use schedlab_core::api::{run, RunOptions};
    let text = "[machine]\ntopo = { cores = 2 }\n[kernel]\nprofile = \"6.18\"\n[[groups]]\nname = \"g\"\n\
                [[tasks]]\nname = \"t\"\ncount = 4\ngroup = \"g\"\nprogram = [{ loop = { body = [{ run = \"2ms\" }, { sleep_exp = \"3ms\" }] } }]\n\
                [run]\nduration_s = 1.0\n";
    let s = common::scenario(text);
    let r = run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result;
    for t in &r.tasks {
        assert!(t.nr_wakeups > 100, "{}: {} wakeups, {} ns run", t.name, t.nr_wakeups, t.run_ns);
    }
}
