//! The asymmetric wakeup path (select_idle_sibling()'s asym_fits_cpu() checks and
//! select_idle_capacity()) reads what the kernel reads on every governor: task_util_est()
//! and the task's effective uclamp_min/max (Pixel 6: 4 A55 of capacity 160, 2 A76 of
//! 498, 2 X1 of 1024). The performance governor (named: the phone's default is schedutil,
//! which brings EAS) and MISFIT off, so only the wakeup path places the task.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::trace::TraceEvent;

/// The CPUs the first task (pid 1) was switched onto, with the times.
fn switches(toml: &str) -> Vec<(u64, usize)> {
    let s = common::scenario(toml);
    let out = run(&s, 1, &RunOptions { trace: true, ..Default::default() }).unwrap();
    out.trace.unwrap().records.iter().filter_map(|r| matches!(r.event, TraceEvent::Switch { next: 1, .. }).then_some((r.ts, r.cpu))).collect()
}

/// A task runs 40 ms of work flat out on the A55s (256 ms at capacity 160: util_avg near
/// the A55's capacity, its util_est sampled there at the dequeue), opens its affinity to every CPU and sleeps
/// 150 ms: its util_avg decays by 2^(-150/32), to under 10, which fits an A55; its
/// util_est (over 128, fits_capacity()'s limit for 160) does not. At the wakeup
/// select_idle_capacity() reads task_util_est() (5.7+; the 6.2+ util_fits_cpu() form
/// too) and finds no A55 that fits: the task wakes on an idle A76 or X1. With UTIL_EST
/// off, the decayed util_avg fits the A55 it last ran on.
/// Returns the CPU of the wakeup after the sleep.
fn wake_after_sleep(profile: &str, features: &str) -> usize {
    let sw = switches(&format!(
        "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"{profile}\"\ngovernor = \"performance\"\n\
         features = {{ MISFIT = false{features} }}\n\
         [[tasks]]\nname = \"t\"\ncpu = 0\naffinity = \"0-3\"\nprogram = [{{ run = \"40ms\" }}, \
         {{ set_affinity = \"0-7\" }}, {{ sleep = \"150ms\" }}, {{ run = \"4ms\" }}, {{ sleep = \"1s\" }}]\n\
         [run]\nduration_s = 0.6\n"
    ));
    // The wakeup after the 150 ms sleep: the first switch in more than 100 ms.
    sw.windows(2).find(|w| w[1].0 - w[0].0 > 100_000_000).map(|w| w[1].1).expect("a wakeup after the sleep")
}

#[test]
fn util_est_wakes_a_decayed_task_on_a_cpu_it_fits() {
    for profile in ["5.10", "5.15", "6.1", "6.6", "6.18"] {
        let cpu = wake_after_sleep(profile, "");
        assert!(cpu >= 4, "{profile}: woke on A55 CPU {cpu}; its util_est does not fit an A55");
        let cpu = wake_after_sleep(profile, ", UTIL_EST = false");
        assert!(cpu < 4, "{profile}: without util_est woke on CPU {cpu}; the decayed util fits an A55");
    }
}

/// A small task (1 ms every 10 ms, util far under an A55's capacity) with uclamp_min =
/// 1024 started on A55 CPU 0: at each wakeup no A55 or A76 fits its clamp (6.3+:
/// util_fits_cpu() -1; 6.2: 0; 5.6-6.1: uclamp_task_util() = 1024 fits no CPU with the
/// margin, and select_idle_capacity() falls back to the largest capacity), so it wakes
/// on an X1 (CPUs 6-7) every time after its first. No EAS (performance governor).
/// Unclamped, it stays on the A55 it started on.
#[test]
fn uclamp_min_1024_wakes_on_the_biggest_idle_cpu() {
    let run = |profile: &str, attr: &str| {
        switches(&format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"{profile}\"\ngovernor = \"performance\"\nfeatures = {{ MISFIT = false }}\n\
             [[tasks]]\nname = \"ui\"\ncpu = 0\n{attr}program = [{{ loop = {{ body = [{{ run = \"1ms\" }}, {{ sleep = \"9ms\" }}] }} }}]\n\
             [run]\nduration_s = 0.3\n"
        ))
    };
    for profile in ["5.10", "5.15", "6.1", "6.6", "6.18"] {
        let boosted = run(profile, "sched_attr = { util_min = 1024 }\n");
        assert!(boosted.len() > 10, "{profile}: {} switches", boosted.len());
        let off_x1: Vec<_> = boosted[1..].iter().filter(|(_, c)| *c < 6).collect();
        assert!(off_x1.is_empty(), "{profile}: boosted wakeups off the X1s: {off_x1:?}");
        let plain = run(profile, "");
        assert!(plain.iter().all(|(_, c)| *c < 4), "{profile}: unclamped left the A55s: {plain:?}");
    }
}
