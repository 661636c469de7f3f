//! The kernel's background on a machine (`[kernel] background = "kernel"`, issue 48):
//! vmstat kworkers and watchdog stoppers run through the normal paths.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::RunResult;

fn run_checked(toml: &str, seed: u64) -> RunResult {
    let s = common::scenario(toml);
    run(&s, seed, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).result
}

fn task<'a>(r: &'a RunResult, name: &str) -> &'a schedlab_core::metrics::TaskStats {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}"))
}

/// At watchdog_thresh 10 the watchdog's sample period is 4 s: each CPU's stopper
/// (SCHED_FIFO 99) runs softlockup_fn every 4 s and preempts the hog there; the CPU's
/// kworker runs vmstat_update once a second, queued behind the hog until its slice ends.
#[test]
fn the_stopper_preempts_a_hog_every_4_s_and_vmstat_runs_every_second() {
    let toml = "[machine]\ntopo = { cores = 1 }\n[kernel]\nbackground = \"kernel\"\n\
                [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"100s\" }]\n[run]\nduration_s = 20.0\n";
    let r = run_checked(toml, 1);
    // Each task's first switch-in is its start, to its first sleep; the rest are its runs.
    let stopper = task(&r, "migration/0");
    assert!((4..=5).contains(&(stopper.nr_switches - 1)), "stopper ran {} times in 20 s", stopper.nr_switches - 1);
    let kworker = task(&r, "kworker/0:1");
    assert!((19..=20).contains(&(kworker.nr_switches - 1)), "vmstat ran {} times in 20 s", kworker.nr_switches - 1);
    // Every stopper run took the CPU from the hog at once (a wakeup latency of the IPI-free
    // local wake, well under the 3 ms a fair wakee could wait).
    assert!(stopper.wait_ns < stopper.nr_switches * 50_000, "stopper waited {} ns", stopper.wait_ns);
    let hog = task(&r, "hog");
    assert!(hog.run_ns > 19_900_000_000, "the background's share is tiny: hog ran {} ns", hog.run_ns);
    // Without the background the same run is the silent machine: the hog alone.
    let silent = common::run_toml(&toml.replace("background = \"kernel\"\n", ""), 1);
    assert_eq!(silent.tasks.len(), 1);
    assert_eq!(silent.tasks[0].nr_switches, 1);
}

/// The headline: tbench at 32 clients on zen3-2s never runs a newidle
/// load_balance() on the silent machine (no CPU ever holds two tasks, so the root
/// domain's overload flag stays clear and every newidle pass is skipped); with the
/// kernel's kworkers waking on busy CPUs, the flag gets set and newidle balances run.
#[test]
fn tbench_on_zen3_balances_at_newidle_with_the_kernels_background() {
    let toml = |bg: &str| {
        format!(
            "[machine]\npreset = \"zen3-2s\"\n[kernel]\nprofile = \"6.6\"\n{bg}[workload]\nkind = \"dbench_pairs\"\nparams = {{ pairs = 32 }}\n[run]\nduration_s = 1.5\n"
        )
    };
    let silent = common::run_toml(&toml(""), 1);
    let busy = common::run_toml(&toml("background = \"kernel\"\n"), 1);
    assert_eq!(silent.summary.get("newidle_lb_llc").copied().unwrap_or(0.0), 0.0, "the silent machine");
    assert!(busy.summary.get("newidle_lb_llc").copied().unwrap_or(0.0) > 0.0, "with the background: {:?}", busy.summary.get("newidle_lb_llc"));
}
