//! Properties over random scenarios, every invariant family checked after every event:
//!
//! | family | where it is checked |
//! |---|---|
//! | task conservation (no task lost, none on two runqueues) | `Simulator::check_invariants` |
//! | one CPU per running task (and task_cpu matches) | `Simulator::check_invariants` |
//! | CPU-time conservation (busy + idle = time; task time = busy time) | here, at the end |
//! | quota conservation per period (use between refills within the pool) | `bw_check_window` |
//! | cid uniqueness (no two running threads of one mm share a cid) | `MmCidState::check_invariants` |
//! | every armed timer fires once (wheel and hrtimers) | `Timers::check`, `Hrtimers::check` |
//! | tmigr migrator invariants (a migrator per active group) | `Tmigr::check` |
//! | liveness (no runnable task stalls beyond its scenario's bound) | `common::liveness_bound`, at the end |
//!
//! and determinism (a second run gives the same figures). CI runs 48 scenarios; the
//! long mode runs many more, across every preset and profile. Their runs are short
//! (50 ms), so the liveness bound fits inside few of them; `bandwidth_liveness` draws
//! small limited groups on 1-4 CPUs for 1 s, where it fits for most tasks (a task that
//! never runs is caught there).
//!
//! ```text
//! SCHEDLAB_LONG_PROPTEST=10000 cargo test --release -p schedlab-core --test integration -- properties:: --nocapture
//! ```
//!
//! It prints its seed first (and again with any failure); `SCHEDLAB_PROPTEST_SEED=N`
//! replays a run, with the failing scenario's text shrunk by proptest.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use schedlab_core::api::{run, RunOptions};
use schedlab_core::topology::presets::PRESET_NAMES;
use schedlab_core::Scenario;

use crate::common;

/// One profile per era the model distinguishes (bandwidth expiry modes, burst, CFS and
/// EEVDF, mm_cid and its cache-local form, the timer pull model), and the range's ends.
const PROFILES: &[&str] =
    &["3.0", "3.10", "3.16", "4.14", "4.18", "5.4", "5.10", "5.14", "5.15", "6.1", "6.4", "6.5", "6.6", "6.9", "6.12", "6.13", "6.18", "7.0"];

fn step() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..3000).prop_map(|us| format!("{{ run = \"{us}us\" }}")),
        (1u32..3000).prop_map(|us| format!("{{ run_exp = \"{us}us\" }}")),
        (1u32..5000).prop_map(|us| format!("{{ sleep = \"{us}us\" }}")),
        (0u32..3).prop_map(|c| format!("{{ signal = \"ch{c}\" }}")),
        (0u32..3).prop_map(|c| format!("{{ wait = \"ch{c}\" }}")),
        Just("{ lock = \"m\" }, { run = \"50us\" }, { unlock = \"m\" }".to_string()),
        Just("{ fork = { template = \"child\" } }".to_string()),
        (1u32..20).prop_map(|ms| format!("{{ sleep_timeout = \"{ms}ms\" }}")),
        (1u32..50, any::<bool>(), any::<bool>()).prop_map(|(ms, pinned, def)| format!(
            "{{ mod_timer = {{ timer = \"w\", delay = \"{ms}ms\", pinned = {pinned}, deferrable = {def}, signal = \"ch1\" }} }}"
        )),
        Just("{ del_timer = \"w\" }".to_string()),
        (1u32..10).prop_map(|ms| format!("{{ wait_timeout = {{ channel = \"ch2\", timeout = \"{ms}ms\" }} }}")),
        (500u32..5000).prop_map(|us| format!("{{ periodic = {{ period = \"{us}us\" }} }}")),
        (1u32..32, any::<bool>()).prop_map(|(kib, cid)| format!(
            "{{ touch_area = {{ bytes = {}, index = \"{}\" }} }}",
            kib * 1024,
            if cid { "mm_cid" } else { "cpu_id" }
        )),
    ]
}

fn machine() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (1usize..3, 1usize..3, 1usize..4, 1usize..3).prop_map(|(sockets, llcs, cores, smt)| format!(
            "topo = {{ sockets = {sockets}, llcs = {llcs}, cores = {cores}, smt = {smt} }}"
        )),
        1 => prop::sample::select(PRESET_NAMES).prop_map(|p| format!("preset = \"{p}\"")),
    ]
}

type TaskDraw = (Vec<String>, usize, bool, i32, bool);

fn scenario() -> impl Strategy<Value = String> {
    let task = (prop::collection::vec(step(), 1..5), 1usize..4, any::<bool>(), -5i32..6, any::<bool>());
    let tasks = prop::collection::vec(task, 1..5);
    // The pull model forced on most of the time, so its hierarchy gets about half the
    // scenarios (and the push model the rest).
    let pull = prop_oneof![3 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)];
    let migration = prop_oneof![4 => Just(true), 1 => Just(false)];
    let kernel = (prop::sample::select(PROFILES), any::<bool>(), migration, 0usize..4, pull);
    let groups = (1u64..40, 1u64..5, any::<bool>(), 0u64..3);
    (machine(), kernel, tasks, groups).prop_map(|(machine, (profile, teo, migration, timers, pull), tasks, groups)| {
        render(&machine, profile, teo, migration, timers, pull, &tasks, groups)
    })
}

#[allow(clippy::too_many_arguments)]
fn render(
    machine: &str,
    profile: &str,
    teo: bool,
    migration: bool,
    timers: usize,
    pull: Option<bool>,
    tasks: &[TaskDraw],
    groups: (u64, u64, bool, u64),
) -> String {
    // mm_cid on every profile (the allocator's invariants hold whatever the policy);
    // the timer pull model as the profile has it, or forced either way.
    let pull = pull.map_or(String::new(), |p| format!(", TIMER_PULL = {p}"));
    let mut s = format!(
        "[machine]\n{machine}\n[kernel]\nprofile = \"{profile}\"\nfeatures = {{ MM_CID = true{pull} }}\n\
         tunables = {{ cpuidle_governor = \"{}\", timer_migration = {} }}\n",
        if teo { "teo" } else { "menu" },
        migration as u8
    );
    for t in 0..timers {
        s += &format!(
            "[[timers]]\nname = \"k{t}\"\nperiod = \"{}ms\"\nper_cpu = {}\ndeferrable = {}\nwork = \"3us\"\n",
            [3, 7, 20, 1][t],
            t % 2 == 1,
            t == 2
        );
    }
    // A group with a quota (5.14+: sometimes a burst), and a child with its own quota and
    // weight (a group entity under a limited one).
    let (quota_ms, period_mult, nested, burst) = groups;
    // At most one CPU's worth: a quota beyond the whole machine is refused as a typo.
    let period_us = quota_ms * 1000 * period_mult;
    s += &format!("[[groups]]\nname = \"g\"\ncfs_quota_us = {}\ncfs_period_us = {}\n", quota_ms * 1000, period_us.min(1_000_000));
    if burst > 0 && profile != "3.0" {
        s += &format!("cfs_burst_us = {}\n", quota_ms * 1000 * burst / 3);
    }
    if nested {
        s += "[[groups]]\nname = \"h\"\nparent = \"g\"\ncpu_max = \"2000 10000\"\ncpu_weight = 300\n";
    }
    for (i, (steps, count, pinned, nice, shared)) in tasks.iter().enumerate() {
        let group = match i % 3 {
            0 => "group = \"g\"\n",
            1 if nested => "group = \"h\"\n",
            _ => "",
        };
        s += &format!(
            "[[tasks]]\nname = \"t{i}\"\ncount = {count}\nnice = {nice}\n{}{group}{}program = [{{ loop = {{ body = [{}, {{ run = \"10us\" }}] }} }}]\n",
            if *pinned { "affinity = \"0\"\n" } else { "" },
            if *shared { "process = \"p\"\n" } else { "" },
            steps.join(", ")
        );
    }
    // Threads of one process touching per-cid data: the cid family in every scenario.
    s += "[[tasks]]\nname = \"rseq\"\ncount = 3\nprocess = \"p\"\nprogram = [{ loop = { body = [{ touch_area = { bytes = 4096, index = \"mm_cid\" } }, { run = \"200us\" }, { sleep = \"300us\" }] } }]\n";
    s += "[[templates]]\nname = \"child\"\nprogram = [{ run_exp = \"200us\" }, { signal = \"ch0\" }]\n";
    // Every channel has a signaller: a wait nothing signals is a scenario error.
    s += "[[tasks]]\nname = \"signaller\"\nprogram = [{ loop = { body = [{ sleep = \"1ms\" }, { signal = \"ch1\" }, { signal = \"ch2\" }] } }]\n";
    s += "[run]\nduration_s = 0.05\n";
    s
}

/// (cases, seed): 48 cases by default; SCHEDLAB_LONG_PROPTEST=N runs N (10,000 if N is
/// not a number above 1); SCHEDLAB_PROPTEST_SEED replays a run.
fn config() -> (u32, u64, bool) {
    let long = std::env::var("SCHEDLAB_LONG_PROPTEST").ok();
    let cases = long.as_deref().map_or(48, |v| v.parse().ok().filter(|&n| n > 1).unwrap_or(10_000));
    let seed = std::env::var("SCHEDLAB_PROPTEST_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        if long.is_some() {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
        } else {
            0x5eed // CI: the same 48 scenarios every time
        }
    });
    (cases, seed, long.is_some())
}

#[derive(Default)]
struct Tally {
    scenarios: AtomicU64,
    events: AtomicU64,
    quota_periods: AtomicU64,
    cid_scenarios: AtomicU64,
    timer_scenarios: AtomicU64,
    tmigr_scenarios: AtomicU64,
    /// Tasks whose liveness bound was shorter than their run (a check that could fail).
    live_tasks: AtomicU64,
}

#[test]
fn random_scenarios_keep_every_invariant() {
    let (cases, seed, long) = config();
    eprintln!("properties: {cases} scenarios, SCHEDLAB_PROPTEST_SEED={seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let cfg = Config { cases, failure_persistence: None, max_shrink_iters: 2000, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(cfg, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let tally = Tally::default();
    let wall = Instant::now();
    let outcome = runner.run(&scenario(), |text| {
        let s = Scenario::from_toml_str(&text, "<prop>").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let checked = RunOptions { check_invariants: true, ..Default::default() };
        let out = run(&s, 5, &checked).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let live = common::assert_liveness(&s, &out).map_err(TestCaseError::fail)?;
        tally.live_tasks.fetch_add(live as u64, Relaxed);
        let a = out.result;
        let end = a.engine.sim_ns;
        for c in &a.cpus {
            prop_assert_eq!(c.busy_ns + c.idle_ns, end, "CPU {} time is conserved", c.cpu);
        }
        let ran: u64 = a.tasks.iter().map(|t| t.run_ns).sum();
        let busy: u64 = a.cpus.iter().map(|c| c.busy_ns).sum();
        prop_assert_eq!(ran, busy, "every busy ns belongs to one task");
        let b = run(&s, 5, &RunOptions::default()).map_err(|e| TestCaseError::fail(e.to_string()))?.result;
        prop_assert_eq!(serde_json::to_value(&a.tasks).unwrap(), serde_json::to_value(&b.tasks).unwrap());
        prop_assert_eq!(a.engine.events, b.engine.events);
        tally.scenarios.fetch_add(1, Relaxed);
        tally.events.fetch_add(a.engine.events, Relaxed);
        tally.quota_periods.fetch_add(a.groups.iter().map(|g| g.nr_periods).sum(), Relaxed);
        let get = |k: &str| a.summary.get(k).copied().unwrap_or(0.0);
        if a.features.get("MM_CID") == Some(&true) {
            tally.cid_scenarios.fetch_add(1, Relaxed);
        }
        if get("timer_expiries") + get("hrtimer_expiries") > 0.0 {
            tally.timer_scenarios.fetch_add(1, Relaxed);
        }
        if a.features.get("TIMER_PULL") == Some(&true) && a.kernel.tunables.timer_migration && a.nr_cpus > 1 {
            tally.tmigr_scenarios.fetch_add(1, Relaxed);
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}\nreplay with SCHEDLAB_LONG_PROPTEST={cases} SCHEDLAB_PROPTEST_SEED={seed}");
    }
    if long {
        eprintln!(
            "properties: {} scenarios passed (seed {seed}), {} events, {:.0} s wall; every scenario checked task conservation, \
             one CPU per running task, CPU-time conservation, quota windows ({} bandwidth periods), cid uniqueness ({} with mm_cid), \
             timer accounting ({} with expiries), tmigr ({} on the pull model's hierarchy), liveness ({} tasks with a bound \
             inside their run)",
            tally.scenarios.load(Relaxed),
            tally.events.load(Relaxed),
            wall.elapsed().as_secs_f64(),
            tally.quota_periods.load(Relaxed),
            tally.cid_scenarios.load(Relaxed),
            tally.timer_scenarios.load(Relaxed),
            tally.tmigr_scenarios.load(Relaxed),
            tally.live_tasks.load(Relaxed),
        );
    }
}

/// Scenarios the long run once broke, each in `tests/property-regressions/` with the
/// fix noted at its head, run over a few seeds with every invariant checked after every
/// event.
#[test]
fn property_regressions_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/property-regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    assert!(!files.is_empty(), "no scenarios in {}", dir.display());
    for path in files {
        let name = path.display().to_string();
        let s = Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap(), &name).unwrap_or_else(|e| panic!("{e}"));
        for seed in 1..=8 {
            if let Err(e) = common::check_liveness(&s, seed) {
                panic!("{name}, seed {seed}: {e}");
            }
        }
    }
}

/// Small limited groups on 1-4 CPUs, 1 s each: quota 1-10 ms, period 1-5 quotas, the
/// bandwidth slice 1-6 ms, 2-6 threads of {run; sleep} in the group and 0-2 outside it,
/// equal nice. Every invariant after every event, and the liveness bound.
fn bandwidth_scenario() -> impl Strategy<Value = String> {
    let machine = (1usize..5, 1usize..3);
    let kernel = (prop::sample::select(PROFILES), prop::sample::select(&[100u32, 250, 1000][..]), 1u64..7);
    let limit = (1u64..11, 1u64..6);
    let thread = (100u32..3000, 0u32..10_000);
    let threads = (prop::collection::vec(thread.clone(), 2..7), prop::collection::vec(thread, 0..3));
    (machine, kernel, limit, threads).prop_map(|((cores, smt), (profile, hz, slice_ms), (quota_ms, mult), (inside, outside))| {
        let mut s = format!(
            "[machine]\ntopo = {{ cores = {cores}, smt = {smt} }}\n[kernel]\nprofile = \"{profile}\"\n\
             tunables = {{ hz = {hz}, sched_cfs_bandwidth_slice_us = {} }}\n\
             [[groups]]\nname = \"g\"\ncfs_quota_us = {}\ncfs_period_us = {}\n",
            slice_ms * 1000,
            quota_ms * 1000,
            quota_ms * 1000 * mult
        );
        for (i, (run_us, sleep_us)) in inside.iter().chain(&outside).enumerate() {
            let group = if i < inside.len() { "group = \"g\"\n" } else { "" };
            let sleep = if *sleep_us > 0 { format!(", {{ sleep = \"{sleep_us}us\" }}") } else { String::new() };
            s += &format!("[[tasks]]\nname = \"t{i}\"\n{group}program = [{{ loop = {{ body = [{{ run = \"{run_us}us\" }}{sleep}] }} }}]\n");
        }
        s + "[run]\nduration_s = 1.0\n"
    })
}

#[test]
fn bandwidth_liveness() {
    let (cases, seed, long) = config();
    // As many as the main run: each is longer but has few tasks (about 2 ms of wall time).
    let cases = if long { cases } else { 48 };
    eprintln!("bandwidth liveness: {cases} scenarios, SCHEDLAB_PROPTEST_SEED={seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8] = 1; // a stream of its own
    let cfg = Config { cases, failure_persistence: None, max_shrink_iters: 500, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(cfg, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let (checked, tasks) = (AtomicU64::new(0), AtomicU64::new(0));
    let outcome = runner.run(&bandwidth_scenario(), |text| {
        let s = Scenario::from_toml_str(&text, "<prop>").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let live = common::check_liveness(&s, 3).map_err(TestCaseError::fail)?;
        checked.fetch_add(live as u64, Relaxed);
        tasks.fetch_add(s.tasks.len() as u64, Relaxed);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}\nreplay with SCHEDLAB_LONG_PROPTEST={} SCHEDLAB_PROPTEST_SEED={seed}", cases);
    }
    let (checked, tasks) = (checked.load(Relaxed), tasks.load(Relaxed));
    eprintln!("bandwidth liveness: {cases} scenarios passed; {checked} of {tasks} tasks had a bound inside the run");
    // The property is only worth its time if most bounds fit in the runs.
    assert!(checked * 2 > tasks, "only {checked} of {tasks} tasks had a liveness bound shorter than the run");
}
