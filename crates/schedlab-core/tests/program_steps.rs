//! The steps rt-app needs: run_for, rt-app's timer, condition variables, barriers,
//! set_affinity, set_group, yield.

use schedlab_core::api::{run, RunOptions};
use schedlab_core::metrics::RunResult;
use schedlab_core::Scenario;

fn go(toml: &str) -> RunResult {
    let s = Scenario::from_toml_str(toml, "t.toml").unwrap();
    run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap().result
}

fn exit_ms(r: &RunResult, name: &str) -> f64 {
    r.tasks.iter().find(|t| t.name == name).unwrap().exit_ns.unwrap() as f64 / 1e6
}

#[test]
fn run_for_ends_on_the_wall_clock_and_run_on_the_work() {
    // Each shares one CPU with a hog: run_for spins 10 ms of wall time, whatever it got;
    // run needs 10 ms of CPU, about twice as long.
    let base = "[machine]\ntopo = { cores = 1 }\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"100ms\" }]\n[run]\nuntil = \"workload_done\"\n";
    let a = go(&format!("{base}[[tasks]]\nname = \"t\"\nprogram = [{{ run_for = \"10ms\" }}]\n"));
    let b = go(&format!("{base}[[tasks]]\nname = \"t\"\nprogram = [{{ run = \"10ms\" }}]\n"));
    // It ends at its deadline, or when it next runs after it (rt-app reads the clock
    // while it spins): within a slice.
    assert!((10.0..13.5).contains(&exit_ms(&a, "t")), "{}", exit_ms(&a, "t"));
    assert!(exit_ms(&b, "t") > 18.0, "{}", exit_ms(&b, "t"));
    let t = a.tasks.iter().find(|t| t.name == "t").unwrap();
    assert!(t.work_done_ns < 7_000_000, "shared the CPU: about half the work");
}

#[test]
fn rt_app_timer_grid_starts_at_the_task_start() {
    let prog = |rt: bool| {
        format!("[machine]\ntopo = {{ cores = 2 }}\n[[tasks]]\nname = \"t\"\nprogram = [{{ loop = {{ count = 5, body = [{{ run = \"10ms\" }}, {{ periodic = {{ period = \"100ms\", mode = \"relative\", rt_app = {rt} }} }}] }} }}]\n[run]\nuntil = \"workload_done\"\n")
    };
    let rt = exit_ms(&go(&prog(true)), "t");
    let own = exit_ms(&go(&prog(false)), "t");
    assert!((rt - 500.0).abs() < 0.5, "rt-app: boundaries at 100, 200, ... 500 ms: {rt}");
    assert!((own - 510.0).abs() < 0.5, "schedlab's periodic: the grid starts at the first step: {own}");
}

#[test]
fn a_condition_variable_loses_a_signal_a_channel_keeps() {
    // The signal comes 1 ms before anyone waits.
    let t = |sig: &str, wait: &str| {
        format!("[machine]\ntopo = {{ cores = 2 }}\n[[tasks]]\nname = \"s\"\nprogram = [{sig}]\n[[tasks]]\nname = \"w\"\nprogram = [{{ run = \"1ms\" }}, {wait}, {{ run = \"1ms\" }}]\n[run]\nuntil = \"workload_done\"\nduration_s = 1\n")
    };
    let chan = go(&t("{ signal = \"c\" }", "{ wait = \"c\" }"));
    let cond = go(&t("{ cond_signal = \"c\" }", "{ cond_wait = { cond = \"c\" } }"));
    assert_eq!(chan.engine.stopped_by, "workload_done");
    assert!(cond.tasks.iter().find(|t| t.name == "w").unwrap().exit_ns.is_none(), "the waiter never wakes");
}

#[test]
fn a_barrier_holds_every_party_until_the_last_arrives() {
    let r = go("[machine]\ntopo = { cores = 4 }\n\
        [[tasks]]\nname = \"fast\"\ncount = 2\nprogram = [{ run = \"1ms\" }, { barrier = \"b\" }, { run = \"1ms\" }]\n\
        [[tasks]]\nname = \"slow\"\nprogram = [{ run = \"5ms\" }, { barrier = \"b\" }, { run = \"1ms\" }]\n\
        [run]\nuntil = \"workload_done\"\n");
    for t in &r.tasks {
        let ms = t.exit_ns.unwrap() as f64 / 1e6;
        assert!((6.0..6.2).contains(&ms), "{} left at {ms} ms", t.name);
    }
}

#[test]
fn set_affinity_moves_a_running_task_and_set_group_moves_it_into_a_group() {
    let r = go("[machine]\ntopo = { cores = 4 }\n[[groups]]\nname = \"lim\"\ncpu_max = \"10000 100000\"\n\
        [[tasks]]\nname = \"t\"\ncpu = 0\nprogram = [{ run = \"5ms\" }, { set_affinity = \"3\" }, { run = \"5ms\" }, { set_group = \"lim\" }, { run = \"50ms\" }]\n\
        [run]\nuntil = \"workload_done\"\n");
    assert_eq!(r.tasks[0].nr_migrations, 1);
    assert!(r.cpus[3].busy_ns >= 55_000_000 && r.cpus[0].busy_ns < 6_000_000);
    let g = r.groups.iter().find(|g| g.name == "lim").unwrap();
    // 10 ms per 100 ms once inside: 50 ms of work takes five periods.
    assert!(g.nr_throttled >= 4, "{g:?}");
    assert!(exit_ms(&r, "t") > 400.0);
}

#[test]
fn yield_hands_the_cpu_to_the_other_task() {
    // EEVDF: a yield pushes the yielder's deadline a slice on, so the other task runs.
    let r = go("[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.6\"\n\
        [[tasks]]\nname = \"y\"\nprogram = [{ loop = { count = 20, body = [{ run = \"100us\" }, \"yield\"] } }]\n\
        [[tasks]]\nname = \"o\"\nprogram = [{ loop = { count = 20, body = [{ run = \"100us\" }, \"yield\"] } }]\n\
        [run]\nuntil = \"workload_done\"\n");
    for t in &r.tasks {
        assert!(t.nr_switches >= 15, "{}: {} switches", t.name, t.nr_switches);
    }
}
