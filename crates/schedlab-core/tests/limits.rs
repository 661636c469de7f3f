//! Run limits stop a run cleanly with a partial result marked as such; memory is
//! checked before the run is built; a deadlock names the tasks left blocked.

use crate::common;

use schedlab_core::api::{run, Limits, RunOptions};
use schedlab_core::{RunResult, SimError};

const BUSY: &str = "[machine]\ntopo = { cores = 4 }\n[[tasks]]\nname = \"w\"\ncount = 6\n\
    program = [{ loop = { body = [{ run_exp = \"300us\" }, { sleep_exp = \"200us\" }] } }]\n[run]\nduration_s = 1.0\n";

fn limited(toml: &str, limits: Limits) -> Result<RunResult, SimError> {
    run(&common::scenario(toml), 1, &RunOptions { limits, ..Default::default() }).map(|o| o.result)
}

#[test]
fn a_whole_run_is_not_partial() {
    let r = limited(BUSY, Limits::default()).unwrap();
    assert_eq!(r.engine.stopped_by, "duration");
    assert!(!r.engine.partial);
}

#[test]
fn simulated_time_limit_stops_at_that_time_with_time_conserved() {
    let r = limited(BUSY, Limits { max_sim_ns: Some(20_000_000), ..Default::default() }).unwrap();
    assert_eq!(r.engine.stopped_by, "max_sim_time");
    assert!(r.engine.partial);
    assert_eq!(r.engine.sim_ns, 20_000_000);
    for c in &r.cpus {
        assert_eq!(c.busy_ns + c.idle_ns, r.engine.sim_ns, "CPU {}", c.cpu);
    }
}

#[test]
fn event_limit_takes_the_lower_of_scenario_and_options() {
    let r = limited(BUSY, Limits { max_events: Some(500), ..Default::default() }).unwrap();
    assert_eq!(r.engine.stopped_by, "max_events");
    assert_eq!(r.engine.events, 500);
    let tighter = BUSY.replace("duration_s = 1.0", "duration_s = 1.0\nmax_events = 300");
    let r = limited(&tighter, Limits { max_events: Some(500), ..Default::default() }).unwrap();
    assert_eq!(r.engine.events, 300);
}

#[test]
fn wall_time_limit_stops_a_long_run_at_a_progress_tick() {
    // 100 simulated seconds of 64 tasks take far longer than a nanosecond of wall time:
    // the first check (a million events in) stops it.
    let long = "[machine]\ntopo = { llcs = 2, cores = 8 }\n[[tasks]]\nname = \"w\"\ncount = 64\n\
        program = [{ loop = { body = [{ run_exp = \"100us\" }, { sleep_exp = \"100us\" }] } }]\n[run]\nduration_s = 100.0\n";
    let r = limited(long, Limits { max_wall_ns: Some(1), ..Default::default() }).unwrap();
    assert_eq!(r.engine.stopped_by, "max_wall_time");
    assert!(r.engine.partial && r.engine.sim_ns < 100_000_000_000);
    assert_eq!(r.engine.events, 1 << 20, "checked with the progress tick");
}

#[test]
fn memory_estimate_refuses_a_scenario_that_cannot_fit() {
    let huge = "[machine]\ntopo = { sockets = 2, llcs = 16, cores = 8, smt = 2 }\n[[tasks]]\nname = \"w\"\ncount = 100000000\n\
        program = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n";
    match limited(huge, Limits { max_memory: Some(2 << 30), ..Default::default() }) {
        Err(SimError::Scenario(e)) => {
            assert_eq!(e.field, "tasks[0].count");
            assert!(e.message.starts_with("100000000 tasks on 512 CPUs would need about"), "{e}");
            assert!(e.message.contains("more than the memory limit of 2.0 GiB"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // The same scenario with a few tasks fits.
    let small = huge.replace("count = 100000000", "count = 10");
    limited(&small, Limits { max_memory: Some(2 << 30), max_sim_ns: Some(1_000_000), ..Default::default() }).unwrap();
}

#[test]
fn memory_limit_stops_a_run_that_grows_past_it() {
    // A task that forks short-lived children forever: exited tasks keep their figures, so
    // the run grows; the estimate at the first progress tick is over 16 MiB.
    let forker = "[machine]\ntopo = { cores = 2 }\n[[templates]]\nname = \"c\"\nprogram = [{ run = \"1us\" }]\n\
        [[tasks]]\nname = \"parent\"\nprogram = [{ loop = { body = [{ fork = { template = \"c\" } }, { run = \"1us\" }] } }]\n\
        [run]\nduration_s = 100.0\n";
    let r = limited(forker, Limits { max_memory: Some(16 << 20), ..Default::default() }).unwrap();
    assert_eq!(r.engine.stopped_by, "max_memory");
    assert!(r.engine.partial && r.tasks.len() > 1000);
}

#[test]
fn a_deadlock_names_the_tasks_and_what_they_wait_on() {
    let toml = "[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = \"a\"\nprogram = [{ wait = \"b-done\" }, { signal = \"a-done\" }]\n\
        [[tasks]]\nname = \"b\"\nprogram = [{ wait = \"a-done\" }, { signal = \"b-done\" }]\n[run]\nuntil = \"workload_done\"\n";
    let r = limited(toml, Limits::default()).unwrap();
    assert_eq!(r.engine.stopped_by, "deadlock");
    assert!(r.engine.partial);
    assert_eq!(r.engine.blocked, vec!["a waits on channel 'b-done'", "b waits on channel 'a-done'"]);
}

#[test]
fn cancel_stops_at_the_next_check() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let long = BUSY.replace("duration_s = 1.0", "duration_s = 1000.0");
    let opts = RunOptions { cancel: Some(flag), ..Default::default() };
    let r = run(&common::scenario(&long), 1, &opts).unwrap().result;
    assert_eq!(r.engine.stopped_by, "interrupted");
    assert!(r.engine.partial);
    assert_eq!(r.engine.events, 1 << 20);
}
