//! Helpers shared by the integration tests.
#![allow(dead_code)]

use schedlab_core::api::{run, RunOptions};
use schedlab_core::{RunResult, Scenario};

/// Parses a TOML scenario, panicking with the error.
pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a TOML scenario with a seed.
pub fn run_toml(toml: &str, seed: u64) -> RunResult {
    run(&scenario(toml), seed, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}")).result
}

/// Runs `s` with seed 1 and a trace, and returns (time, cpu) of each switch into task
/// `pid` (the tests' way of seeing where and when a task ran).
pub fn switches_into(s: &Scenario, pid: usize) -> Vec<(u64, usize)> {
    use schedlab_core::trace::TraceEvent;
    let out = run(s, 1, &RunOptions { trace: true, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    let trace = out.trace.expect("traced");
    trace.records.iter().filter_map(|r| matches!(r.event, TraceEvent::Switch { next, .. } if next == pid).then_some((r.ts, r.cpu))).collect()
}

/// Returns the run time of the task called `name`.
pub fn run_ns(r: &RunResult, name: &str) -> u64 {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}")).run_ns
}

/// The longest a runnable task of a run may stall (runnable, running none of its own
/// code) before the liveness property calls it starved: a deliberately loose bound,
/// finite, from what the scenario implies. Starvation is unbounded, so any finite
/// bound catches it once the run is longer than the bound.
///
/// With `N` the most tasks runnable at once (every one may queue on `p`'s CPU),
/// `ρ` the weight of the heaviest task over `p`'s (nice weights, times a group's
/// `cpu_shares`/1024 for the first level under the root), and `τ` the longest turn a
/// task can take before its CPU picks again (CFS: `max(sched_latency, N x
/// min_granularity)`, EEVDF: `base_slice`; at most the larger of both, plus a tick, as
/// the preemption check runs at ticks), plus the credit it may carry into that turn
/// (EEVDF's lag, clamped to `max(2 x base_slice, tick)`; CFS's sleeper credit, half the
/// latency):
///
/// * CPU term: each of the others takes at most `⌈ρ⌉` turns before `p`'s (EEVDF's lag
///   bound, CFS's vruntime order), `N ⌈ρ⌉ τ`; if `p` sits in a group that competes
///   with other entities at the root, each of its group's turns may wait for all of
///   theirs: times `N` again.
/// * Bandwidth term, per limited level of `p`'s hierarchy (quota `Q`, period `P`): the
///   level's runtime it must see spent by others before `p`'s turn is at most the CPU
///   term's `N ⌈ρ⌉ τ`; the group gets `Q` per period, and the period in progress and
///   the one that distributes the refill add two: `(⌈N ⌈ρ⌉ τ / Q⌉ + 2) P`.
pub fn liveness_bound(s: &Scenario, r: &RunResult, peak_runnable: usize, task: usize) -> u64 {
    use schedlab_core::state::task::nice_to_weight;
    let t = &r.kernel.tunables;
    let tick = 1_000_000_000 / t.hz as u64;
    let n = peak_runnable.max(1) as u64;
    let turn = t.sched_latency_ns.max(n * t.sched_min_granularity_ns).max(t.sched_base_slice_ns) + tick;
    // The credit a task may carry into its turn: EEVDF's lag, clamped by
    // update_entity_lag() to max(2 x slice, a tick); CFS's sleeper credit, half the latency.
    let credit = (2 * t.sched_base_slice_ns).max(tick).max(t.sched_latency_ns / 2);
    let tau = turn + credit;
    fn group_of<'a>(s: &'a Scenario, name: &str) -> Option<&'a schedlab_core::scenario::GroupSpec> {
        s.groups.iter().find(|g| g.name == name)
    }
    // The group under the root that holds `g` (its shares weigh against root tasks).
    let top = |g: Option<&str>| {
        let mut at = g.map(str::to_string);
        let mut last = None;
        while let Some(name) = at {
            at = group_of(s, &name).and_then(|x| x.parent.clone());
            last = Some(name);
        }
        last
    };
    let group_of = |name: &str| group_of(s, name);
    let weight = |nice: i32, group: Option<&str>| {
        let shares = top(group).and_then(|g| group_of(&g).and_then(|x| x.shares().ok())).unwrap_or(1024);
        nice_to_weight(nice) * shares / 1024
    };
    let spec_of = |name: &str| {
        s.tasks.iter().chain(&s.templates).find(|x| x.name == name || name.strip_prefix(x.name.as_str()).is_some_and(|rest| rest.starts_with('-')))
    };
    let weights: Vec<u64> = s.tasks.iter().chain(&s.templates).map(|x| weight(x.nice, x.group.as_deref())).collect();
    let heaviest = weights.iter().copied().max().unwrap_or(1024).max(1024);
    let stats = &r.tasks[task];
    let group = (stats.group != "root" && !stats.group.is_empty()).then_some(stats.group.as_str());
    let own = spec_of(&stats.name).map_or(1024, |x| weight(x.nice, group)).max(1);
    let rho = heaviest.div_ceil(own);
    let mut cpu = n * rho * tau;
    let shares_root = group.is_some() && r.tasks.iter().any(|o| top(Some(&o.group)) != top(group) || o.group == "root");
    if shares_root {
        cpu *= n;
    }
    let mut bw = 0;
    let mut level = group;
    while let Some(name) = level {
        if let Some(g) = r.groups.iter().find(|g| g.name == name) {
            if let Some(q) = g.quota_ns.filter(|&q| q > 0) {
                bw += ((n * rho * tau).div_ceil(q) + 2) * g.period_ns;
            }
        }
        level = group_of(name).and_then(|x| x.parent.as_deref());
    }
    cpu + bw
}

/// Runs a scenario with every invariant checked and asserts the liveness property:
/// no task stalls longer than `liveness_bound`. Returns how many tasks' bounds fit in
/// the run (the others' checks are vacuous: a stall cannot exceed them).
pub fn check_liveness(s: &Scenario, seed: u64) -> Result<usize, String> {
    let checked = RunOptions { check_invariants: true, ..Default::default() };
    let out = run(s, seed, &checked).map_err(|e| e.to_string())?;
    assert_liveness(s, &out)
}

/// The liveness property on a run made with `check_invariants` (see `check_liveness`).
pub fn assert_liveness(s: &Scenario, out: &schedlab_core::api::RunOutput) -> Result<usize, String> {
    let lv = out.liveness.as_ref().ok_or("no liveness record from a checked run")?;
    let r = &out.result;
    let mut fitting = 0;
    for (p, t) in r.tasks.iter().enumerate() {
        let bound = liveness_bound(s, r, lv.peak_runnable, p);
        fitting += (bound < r.engine.sim_ns) as usize;
        let stall = lv.max_stall_ns.get(p).copied().unwrap_or(0);
        if stall > bound {
            return Err(format!(
                "liveness: task {} (group {}) stalled {:.3} ms from t={:.3} ms, beyond its bound {:.3} ms \
                 ({} runnable at most; ran {:.3} ms, {} wakeups, {} migrations)",
                t.name,
                t.group,
                stall as f64 / 1e6,
                lv.max_stall_from[p] as f64 / 1e6,
                bound as f64 / 1e6,
                lv.peak_runnable,
                t.run_ns as f64 / 1e6,
                t.nr_wakeups,
                t.nr_migrations
            ));
        }
    }
    Ok(fitting)
}
