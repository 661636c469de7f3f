//! Generators of the timer pull model's benchmarks (seed 001).
//!
//! - `timer_enqueue`: the seed's micro-benchmark: on one isolated CPU, a timer is
//!   enqueued and dequeued in a loop of `reps` repetitions while a quarter of the other
//!   CPUs are kept busy; the figure is the loop's time per repetition.
//! - `dbench_pairs`: dbench's network mode (tbench: `sockio.c` and `tbench_srv.c`), NR
//!   client/server pairs over loopback TCP. A client writes a request and blocks in
//!   read() for the answer; its server blocks in read() for the request, then writes the
//!   answer. The reads have no timeout (SO_RCVTIMEO is unset), so no timer is armed
//!   while waiting; the timers are TCP's own, re-armed by every exchange on the CPU that
//!   sends: the retransmit timer (tcp_rearm_rto(): TCP_RTO_MIN, 200 ms, on loopback) and
//!   the delayed-ACK timer of the receiving socket (its input runs in the sender's
//!   softirq on loopback; TCP_DELACK_MIN, 40 ms). Neither is deleted when the ACK goes
//!   out (inet_csk_clear_xmit_timer() only clears the pending flag), so an idle pair's
//!   timers expire later and find nothing to do. Figure: operations per second.
//! - `ui_frame`: an Android-like UI workload on a phone: a UI thread and a render
//!   thread per frame at 60 or 90 Hz, a compositor, background app threads and the
//!   kernel's background timers; the figures are the frame rate kept, idle residency
//!   per cluster and state, and energy per cluster.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::rng::Stream;
use crate::scenario::{Duration, GroupSpec, KernelTimerSpec, LoopSpec, ModTimerSpec, OpSpec, PeriodicMode, PeriodicSpec, TimerBenchSpec};
use crate::topology::Machine;

fn forever(body: Vec<OpSpec>) -> OpSpec {
    OpSpec::Loop(LoopSpec { count: None, body })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnqueueParams {
    /// The isolated CPU running the loop (default: the last CPU).
    cpu: Option<usize>,
    /// Enqueue/dequeue repetitions per measurement (the seed: 1000).
    #[serde(default = "super::num::<1000>")]
    reps: u64,
    /// Measurements ("repeated several times").
    #[serde(default = "super::num::<20>")]
    rounds: u64,
    /// Share of the other CPUs kept busy (the seed: a quarter).
    #[serde(default = "quarter")]
    busy_fraction: f64,
    /// Expiry of each enqueued timer (never reached).
    #[serde(default = "hundred_ms")]
    delay: Duration,
}

fn quarter() -> f64 {
    0.25
}
fn hundred_ms() -> Duration {
    Duration(100_000_000)
}

/// `timer_enqueue`: which CPUs are busy is drawn from the seed (the seed did not say).
pub(super) fn timer_enqueue(v: &serde_json::Value, m: &Machine, seed: u64) -> Result<Generated, ScenarioError> {
    let p: EnqueueParams = params(v)?;
    let n = m.nr_cpus();
    let cpu = p.cpu.unwrap_or(n - 1);
    if cpu >= n || !(0.0..=1.0).contains(&p.busy_fraction) || p.reps == 0 || p.rounds == 0 {
        return Err(ScenarioError::new("workload.params", format!("expected cpu < {n}, busy_fraction in 0..1, reps and rounds >= 1")));
    }
    let mut others: Vec<usize> = (0..n).filter(|&c| c != cpu).collect();
    let mut rng = Stream::new(seed, "timer_enqueue.busy");
    for i in (1..others.len()).rev() {
        others.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let busy = ((others.len() as f64) * p.busy_fraction).round() as usize;
    let mut tasks: Vec<_> = others[..busy]
        .iter()
        .map(|&c| {
            let mut t = task(&format!("busy-{c}"), vec![forever(vec![OpSpec::Run(Duration(1_000_000_000))])]);
            t.affinity = Some(c.to_string());
            t
        })
        .collect();
    let body = vec![OpSpec::TimerBench(TimerBenchSpec { reps: p.reps, delay: p.delay }), OpSpec::Sleep(Duration(1_000_000))];
    let mut bench = task("enqueue-bench", vec![OpSpec::Loop(LoopSpec { count: Some(p.rounds), body })]);
    bench.affinity = Some(cpu.to_string());
    tasks.push(bench);
    Ok(Generated::new(
        tasks,
        Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            if let Some(h) = r.histograms.get("timer_bench") {
                out.insert("ns_per_iteration".into(), h.mean_ns);
                out.insert("iterations".into(), h.count as f64);
            }
            out.insert("timers_pushed".into(), r.summary.get("timers_pushed").copied().unwrap_or(0.0));
            out
        }),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DbenchParams {
    /// Client/server pairs (dbench's NR).
    pairs: usize,
    /// Mean CPU time of a client operation.
    #[serde(default = "client_op")]
    client_op: Duration,
    /// Mean CPU time of the server's handling.
    #[serde(default = "server_op")]
    server_op: Duration,
    /// The retransmit timer's delay (the RTO; TCP_RTO_MIN on loopback).
    #[serde(default = "tcp_rto_min")]
    rto: Duration,
    /// The delayed-ACK timer's delay (TCP_DELACK_MIN).
    #[serde(default = "tcp_delack_min")]
    delack: Duration,
}

fn client_op() -> Duration {
    Duration(20_000)
}
fn server_op() -> Duration {
    Duration(30_000)
}
fn tcp_rto_min() -> Duration {
    Duration(200_000_000)
}
fn tcp_delack_min() -> Duration {
    Duration(40_000_000)
}

/// `dbench_pairs`.
pub(super) fn dbench_pairs(v: &serde_json::Value, _m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: DbenchParams = params(v)?;
    if p.pairs == 0 {
        return Err(ScenarioError::new("workload.params.pairs", "expected at least 1"));
    }
    // write(): the data goes out (waking the reader) and the sender's CPU re-arms its
    // socket's retransmit timer and, running the loopback receive path, the peer
    // socket's delayed-ACK timer. sk_reset_timer() is a plain mod_timer(): not pinned.
    let send = |ch: &str| {
        let arm = |timer: &str, delay: Duration| {
            OpSpec::ModTimer(ModTimerSpec { timer: timer.into(), delay, pinned: false, deferrable: false, signal: None })
        };
        vec![OpSpec::Signal(ch.to_string()), arm("rtx", p.rto), arm("peer-delack", p.delack)]
    };
    let mut tasks = Vec::new();
    for i in 0..p.pairs {
        let (req, resp) = (format!("req{i}"), format!("resp{i}"));
        let mut client = vec![OpSpec::RunExp(p.client_op)];
        client.extend(send(&req));
        client.push(OpSpec::Wait(resp.clone()));
        let mut server = vec![OpSpec::Wait(req.clone()), OpSpec::RunExp(p.server_op)];
        server.extend(send(&resp));
        tasks.push(task(&format!("client-{i}"), vec![forever(client)]));
        tasks.push(task(&format!("server-{i}"), vec![forever(server)]));
    }
    Ok(Generated::new(
        tasks,
        Box::new(|r| {
            let mut out = std::collections::BTreeMap::new();
            // Each completed operation ends with the client woken by its answer.
            let ops: u64 = r.tasks.iter().filter(|t| t.name.starts_with("client")).map(|t| t.nr_wakeups).sum();
            let secs = r.measured_s();
            out.insert("ops_per_s".into(), ops as f64 / secs.max(1e-9));
            // TCP timers that ran out (a pair idle for their delay): the callbacks found
            // nothing pending.
            out.insert("tcp_timer_expiries".into(), r.summary.get("timer_expiries").copied().unwrap_or(0.0));
            out
        }),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UiParams {
    /// Display refresh rate, Hz (60 or 90 on the Pixel 6).
    #[serde(default = "sixty")]
    fps: f64,
    /// Mean UI-thread work per frame.
    #[serde(default = "ui_work")]
    ui_work: Duration,
    /// Mean render-thread work per frame.
    #[serde(default = "render_work")]
    render_work: Duration,
    /// Mean compositor work per frame.
    #[serde(default = "composer_work")]
    composer_work: Duration,
    /// Background app threads.
    #[serde(default = "super::count::<4>")]
    background: usize,
    /// Add the Android-like set of background kernel timers.
    #[serde(default = "yes")]
    kernel_timers: bool,
    /// CPUs of the UI, render and compositor threads (default: the two biggest
    /// clusters: EAS with uclamp boosting keeps top-app threads there, which this
    /// model's placement does not do by itself).
    top_app_cpus: Option<String>,
    /// CPUs of the background app threads (Android's background cpuset: the little
    /// cluster).
    background_cpus: Option<String>,
    /// Android's cpu cgroups (the controller AOSP's task profiles join): the UI and
    /// render threads in `top-app` (MaxPerformance), the compositor in `system`
    /// (SurfaceFlinger, a system service), the background threads in `background`
    /// (HighEnergySaving), with gs101's cpu.shares (init.gs101.rc at boot_completed:
    /// 20480, 20480, 1024).
    #[serde(default)]
    cgroups: bool,
    /// `top-app` cpu.uclamp.min, percent (needs `cgroups`).
    top_app_uclamp_min: Option<f64>,
    /// `background` cpu.uclamp.max, percent (needs `cgroups`).
    background_uclamp_max: Option<f64>,
}

fn sixty() -> f64 {
    60.0
}
// estimate: a light uibench-style frame: a few ms of UI and render work per 16.7 ms.
fn ui_work() -> Duration {
    Duration(2_000_000)
}
fn render_work() -> Duration {
    Duration(3_000_000)
}
fn composer_work() -> Duration {
    Duration(1_000_000)
}
fn yes() -> bool {
    true
}

/// `ui_frame`.
pub(super) fn ui_frame(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: UiParams = params(v)?;
    if !(p.fps.is_finite() && p.fps > 0.0) {
        return Err(ScenarioError::new("workload.params.fps", "expected a positive refresh rate"));
    }
    let frame = Duration((1e9 / p.fps).round() as u64);
    // Clusters by capacity, biggest last: top-app on all but the smallest.
    let min_cap = m.cpus.iter().map(|c| c.capacity).min().unwrap_or(1024);
    let cpulist = |pred: &dyn Fn(u32) -> bool| {
        let v: Vec<String> = m.cpus.iter().filter(|c| pred(c.capacity)).map(|c| c.id.to_string()).collect();
        if v.is_empty() {
            None
        } else {
            Some(v.join(","))
        }
    };
    let top = p.top_app_cpus.clone().or_else(|| cpulist(&|c| c > min_cap));
    let bg = p.background_cpus.clone().or_else(|| cpulist(&|c| c == min_cap));
    let periodic = OpSpec::Periodic(PeriodicSpec { period: frame, mode: PeriodicMode::Absolute, rt_app: false });
    let mut tasks = vec![
        task("ui-thread", vec![forever(vec![periodic.clone(), OpSpec::RunExp(p.ui_work), OpSpec::Signal("draw".into())])]),
        task("render-thread", vec![forever(vec![OpSpec::Wait("draw".into()), OpSpec::RunExp(p.render_work), OpSpec::Signal("compose".into())])]),
        task("composer", vec![forever(vec![OpSpec::Wait("compose".into()), OpSpec::RunExp(p.composer_work)])]),
    ];
    for t in &mut tasks {
        t.affinity = top.clone();
        // Android's display threads run at raised priority (THREAD_PRIORITY_URGENT_DISPLAY).
        t.nice = -8;
    }
    for i in 0..p.background {
        // estimate: background app work, short bursts every few tens of ms.
        let mut t = task(&format!("bg-{i}"), vec![forever(vec![OpSpec::RunExp(Duration(300_000)), OpSpec::SleepExp(Duration(30_000_000))])]);
        t.affinity = bg.clone();
        tasks.push(t);
    }
    let groups = android_groups(&p, &mut tasks)?;
    let timers = if p.kernel_timers { android_kernel_timers() } else { vec![] };
    let clusters = clusters_by_capacity(m);
    Ok(Generated {
        tasks,
        templates: vec![],
        groups,
        timers,
        reporter: Box::new(move |r| {
            let mut out = std::collections::BTreeMap::new();
            let frames = r.tasks.iter().find(|t| t.name == "composer").map_or(0, |t| t.nr_wakeups);
            out.insert("frames_per_s".into(), frames as f64 / r.measured_s().max(1e-9));
            cluster_residency(r, &clusters, &mut out);
            out
        }),
    })
}

/// `ui_frame`'s cgroups when asked (`cgroups`): each task joins its group, the groups
/// carry gs101's cpu.shares and the clamps given.
fn android_groups(p: &UiParams, tasks: &mut [crate::scenario::TaskSpec]) -> Result<Vec<GroupSpec>, ScenarioError> {
    if !p.cgroups {
        for (field, v) in [("top_app_uclamp_min", p.top_app_uclamp_min), ("background_uclamp_max", p.background_uclamp_max)] {
            if v.is_some() {
                return Err(ScenarioError::new(format!("workload.params.{field}"), "needs cgroups = true (the clamp is a cgroup's)"));
            }
        }
        return Ok(vec![]);
    }
    let group = |name: &str, shares: u64| GroupSpec { name: name.into(), cpu_shares: Some(shares), ..Default::default() };
    let mut top = group("top-app", 20480);
    top.uclamp_min = p.top_app_uclamp_min;
    let mut bg = group("background", 1024);
    bg.uclamp_max = p.background_uclamp_max;
    for t in tasks.iter_mut() {
        let g = match t.name.as_str() {
            "ui-thread" | "render-thread" => "top-app",
            "composer" => "system",
            _ => "background",
        };
        t.group = Some(g.into());
    }
    Ok(vec![top, group("system", 20480), bg])
}

/// An Android-like set of background kernel timers, all estimates of the kind a phone's
/// /proc/timer_list shows (no published inventory was found): per-CPU deferrable
/// vmstat_update (1 s, vmstat_interval's default), per-CPU pinned housekeeping (4 s),
/// and global timers re-armed from their callbacks (driver watchdogs, thermal polling,
/// wakeup-source and networking timers) at 20 ms to 2 s.
pub(crate) fn android_kernel_timers() -> Vec<KernelTimerSpec> {
    let t = |name: &str, ms: u64, per_cpu: bool, pinned: bool, deferrable: bool| KernelTimerSpec {
        name: name.into(),
        period: Duration(ms * 1_000_000),
        per_cpu,
        pinned,
        deferrable,
        work: Duration(5_000),
    };
    vec![
        t("vmstat_update", 1000, true, true, true),
        t("percpu_housekeeping", 4000, true, true, false),
        t("watchdog_a", 20, false, false, false),
        t("watchdog_b", 50, false, false, false),
        t("thermal_poll", 100, false, false, false),
        t("thermal_poll_2", 250, false, false, false),
        t("wakeup_source", 500, false, false, false),
        t("net_periodic", 1000, false, false, false),
        t("driver_poll", 2000, false, false, false),
    ]
}

/// The CPUs of each cluster, smallest capacity first, named as Android's power rails
/// name them ("little", "mid", "big"; "cluster0".. beyond three).
fn clusters_by_capacity(m: &Machine) -> Vec<(String, Vec<usize>)> {
    let mut caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    caps.sort_unstable();
    caps.dedup();
    let names: Vec<String> = match caps.len() {
        1 => vec!["all".into()],
        2 => vec!["little".into(), "big".into()],
        3 => vec!["little".into(), "mid".into(), "big".into()],
        n => (0..n).map(|i| format!("cluster{i}")).collect(),
    };
    caps.iter().zip(names).map(|(&cap, name)| (name, m.cpus.iter().filter(|c| c.capacity == cap).map(|c| c.id).collect())).collect()
}

/// Per cluster: the share of CPU time active and in each idle state (the seed's
/// residency table, normalised per cluster), and energy when the states carry power.
fn cluster_residency(r: &crate::metrics::RunResult, clusters: &[(String, Vec<usize>)], out: &mut std::collections::BTreeMap<String, f64>) {
    for (name, cpus) in clusters {
        let total: u64 = cpus.iter().map(|&c| r.cpus[c].busy_ns + r.cpus[c].idle_ns).sum();
        if total == 0 {
            continue;
        }
        let mut in_states = 0;
        let nstates = cpus.iter().map(|&c| r.cpus[c].idle_states.len()).max().unwrap_or(0);
        for k in 0..nstates {
            let t: u64 = cpus.iter().filter_map(|&c| r.cpus[c].idle_states.get(k)).map(|s| s.time_ns).sum();
            in_states += t;
            out.insert(format!("{name}_state{k}_share"), t as f64 / total as f64);
        }
        // As the cpu_idle tracepoint sees it (state -1): running tasks, and the idle loop
        // itself between states (entry, interrupt handlers).
        out.insert(format!("{name}_active_share"), total.saturating_sub(in_states) as f64 / total as f64);
        // Mean power of the cluster's rail over the run (Energy Model dynamic power).
        let nj: f64 = cpus.iter().map(|&c| r.cpus[c].energy_nj()).sum();
        if nj > 0.0 {
            let mw = nj / r.measured_ns().max(1.0) * 1000.0;
            out.insert(format!("{name}_power_mw"), mw);
            *out.entry("cpu_power_mw".into()).or_insert(0.0) += mw;
        }
    }
}
