//! The library's entry points: load, inspect and run scenarios.
//!
//! One call runs one scenario with one seed to completion; there are no per-event
//! callbacks, so bindings cross the language boundary once per run.

use std::collections::BTreeMap;

pub use crate::engine::Simulation;
use crate::error::{ScenarioError, SimError};
use crate::interchange::rt_app;
use crate::kernel::{KernelConfig, KernelVersion};
use crate::metrics::RunResult;
use crate::scenario::{MachineSpec, Scenario, TopoSpec};
use crate::topology::{presets, Machine};
use crate::trace::Trace;

/// Options of one run that are not part of the scenario.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// Record a trace even if the scenario does not ask for one.
    pub trace: bool,
    /// Check every invariant after every event (slow; debug builds already sample).
    pub check_invariants: bool,
    /// Called now and then with the fraction of the run done (0..1).
    pub progress: Option<std::sync::Arc<dyn Fn(f64) + Send + Sync>>,
    /// Checked as often as `progress` is called: once set (by Ctrl-C, say), the run stops
    /// at the next check and ends as "interrupted".
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Limits beyond the scenario's own (`run.max_events`); see [`Limits`].
    pub limits: Limits,
}

/// Where a run stops short of what its scenario asked, keeping a partial result (its
/// `engine.stopped_by` names the limit and `engine.partial` is true). Memory is also
/// checked before the run is built: a scenario whose estimate exceeds it is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Events (the lower of this and the scenario's `run.max_events`): "max_events".
    pub max_events: Option<u64>,
    /// Simulated time, ns: "max_sim_time".
    pub max_sim_ns: Option<u64>,
    /// Wall-clock time, ns, checked with the progress ticks (about every million
    /// events): "max_wall_time".
    pub max_wall_ns: Option<u64>,
    /// Memory, bytes; None = the host's available memory (`limits::available_memory`).
    /// Refused before the run when the estimate exceeds it; "max_memory" when a run
    /// grows past it (forks, a trace).
    pub max_memory: Option<u64>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("trace", &self.trace)
            .field("check_invariants", &self.check_invariants)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What a run produces.
#[derive(Debug)]
pub struct RunOutput {
    /// Figures.
    pub result: RunResult,
    /// The trace, if one was recorded in memory.
    pub trace: Option<Trace>,
    /// Why writing the trace failed (the run itself completed).
    pub trace_error: Option<String>,
    /// Each task's longest stall (runs with `check_invariants` only).
    pub liveness: Option<crate::engine::liveness::Liveness>,
}

/// The `[machine]` table a machine name stands for, as `--machine` takes it: "host",
/// "topo(SOCKETS,LLCS,CORES,SMT)" or a preset name (checked when the machine is built).
pub fn machine_spec_named(name: &str) -> Result<MachineSpec, ScenarioError> {
    let name = name.trim();
    if name == "host" {
        return Ok(MachineSpec { host: true, ..MachineSpec::default() });
    }
    if let Some(inner) = name.strip_prefix("topo(").and_then(|r| r.strip_suffix(')')) {
        let v: Option<Vec<usize>> = inner.split(',').map(|x| x.trim().parse().ok()).collect();
        return match v.as_deref() {
            Some(&[sockets, llcs, cores, smt]) => {
                let topo = TopoSpec { sockets, llcs, cores, smt, arch: None };
                topo.check().map_err(|e| ScenarioError::new("machine", format!("'{name}': expected topo(SOCKETS,LLCS,CORES,SMT): {e}")))?;
                Ok(MachineSpec { topo: Some(topo), ..MachineSpec::default() })
            }
            _ => Err(ScenarioError::new("machine", format!("'{name}': expected topo(SOCKETS,LLCS,CORES,SMT), each at least 1"))),
        };
    }
    Ok(MachineSpec { preset: Some(name.to_string()), ..MachineSpec::default() })
}

/// A scenario as loaded: parsed, checked, and the notes of an rt-app import (what was
/// approximated or left out).
#[derive(Debug)]
pub struct Loaded {
    /// The scenario, every default filled in.
    pub scenario: Scenario,
    /// What an rt-app import approximated or left out (empty otherwise).
    pub notes: Vec<String>,
}

/// Loads a scenario the way a run would: the one load path of the bindings and the
/// fuzz targets. `format` is "toml", "json", "rtapp" or "dict" (JSON made from a
/// Python dict, whose positions would point into generated text); "json" text that is
/// an rt-app file is imported as one. `machine` replaces the scenario's machine.
/// Errors carry `origin` (the file name) and, where known, a position.
pub fn load(text: &str, format: &str, origin: &str, machine: Option<MachineSpec>) -> Result<Loaded, ScenarioError> {
    let is_rt_app = format == "rtapp" || (format == "json" && rt_app::looks_like_rt_app(text));
    let mut notes = Vec::new();
    let mut scenario = if is_rt_app {
        let imp = rt_app::import(text, origin, &rt_app::RtAppOptions { machine: machine.clone() }).map_err(ScenarioError::from)?;
        notes = imp.notes;
        imp.scenario
    } else {
        let mut s = match format {
            "toml" => Scenario::from_toml_str(text, origin),
            "json" => Scenario::from_json_str(text, origin),
            "dict" => Scenario::from_json_str(text, origin).map_err(|mut e| {
                e.location.clear();
                e
            }),
            other => {
                return Err(ScenarioError::new("format", format!("unknown format '{other}': expected toml, json, rtapp or dict"))
                    .with_origin(origin))
            }
        }?;
        if let Some(m) = machine {
            s.machine = m;
            s.settle_kernel().map_err(|e| e.with_origin(origin))?;
            s.validate().map_err(|e| e.with_origin(origin))?;
        }
        s
    };
    if scenario.workload.as_ref().is_some_and(|w| w.rt_app.is_some()) {
        let base = if origin.starts_with('<') {
            std::path::PathBuf::from(".")
        } else {
            std::path::Path::new(origin).parent().map(|p| p.to_path_buf()).unwrap_or_default()
        };
        notes.extend(rt_app::expand_workload(&mut scenario, &base).map_err(|e| if e.origin.is_empty() { e.with_origin(origin) } else { e })?);
    }
    check(&scenario).map_err(|e| e.with_origin(origin))?;
    if scenario.name.is_empty() && !origin.starts_with('<') {
        // An unnamed scenario is named after its file ("examples/pingpong.toml" -> "pingpong").
        scenario.name = std::path::Path::new(origin).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    }
    Ok(Loaded { scenario, notes })
}

/// What a parsed scenario's own validation cannot see, checked before anything runs:
/// the machine builds, the kernel profile and tunables resolve on it, and the workload
/// generator accepts its kind and parameters (it is run once, with the first seed).
/// Returns the machine and the number of tasks the generator made.
pub fn check(scenario: &Scenario) -> Result<(Machine, usize), ScenarioError> {
    let machine = build_machine(&scenario.machine)?;
    let version = KernelVersion::parse(&scenario.kernel.profile).map_err(|e| ScenarioError::new("kernel.profile", e))?;
    KernelConfig::resolve(version, machine.nr_cpus(), &scenario.kernel.tunables).map_err(|e| ScenarioError::new("kernel.tunables", e))?;
    let mut generated = 0;
    if let Some(w) = &scenario.workload {
        let seed = scenario.run.seeds.first().copied().unwrap_or(1);
        generated = crate::workload::generate(w, &machine, seed)?.tasks.len();
    }
    Ok((machine, generated))
}

/// Builds the machine a scenario describes (preset, synthetic or host), with cost overrides.
pub fn build_machine(spec: &MachineSpec) -> Result<Machine, ScenarioError> {
    let mut m = if let Some(name) = &spec.preset {
        presets::preset(name).ok_or_else(|| {
            ScenarioError::new(
                "machine.preset",
                format!("unknown preset '{name}': expected one of {}", presets::PRESET_NAMES.join(", ")),
            )
        })?
    } else if let Some(t) = &spec.topo {
        presets::topo_arch(t.sockets, t.llcs, t.cores, t.smt, t.arch.unwrap_or(crate::topology::Arch::X86_64))
    } else {
        crate::topology::sysfs::read_host(std::path::Path::new("/sys/devices/system/cpu"))
            .map_err(|e| ScenarioError::new("machine.host", e))?
    };
    // `cpuidle.STATE.FIELD` keys change the machine's idle states; the rest its cost table.
    let (idle, cost): (BTreeMap<_, _>, BTreeMap<_, _>) =
        spec.cost.iter().map(|(k, v)| (k.clone(), *v)).partition(|(k, _)| k.starts_with("cpuidle."));
    for (key, us) in &idle {
        m.override_idle_state(&key["cpuidle.".len()..], *us).map_err(|e| ScenarioError::new("machine.cost", e))?;
    }
    if !cost.is_empty() {
        m.cost = m.cost.with_overrides(&cost).map_err(|e| ScenarioError::new("machine.cost", e))?;
    }
    if !(m.cost.smt_slowdown >= 1.0) {
        return Err(ScenarioError::new(
            "machine.cost",
            format!("smt_slowdown must be at least 1 (a thread never gains from a busy sibling), got {}", crate::cost::shown(m.cost.smt_slowdown)),
        ));
    }
    Ok(m)
}

/// Runs a scenario with one seed (an in-memory trace if asked for).
pub fn run(scenario: &Scenario, seed: u64, opts: &RunOptions) -> Result<RunOutput, SimError> {
    let mut opts = opts.clone();
    opts.limits.max_memory = opts.limits.max_memory.or_else(crate::engine::limits::available_memory);
    let sink = (opts.trace || scenario.run.trace).then(|| Box::new(crate::trace::Trace::default()) as _);
    drive(Simulation::new(scenario, seed, sink, opts.limits.max_memory)?, &opts)
}

/// The run policy around a [`Simulation`]: steps it to its end, checking invariants
/// after every event if asked (a sample of them in debug builds), and every 2^20 events
/// reports progress, stops on Ctrl-C ("interrupted") and on the wall-time and memory
/// limits, keeping the partial result.
pub fn drive(mut sim: Simulation, opts: &RunOptions) -> Result<RunOutput, SimError> {
    let wall = std::time::Instant::now();
    if let Some(n) = opts.limits.max_events {
        sim.limit_events(n);
    }
    if let Some(ns) = opts.limits.max_sim_ns {
        sim.limit_sim_time(ns);
    }
    let horizon = sim.horizon().unwrap_or(0).max(1) as f64;
    let stopped_by = loop {
        if let Some(why) = sim.step()? {
            break why;
        }
        if opts.check_invariants {
            sim.check_invariants()?;
        } else {
            sim.check_invariants_sampled();
        }
        if sim.events() & 0xF_FFFF == 0 {
            if let Some(p) = &opts.progress {
                p(if sim.horizon().is_some() { sim.now() as f64 / horizon } else { f64::NAN });
            }
            if opts.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
                break "interrupted";
            }
            if let Some(limit) = sim.over_limit(&opts.limits, &wall) {
                break limit;
            }
        }
    };
    Ok(sim.finish(stopped_by, wall.elapsed().as_nanos() as u64))
}

/// Runs a scenario with one seed, streaming its trace into `sink` as it goes.
pub fn run_traced(scenario: &Scenario, seed: u64, opts: &RunOptions, sink: Box<dyn crate::trace::TraceSink>) -> Result<RunOutput, SimError> {
    let mut opts = opts.clone();
    opts.limits.max_memory = opts.limits.max_memory.or_else(crate::engine::limits::available_memory);
    drive(Simulation::new(scenario, seed, Some(sink), opts.limits.max_memory)?, &opts)
}
