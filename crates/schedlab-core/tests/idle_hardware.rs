//! Idle states as the silicon pays them, through whole runs: a wake costs the measured
//! time of the state the *core* is in (an SMT sibling's activity keeps it shallow),
//! cores and packages lose their caches only when really powered down, and a
//! synchronous wakeup costs the path between try_to_wake_up() and the switch.

use schedlab_core::api::{run, RunOptions};
use schedlab_core::metrics::RunResult;
use schedlab_core::topology::presets;
use schedlab_core::Scenario;

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "<test>").expect("valid test scenario")
}

fn checked() -> RunOptions {
    RunOptions { check_invariants: true, ..Default::default() }
}

/// A task sleeping 3 ms at a time on CPU 192 of an EPYC 9654 (CPU 0's SMT sibling)
/// asks for C2 (CC6) every time. With a hog on CPU 0 the core never leaves C0, so each
/// timer wakeup pays a halted thread's wake (~1 us); with CPU 0 idle too, the core
/// really enters CC6 and each wakeup pays its measured 10 us.
#[test]
fn a_thread_whose_sibling_runs_never_pays_a_deep_wake() {
    let sleeper = |hog: bool| {
        let hog = if hog { "[[tasks]]\nname = \"hog\"\naffinity = \"0\"\nprogram = [{ loop = { body = [{ run = \"1s\" }] } }]\n" } else { "" };
        scenario(&format!(
            "[machine]\npreset = \"epyc-9654-2s\"\n[kernel]\nprofile = \"6.6\"\ntunables = {{ timer_slack_ns = 0 }}\n{hog}\
             [[tasks]]\nname = \"sleeper\"\naffinity = \"192\"\nprogram = [{{ loop = {{ count = 100, body = [{{ run = \"20us\" }}, {{ sleep = \"3ms\" }}] }} }}]\n\
             [run]\nduration_s = 0.4\n"
        ))
    };
    let busy = run(&sleeper(true), 1, &checked()).unwrap().result;
    let idle = run(&sleeper(false), 1, &checked()).unwrap().result;
    let c2 = |r: &RunResult| r.cpus[192].idle_states.iter().find(|s| s.name == "C2").unwrap().usage;
    assert!(c2(&busy) >= 100 && c2(&idle) >= 100, "the governor asks for C2 either way: {} / {}", c2(&busy), c2(&idle));
    let (b, i) = (&busy.histograms["timer_latency"], &idle.histograms["timer_latency"]);
    let m = presets::preset("epyc-9654-2s").unwrap();
    let c2_wake = m.idle_drivers[0].states.iter().find(|s| s.name == "C2").unwrap().wake_ns;
    assert!(b.max_ns < c2_wake, "sibling busy: worst wakeup {} ns, under C2's wake {c2_wake}", b.max_ns);
    assert!(i.min_ns >= c2_wake, "sibling idle: every wakeup {} ns pays C2's wake {c2_wake}", i.min_ns);
}

/// Per-CPU data touched on CPU 1 of an EPYC 9654 between sleeps (its sibling idle,
/// C2's declared figures made tiny so that the governor asks for CC6 at every sleep):
/// after 20 us the core is still in CC1 (the cache-flush-on-halt timer has not run
/// out) and its L2 holds the data; after 500 us it has flushed it to the L3. With a hog
/// on another core of the socket the package stays up; without one, every core of the
/// socket reaches CC6 and PC6 flushes the L3s too: the data comes from DRAM.
#[test]
fn caches_are_lost_when_the_core_and_the_package_really_power_down() {
    let lines = |sleep_us: u64, hog: bool| {
        let hog = if hog { "[[tasks]]\nname = \"hog\"\naffinity = \"2\"\nprogram = [{ run = \"50ms\" }]\n" } else { "" };
        let s = scenario(&format!(
            "[machine]\npreset = \"epyc-9654-2s\"\ncost = {{ \"cpuidle.C2.exit_latency_us\" = 1, \"cpuidle.C2.target_residency_us\" = 2 }}\n\
             [kernel]\nprofile = \"6.6\"\ntunables = {{ timer_slack_ns = 0 }}\n{hog}\
             [[tasks]]\nname = \"toucher\"\naffinity = \"1\"\nprocess = \"p\"\n\
             program = [{{ loop = {{ count = 40, body = [{{ touch_area = {{ bytes = 16384, index = \"cpu_id\", record = true }} }}, {{ sleep = \"{sleep_us}us\" }}] }} }}]\n\
             [run]\nuntil = \"workload_done\"\n"
        ));
        let r = run(&s, 1, &checked()).unwrap().result;
        let at = |place: &str| r.summary.get(&format!("touch_area_lines_{place}")).copied().unwrap_or(0.0);
        (at("own_core"), at("same_llc"), at("dram"))
    };
    // The first pass of each run writes the area (lines counted as the writer's own);
    // the 39 after it find it where the sleep left it.
    let pass = 256.0;
    let (own, llc, dram) = lines(20, true);
    assert_eq!((own, llc, dram), (40.0 * pass, 0.0, 0.0), "20 us in CC1: the L2 kept it");
    let (own, llc, dram) = lines(500, true);
    assert_eq!((own, llc, dram), (pass, 39.0 * pass, 0.0), "500 us: CC6 wrote L2 back, the package stayed up");
    let (own, llc, dram) = lines(500, false);
    assert_eq!((own, llc, dram), (pass, 0.0, 39.0 * pass), "the whole socket in CC6: PC6 flushed the L3");
}

/// A synchronous pipe wakeup on one CPU (the waker blocks right after waking) lasts at
/// least the waker's system call exit, the blocking call's entry and __schedule() up to
/// the switch (0.3 us on the 4.5 GHz 7950X, 0.6 us on a 2.4 GHz EPYC), and with the
/// rest of try_to_wake_up() before them over half a microsecond on every x86 preset:
/// never 0.
#[test]
fn a_synchronous_wakeup_costs_the_path_that_makes_it() {
    for preset in ["epyc-9654-2s", "milan-72", "ryzen-7950x", "xeon-80", "bergamo", "zen3-2s"] {
        // Endless loops stopped by the run's end: every wakeup is a pipe's.
        let s = scenario(&format!(
            "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"6.6\"\n\
             [[tasks]]\nname = \"ping\"\naffinity = \"0\"\nprogram = [{{ loop = {{ body = [{{ run = \"2us\" }}, {{ signal = \"ping\" }}, {{ wait = \"pong\" }}] }} }}]\n\
             [[tasks]]\nname = \"pong\"\naffinity = \"0\"\nprogram = [{{ loop = {{ body = [{{ wait = \"ping\" }}, {{ run = \"2us\" }}, {{ signal = \"pong\" }}] }} }}]\n\
             [run]\nduration_s = 0.005\n"
        ));
        let r = run(&s, 1, &checked()).unwrap().result;
        let m = presets::preset(preset).unwrap();
        let k = &m.cost.kernel;
        let path = (k.syscall_exit_ns + k.syscall_entry_ns + k.schedule_ns) * 1024.0 / m.cpus[0].capacity as f64;
        let lat = &r.histograms["wakeup_latency"];
        assert!(lat.count >= 300, "{preset}: {} wakeups", lat.count);
        assert!(lat.min_ns as f64 >= path, "{preset}: a wakeup of {} ns, shorter than exit + entry + schedule ({path:.0} ns)", lat.min_ns);
        // With the rest of try_to_wake_up() before them, over half a microsecond.
        assert!(lat.min_ns > 500, "{preset}: {} ns", lat.min_ns);
    }
}

/// Before 6.0, acpi_idle read the ACPI PM timer after entering an I/O-port C-state (the
/// "dummy wait"), and on Zen that read ran after the wake, before the interrupt was
/// handled: each wakeup from C2 takes one more port read (1 us), and the governor counts
/// it as residency. The feature's default follows the kernel version.
#[test]
fn the_pre_6_0_dummy_wait_delays_io_port_wakeups() {
    let sleeper = |profile: &str| {
        scenario(&format!(
            "[machine]\npreset = \"epyc-9654-2s\"\n[kernel]\nprofile = \"{profile}\"\ntunables = {{ timer_slack_ns = 0 }}\n\
             [[tasks]]\nname = \"sleeper\"\ncpu = 1\nprogram = [{{ loop = {{ count = 50, body = [{{ run = \"20us\" }}, {{ sleep = \"3ms\" }}] }} }}]\n\
             [run]\nuntil = \"workload_done\"\n"
        ))
    };
    let old = run(&sleeper("5.15"), 1, &checked()).unwrap().result;
    let new = run(&sleeper("6.0"), 1, &checked()).unwrap().result;
    assert_eq!((old.features["ACPI_IDLE_DUMMY_WAIT"], new.features["ACPI_IDLE_DUMMY_WAIT"]), (true, false));
    let read = presets::preset("epyc-9654-2s").unwrap().cost.kernel.pm_timer_read_ns as u64;
    let (o, n) = (&old.histograms["timer_latency"], &new.histograms["timer_latency"]);
    assert_eq!(o.min_ns, n.min_ns + read, "each C2 wakeup one PM timer read later");
}

/// A guest's halt on a hypervisor (`[machine.guest_halt]`): a timer thread sleeping
/// 100 us wakes inside the first stage (the hypervisor still polls: nothing added),
/// one sleeping 1 ms reaches the second and its typical wakeup pays 9 us more, one
/// sleeping 10 ms the third's 50 us. (Not every wakeup: a tick that ends an idle period
/// early starts the next one afresh, as each HLT is a new halt to the hypervisor.) x86
/// POLL never halts: with idle states capped to it (PM QoS 0) the ladder costs nothing.
#[test]
fn a_guest_halt_pays_the_hypervisor_stage_its_idle_time_reached() {
    let timer = |sleep_us: u64, ladder: bool, qos0: bool| {
        let ladder =
            if ladder { "[machine.guest_halt]\nkind = \"measured\"\nsource = \"test\"\nstages = [[0, 0], [200, 9], [5000, 50]]\n" } else { "" };
        let qos = if qos0 { ", cpuidle_latency_req_ns = 0" } else { "" };
        let s = scenario(&format!(
            "[machine]\npreset = \"xeon-80\"\n{ladder}[kernel]\nprofile = \"6.6\"\ntunables = {{ timer_slack_ns = 0{qos} }}\n\
             [[tasks]]\nname = \"t\"\naffinity = \"1\"\nprogram = [{{ loop = {{ count = 50, body = [{{ run = \"5us\" }}, {{ sleep = \"{sleep_us}us\" }}] }} }}]\n\
             [run]\nuntil = \"workload_done\"\n"
        ));
        let h = run(&s, 1, &checked()).unwrap().result.histograms["timer_latency"].clone();
        (h.min_ns, h.p50_ns, h.max_ns)
    };
    assert_eq!(timer(100, true, false), timer(100, false, false), "inside the polling stage nothing is added");
    for (sleep_us, extra) in [(1000, 9_000), (10_000, 50_000)] {
        let (_, bare_p50, _) = timer(sleep_us, false, false);
        let (_, vm_p50, _) = timer(sleep_us, true, false);
        // The histogram's buckets widen with the value: equal to within one bucket (1 %).
        assert!(vm_p50.abs_diff(bare_p50 + extra) <= extra / 100, "sleep {sleep_us} us: p50 {bare_p50} -> {vm_p50} ns");
    }
    assert_eq!(timer(10_000, true, true), timer(10_000, false, true), "POLL pays no halt ladder");
}
