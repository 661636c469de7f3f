//! EEVDF mechanisms seen from a run: delayed dequeue (6.12+).

mod common;

use common::run_toml;

/// A task running 2 ms and sleeping 2 ms beside a hog on one CPU often goes to sleep
/// with negative lag. Without DELAY_DEQUEUE it keeps that lag through the sleep and
/// wakes behind; with it (and DELAY_ZERO) the lag is spent while it sleeps, so it wakes
/// with none and its slow wakeups are faster.
#[test]
fn delayed_dequeue_spends_negative_lag_during_the_sleep() {
    let run = |on: bool| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.12\"\nfeatures = {{ DELAY_DEQUEUE = {on} }}\n\
                 [[tasks]]\nname = \"hog\"\nprogram = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"b\"\nprogram = [{{ loop = {{ body = [{{ run = \"2ms\" }}, {{ sleep = \"2ms\" }}] }} }}]\n\
                 [run]\nduration_s = 5\n"
            ),
            1,
        );
        r.histograms["wakeup_latency"].p99_ns
    };
    let (with, without) = (run(true), run(false));
    assert!((with as f64) < 0.9 * without as f64, "p99 wakeup latency {with} ns with delayed dequeue vs {without} ns without");
}
