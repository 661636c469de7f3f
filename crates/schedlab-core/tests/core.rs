//! The simulation core's analytic cases, invariants and determinism (issue: core).

use crate::common;

use common::{run_ns, run_toml, scenario};
use schedlab_core::api::{run, RunOptions};
use schedlab_core::trace::TraceEvent;

fn hogs(profile: &str, cpus: &str, extra: &str) -> String {
    format!(
        r#"
[machine]
topo = {{ cores = 4 }}
[kernel]
profile = "{profile}"
[[tasks]]
name = "a"
affinity = "{cpus}"
program = [{{ run = "100s" }}]
[[tasks]]
name = "b"
affinity = "{cpus}"
{extra}
program = [{{ run = "100s" }}]
[run]
duration_s = 1.0
"#
    )
}

#[test]
fn one_cpu_bound_task_is_never_preempted_or_migrated() {
    for profile in ["5.15", "6.6"] {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ llcs = 2, cores = 4, smt = 2 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"hog\"\nprogram = [{{ run = \"10s\" }}]\n[run]\nduration_s = 2.0\n"
            ),
            1,
        );
        let t = &r.tasks[0];
        assert_eq!(t.nr_migrations, 0, "{profile}");
        assert_eq!(t.nr_switches, 1, "{profile}: switched in once and never out");
        assert_eq!(t.run_ns, 2_000_000_000, "{profile}");
        assert_eq!(t.wait_ns, 0, "{profile}");
    }
}

#[test]
fn two_equal_hogs_split_one_cpu_evenly() {
    for profile in ["5.15", "6.6"] {
        let r = run_toml(&hogs(profile, "0", ""), 1);
        let (a, b) = (run_ns(&r, "a") as f64, run_ns(&r, "b") as f64);
        assert!((a + b - 1e9).abs() < 1e3, "{profile}: the CPU is always busy");
        assert!((a / (a + b) - 0.5).abs() < 0.01, "{profile}: a={a} b={b}");
        assert!(r.cpus[1].busy_ns == 0, "{profile}: CPU 1 stays idle");
    }
}

#[test]
fn nice_levels_split_by_weight() {
    for profile in ["5.15", "6.6"] {
        let r = run_toml(&hogs(profile, "0", "nice = 5"), 1);
        let (a, b) = (run_ns(&r, "a") as f64, run_ns(&r, "b") as f64);
        let expected = 1024.0 / (1024.0 + 335.0);
        assert!((a / (a + b) - expected).abs() / expected < 0.02, "{profile}: share {} vs {expected}", a / (a + b));
    }
}

#[test]
fn load_balance_spreads_2n_tasks_started_on_one_cpu() {
    for profile in ["5.15", "6.6"] {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 8 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"hog\"\ncount = 16\ncpu = 0\nprogram = [{{ run = \"100s\" }}]\n[run]\nduration_s = 2.0\n"
            ),
            1,
        );
        let per_cpu: Vec<usize> = r.cpus.iter().map(|c| c.nr_running_end).collect();
        assert_eq!(per_cpu, vec![2; 8], "{profile}");
    }
}

#[test]
fn a_pinned_task_never_runs_elsewhere() {
    let s = scenario(
        "[machine]\ntopo = { cores = 4 }\n[[tasks]]\nname = \"pinned\"\naffinity = \"2\"\n\
         program = [{ loop = { count = 200, body = [{ run = \"1ms\" }, { sleep = \"1ms\" }] } }]\n\
         [[tasks]]\nname = \"other\"\ncount = 6\nprogram = [{ loop = { body = [{ run_exp = \"2ms\" }, { sleep_exp = \"1ms\" }] } }]\n\
         [run]\nduration_s = 2.0\n",
    );
    let out = run(&s, 3, &RunOptions { trace: true, ..Default::default() }).unwrap();
    let trace = out.trace.unwrap();
    let mut seen = 0;
    for r in &trace.records {
        if let TraceEvent::Switch { next: 1, .. } = r.event {
            assert_eq!(r.cpu, 2);
            seen += 1;
        }
    }
    // Its 200 rounds done (the run is long enough for them behind six others).
    assert!(seen >= 200, "{seen} switches in");
    assert_eq!(out.result.tasks[0].nr_migrations, 0);
}

#[test]
fn same_scenario_and_seed_give_identical_results() {
    let toml = "[machine]\ntopo = { llcs = 2, cores = 4, smt = 2 }\n\
                [workload]\nkind = \"make\"\nparams = { jobs = 16, units = 300, unit_mean = \"5ms\" }\n\
                [run]\nuntil = \"workload_done\"\n";
    let strip = |mut r: schedlab_core::RunResult| {
        r.engine.wall_ns = 0;
        serde_json::to_string(&r).unwrap()
    };
    let a = strip(run_toml(toml, 9));
    let b = strip(run_toml(toml, 9));
    let c = strip(run_toml(toml, 10));
    assert_eq!(a, b);
    assert_ne!(a, c, "another seed draws other job lengths");
}

#[test]
fn make_job_finishes_and_reports_its_figures() {
    let r = run_toml(
        "[machine]\ntopo = { llcs = 2, cores = 4, smt = 2 }\n\
         [workload]\nkind = \"make\"\nparams = { jobs = 16, units = 400, unit_mean = \"10ms\" }\n\
         [run]\nuntil = \"workload_done\"\n",
        1,
    );
    assert_eq!(r.engine.stopped_by, "workload_done");
    assert_eq!(r.tasks.len(), 401);
    let makespan = r.workload["makespan_s"];
    let cpu_pct = r.workload["cpu_pct"];
    // 400 × 10 ms on 16 CPUs: at least 0.25 s, and the CPUs cannot exceed 1600 %.
    assert!((0.25..0.6).contains(&makespan), "makespan {makespan}");
    assert!(cpu_pct > 1000.0 && cpu_pct <= 1600.0, "cpu% {cpu_pct}");
}

#[test]
fn pingpong_wakes_through_the_normal_path() {
    let r = run_toml(
        "[machine]\ntopo = { cores = 4, smt = 2 }\n[workload]\nkind = \"pingpong\"\nparams = { pairs = 2, rounds = 500 }\n[run]\nuntil = \"workload_done\"\n",
        1,
    );
    assert_eq!(r.engine.stopped_by, "workload_done");
    // 2 pairs × 500 rounds × 2 hand-offs; a signal sent before its reader first
    // blocks is banked in the pipe instead of waking it.
    assert!(r.summary["wakeups"] >= 1990.0);
    assert_eq!(r.histograms["wakeup_latency"].count as f64, r.summary["wakeups"]);
    assert!(r.workload["round_trip_us"] > 4.0, "two 2 µs runs per round");
}

#[test]
fn traces_open_as_perfetto_json_and_ftrace_text() {
    let s = scenario(
        "[machine]\ntopo = { cores = 2 }\n[workload]\nkind = \"pingpong\"\nparams = { pairs = 1, rounds = 20 }\n[run]\nuntil = \"workload_done\"\n",
    );
    let out = run(&s, 1, &RunOptions { trace: true, ..Default::default() }).unwrap();
    let trace = out.trace.unwrap();
    let mut json = Vec::new();
    trace.write_perfetto_json(&mut json).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let slices: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(slices.len() >= 40, "one slice per run of ping or pong");
    // Slices sit on the task's own thread track (tid = pid), their CPU in args.
    assert!(slices.iter().all(|e| e["tid"] == e["args"]["pid"] && e["args"]["cpu"].as_u64().unwrap() < 2 && e["dur"].as_f64().unwrap() >= 0.0));
    // Perfetto fills its CPU scheduling tracks from the embedded ftrace text.
    let sys = doc["systemTraceEvents"].as_str().unwrap();
    assert!(sys.lines().filter(|l| l.contains("sched_switch:")).count() >= 40);
    let mut text = Vec::new();
    trace.write_ftrace(&mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let switch = text.lines().find(|l| l.contains("sched_switch:")).unwrap();
    assert!(switch.contains("prev_comm=") && switch.contains("==> next_comm="), "{switch}");
    assert!(text.lines().any(|l| l.contains("sched_waking: comm=pong0 pid=2 prio=120 target_cpu=")));
}

#[test]
fn piped_make_units_wake_their_assembler_through_a_private_pipe() {
    let r = run_toml(
        "[machine]\ntopo = { llcs = 2, cores = 4, smt = 2 }\n\
         [workload]\nkind = \"make\"\nparams = { jobs = 16, units = 200, unit_mean = \"5ms\", pipe_chunks = 4 }\n\
         [run]\nuntil = \"workload_done\"\n",
        1,
    );
    assert_eq!(r.engine.stopped_by, "workload_done");
    // make + (gcc, cc1, as) per unit.
    assert_eq!(r.tasks.len(), 1 + 3 * 200);
    // Each `as` reads exactly the 4 chunks its own cc1 wrote: nobody else's pipe.
    for t in r.tasks.iter().filter(|t| t.name.starts_with("as")) {
        assert!(t.exit_ns.is_some(), "{} finished", t.name);
        assert!(t.nr_wakeups <= 4, "{} woke {} times", t.name, t.nr_wakeups);
    }
    let woken: u64 = r.tasks.iter().filter(|t| t.name.starts_with("as")).map(|t| t.nr_wakeups).sum();
    assert!(woken > 200, "the assemblers sleep on their pipes: {woken} wakeups");
}

/// SMT contention (`machine.cost.smt_slowdown`): pinned to the two threads of one core,
/// a 5 ms and a 10 ms task each run at 1/1.6 of their speed while both run. The short
/// one ends at 5 x 1.6 = 8 ms, having let the long one do 8 / 1.6 = 5 ms of its work;
/// the long one then runs its last 5 ms alone at full speed and ends at 13 ms. Without
/// contention (the default) they end at 5 and 10 ms; a task alone on its core is never
/// slowed.
#[test]
fn smt_siblings_slow_each_other_only_while_both_run() {
    let ends = |cost: &str, second: &str| {
        let r = run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 2, smt = 2 }}\n{cost}[kernel]\nprofile = \"6.6\"\n\
                 [[tasks]]\nname = \"long\"\naffinity = \"0\"\nprogram = [{{ run = \"10ms\" }}]\n\
                 [[tasks]]\nname = \"short\"\naffinity = \"{second}\"\nprogram = [{{ run = \"5ms\" }}]\n\
                 [run]\nuntil = \"workload_done\"\n"
            ),
            1,
        );
        let end = |name: &str| r.tasks.iter().find(|t| t.name == name).unwrap().exit_ns.unwrap() as f64 / 1e6;
        (end("long"), end("short"))
    };
    let slowed = "cost = { smt_slowdown = 1.6 }\n";
    let near = |got: (f64, f64), want: (f64, f64)| (got.0 - want.0).abs() < 0.1 && (got.1 - want.1).abs() < 0.1;
    // CPUs 0 and 2 are the two threads of core 0 (x86 numbering: siblings n and n + cores).
    let (same_core, other_core) = ("2", "1");
    assert!(near(ends("", same_core), (10.0, 5.0)), "{:?}", ends("", same_core));
    assert!(near(ends(slowed, same_core), (13.0, 8.0)), "{:?}", ends(slowed, same_core));
    assert!(near(ends(slowed, other_core), (10.0, 5.0)), "{:?}", ends(slowed, other_core));
}

/// Under SMT contention on a crowded SMT machine, the invariants hold after every event,
/// and every task's work lies between its user time slowed throughout ((run - sys) /
/// slowdown) and its CPU time (never slowed); the same seed gives the same run.
#[test]
fn smt_contention_keeps_invariants_and_bounds_work_by_cpu_time() {
    let toml = "[machine]\ntopo = { llcs = 2, cores = 4, smt = 2 }\ncost = { smt_slowdown = 1.5 }\n[kernel]\nprofile = \"6.6\"\n\
                [[tasks]]\nname = \"w\"\ncount = 24\nprogram = [{ loop = { body = [{ run_exp = \"300us\" }, { sleep_exp = \"200us\" }] } }]\n\
                [run]\nduration_s = 0.2\n";
    let s = scenario(toml);
    let opts = RunOptions { check_invariants: true, ..Default::default() };
    let r = run(&s, 3, &opts).unwrap().result;
    let (mut work, mut cpu) = (0.0, 0.0);
    for t in &r.tasks {
        let (w, c, sys) = (t.work_done_ns as f64, t.run_ns as f64, t.sys_ns as f64);
        assert!(w <= c && w >= (c - sys) / 1.5 - 1.0, "{}: work {w} against CPU time {c} (system {sys})", t.name);
        work += w;
        cpu += c;
    }
    // 24 tasks on 16 threads: siblings are often busy together, so work falls short.
    assert!(work < 0.95 * cpu, "work {work} of CPU time {cpu}");
    let tasks = |r: &schedlab_core::RunResult| serde_json::to_string(&r.tasks).unwrap();
    assert_eq!(tasks(&run(&s, 3, &opts).unwrap().result), tasks(&r));
}

/// Every processed event is counted under exactly one kind (stale generations apart;
/// `inline`, the events the exact elision served from the queue's head slot, counts some
/// of them again), and a run/sleep workload spends them on step ends, timers and
/// reschedules.
#[test]
fn events_by_kind_add_up_to_the_events() {
    let s = schedlab_core::Scenario::from_toml_str(
        "[machine]\ntopo = { sockets = 1, llcs = 1, cores = 8, smt = 1 }\n[[tasks]]\nname = \"w\"\ncount = 16\n\
         program = [{ loop = { body = [{ run = \"500us\" }, { sleep = \"500us\" }] } }]\n[run]\nduration_s = 0.2\n",
        "<test>",
    )
    .unwrap();
    let r = schedlab_core::api::run(&s, 1, &Default::default()).unwrap().result;
    let by_kind = &r.engine.events_by_kind;
    let inline = by_kind.get("inline").copied().unwrap_or(0);
    assert_eq!(by_kind.values().sum::<u64>() - inline, r.engine.events, "{by_kind:?}");
    assert!(inline < r.engine.events, "{by_kind:?}");
    for k in ["segment_end", "hrtimer", "resched", "tick"] {
        assert!(by_kind.get(k).copied().unwrap_or(0) > 0, "{k}: {by_kind:?}");
    }
}
