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

/// The package state needs every core of its socket in CC6 (AMD PPR: "when all of the
/// cores of a socket are in CC6, then the L3s are flushed"): a socket running one hog
/// per CCX never enters PC6, with or without the kernel's background, while the idle
/// socket beside it does (and the background's wakeups take it out and back in: more
/// than one residency). DF C-states off leaves no package state to report.
#[test]
fn a_socket_running_one_task_per_ccx_never_reaches_package_c6() {
    let m = schedlab_core::topology::presets::preset("zen3-2s").expect("preset");
    let first_of_each_ccx: Vec<String> = m.llcs_of_socket(0).map(|l| m.llc_span[l].iter().next().expect("cpus").to_string()).collect();
    assert!(first_of_each_ccx.len() > 1, "zen3-2s has several CCXs per socket");
    let hogs: String = first_of_each_ccx
        .iter()
        .enumerate()
        .map(|(i, cpu)| format!("[[tasks]]\nname = \"hog{i}\"\naffinity = \"{cpu}\"\nprogram = [{{ run = \"10s\" }}]\n"))
        .collect();
    let toml = |extra: &str| format!("[machine]\npreset = \"zen3-2s\"\n{extra}{hogs}[run]\nduration_s = 2.5\n");
    for bg in ["", "[kernel]\nbackground = \"kernel\"\n"] {
        let r = run_checked(&toml(bg), 1);
        assert_eq!(r.packages.len(), 2, "one entry per socket");
        let (busy, idle) = (&r.packages[0], &r.packages[1]);
        assert_eq!((busy.state.as_str(), busy.entries, busy.time_ns), ("PC6", 0, 0), "the socket with a hog per CCX ({bg:?})");
        assert!(idle.entries >= 1 && idle.time_ns > 2_000_000_000, "the idle socket sleeps: {idle:?} ({bg:?})");
        if !bg.is_empty() {
            assert!(idle.entries > 2, "vmstat's kworkers wake the idle socket every second: {idle:?}");
        }
    }
    let off = run_checked(&toml("[machine.firmware]\npackage_cstates = false\n"), 1);
    assert!(off.packages.is_empty(), "no package state with DF C-states off");
}

/// The background's tasks never end: a run `until = "workload_done"` ends when the
/// workload's tasks have (at the same instant as on the silent machine, give or take the
/// background's few microseconds), and a workload that deadlocks is still found
/// deadlocked, naming only its own tasks, though the kworkers' timers keep the machine busy.
#[test]
fn the_background_neither_keeps_a_finished_workload_running_nor_hides_a_deadlock() {
    let done = "[machine]\ntopo = { cores = 2 }\n[kernel]\nbackground = \"kernel\"\n\
                [[tasks]]\nname = \"w\"\ncount = 2\nprogram = [{ run = \"30ms\" }, { sleep = \"20ms\" }, { run = \"30ms\" }]\n\
                [run]\nuntil = \"workload_done\"\n";
    let r = run_checked(done, 1);
    assert_eq!(r.engine.stopped_by, "workload_done");
    assert!((80_000_000..81_000_000).contains(&r.engine.sim_ns), "ended at {} ns", r.engine.sim_ns);
    let deadlock = "[machine]\ntopo = { cores = 2 }\n[kernel]\nbackground = \"kernel\"\n\
                    [[tasks]]\nname = \"a\"\nprogram = [{ wait = \"b-done\" }, { signal = \"a-done\" }]\n\
                    [[tasks]]\nname = \"b\"\nprogram = [{ wait = \"a-done\" }, { signal = \"b-done\" }]\n[run]\nuntil = \"workload_done\"\n";
    let r = run_checked(deadlock, 1);
    assert_eq!(r.engine.stopped_by, "deadlock");
    assert_eq!(r.engine.blocked, vec!["a waits on channel 'b-done'", "b waits on channel 'a-done'"]);
}

const PROFILE: &str = "[kernel.background_profile]\norigin = \"estimate: a test's\"\n\
    [[kernel.background_profile.source]]\nname = \"daemon\"\nwakeups_per_s = 50.0\nrun_us = 200.0\ntasks = 2\n\
    [[kernel.background_profile.source]]\nname = \"kthread/N\"\nwakeups_per_s = 10.0\nrun_us = 20.0\nper_cpu = true\n";

/// A profile's sources wake at their rates and run their means, through the normal
/// paths: 2 daemons sharing 50 wakeups a second of 200 us each, and a per-CPU thread
/// waking 10 times a second on each CPU, pinned there. Each thread's cycle is its mean
/// sleep plus its mean run, so the counts sit a little under rate x time; the bounds are
/// about 5 Poisson standard deviations.
#[test]
fn a_profiles_sources_wake_at_their_rates_and_run_their_means() {
    let toml = format!(
        "[machine]\ntopo = {{ cores = 2 }}\n{PROFILE}[[tasks]]\nname = \"idle\"\nprogram = [{{ sleep = \"100s\" }}]\n[run]\nduration_s = 20.0\n"
    );
    let r = run_checked(&toml, 3);
    let daemons: Vec<_> = r.tasks.iter().filter(|t| t.name.starts_with("daemon#")).collect();
    assert_eq!(daemons.len(), 2);
    let wakeups: u64 = daemons.iter().map(|t| t.nr_wakeups).sum();
    // 20 s / (40 ms + 0.2 ms) per thread x 2 = 995.
    assert!((840..=1150).contains(&wakeups), "the daemons woke {wakeups} times in 20 s (expected ~995)");
    let run: u64 = daemons.iter().map(|t| t.run_ns).sum();
    let per_wakeup = run as f64 / wakeups as f64;
    assert!((160_000.0..=240_000.0).contains(&per_wakeup), "a daemon's wakeup ran {per_wakeup} ns (expected ~200 us)");
    for cpu in 0..2 {
        let k = task(&r, &format!("kthread/N#{cpu}"));
        assert!((130..=270).contains(&k.nr_wakeups), "kthread #{cpu} woke {} times (expected ~200)", k.nr_wakeups);
        assert_eq!(k.nr_migrations, 0, "a per-CPU thread stays on its CPU");
    }
    // The same seed gives the same background.
    assert_eq!(
        run_checked(&toml, 3).tasks.iter().map(|t| t.nr_wakeups).collect::<Vec<_>>(),
        r.tasks.iter().map(|t| t.nr_wakeups).collect::<Vec<_>>()
    );
}

/// A profile's threads are daemons: a run until workload_done ends with the scenario's
/// own task, and a SCHED_FIFO source preempts a fair hog at once.
#[test]
fn a_profiles_threads_neither_keep_the_run_going_nor_wait_behind_a_hog_when_fifo() {
    let toml = "[machine]\ntopo = { cores = 1 }\n[kernel.background_profile]\norigin = \"estimate: a test's\"\n\
        [[kernel.background_profile.source]]\nname = \"irqthread\"\nwakeups_per_s = 200.0\nrun_us = 30.0\nfifo_priority = 50\n\
        [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"2s\" }]\n[run]\nuntil = \"workload_done\"\n";
    let r = run_checked(toml, 1);
    let hog = task(&r, "hog");
    assert!(hog.exit_ns.is_some_and(|e| e < 2_100_000_000), "the run ended with the hog: {:?}", hog.exit_ns);
    let irq = task(&r, "irqthread#0");
    assert!(irq.nr_wakeups > 300, "it woke {} times in ~2 s", irq.nr_wakeups);
    assert!(irq.wait_ns < irq.nr_wakeups * 20_000, "a FIFO thread waited {} ns over {} wakeups behind a fair hog", irq.wait_ns, irq.nr_wakeups);
}

/// A profile's bad figure is refused naming its field.
#[test]
fn a_bad_profile_figure_is_refused_naming_its_field() {
    let base = "[machine]\ntopo = { cores = 1 }\n[kernel.background_profile]\norigin = \"estimate\"\n\
        [[kernel.background_profile.source]]\nname = \"d\"\nwakeups_per_s = RATE\nrun_us = 10.0\n\
        [[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n";
    let err = schedlab_core::scenario::Scenario::from_toml_str(&base.replace("RATE", "0.0"), "t.toml").expect_err("a zero rate");
    assert!(err.to_string().contains("kernel.background_profile.source[0].wakeups_per_s"), "{err}");
    assert!(schedlab_core::scenario::Scenario::from_toml_str(&base.replace("RATE", "5.0"), "t.toml").is_ok());
    let no_origin = base.replace("RATE", "5.0").replace("origin = \"estimate\"", "origin = \" \"");
    let err = schedlab_core::scenario::Scenario::from_toml_str(&no_origin, "t.toml").expect_err("no origin");
    assert!(err.to_string().contains("kernel.background_profile.origin"), "{err}");
}

/// The run's latency histograms are the scenario's tasks' (cyclictest measures its own
/// threads): a lone periodic thread's 2,000 timed wakeups are the timer histogram's
/// samples with the profile's daemons sleeping on timers beside it, and its wakeup
/// histogram has no more samples than the silent machine's.
#[test]
fn the_latency_histograms_leave_the_background_out() {
    let toml = |bg: &str| {
        format!(
            "[machine]\ntopo = {{ cores = 2 }}\n{bg}[[tasks]]\nname = \"cyclic\"\nprogram = [{{ loop = {{ count = 2000, body = [{{ run = \"5us\" }}, {{ periodic = {{ period = \"1ms\" }} }}] }} }}]\n[run]\nuntil = \"workload_done\"\n"
        )
    };
    let silent = run_checked(&toml(""), 2);
    let busy = run_checked(&toml(&format!("[kernel]\nbackground = \"kernel\"\n{PROFILE}")), 2);
    assert!(busy.tasks.iter().filter(|t| t.name.starts_with("daemon#")).map(|t| t.nr_wakeups).sum::<u64>() > 50, "the daemons ran");
    assert_eq!(silent.histograms["timer_latency"].count, 2000);
    assert_eq!(busy.histograms["timer_latency"].count, 2000);
    assert_eq!(busy.histograms.get("wakeup_latency").map(|h| h.count), silent.histograms.get("wakeup_latency").map(|h| h.count));
}

/// kcompactd (5.9+, proactive compaction): one thread per NUMA node, on the node's CPUs,
/// waking every 500 ms from schedule_timeout() to read the fragmentation score; before
/// 5.9 it only woke when asked, so a 5.4 machine has none.
#[test]
fn kcompactd_wakes_twice_a_second_on_each_node_from_5_9() {
    let toml = |profile: &str| {
        format!(
            "[machine]\ntopo = {{ sockets = 2, cores = 2 }}\n[kernel]\nprofile = \"{profile}\"\nbackground = \"kernel\"\n\
             [[tasks]]\nname = \"idle\"\nprogram = [{{ sleep = \"100s\" }}]\n[run]\nduration_s = 10.0\n"
        )
    };
    let r = run_checked(&toml("6.6"), 1);
    for node in 0..2 {
        let k = task(&r, &format!("kcompactd{node}"));
        assert!((19..=20).contains(&k.nr_wakeups), "kcompactd{node} woke {} times in 10 s", k.nr_wakeups);
    }
    let old = run_checked(&toml("5.4"), 1);
    assert!(old.tasks.iter().all(|t| !t.name.starts_with("kcompactd")), "no proactive compaction before 5.9");
}
