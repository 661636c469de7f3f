//! SCHED_BATCH and SCHED_IDLE in the fair class, and the class a forked child takes
//! (issue 35; sched/fair_policy.rs).

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::RunResult;

fn run_checked(toml: &str, seed: u64) -> RunResult {
    let s = common::scenario(toml);
    run(&s, seed, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result
}

const MS: u64 = 1_000_000;

fn task<'a>(r: &'a RunResult, name: &str) -> &'a schedlab_core::metrics::TaskStats {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

fn attr(policy: &str) -> String {
    if policy.is_empty() {
        String::new()
    } else {
        format!("sched_attr = {{ policy = \"{policy}\" }}\n")
    }
}

/// A SCHED_IDLE hog beside a nice-0 hog on one CPU gets WEIGHT_IDLEPRIO's share,
/// 3 / (1024 + 3) = 0.29 % (29 ms of 10 s), less than a nice-19 task's 1.4 % (146 ms).
#[test]
fn a_sched_idle_task_weighs_weight_idleprio() {
    for profile in ["5.15", "6.12"] {
        let r = run_checked(
            &format!(
                "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"idle\"\n{}program = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"normal\"\nprogram = [{{ run = \"100s\" }}]\n[run]\nduration_s = 10\n",
                attr("SCHED_IDLE")
            ),
            1,
        );
        let (idle, normal) = (common::run_ns(&r, "idle"), common::run_ns(&r, "normal"));
        assert!((5 * MS..100 * MS).contains(&idle), "{profile}: idle {idle} ns, normal {normal} ns in 10 s");
    }
}

/// A hog beside a task that runs 100 us every 10 ms on one CPU: how long the periodic
/// task waited for the CPU in 2 s (ns).
fn periodic_wait(profile: &str, hog: &str, periodic: &str, features: &str) -> u64 {
    let r = run_checked(
        &format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"{profile}\"\nfeatures = {{ {features} }}\n\
             [[tasks]]\nname = \"hog\"\n{}program = [{{ run = \"100s\" }}]\n\
             [[tasks]]\nname = \"periodic\"\n{}program = [{{ loop = {{ count = 1000000, body = [{{ run = \"100us\" }}, {{ sleep = \"10ms\" }}] }} }}]\n\
             [run]\nduration_s = 2\n",
            attr(hog),
            attr(periodic)
        ),
        1,
    );
    task(&r, "periodic").wait_ns
}

/// BATCH and IDLE wakees never preempt on wakeup: they wait for the hog's slice to end
/// at a tick, a normal wakee preempts at once.
#[test]
fn batch_and_idle_wakees_do_not_preempt() {
    for profile in ["5.15", "6.18"] {
        let normal = periodic_wait(profile, "", "", "");
        let batch = periodic_wait(profile, "", "SCHED_BATCH", "");
        let idle = periodic_wait(profile, "", "SCHED_IDLE", "");
        assert!(batch > 5 * normal && batch > 50 * MS, "{profile}: waited {batch} ns as BATCH, {normal} ns as NORMAL");
        assert!(idle > 5 * normal, "{profile}: waited {idle} ns as IDLE, {normal} ns as NORMAL");
    }
}

/// A non-idle wakee preempts a SCHED_IDLE task at once. Before 6.12 that test came
/// ahead of WAKEUP_PREEMPTION, so it holds with the feature off; from 6.12 (faa42d29419d)
/// it follows the feature test, so with the feature off the wakee waits for the tick.
#[test]
fn a_wakee_preempts_a_sched_idle_task_and_the_feature_order_follows_the_version() {
    let on_66 = periodic_wait("6.6", "SCHED_IDLE", "", "");
    let off_66 = periodic_wait("6.6", "SCHED_IDLE", "", "WAKEUP_PREEMPTION = false");
    let off_612 = periodic_wait("6.12", "SCHED_IDLE", "", "WAKEUP_PREEMPTION = false");
    let normal_off_66 = periodic_wait("6.6", "", "", "WAKEUP_PREEMPTION = false");
    assert!(off_66 < 2 * on_66 + MS, "6.6: feature off {off_66} ns, on {on_66} ns");
    assert!(normal_off_66 > 10 * off_66, "6.6 feature off: behind a normal hog {normal_off_66} ns, behind an idle one {off_66} ns");
    assert!(off_612 > 10 * off_66, "feature off: 6.12 {off_612} ns, 6.6 {off_66} ns");
}

/// select_idle_sibling() takes a CPU running only SCHED_IDLE tasks as idle: a task
/// woken on CPU 0, busy with a normal hog, moves to CPU 1 where only a SCHED_IDLE hog
/// runs; with a normal hog there it stays (both CPUs busy).
#[test]
fn a_cpu_running_only_sched_idle_tasks_counts_as_idle_for_wakeups() {
    let migrations = |second: &str| {
        let r = run_checked(
            &format!(
                "[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.6\"\n\
                 [[tasks]]\nname = \"hog0\"\naffinity = \"0\"\nprogram = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"hog1\"\naffinity = \"1\"\n{}program = [{{ run = \"100s\" }}]\n\
                 [[tasks]]\nname = \"periodic\"\ncpu = 0\nprogram = [{{ loop = {{ count = 1000000, body = [{{ run = \"100us\" }}, {{ sleep = \"10ms\" }}] }} }}]\n\
                 [run]\nduration_s = 1\n",
                attr(second)
            ),
            1,
        );
        task(&r, "periodic").nr_migrations
    };
    let to_idle = migrations("SCHED_IDLE");
    let to_normal = migrations("");
    // Once on CPU 1 it stays: CPU 1 is its prev and still counts as idle.
    assert!(to_idle >= 1 && to_normal == 0, "migrations: {to_idle} beside a SCHED_IDLE hog, {to_normal} beside a normal one");
}

/// A parent's children: run 1 s beside a fair hog on one CPU (no RT throttling), the
/// fair hog's CPU time in that second and the run's summary.
fn forked(parent_attr: &str) -> (u64, RunResult) {
    let r = run_checked(
        &format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.6\"\nfeatures = {{ RT_THROTTLING = false }}\n\
             [[tasks]]\nname = \"parent\"\nsched_attr = {{ {parent_attr} }}\nprogram = [{{ fork = {{ template = \"child\", count = 1 }} }}, \"wait_children\"]\n\
             [[tasks]]\nname = \"fair\"\nstart = \"1ms\"\nprogram = [{{ run = \"100s\" }}]\n\
             [[templates]]\nname = \"child\"\nprogram = [{{ run = \"1s\" }}]\n\
             [run]\nduration_s = 1\n"
        ),
        1,
    );
    (common::run_ns(&r, "fair"), r)
}

/// sched_fork(): the child of a SCHED_FIFO parent is SCHED_FIFO and starves the fair
/// hog; with reset-on-fork it is SCHED_NORMAL and shares the CPU; a deadline parent's
/// fork fails with EAGAIN.
#[test]
fn forked_children_take_their_parents_class_unless_reset_on_fork() {
    let (fair, r) = forked("policy = \"SCHED_FIFO\", priority = 10");
    assert!(fair < MS, "beside a FIFO child the fair hog ran {fair} ns");
    assert!(common::run_ns(&r, "child-0") > 990 * MS);
    let (fair, _) = forked("policy = \"SCHED_FIFO\", priority = 10, reset_on_fork = true");
    assert!(fair > 400 * MS, "beside a reset-on-fork child the fair hog ran {fair} ns");
    let (fair, r) = forked("policy = \"SCHED_DEADLINE\", runtime = \"1ms\", period = \"10ms\"");
    assert_eq!(r.summary.get("fork_eagain"), Some(&1.0), "{:?}", r.summary);
    assert!(r.tasks.iter().all(|t| t.name != "child-0") && fair > 990 * MS - 2 * MS, "fair {fair}");
}

/// Bad input: SCHED_IDLE with a priority names the field and what it expects.
#[test]
fn sched_idle_with_a_priority_is_refused() {
    let toml = "[machine]\ntopo = { cores = 1 }\n[[tasks]]\nname = \"a\"\nsched_attr = { policy = \"SCHED_IDLE\", priority = 5 }\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1\n";
    let e = schedlab_core::Scenario::from_toml_str(toml, "idle.toml").expect_err("refused").to_string();
    assert!(e.contains("idle.toml") && e.contains("tasks[0].sched_attr.priority") && e.contains("SCHED_IDLE: expected none"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}
