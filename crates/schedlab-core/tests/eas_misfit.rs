//! Misfit on the Pixel 6 (4 A55 of capacity 160, 2 A76, 2 X1) under schedutil reads what
//! the kernel's task_fits_cpu() reads: the task's clamps (util_fits_cpu(), 6.2+: a
//! uclamp_max at or under the CPU's capacity fits) and util_est.

mod common;

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
