//! Misfit on the Pixel 6 (4 A55 of capacity 160, 2 A76, 2 X1) under schedutil reads what
//! the kernel's task_fits_cpu() reads: the task's clamps (util_fits_cpu(), 6.2+: a
//! uclamp_max at or under the CPU's capacity fits) and util_est.

use crate::common;

use common::run_toml;
use schedlab_core::RunResult;

/// A flat-out task started on A55 CPU 0 (`attr`: its sched_attr), beside a hog pinned
/// to A55 CPU 3 that keeps the root domain overutilized, so load balance runs.
fn run(profile: &str, attr: &str) -> RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"{profile}\"\ngovernor = \"schedutil\"\n\
             [[tasks]]\nname = \"busy\"\ncpu = 0\n{attr}program = [{{ loop = {{ body = [{{ run = \"10ms\" }}] }} }}]\n\
             [[tasks]]\nname = \"hog\"\ncpu = 3\naffinity = \"3\"\nprogram = [{{ loop = {{ body = [{{ run = \"10ms\" }}] }} }}]\n\
             [run]\nduration_s = 2.0\nwarmup_s = 0.5\n"
        ),
        1,
    )
}

/// uclamp_max = 100 keeps a flat-out task on an A55 (util 160 does not fit 160 with the
/// margin, but its clamp 100 is under the A55's capacity: util_fits_cpu() says it fits,
/// so it is no misfit); unclamped, the same task is a misfit and is pulled to a bigger CPU.
/// 5.9-6.1 clamp the util before the margin (100 fits too); 5.4's misfit ignored the
/// clamps, so there the capped task is pulled as well.
#[test]
fn uclamp_max_keeps_a_busy_task_off_misfit() {
    let a55 = |r: &RunResult| r.cpus[0..3].iter().map(|c| c.busy_ns).sum::<u64>() as f64 / 1.5e9;
    let old = run("5.4", "sched_attr = { util_max = 100 }\n");
    assert!(a55(&old) < 0.05, "5.4: capped: A55s 0-2 busy {}", a55(&old));
    for profile in ["5.15", "6.6", "6.18"] {
        let capped = run(profile, "sched_attr = { util_max = 100 }\n");
        let plain = run(profile, "");
        assert!(a55(&capped) > 0.95, "{profile}: capped: A55s 0-2 busy {}", a55(&capped));
        assert!(a55(&plain) < 0.05, "{profile}: plain: A55s 0-2 busy {}", a55(&plain));
    }
}

/// util_est in misfit (task_fits_cpu() reads task_util_est() since misfit came in 4.20,
/// 3b1baa6496e6; 6.18.35's task_fits_cpu() still does): a task that ran flat out on A55
/// CPU 0 (util near 160, util_est sampled there when it sleeps), sleeps 150 ms (its
/// util_avg decays by 2^(-150/32), to under 10) and wakes on CPU 0, where it was pinned,
/// then opens its affinity to every CPU and runs 4 ms of work. Its util_est (about 150,
/// at or over fits_capacity()'s 128 for the A55) makes it a misfit at the next tick and
/// an idle big CPU pulls it; with UTIL_EST off its decayed util fits the A55 and the run
/// stays there, its util far from 128 for the whole run (it grows at a quarter of
/// PELT's rate under schedutil, from under 10). EAS off, so only misfit moves it
/// (every run keeps util_est). The same on 5.4, 6.6 and 6.18.
/// Returns (wake time, time of the first switch onto a big CPU after it).
fn after_sleep(profile: &str, features: &str) -> (u64, Option<u64>) {
    let s = common::scenario(&format!(
        "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"{profile}\"\ngovernor = \"schedutil\"\n\
         features = {{ ENERGY_AWARE = false{features} }}\n\
         [[tasks]]\nname = \"t\"\ncpu = 0\naffinity = \"0\"\nprogram = [{{ run = \"40ms\" }}, {{ sleep = \"150ms\" }}, \
         {{ set_affinity = \"0-7\" }}, {{ run = \"4ms\" }}, {{ sleep = \"1s\" }}]\n\
         [run]\nduration_s = 1.0\n"
    ));
    let sw = common::switches_into(&s, 1);
    // The wakeup after the 150 ms sleep: the first switch in more than 100 ms.
    let wake = sw.windows(2).find(|w| w[1].0 - w[0].0 > 100_000_000).map(|w| w[1]).expect("a wakeup after the sleep");
    assert_eq!(wake.1, 0, "{profile}{features}: woke on CPU {}", wake.1);
    (wake.0, sw.iter().find(|(t, c)| *t > wake.0 && *c >= 4).map(|(t, _)| *t))
}

#[test]
fn util_est_makes_a_decayed_task_a_misfit() {
    for profile in ["5.4", "6.6", "6.18"] {
        let (wake, moved) = after_sleep(profile, "");
        let moved = moved.unwrap_or_else(|| panic!("{profile}: never left the A55"));
        // The next tick on CPU 0 flags the misfit and kicks an idle big CPU, whose
        // balance pushes it at once (need_active_balance()): within two jiffies at HZ 250
        // (measured: 130 us, a tick that fell just after the wakeup).
        assert!(moved - wake <= 8_000_000, "{profile}: moved {} us after the wake", (moved - wake) / 1000);
        let (_, stayed) = after_sleep(profile, ", UTIL_EST = false");
        assert!(stayed.is_none(), "{profile}: without util_est it left at {stayed:?}");
    }
}
