//! Asymmetric capacity (Pixel 6: 4 A55 of capacity 160, 2 A76 of 498, 2 X1 of 1024) and
//! the cluster level (Kunpeng 920). The Pixel 6 runs the performance governor here (its
//! default is schedutil, which brings EAS): misfit and the wakeup path alone place tasks.

use crate::common;

use common::run_toml;

fn pixel6(features: &str, tasks: &str, seconds: f64) -> schedlab_core::RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"performance\"\nfeatures = {{ {features} }}\n{tasks}\n[run]\nduration_s = {seconds}\n"
        ),
        1,
    )
}

/// A CPU-bound task started on a little CPU becomes a misfit as its utilization grows
/// past 160 / 1.25 and is moved to a big CPU by active balance; without misfit handling
/// (before 4.20) nothing moves it: the big CPUs see an idle-free but not overloaded
/// little CPU.
#[test]
fn a_misfit_task_moves_to_a_big_cpu() {
    let task = "[[tasks]]\nname = \"hog\"\ncpu = 0\nprogram = [{ run = \"1000s\" }]";
    let work = |r: &schedlab_core::RunResult| r.tasks[0].work_done_ns as f64 / r.engine.sim_ns as f64;
    let with = pixel6("", task, 1.0);
    let without = pixel6("MISFIT = false", task, 1.0);
    assert!(with.tasks[0].nr_migrations >= 1, "misfit: moved off the A55");
    assert!(work(&with) > 0.8, "runs at big-core speed most of the second: {}", work(&with));
    assert_eq!(without.tasks[0].nr_migrations, 0);
    assert!(work(&without) < 0.2, "stuck on the A55 (capacity 160): {}", work(&without));
}

/// A task with a large utilization waking while every CPU is idle goes to a CPU it
/// fits (select_idle_capacity), not back to the little CPU it last ran on.
#[test]
fn a_big_task_wakes_on_a_cpu_it_fits() {
    // 20 ms of work at capacity 1024, then 1 ms asleep: utilization near 1024 wherever
    // it runs; it starts on CPU 0 (an A55).
    let task = "[[tasks]]\nname = \"b\"\ncpu = 0\nprogram = [{ loop = { body = [{ run = \"20ms\" }, { sleep = \"1ms\" }] } }]";
    let with = pixel6("MISFIT = false", task, 1.0);
    let without = pixel6("MISFIT = false, SIS_ASYM_CAPACITY = false", task, 1.0);
    let work = |r: &schedlab_core::RunResult| r.tasks[0].work_done_ns as f64 / r.engine.sim_ns as f64;
    assert!(work(&with) > 2.0 * work(&without), "{} vs {}", work(&with), work(&without));
}

/// Kunpeng 920 (CLS level, 5.16+): four hogs started on the four cores of one cluster
/// are spread over clusters, since at the MC level each cluster is a group; without the
/// level each core is a group and one task per core is already balanced.
#[test]
fn the_cluster_level_spreads_tasks_over_clusters() {
    let run = |features: &str| {
        let mut tasks = String::new();
        for i in 0..4 {
            tasks += &format!("[[tasks]]\nname = \"h{i}\"\ncpu = {i}\naffinity = \"0-31\"\nprogram = [{{ run = \"1000s\" }}]\n");
        }
        let r = run_toml(
            &format!(
                "[machine]\npreset = \"kunpeng-920-2s\"\n[kernel]\nprofile = \"6.6\"\nfeatures = {{ {features} }}\n{tasks}[run]\nduration_s = 0.5\n"
            ),
            1,
        );
        r.tasks.iter().map(|t| t.nr_migrations).sum::<u64>()
    };
    assert!(run("") >= 2, "spread over clusters");
    assert_eq!(run("SCHED_CLUSTER = false"), 0, "already one per core");
}
