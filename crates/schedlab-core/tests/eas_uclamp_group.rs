//! Per-cgroup uclamp on the Pixel 6 (4 A55 of capacity 160, 2 A76, 2 X1 of 1024) with
//! schedutil and EAS: a group's cpu.uclamp.min/max restrict its tasks' clamps as the
//! kernel's uclamp_tg_restrict() does (the task's request clamped into the group's
//! effective [min, max]; the group's effective values capped by its parent's).

use crate::common;

use common::run_toml;
use schedlab_core::RunResult;

/// A small periodic task (156 us of work at 1024 every 10 ms, 10 % of an A55) from
/// CPU 0 in group `app` under `top` (`top`, `app`: their settings), `attr` for the task.
fn run(top: &str, app: &str, attr: &str) -> RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"schedutil\"\n\
             [[groups]]\nname = \"top\"\n{top}\n[[groups]]\nname = \"app\"\nparent = \"top\"\n{app}\n\
             [[tasks]]\nname = \"ui\"\ncpu = 0\ngroup = \"app\"\n{attr}program = [{{ loop = {{ body = [{{ run = \"156us\" }}, {{ periodic = {{ period = \"10ms\" }} }}] }} }}]\n\
             [run]\nduration_s = 2.0\nwarmup_s = 1.0\n"
        ),
        1,
    )
}

/// Busy share of CPUs `lo..hi` (A55 0-3, A76 4-5, X1 6-7).
fn share(r: &RunResult, lo: usize, hi: usize) -> f64 {
    let all: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
    r.cpus[lo..hi].iter().map(|c| c.busy_ns).sum::<u64>() as f64 / all.max(1) as f64
}

#[test]
fn a_groups_uclamp_restricts_its_tasks() {
    // cpu.uclamp.min = 100 % on the group and its parent: the task's min becomes 1024
    // (its request 0 clamped into [1024, 1024]) and EAS puts it on an X1.
    let boosted = run("uclamp_min = 100.0", "uclamp_min = 100.0", "");
    assert!(share(&boosted, 6, 8) > 0.9, "group min 100 %: X1 share {}", share(&boosted, 6, 8));
    // The same on the group alone: capped by the parent's effective min (0), so no
    // protection (cpu_util_update_eff()); the task stays on the A55s as with no clamp.
    let child_only = run("", "uclamp_min = 100.0", "");
    assert!(share(&child_only, 0, 4) > 0.9, "child min only: A55 share {}", share(&child_only, 0, 4));
    let plain = run("", "", "");
    assert!(share(&plain, 0, 4) > 0.9, "no clamp: A55 share {}", share(&plain, 0, 4));
    // The task asks for util_min 1024 but its group caps at 10 % (102): its effective
    // min is 102, which every CPU meets, so EAS places it by energy (an A76 at a low OPP
    // is cheaper than an A55 at the OPP 102 asks for), never on an X1; alone in the root
    // group the same request puts it on an X1.
    let capped = run("", "uclamp_max = 10.0", "sched_attr = { util_min = 1024 }\n");
    assert!(share(&capped, 6, 8) < 0.05, "group max 10 %: X1 share {}", share(&capped, 6, 8));
    let uncapped = run("", "", "sched_attr = { util_min = 1024 }\n");
    assert!(share(&uncapped, 6, 8) > 0.9, "no group max: X1 share {}", share(&uncapped, 6, 8));
}

#[test]
fn a_bad_group_uclamp_is_refused() {
    let toml = "[machine]\npreset = \"pixel6\"\n[kernel]\ngovernor = \"schedutil\"\n[[groups]]\nname = \"g\"\nuclamp_min = 120.0\n[[tasks]]\nname = \"t\"\ngroup = \"g\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n";
    let s = common::scenario(toml);
    let e = schedlab_core::api::run(&s, 1, &Default::default()).expect_err("refused").to_string();
    assert!(e.contains("groups[0].uclamp_min") && e.contains("0..100"), "{e}");
}
