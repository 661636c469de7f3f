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

/// 6.18's update_curr() reschedules once the current task's protected slice is over
/// (`resched || !protect_slice(curr)`), and the pick decides. A hog alone on its CPU
/// loses its protection at its first deadline (and a pick that keeps it running does
/// not renew it: pick_next_task_fair() sets only entities that change). A sleeper
/// woken with zero lag ties the hog on eligibility and loses on deadline, so
/// wakeup_preempt() keeps the hog; the hog's next update_curr() (its clock read, 3 us
/// later) reschedules, the hog is then past V and the sleeper runs. Without the rule
/// the sleeper waits for the hog's deadline, half a slice on average.
#[test]
fn an_unprotected_current_task_is_rescheduled_at_its_next_update() {
    let run = |features: &str| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.18\"\ntunables = {{ hz = 250 }}\nfeatures = {{ {features} }}\n\
                 [[tasks]]\nname = \"hog\"\ncputime_poll = \"3us\"\nprogram = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"b\"\nprogram = [{{ loop = {{ body = [{{ run = \"100us\" }}, {{ sleep = \"5ms\" }}] }} }}]\n\
                 [run]\nduration_s = 2\n"
            ),
            1,
        );
        let h = &r.histograms["wakeup_latency"];
        (h.p90_ns, h.count)
    };
    let (with, n) = run("");
    let (without, m) = run("RESCHED_NEXT_SLICE = false, PREEMPT_SHORT = false");
    eprintln!("p90 {with} ns ({n} wakeups) with the rule, {without} ns ({m}) without");
    assert!(n > 300 && m > 300, "{n} / {m} wakeups");
    assert!(with < 30_000, "p90 wakeup latency {with} ns: the hog should go at its next clock read");
    assert!(without > 100_000, "p90 wakeup latency {without} ns: without the rule the sleeper waits for the hog's deadline");
}

/// A pick that keeps the current task running does not renew its slice protection:
/// pick_next_task_fair() calls set_next_entity() (set_protect_slice()) only for the
/// entities that change. Without delayed dequeue the sleeper keeps the negative lag
/// of its 100 us run (-50 us) and wakes behind V: the hog, unprotected, is
/// rescheduled at each clock read and picked again until the sleeper is eligible, 100
/// us of the hog's run later. Had the re-pick renewed the protection, the sleeper
/// would wait for the hog's deadline, anywhere in the 0.7 ms slice.
#[test]
fn picking_the_current_task_again_does_not_renew_its_protection() {
    let r = run_toml(
        "[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.18\"\ntunables = { hz = 250 }\nfeatures = { DELAY_DEQUEUE = false }\n\
         [[tasks]]\nname = \"hog\"\ncputime_poll = \"3us\"\nprogram = [{ run = \"100s\" }]\n\
         [[tasks]]\nname = \"b\"\nprogram = [{ loop = { body = [{ run = \"100us\" }, { sleep = \"5ms\" }] } }]\n\
         [run]\nduration_s = 2\n",
        1,
    );
    let h = &r.histograms["wakeup_latency"];
    eprintln!("wakeup latency p20 {} p50 {} p90 {} ns over {}", h.p20_ns, h.p50_ns, h.p90_ns, h.count);
    assert!(h.count > 300, "{} wakeups", h.count);
    assert!((80_000..=130_000).contains(&h.p20_ns) && h.p90_ns < 130_000, "the sleeper runs once eligible: p20 {} p90 {} ns", h.p20_ns, h.p90_ns);
}
