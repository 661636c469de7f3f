//! The ext class (sched_ext) with the policies written here (scx_simple, scx_central),
//! against the kernel's semantics: slices end at the tick, keep-prev, weighted vtime,
//! the central CPU feeding every CPU, cpu_release when RT takes a CPU, partial mode.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::RunResult;

const MS: u64 = 1_000_000;

/// Runs with every invariant checked after every event (the class's own among them:
/// each runnable ext task counted once on its CPU and on one DSQ, running, or held by
/// the scheduler).
fn run_checked(toml: &str, seed: u64) -> RunResult {
    let s = common::scenario(toml);
    run(&s, seed, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result
}

fn scenario(cores: usize, scheduler: &str, tasks: &str, seconds: f64) -> String {
    format!(
        "[machine]\ntopo = {{ cores = {cores} }}\n[kernel]\nprofile = \"6.12\"\nsched_ext = {{ scheduler = \"{scheduler}\" }}\n{tasks}[run]\nduration_s = {seconds}\n"
    )
}

fn hogs(n: usize) -> String {
    format!("[[tasks]]\nname = \"hog\"\ncount = {n}\nprogram = [{{ run = \"100s\" }}]\n")
}

/// Two CPU hogs on one CPU under scx_simple: each keeps the CPU for its whole 20 ms
/// slice (SCX_SLICE_DFL), which ends at the first tick after it runs out (HZ 250: a
/// 4 ms tick, so turns of 20-24 ms), where EEVDF's 3 ms slices switch ~7x as often.
#[test]
fn a_slice_ends_at_the_tick_after_it_runs_out() {
    let r = run_checked(&scenario(1, "simple", &hogs(2), 2.0), 1);
    let switches: u64 = r.tasks.iter().map(|t| t.nr_switches).sum();
    let ran: u64 = r.tasks.iter().map(|t| t.run_ns).sum();
    let turn = ran / switches;
    assert!((20 * MS..=25 * MS).contains(&turn), "mean turn {} ms over {switches} switches", turn as f64 / 1e6);
    assert!(r.summary["scx_slice_expired"] >= switches as f64 - 2.0, "{:?}", r.summary);
    let eevdf =
        common::run_toml(&format!("[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.12\"\n{}[run]\nduration_s = 2.0\n", hogs(2)), 1);
    let eevdf_switches: u64 = eevdf.tasks.iter().map(|t| t.nr_switches).sum();
    assert!(eevdf_switches > 4 * switches, "EEVDF {eevdf_switches} switches, ext {switches}");
}

/// A task alone on its CPU is kept: balance_one() finds nothing else and, without
/// SCX_OPS_ENQ_LAST, keeps the runnable prev (its slice refilled), with no switch.
#[test]
fn a_lone_runnable_prev_keeps_its_cpu() {
    let r = run_checked(&scenario(1, "simple", &hogs(1), 1.0), 1);
    assert_eq!(r.tasks[0].nr_switches, 1, "switched in once, never out");
    assert!(r.summary["scx_keep_last"] > 40.0, "kept at each slice's end: {:?}", r.summary);
    assert!(r.tasks[0].run_ns > 990 * MS);
}

/// scx_simple's vtime is charged at 100 / weight, but the kernel dispatches before it
/// re-enqueues the task whose slice ended (balance_one() runs before put_prev_task()):
/// two hogs on one CPU alternate whatever their weights, the other one always being
/// the shared DSQ's only task. With three light hogs beside the heavy one (nice -5:
/// weight 3121, scx weight 305) the heavy one runs several turns in a row.
#[test]
fn vtime_shares_follow_the_weights_once_the_dsq_has_a_choice() {
    let heavy = "[[tasks]]\nname = \"heavy\"\nnice = -5\nprogram = [{ run = \"100s\" }]\n";
    let light = |n: usize| format!("[[tasks]]\nname = \"light\"\ncount = {n}\nprogram = [{{ run = \"100s\" }}]\n");
    let r = run_checked(&scenario(1, "simple", &format!("{heavy}{}", light(1)), 4.0), 1);
    let ratio = common::run_ns(&r, "heavy") as f64 / r.tasks.iter().filter(|t| t.name != "heavy").map(|t| t.run_ns).sum::<u64>() as f64;
    assert!((0.95..1.05).contains(&ratio), "two hogs: heavy/light {ratio}");
    let r = run_checked(&scenario(1, "simple", &format!("{heavy}{}", light(3)), 6.0), 1);
    let lights: Vec<u64> = r.tasks.iter().filter(|t| t.name != "heavy").map(|t| t.run_ns).collect();
    let ratio = common::run_ns(&r, "heavy") as f64 / (lights.iter().sum::<u64>() as f64 / 3.0);
    assert!(ratio > 1.8, "heavy/light {ratio} with three light hogs");
    // FIFO mode shares alike whatever the weights.
    let r = run_checked(&scenario(1, "simple_fifo", &format!("{heavy}{}", light(3)), 6.0), 1);
    let ratio = common::run_ns(&r, "heavy") as f64 / (r.tasks.iter().filter(|t| t.name != "heavy").map(|t| t.run_ns).sum::<u64>() as f64 / 3.0);
    assert!((0.9..1.1).contains(&ratio), "FIFO heavy/light {ratio}");
}

/// scx_central: CPU 0 dispatches for all; one dispatch of the central CPU fills every
/// CPU that asked (several inserts kept), so 8 hogs on 4 CPUs keep all 4 busy, every hog
/// runs, and the run is deterministic.
#[test]
fn the_central_cpu_feeds_every_cpu() {
    let toml = scenario(4, "central", &hogs(8), 1.0);
    let r = run_checked(&toml, 3);
    for t in &r.tasks {
        assert!(t.run_ns > 100 * MS, "{} ran {} ms", t.name, t.run_ns / MS);
    }
    for c in &r.cpus {
        assert!(c.busy_ns as f64 > 0.95e9, "CPU {} busy {} ms", c.cpu, c.busy_ns / MS);
    }
    assert!(r.summary["scx_ops_timer"] > 900.0, "the 1 ms timer runs: {:?}", r.summary);
    assert!(r.summary["scx_kick_preempts"] > 0.0);
    let again = run_checked(&toml, 3);
    assert_eq!(serde_json::to_value(&r.tasks).unwrap(), serde_json::to_value(&again.tasks).unwrap());
}

/// An RT task taking a CPU from an ext task calls ops.cpu_release(), and the class gets
/// the CPU back (ops.cpu_acquire()) at its next balance; the preempted task returns to
/// its local DSQ's head with its slice left.
#[test]
fn rt_taking_a_cpu_releases_it_from_the_class() {
    let tasks = format!(
        "{}[[tasks]]\nname = \"rt\"\nsched_attr = {{ policy = \"SCHED_FIFO\", priority = 50 }}\nprogram = [{{ loop = {{ body = [{{ run = \"1ms\" }}, {{ sleep = \"9ms\" }}] }} }}]\n",
        hogs(1)
    );
    let r = run_checked(&scenario(1, "simple", &tasks, 1.0), 1);
    let releases = r.summary["scx_cpu_release"];
    assert!((90.0..=101.0).contains(&releases), "{releases} releases for ~100 RT runs");
    assert!((r.summary["scx_cpu_acquire"] - releases).abs() <= 1.0);
    let hog = common::run_ns(&r, "hog") as f64 / 1e9;
    assert!((0.85..0.92).contains(&hog), "hog ran {hog} s beside 10 % of RT");
}

/// SCX_OPS_SWITCH_PARTIAL: only SCHED_EXT tasks join; a fair hog runs above them, so an
/// ext hog on the same single CPU gets nothing while the fair one runs.
#[test]
fn partial_mode_takes_only_sched_ext_tasks() {
    let toml = "[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.12\"\nsched_ext = { scheduler = \"simple\", switch_partial = true }\n\
                [[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
                [[tasks]]\nname = \"ext\"\nsched_attr = { policy = \"SCHED_EXT\" }\nprogram = [{ run = \"100s\" }]\n[run]\nduration_s = 1.0\n";
    let r = run_checked(toml, 1);
    assert!(common::run_ns(&r, "fair") > 990 * MS);
    assert_eq!(common::run_ns(&r, "ext"), 0);
    // Without a scheduler, SCHED_EXT is fair: the two share.
    let r = run_checked(&toml.replace("sched_ext = { scheduler = \"simple\", switch_partial = true }\n", ""), 1);
    let ext = common::run_ns(&r, "ext") as f64 / 1e9;
    assert!((0.45..0.55).contains(&ext), "{ext}");
}

/// A wakeup on a machine with idle CPUs goes to an idle CPU by the default selection
/// and is dispatched there directly (no ops.enqueue); on a busy one it goes through
/// ops.enqueue. Every task of a pipe-like ping-pong runs.
#[test]
fn wakeups_take_idle_cpus_directly() {
    let tasks = "[[tasks]]\nname = \"w\"\ncount = 4\nprogram = [{ loop = { body = [{ run = \"200us\" }, { sleep = \"800us\" }] } }]\n";
    let r = run_checked(&scenario(8, "simple", tasks, 0.5), 1);
    assert!(r.summary["scx_direct_dispatch"] > 1500.0, "{:?}", r.summary);
    assert!(r.summary["scx_enqueue"] < r.summary["scx_direct_dispatch"] / 10.0);
    for t in &r.tasks {
        assert!(t.nr_switches > 400, "{}: {}", t.name, t.nr_switches);
    }
}

/// sched_ext needs 6.12; an unknown scheduler names the known ones.
#[test]
fn bad_sched_ext_tables_are_refused() {
    let s = common::scenario("[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.6\"\nsched_ext = { scheduler = \"simple\" }\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1\n");
    let e = run(&s, 1, &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("kernel.sched_ext") && e.contains("6.12"), "{e}");
    let s = common::scenario("[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.12\"\nsched_ext = { scheduler = \"bpfland\" }\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1\n");
    let e = run(&s, 1, &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("kernel.sched_ext.scheduler") && e.contains("simple, simple_fifo, central"), "{e}");
}

/// The watchdog: an ext task starved past timeout_ms (30 s) ejects the scheduler
/// (SCX_EXIT_ERROR_STALL, found at the pass every 15 s after the bound) and every task
/// of the class runs under fair from then on. Here a fair hog starves a SCHED_EXT hog on
/// one CPU in partial mode: no CPU time for 45 s, then half of what is left.
#[test]
fn a_starved_task_ejects_the_scheduler_and_fair_takes_over() {
    let toml = "[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.12\"\nsched_ext = { scheduler = \"simple\", switch_partial = true }\n\
                [[tasks]]\nname = \"fair\"\nprogram = [{ run = \"100s\" }]\n\
                [[tasks]]\nname = \"ext\"\nsched_attr = { policy = \"SCHED_EXT\" }\nprogram = [{ run = \"100s\" }]\n[run]\nduration_s = 60.0\n";
    let r = run_checked(toml, 1);
    assert_eq!(r.summary["scx_exit_kind"], 1026.0, "{:?}", r.warnings);
    assert!(r.warnings.iter().any(|w| w.contains("ejected at 45.000000 s") && w.contains("failed to run for 45")), "{:?}", r.warnings);
    let ext = common::run_ns(&r, "ext") as f64 / 1e9;
    assert!((7.0..8.0).contains(&ext), "the ext task ran {ext} s, expected half of the last 15 s");
}

/// A task of the class running when the scheduler is ejected moves to fair when its CPU
/// puts it: on CPU 1 an ext hog runs on, now under fair; on CPU 0 the starved one shares.
#[test]
fn a_running_task_moves_to_fair_at_its_next_put() {
    let toml = "[machine]\ntopo = { cores = 2 }\n[kernel]\nprofile = \"6.12\"\nsched_ext = { scheduler = \"simple\", switch_partial = true }\n\
                [[tasks]]\nname = \"fair\"\naffinity = \"0\"\nprogram = [{ run = \"100s\" }]\n\
                [[tasks]]\nname = \"starved\"\naffinity = \"0\"\nsched_attr = { policy = \"SCHED_EXT\" }\nprogram = [{ run = \"100s\" }]\n\
                [[tasks]]\nname = \"runner\"\naffinity = \"1\"\nsched_attr = { policy = \"SCHED_EXT\" }\nprogram = [{ run = \"100s\" }]\n[run]\nduration_s = 60.0\n";
    let r = run_checked(toml, 1);
    assert_eq!(r.summary["scx_exit_kind"], 1026.0, "{:?}", r.warnings);
    let starved = common::run_ns(&r, "starved") as f64 / 1e9;
    assert!((7.0..8.0).contains(&starved), "the starved task ran {starved} s");
    let runner = common::run_ns(&r, "runner") as f64 / 1e9;
    assert!(runner > 59.9, "the runner ran {runner} s across the ejection");
}
