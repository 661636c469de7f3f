//! The library's entry points: load, inspect and run scenarios.
//!
//! One call runs one scenario with one seed to completion; there are no per-event
//! callbacks, so bindings cross the language boundary once per run.

pub use crate::engine::options::{Limits, RunOptions, RunOutput};
pub use crate::engine::{drive, Simulation};
use crate::error::{ScenarioError, SimError};
use crate::interchange::rt_app;
use crate::kernel::{KernelConfig, KernelVersion};
use crate::scenario::{MachineSpec, Scenario, TopoSpec};
use crate::topology::Machine;

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
                return Err(ScenarioError::new("format", format!("unknown format '{other}': expected toml, json, rtapp or dict")).with_origin(origin))
            }
        }?;
        if let Some(m) = machine {
            s.machine = m;
            s.settle_kernel().map_err(|e| e.with_origin(origin))?;
            s.validate().map_err(|e| e.with_origin(origin))?;
        }
        s
    };
    // Files a scenario names are read relative to its own file's directory.
    let base = if origin.starts_with('<') {
        std::path::PathBuf::from(".")
    } else {
        std::path::Path::new(origin).parent().map(|p| p.to_path_buf()).unwrap_or_default()
    };
    if let Some(profile) = &mut scenario.kernel.background_profile {
        profile.read_in(&base).map_err(|e| e.with_origin(origin))?;
        scenario.validate().map_err(|e| e.with_origin(origin))?;
    }
    if scenario.workload.as_ref().is_some_and(|w| w.rt_app.is_some()) {
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
    if let Some(ext) = &scenario.kernel.sched_ext {
        crate::ext::load(ext, version, machine.nr_cpus())?;
    }
    let mut generated = 0;
    if let Some(w) = &scenario.workload {
        let seed = scenario.run.seeds.first().copied().unwrap_or(1);
        generated = crate::workload::generate(w, &machine, seed)?.tasks.len();
    }
    Ok((machine, generated))
}

/// Builds the machine a `[machine]` table describes (see [`MachineSpec::build`]).
pub fn build_machine(spec: &MachineSpec) -> Result<Machine, ScenarioError> {
    spec.build()
}

/// Runs a scenario with one seed (an in-memory trace if asked for).
pub fn run(scenario: &Scenario, seed: u64, opts: &RunOptions) -> Result<RunOutput, SimError> {
    scenario.validate()?;
    run_loaded(scenario, seed, opts, None)
}

/// Runs a scenario with one seed, streaming its trace into `sink` as it goes.
pub fn run_traced(scenario: &Scenario, seed: u64, opts: &RunOptions, sink: Box<dyn crate::trace::TraceSink>) -> Result<RunOutput, SimError> {
    scenario.validate()?;
    run_loaded(scenario, seed, opts, Some(sink))
}

/// Runs a scenario that [`load`] or `Scenario::from_*_str` returned (they validate it, so
/// it is not validated again), streaming its trace into `sink` if given, else into
/// memory if the options or the scenario ask for one. The bindings' run.
pub fn run_loaded(scenario: &Scenario, seed: u64, opts: &RunOptions, sink: Option<Box<dyn crate::trace::TraceSink>>) -> Result<RunOutput, SimError> {
    let mut opts = opts.clone();
    opts.limits.max_memory = opts.limits.max_memory.or_else(crate::engine::limits::available_memory);
    let sink = sink.or_else(|| (opts.trace || scenario.run.trace).then(|| Box::new(crate::trace::Trace::default()) as _));
    drive(Simulation::new_checked(scenario, seed, sink, opts.limits.max_memory)?, &opts)
}
