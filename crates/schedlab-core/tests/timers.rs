//! Timers, NOHZ idle and the wakeup path, through whole runs: when sleeps end, where
//! timers expire, that no timer is lost, and that cross-CPU costs follow distance.

use schedlab_core::api::{run, RunOptions};
use schedlab_core::topology::{presets, Distance};
use schedlab_core::trace::TraceEvent;
use schedlab_core::Scenario;

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, "<test>").expect("valid test scenario")
}

fn checked() -> RunOptions {
    RunOptions { check_invariants: true, ..Default::default() }
}

/// nanosleep(d) on an idle machine: the task runs again no earlier than d after the
/// sleep began and no later than d + timer slack + the idle state's exit latency + the
/// kernel path (interrupt, wakeup, context switch, system call exit).
#[test]
fn nanosleep_ends_after_its_time_within_slack_exit_latency_and_path() {
    for (preset, profile) in [("xeon-80", "6.6"), ("pixel6", "6.6"), ("epyc-9654-2s", "6.9")] {
        let s = scenario(&format!(
            "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"{profile}\"\n\
             [[tasks]]\nname = \"sleeper\"\ncpu = 1\nprogram = [{{ loop = {{ count = 200, body = [{{ run = \"20us\" }}, {{ sleep = \"3ms\" }}] }} }}]\n\
             [run]\nuntil = \"workload_done\"\n"
        ));
        let r = run(&s, 1, &checked()).unwrap().result;
        let lat = &r.histograms["timer_latency"];
        assert_eq!(lat.count, 200, "{preset}: one latency per sleep");
        let m = presets::preset(preset).unwrap();
        let k = &m.cost.kernel;
        let slack = 50_000.0;
        let exit = m.idle_drivers.iter().flat_map(|d| d.states.iter()).map(|s| s.exit_latency_ns).max().unwrap() as f64;
        let path = k.irq_entry_ns + k.irq_exit_ns + k.hrtimer_cancel_ns + k.ttwu_ns + m.cost.context_switch_ns + k.syscall_exit_ns;
        let cap = m.cpus[1].capacity as f64;
        let bound = slack + exit + path * 1024.0 / cap + k.ttwu_lines * m.cost.cacheline.dram_ns;
        assert_eq!(r.summary["early_timed_wakeups"], 0.0, "{preset}: never early");
        // Alone on an idle CPU whose tick is stopped nothing interrupts the sleep before
        // its hard expiry.
        assert!(lat.min_ns as f64 >= slack, "{preset}: min {} below the slack", lat.min_ns);
        assert!((lat.max_ns as f64) <= bound, "{preset}: max {} above {bound}", lat.max_ns);
    }
}

/// The wakeup waits for the time the hardware takes to leave its idle state (the
/// measured `wake`, 10 us for an EPYC CC6), while the governor keeps choosing by the
/// declared exit latency (400 us): made to pay the declared figure instead
/// (`cpuidle.C2.wake_us` = 400), the same states are chosen and each timer wakeup is
/// 390 us later.
#[test]
fn idle_exit_waits_for_the_wake_time_while_the_governor_sees_the_advertised_latency() {
    let sleeper = |cost: &str| {
        scenario(&format!(
            "[machine]\npreset = \"epyc-9654-2s\"\n{cost}[kernel]\nprofile = \"6.6\"\n\
             [[tasks]]\nname = \"sleeper\"\ncpu = 1\nprogram = [{{ loop = {{ count = 100, body = [{{ run = \"20us\" }}, {{ sleep = \"3ms\" }}] }} }}]\n\
             [run]\nuntil = \"workload_done\"\n"
        ))
    };
    let declared = run(&sleeper("cost = { \"cpuidle.C2.wake_us\" = 400 }\n"), 1, &checked()).unwrap().result;
    let measured = run(&sleeper(""), 1, &checked()).unwrap().result;
    let c2 = |r: &schedlab_core::metrics::RunResult| r.cpus[1].idle_states.iter().find(|s| s.name == "C2").unwrap().usage;
    assert!(c2(&declared) >= 100, "3 ms sleeps go to C2: {}", c2(&declared));
    assert_eq!(c2(&declared), c2(&measured), "the governor's choices do not depend on the wake time");
    let (slow_lat, fast_lat) = (&declared.histograms["timer_latency"], &measured.histograms["timer_latency"]);
    let gap = slow_lat.max_ns as f64 - fast_lat.max_ns as f64;
    assert!((gap - 390_000.0).abs() < 10_000.0, "worst wakeup {} vs {} ns", slow_lat.max_ns, fast_lat.max_ns);
    assert!(fast_lat.max_ns < 50_000 + 10_000 + 20_000, "slack + wake + path: {}", fast_lat.max_ns);
}

/// Timer slack lets a sleep end at an earlier interrupt: on a CPU whose tick runs (a
/// hog beside the sleeper), sleeps with 0.9 ms of slack end at a tick (the next one is
/// at most 1 ms away), sleeps with none at their own time, whatever the tick's phase.
#[test]
fn a_running_tick_expires_sleeps_within_their_slack() {
    let phases = |slack: &str| {
        let s = scenario(&format!(
            "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 1, smt = 1 }}\n[kernel]\nprofile = \"6.6\"\n\
             tunables = {{ hz = 1000, timer_slack_ns = {slack} }}\n\
             [[tasks]]\nname = \"hog\"\nprogram = [{{ loop = {{ body = [{{ run = \"1s\" }}] }} }}]\n\
             [[tasks]]\nname = \"sleeper\"\nprogram = [{{ loop = {{ count = 200, body = [{{ run = \"10us\" }}, {{ sleep = \"2317us\" }}] }} }}]\n\
             [run]\nduration_s = 1.0\n"
        ));
        let out = run(&s, 1, &RunOptions { trace: true, ..Default::default() }).unwrap();
        // Wakeups of the sleeper (pid 2), by their phase in the millisecond.
        let mut by_phase = std::collections::BTreeMap::<u64, u32>::new();
        for r in &out.trace.unwrap().records {
            if let TraceEvent::Waking { pid: 2, .. } = r.event {
                *by_phase.entry(r.ts % 1_000_000 / 1000).or_default() += 1;
            }
        }
        let total: u32 = by_phase.values().sum();
        let top = by_phase.values().copied().max().unwrap_or(0);
        (top as f64 / total as f64, total)
    };
    let (wide, n_wide) = phases("900000");
    let (none, n_none) = phases("0");
    assert!(n_wide > 100 && n_none > 100);
    assert!(wide > 0.8, "with slack most wakeups share the tick's phase: {wide}");
    assert!(none < 0.2, "without slack wakeups follow their own times: {none}");
}

fn pingpong_round_trip_ns(preset: &str, a: usize, b: usize) -> f64 {
    let rounds = 2000;
    let s = scenario(&format!(
        "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"6.6\"\ntunables = {{ cpuidle_latency_req_ns = 5000 }}\n\
         [[tasks]]\nname = \"ping\"\naffinity = \"{a}\"\nprogram = [{{ loop = {{ count = {rounds}, body = [{{ signal = \"ping\" }}, {{ wait = \"pong\" }}] }} }}]\n\
         [[tasks]]\nname = \"pong\"\naffinity = \"{b}\"\nprogram = [{{ loop = {{ count = {rounds}, body = [{{ wait = \"ping\" }}, {{ signal = \"pong\" }}] }} }}]\n\
         [run]\nuntil = \"workload_done\"\n"
    ));
    let r = run(&s, 1, &RunOptions::default()).unwrap().result;
    r.engine.sim_ns as f64 / rounds as f64
}

/// A pinned pipe ping-pong's round trip grows from SMT siblings to the same LLC, to
/// another LLC, to another socket, on every multi-LLC preset: the IPI, the wakee's
/// lines and the pipe data all cross the distance. A PM QoS latency request of 5 us (as
/// latency benchmarks set through /dev/cpu_dma_latency) keeps the waiting CPU out of deep
/// states whose exit latency would swamp the distance (AMD's C2 costs 400 us).
#[test]
fn pingpong_round_trip_grows_with_distance() {
    for &name in presets::PRESET_NAMES {
        let m = presets::preset(name).unwrap();
        if m.llc_span.len() < 2 {
            continue;
        }
        let mut pairs = Vec::new();
        let find = |pred: &dyn Fn(usize) -> bool| (1..m.nr_cpus()).find(|&c| pred(c));
        let c0 = &m.cpus[0];
        if let Some(b) = find(&|c| m.cpus[c].core == c0.core) {
            pairs.push(("smt", b));
        }
        pairs.push(("llc", find(&|c| m.cpus[c].core != c0.core && m.cpus[c].llc == c0.llc).unwrap()));
        if let Some(b) = find(&|c| m.cpus[c].llc != c0.llc && m.cpus[c].socket == c0.socket) {
            pairs.push(("package", b));
        }
        if let Some(b) = find(&|c| m.cpus[c].socket != c0.socket) {
            pairs.push(("socket", b));
        }
        let rts: Vec<(&str, f64)> = pairs.iter().map(|&(what, b)| (what, pingpong_round_trip_ns(name, 0, b))).collect();
        for w in rts.windows(2) {
            assert!(w[0].1 < w[1].1, "{name}: {} ({:.0} ns) not below {} ({:.0} ns)", w[0].0, w[0].1, w[1].0, w[1].1);
        }
    }
}

/// Round trip of a pinned pipe ping-pong with 2 us of work on each side, with the idle
/// states the governor picks (no latency request): ns.
fn pinned_pipe_round_trip_ns(preset: &str, a: usize, b: usize) -> f64 {
    let rounds = 2000;
    let s = scenario(&format!(
        "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"6.6\"\n\
         [[tasks]]\nname = \"ping\"\naffinity = \"{a}\"\nprogram = [{{ loop = {{ count = {rounds}, body = [{{ run = \"2us\" }}, {{ signal = \"ping\" }}, {{ wait = \"pong\" }}] }} }}]\n\
         [[tasks]]\nname = \"pong\"\naffinity = \"{b}\"\nprogram = [{{ loop = {{ count = {rounds}, body = [{{ wait = \"ping\" }}, {{ run = \"2us\" }}, {{ signal = \"pong\" }}] }} }}]\n\
         [run]\nuntil = \"workload_done\"\n"
    ));
    let r = run(&s, 1, &RunOptions::default()).unwrap().result;
    r.engine.sim_ns as f64 / rounds as f64
}

/// The same ping-pong with the governors free to choose: a thread whose SMT sibling runs
/// wakes at halt cost, and a deep state's wake is the measured one, so every round trip
/// is microseconds (bare-metal pipe round trips are ~5-25 us), never hundreds, and it
/// still grows with distance (SMT < same LLC < other LLC < other socket).
#[test]
fn pinned_pipe_round_trip_is_microseconds_and_grows_with_distance() {
    for preset in ["epyc-9654-2s", "milan-72", "zen3-2s", "xeon-80"] {
        let m = presets::preset(preset).unwrap();
        // CPU 0's first partner at each distance the machine has, nearest first.
        let pairs: Vec<usize> = [Distance::SmtSibling, Distance::SameLlc, Distance::SamePackage, Distance::OtherPackage]
            .iter()
            .filter_map(|&d| (1..m.nr_cpus()).find(|&c| m.distance(0, c) == d))
            .collect();
        assert!(pairs.len() >= 3, "{preset}: SMT, LLC and one farther distance");
        let rts: Vec<f64> = pairs.iter().map(|&b| pinned_pipe_round_trip_ns(preset, 0, b)).collect();
        for (&b, &rt) in pairs.iter().zip(&rts) {
            assert!((6_000.0..25_000.0).contains(&rt), "{preset} 0/{b} ({:?}): round trip {rt:.0} ns", m.distance(0, b));
        }
        for w in pairs.windows(2).zip(rts.windows(2)) {
            assert!(m.distance(0, w.0[0]) < m.distance(0, w.0[1]), "{preset}: pairs in order of distance");
            assert!(w.1[0] < w.1[1], "{preset}: 0/{} ({:.0} ns) not below 0/{} ({:.0} ns)", w.0[0], w.1[0], w.0[1], w.1[1]);
        }
    }
}

fn global_timer_scenario(profile: &str) -> Scenario {
    // The arming task sleeps long after arming: every CPU is idle when the timer is due,
    // and a kworker waits for the timer's work.
    scenario(&format!(
        "[machine]\ntopo = {{ sockets = 1, llcs = 2, cores = 4, smt = 1 }}\n[kernel]\nprofile = \"{profile}\"\n\
         [[tasks]]\nname = \"armer\"\ncpu = 5\nprogram = [{{ run = \"50us\" }}, \
            {{ mod_timer = {{ timer = \"w\", delay = \"20ms\", signal = \"work\" }} }}, {{ sleep = \"200ms\" }}]\n\
         [[tasks]]\nname = \"kworker\"\ncpu = 2\nprogram = [{{ wait = \"work\" }}, {{ run = \"5us\" }}]\n\
         [run]\nduration_s = 0.1\n"
    ))
}

/// With every CPU idle, a global timer is not lost: in the pull model the last CPU to
/// go idle wakes for the hierarchy's first event; in the push model the CPU holding it
/// wakes. Either way the work runs at the timer's jiffy.
#[test]
fn no_global_timer_is_lost_when_every_cpu_is_idle() {
    for profile in ["6.6", "6.9"] {
        let out = run(&global_timer_scenario(profile), 1, &RunOptions { trace: true, check_invariants: true, ..Default::default() }).unwrap();
        let r = out.result;
        assert_eq!(r.summary["timer_expiries"], 1.0, "{profile}");
        let kworker = r.tasks.iter().find(|t| t.name == "kworker").unwrap();
        assert!(kworker.exit_ns.is_some(), "{profile}: the work ran");
        let t = out.trace.unwrap();
        let expire = t.records.iter().find(|r| matches!(r.event, TraceEvent::TimerExpire { .. })).unwrap();
        // 20 ms at HZ 1000 from the armer's jiffy: level 0 rounds up by one jiffy.
        assert!(expire.ts >= 20_000_000 && expire.ts <= 22_100_000, "{profile}: expired at {}", expire.ts);
        if profile == "6.9" {
            // Armed on CPU 5 and pulled: expired by whichever CPU was the last awake.
            assert!(r.summary["tmigr_walk_levels"] > 0.0);
        }
    }
}

/// A pinned timer always runs on its CPU, in both models; a non-pinned one may run
/// elsewhere only in the pull model (expired remotely by a migrator).
#[test]
fn pinned_timers_run_on_their_cpu() {
    for profile in ["6.6", "6.9"] {
        let s = scenario(&format!(
            "[machine]\ntopo = {{ sockets = 1, llcs = 2, cores = 4, smt = 2 }}\n[kernel]\nprofile = \"{profile}\"\n\
             [[timers]]\nname = \"percpu\"\nperiod = \"4ms\"\nper_cpu = true\npinned = true\nwork = \"2us\"\n\
             [[timers]]\nname = \"global\"\nperiod = \"3ms\"\nwork = \"2us\"\n\
             [[tasks]]\nname = \"w\"\ncount = 5\nprogram = [{{ loop = {{ body = [{{ run_exp = \"300us\" }}, {{ sleep_exp = \"2ms\" }}] }} }}]\n\
             [run]\nduration_s = 0.3\n"
        ));
        let out = run(&s, 3, &RunOptions { trace: true, check_invariants: true, ..Default::default() }).unwrap();
        let t = out.trace.unwrap();
        let n = out.result.nr_cpus;
        let mut pinned = 0;
        let mut remote = 0;
        for r in &t.records {
            if let TraceEvent::TimerExpire { timer, owner_cpu } = r.event {
                if timer < n {
                    // The per-CPU timers were created first, one per CPU, in CPU order.
                    pinned += 1;
                    assert_eq!(owner_cpu, timer, "{profile}: per-CPU timer {timer} moved");
                    assert_eq!(r.cpu, timer, "{profile}: pinned timer {timer} ran on CPU {}", r.cpu);
                } else if r.cpu != owner_cpu {
                    remote += 1;
                }
            }
        }
        assert!(pinned > 500, "{profile}: {pinned}");
        if profile == "6.6" {
            assert_eq!(remote, 0, "the push model expires every timer on its own CPU");
        }
    }
}

/// Global timers armed on idle CPUs: in the push model each idle CPU wakes for its
/// own, and the callback, seeing an idle CPU, pushes the re-armed timer to the busy
/// CPU; in the pull model the idle CPUs never wake for them: the busy CPU, their
/// migrator, expires them remotely and re-arms them locally.
#[test]
fn pull_model_expires_idle_cpus_global_timers_on_the_migrator() {
    let text = |pull: bool| {
        format!(
            "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 8, smt = 1 }}\n[kernel]\nprofile = \"6.6\"\n\
             features = {{ TIMER_PULL = {pull} }}\n\
             [[timers]]\nname = \"g\"\nperiod = \"5ms\"\nper_cpu = true\nwork = \"3us\"\n\
             [[tasks]]\nname = \"busy\"\naffinity = \"0\"\nprogram = [{{ loop = {{ body = [{{ run = \"1s\" }}] }} }}]\n\
             [run]\nduration_s = 0.5\n"
        )
    };
    let push = run(&scenario(&text(false)), 1, &checked()).unwrap().result;
    let pull = run(&scenario(&text(true)), 1, &checked()).unwrap().result;
    assert_eq!(push.summary["timer_remote_expiries"], 0.0);
    assert!(pull.summary["timer_remote_expiries"] >= 7.0, "{}", pull.summary["timer_remote_expiries"]);
    assert!(push.summary["timers_pushed"] >= 7.0, "each idle CPU's callback pushed its timer away");
    let wakes = |r: &schedlab_core::RunResult| r.cpus[1..].iter().map(|c| c.idle_states.iter().map(|s| s.usage).sum::<u64>()).sum::<u64>();
    assert!(wakes(&pull) < wakes(&push), "idle CPUs woke {} times with pull, {} with push", wakes(&pull), wakes(&push));
}

/// Energy on the Pixel 6: a hog pinned to a big core for the whole run spends exactly the
/// Energy Model's top-OPP power times the run's length; an idle CPU in WFI or power-down
/// spends only its awake moments (dynamic power only: no leakage in the model), and the
/// summary adds up the CPUs.
#[test]
fn pixel6_energy_is_top_opp_power_times_awake_time() {
    let s = scenario(
        "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"performance\"\n\
         [[tasks]]\nname = \"hog\"\ncpu = 7\nprogram = [{ loop = { body = [{ run = \"1s\" }] } }]\n\
         [run]\nduration_s = 0.5\n",
    );
    let r = run(&s, 1, &checked()).unwrap().result;
    let m = presets::preset("pixel6").unwrap();
    let x1 = m.perf_domains[m.cpu_idle_driver[7]].as_ref().expect("gs101 has an Energy Model");
    let want = x1.active_power_mw() * 0.5e9 / 1000.0;
    let got = r.cpus[7].energy_active_nj;
    assert!((got - want).abs() / want < 1e-3, "hog CPU: {got} nJ, want {want}");
    for c in 0..6 {
        let awake = r.cpus[c].busy_ns + r.cpus[c].idle_ns - r.cpus[c].idle_states.iter().map(|s| s.time_ns).sum::<u64>();
        assert!(awake < 50_000_000, "CPU {c} idle but awake {awake} ns");
        assert!(r.cpus[c].energy_active_nj < want / 10.0, "CPU {c}: {} nJ", r.cpus[c].energy_active_nj);
    }
    let total: f64 = r.cpus.iter().map(|c| c.energy_active_nj).sum();
    assert!((r.summary["energy_cpu_mj"] - total / 1e6).abs() < 1e-9);
    // Machines without an Energy Model report none.
    let s = scenario("[machine]\npreset = \"xeon-80\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 0.01\n");
    let r = run(&s, 1, &RunOptions::default()).unwrap().result;
    assert!(!r.summary.contains_key("energy_cpu_mj"));
    assert!(r.cpus.iter().all(|c| c.energy_active_nj == 0.0));
}

/// The soft-lockup watchdog's pinned hrtimer fires every 2 x watchdog_thresh / 5 s on
/// each housekeeping CPU (4 s by default), never on a nohz_full CPU, and not at all with
/// watchdog_thresh = 0; so an idle CPU's sleep length is bounded as on a real kernel.
#[test]
fn watchdog_hrtimer_fires_every_sample_period_on_housekeeping_cpus() {
    let expiries = |tunables: &str| {
        let s = scenario(&format!(
            "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 2, smt = 1 }}\n[kernel]\nprofile = \"6.6\"\ntunables = {{ {tunables} }}\n\
             [[tasks]]\nname = \"t\"\ncpu = 0\nprogram = [{{ run = \"1ms\" }}]\n[run]\nduration_s = 10.0\n"
        ));
        run(&s, 3, &checked()).unwrap().result.summary["hrtimer_expiries"]
    };
    // 10 s at one expiry per 4 s from a random phase: 2 or 3 per CPU.
    let both = expiries("hz = 250");
    assert!((4.0..=6.0).contains(&both), "two CPUs: {both}");
    let one = expiries("nohz_full = \"1\"");
    assert!((2.0..=3.0).contains(&one), "CPU 1 is nohz_full: {one}");
    assert_eq!(expiries("watchdog_thresh = 0"), 0.0);
    // watchdog_thresh = 5: every 2 s, so 5 per CPU (4 to 5 from the phase).
    let fast = expiries("watchdog_thresh = 5");
    assert!((8.0..=10.0).contains(&fast), "thresh 5: {fast}");
}
