//! `schedlab._core`: the Python face of schedlab-core.
//!
//! Thin by design: every function takes and returns plain strings/numbers (JSON for
//! structured data), converts, calls the core once, and maps errors (see errors.rs).
//! One call crosses the boundary per run; the GIL is released while a run goes on.

mod errors;
mod locate;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use schedlab_core::api::{self, RunOptions};
use schedlab_core::interchange::task_timelines::{self, Timelines};
use schedlab_core::interchange::{replay, trace_text};
use schedlab_core::kernel::{KernelConfig, KernelVersion};
use schedlab_core::scenario::MachineSpec;
use schedlab_core::topology::{presets, Arch, Machine};
use schedlab_core::trace::TraceFormat;
use schedlab_core::{Scenario, ScenarioError as CoreScenarioError};

use crate::errors::{no_panic, panic_message, scenario_error, sim_error};

fn to_json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| errors::InternalError::new_err(format!("cannot serialize: {e}")))
}

/// Parses and checks a scenario the way a run would (the core's one load path),
/// returning it with the notes of an rt-app import. `machine` replaces the scenario's
/// machine.
fn load(text: &str, format: &str, origin: &str, machine: Option<MachineSpec>) -> Result<(Scenario, Vec<String>), CoreScenarioError> {
    let loaded = api::load(text, format, origin, machine)?;
    Ok((loaded.scenario, loaded.notes))
}

/// toml_location(text, field) -> str | None
///
/// ":LINE:COL" of a dotted field ("tasks[0].affinity") in TOML text, for errors found
/// once the run is built (the core reports them without a position); None if absent.
#[pyfunction]
fn toml_location(text: &str, field: &str) -> Option<String> {
    let field = field.split(" (").next().unwrap_or(field);
    locate::toml_field(text, field).map(|(line, col)| format!(":{line}:{col}"))
}

/// load_scenario(text, format="toml", origin="<string>", machine=None) -> (str, list[str])
///
/// Parses and validates a scenario (format "toml", "json", "rtapp", or "dict" for JSON
/// made from a Python dict; "json" text that is an rt-app file is imported as one) and
/// returns it as normalized JSON, with the notes of an rt-app import (what was
/// approximated or left out). `machine`, a machine name as `--machine` takes it (a
/// preset, "topo(S,L,C,T)" or "host"), replaces the scenario's machine. Raises
/// schedlab.ScenarioError, or ValueError for a malformed machine name.
#[pyfunction]
#[pyo3(signature = (text, format = "toml", origin = "<string>", machine = None))]
fn load_scenario(text: &str, format: &str, origin: &str, machine: Option<&str>) -> PyResult<(String, Vec<String>)> {
    no_panic("load_scenario", || {
        // The name is read here, in the call that loads the scenario: no [machine] table
        // goes through Python and back.
        let machine = machine.map(api::machine_spec_named).transpose().map_err(|e| PyValueError::new_err(e.message))?;
        match load(text, format, origin, machine) {
            Ok((s, notes)) => Ok((to_json(&s)?, notes)),
            Err(mut e) => {
                if format == "toml" && e.location.is_empty() && e.origin == origin {
                    if let Some((line, col)) = locate::toml_field(text, &e.field) {
                        e.location = format!(":{line}:{col}");
                    }
                }
                Err(scenario_error(&e))
            }
        }
    })
}

/// available_memory() -> Optional[int]
///
/// The memory this process may still take, bytes (the least of MemAvailable, the
/// rlimits and the cgroup's memory.max headroom): the default memory limit of a run.
#[pyfunction]
fn available_memory() -> Option<u64> {
    schedlab_core::engine::limits::available_memory()
}

/// Bumped by `interrupt_runs()`: every run in this process that started before stops at
/// its next check (threads other than the main one never see a signal themselves).
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// interrupt_runs() -> None
///
/// Stops every run of this process at its next check (about every million events); each
/// returns its partial result with `engine.stopped_by = "interrupted"`.
#[pyfunction]
fn interrupt_runs() {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
}

/// Run options that stop the engine on Ctrl-C or `interrupt_runs()`. Python's handler
/// only flags the signal while the run holds no GIL, so the run checks for it now and
/// then (with the progress callback, which raises it too) and stops; the returned flag
/// says whether it was asked to.
fn interruptible(progress: Option<Py<PyAny>>) -> (RunOptions, Arc<std::sync::atomic::AtomicBool>) {
    let epoch = INTERRUPTS.load(Ordering::SeqCst);
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let interrupted = cancel.clone();
    let opts = RunOptions {
        progress: Some(Arc::new(move |fraction: f64| {
            Python::attach(|py| {
                let stop = match &progress {
                    Some(cb) => cb.call1(py, (fraction,)).err().filter(|e| e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py)),
                    None => None,
                }
                .or_else(|| py.check_signals().err());
                if stop.is_some() || INTERRUPTS.load(Ordering::SeqCst) != epoch {
                    interrupted.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            })
        })),
        cancel: Some(cancel.clone()),
        ..RunOptions::default()
    };
    (opts, cancel)
}

/// rt_app_export(scenario_json, seed=1) -> (str, list[str])
///
/// The scenario's tasks as rt-app JSON (pretty-printed), and notes on what rt-app
/// does not carry as schedlab runs it.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed = 1))]
fn rt_app_export(scenario_json: &str, seed: u64) -> PyResult<(String, Vec<String>)> {
    no_panic("rt_app_export", || {
        let s = Scenario::from_json_str(scenario_json, "<json>").map_err(|e| scenario_error(&e))?;
        let e = schedlab_core::interchange::rt_app_export::export(&s, seed).map_err(|e| scenario_error(&e))?;
        let text = serde_json::to_string_pretty(&e.doc).map_err(|e| errors::InternalError::new_err(e.to_string()))?;
        Ok((text, e.notes))
    })
}

fn parse_trace(text: &str, origin: &str) -> PyResult<(Timelines, &'static str)> {
    let parsed = trace_text::parse(text, origin).map_err(|e| scenario_error(&CoreScenarioError::from(e)))?;
    Ok((task_timelines::build(&parsed), parsed.flavour))
}

/// trace_timelines(text, origin="<string>") -> str
///
/// Reads ftrace or perf-script text and returns JSON: {flavour, start_ns, end_ns,
/// nr_cpus, warnings, tasks: [{pid, comm, first_seen_ns, forked_by, exit_ns, runs:
/// [[cpu, start, end]], sleeps: [[start, end, woken_by]], run_ns, sleep_ns, wait_ns}]}.
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>"))]
fn trace_timelines(text: &str, origin: &str) -> PyResult<String> {
    no_panic("trace_timelines", || {
        let (tl, flavour) = parse_trace(text, origin)?;
        let tasks: Vec<serde_json::Value> = tl
            .tasks
            .values()
            .map(|t| {
                serde_json::json!({
                    "pid": t.pid, "comm": t.comm, "first_seen_ns": t.first_seen, "forked_by": t.forked_by, "exit_ns": t.exit,
                    "runs": t.runs.iter().map(|r| [r.cpu as u64, r.start, r.end]).collect::<Vec<_>>(),
                    "sleeps": t.sleeps.iter().map(|s| serde_json::json!([s.start, s.end, s.woken_by])).collect::<Vec<_>>(),
                    "run_ns": t.runs.iter().map(|r| r.end.saturating_sub(r.start)).sum::<u64>(),
                    "sleep_ns": t.sleeps.iter().filter_map(|s| s.end.map(|e| e.saturating_sub(s.start))).sum::<u64>(),
                    "wait_ns": t.wait_ns,
                })
            })
            .collect();
        to_json(&serde_json::json!({
            "flavour": flavour, "start_ns": tl.start, "end_ns": tl.end, "nr_cpus": tl.nr_cpus,
            "warnings": tl.warnings, "tasks": tasks,
        }))
    })
}

/// trace_replay(text, origin, machine_json, source_machine=None, name="replay") -> (str, str)
///
/// A scenario (normalized JSON) replaying the trace's tasks on `machine_json` (a
/// MachineSpec), run bursts scaled by the capacities of `source_machine` (a preset or
/// "topo(...)" the trace was taken on; default: capacity 1024 everywhere), and the
/// trace's warnings as JSON.
#[pyfunction]
#[pyo3(signature = (text, origin, machine_json, source_machine = None, name = "replay"))]
fn trace_replay(text: &str, origin: &str, machine_json: &str, source_machine: Option<&str>, name: &str) -> PyResult<(String, String)> {
    no_panic("trace_replay", || {
        let (tl, _) = parse_trace(text, origin)?;
        let machine: MachineSpec = serde_json::from_str(machine_json).map_err(|e| PyValueError::new_err(format!("machine: {e}")))?;
        let source_capacity = match source_machine {
            Some(m) => find_machine(m)?.cpus.iter().map(|c| c.capacity).collect(),
            None => Vec::new(),
        };
        let s = replay::to_scenario(&tl, machine, &replay::ReplayOptions { source_capacity }, name);
        if s.tasks.is_empty() {
            let e = CoreScenarioError::new("trace", "no task runs in the trace (no sched_switch into a task): nothing to replay");
            return Err(scenario_error(&e.with_origin(origin)));
        }
        s.validate().map_err(|e| scenario_error(&e.with_origin(origin)))?;
        Ok((to_json(&s)?, to_json(&tl.warnings)?))
    })
}

/// run(scenario_json, seed, trace_path=None, trace_format="perfetto", progress=None, origin=None, limits=None, eas_check=False, rtapp_logs=False) -> str
///
/// Runs a normalized scenario with one seed and returns the RunResult as JSON. With
/// `trace_path`, streams a trace there while the run goes ("perfetto": Perfetto
/// protobuf; "json": Chrome JSON with the ftrace text embedded; "ftrace": tracefs
/// text with ns timestamps; "perf": `perf script --ns` text). `progress(fraction)` is
/// called now and then. `origin` (the scenario's file) names the file in errors found
/// while building the run. `limits` is JSON of `schedlab_core::api::Limits`
/// (`max_events`, `max_sim_ns`, `max_wall_ns`, `max_memory`). Ctrl-C (or a
/// KeyboardInterrupt from the progress callback, or `interrupt_runs()`) stops the run at
/// its next check: the result then says `"stopped_by": "interrupted"`. `eas_check`
/// records every find_energy_efficient_cpu() decision against the best allowed CPU on
/// its snapshot: the result gains `eas_check` (the decisions) and `eas_check_*` summary
/// keys. `rtapp_logs` records rt-app's per-activation log of the tasks whose programs
/// mark their phases (rt-app files): the result gains `rtapp_logs`, every pass in ns.
/// The GIL is released during the run.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, trace_path = None, trace_format = "perfetto", progress = None, origin = None, limits = None, eas_check = false, rtapp_logs = false))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scenario_json: &str,
    seed: u64,
    trace_path: Option<String>,
    trace_format: &str,
    progress: Option<Py<PyAny>>,
    origin: Option<String>,
    limits: Option<&str>,
    eas_check: bool,
    rtapp_logs: bool,
) -> PyResult<String> {
    let Some(format) = TraceFormat::parse(trace_format) else {
        return Err(PyValueError::new_err(format!("unknown trace format '{trace_format}': expected perfetto, json, ftrace, perf or trace-cmd")));
    };
    let scenario = no_panic("run", || Scenario::from_json_str(scenario_json, "<json>").map_err(|e| scenario_error(&e)))?;
    let limits: api::Limits = match limits {
        Some(text) => serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("limits: {e}")))?,
        None => api::Limits::default(),
    };
    let (mut opts, _) = interruptible(progress);
    opts.limits = limits;
    opts.eas_check = eas_check;
    opts.rtapp_logs = rtapp_logs;
    enum Outcome {
        Done(String),
        Sim(schedlab_core::SimError),
        Io(String),
        Panic(String),
    }
    let outcome = py.detach(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let result = match &trace_path {
                Some(path) => {
                    let sink = match schedlab_core::trace::file_sink(std::path::Path::new(path), format) {
                        Ok(s) => s,
                        Err(e) => return Outcome::Io(format!("cannot write trace {path}: {e}")),
                    };
                    api::run_loaded(&scenario, seed, &opts, Some(sink))
                }
                // Scenario::from_json_str validated it: the build does not again.
                None => api::run_loaded(&scenario, seed, &opts, None),
            };
            let out = match result {
                Ok(out) => out,
                Err(e) => return Outcome::Sim(e),
            };
            if let (Some(path), Some(e)) = (&trace_path, &out.trace_error) {
                return Outcome::Io(format!("cannot write trace {path}: {e}"));
            }
            let text = match (out.eas_check, out.rtapp_logs) {
                (None, None) => serde_json::to_string(&out.result),
                // Records asked for ride beside the figures, each under a key of its own.
                (decisions, passes) => serde_json::to_value(&out.result).and_then(|mut v| {
                    if let Some(d) = decisions {
                        v["eas_check"] = serde_json::to_value(d)?;
                    }
                    if let Some(p) = passes {
                        v["rtapp_logs"] = serde_json::to_value(p)?;
                    }
                    serde_json::to_string(&v)
                }),
            };
            match text {
                Ok(s) => Outcome::Done(s),
                Err(e) => Outcome::Panic(format!("cannot serialize the result: {e}")),
            }
        }));
        r.unwrap_or_else(|p| Outcome::Panic(panic_message(&p)))
    });
    match outcome {
        // Interrupted runs return what they have; Python raises schedlab.RunInterrupted.
        Outcome::Done(s) => Ok(s),
        Outcome::Sim(schedlab_core::SimError::Scenario(e)) if e.origin.is_empty() => {
            Err(scenario_error(&e.with_origin(origin.as_deref().unwrap_or("<scenario>"))))
        }
        Outcome::Sim(e) => Err(sim_error(&e)),
        Outcome::Io(msg) => Err(PyOSError::new_err(msg)),
        Outcome::Panic(msg) => Err(errors::InternalError::new_err(format!("internal error (a schedlab bug, please report it): {msg}"))),
    }
}

fn find_machine(name: &str) -> PyResult<Machine> {
    // A scenario's whole [machine] table as JSON (a topo with its arch, a preset with
    // cost overrides): the machine the scenario would run on.
    let spec: MachineSpec = if name.trim_start().starts_with('{') {
        serde_json::from_str(name).map_err(|e| PyValueError::new_err(format!("machine spec: {e}")))?
    } else {
        api::machine_spec_named(name).map_err(|e| PyValueError::new_err(e.message))?
    };
    api::build_machine(&spec).map_err(|e| PyValueError::new_err(e.message))
}

/// machine_spec(name) -> str: the [machine] table (JSON) a name stands for: "host",
/// "topo(S,L,C,T)" or a preset name (not checked until the machine is built).
#[pyfunction]
fn machine_spec(name: &str) -> PyResult<String> {
    no_panic("machine_spec", || {
        let spec = api::machine_spec_named(name).map_err(|e| PyValueError::new_err(e.message))?;
        to_json(&spec)
    })
}

/// machines() -> str: JSON list of {name, description, summary, nr_cpus, arch}.
#[pyfunction]
fn machines() -> PyResult<String> {
    no_panic("machines", || {
        let list: Vec<serde_json::Value> = presets::PRESET_NAMES
            .iter()
            .filter_map(|n| presets::preset(n))
            .map(|m| {
                serde_json::json!({
                    "name": m.name,
                    "description": m.description,
                    "summary": m.summary(),
                    "nr_cpus": m.nr_cpus(),
                    "arch": m.arch,
                })
            })
            .collect();
        to_json(&list)
    })
}

/// machine(name) -> str: JSON of the full machine (a preset or "topo(S,L,C,T)"), with
/// its LLC/core/node spans and CPU 0's sched domains. Raises ValueError if unknown.
#[pyfunction]
fn machine(name: &str) -> PyResult<String> {
    no_panic("machine", || {
        let m = find_machine(name)?;
        let mut doc = serde_json::to_value(&m).map_err(|e| errors::InternalError::new_err(e.to_string()))?;
        let spans = |v: &[schedlab_core::cpumask::CpuMask]| v.iter().map(|s| s.to_list()).collect::<Vec<_>>();
        let domains: Vec<serde_json::Value> = m
            .domains
            .first()
            .map(|ds| {
                ds.iter()
                    .map(|d| {
                        let mut v = serde_json::to_value(d).unwrap_or_default();
                        v["flags"] = serde_json::json!(d.flags.names());
                        v["span_weight"] = serde_json::json!(d.span_weight());
                        v
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(obj) = doc.as_object_mut() {
            if name == "host" {
                // What a host scenario runs unless it says otherwise.
                let k = schedlab_core::topology::sysfs::host_kernel().map_err(PyValueError::new_err)?;
                obj.insert("host_kernel".into(), host_kernel_json(&k));
            }
            // Every cost-table figure's source, kind and band (docs/hardware-sources.md).
            let sources = schedlab_core::topology::preset_sources::cost_sources(&m);
            obj.insert("cost_sources".into(), serde_json::to_value(&sources).unwrap_or_default());
            obj.insert("summary".into(), m.summary().into());
            // What a scenario with no [kernel] governor runs, and whether EAS comes with it.
            let governor = match m.default_governor {
                schedlab_core::eas::schedutil::Governor::Schedutil => "schedutil",
                schedlab_core::eas::schedutil::Governor::Performance => "performance",
            };
            obj.insert("governor".into(), governor.into());
            obj.insert("energy_model".into(), m.perf_domains.iter().any(Option::is_some).into());
            obj.insert("nr_cpus".into(), m.nr_cpus().into());
            obj.insert("llcs".into(), spans(&m.llc_span).into());
            obj.insert("cores".into(), spans(&m.core_span).into());
            obj.insert("nodes".into(), spans(&m.node_span).into());
            obj.insert("domains_cpu0".into(), domains.into());
        }
        to_json(&doc)
    })
}

fn host_kernel_json(k: &schedlab_core::topology::sysfs::HostKernel) -> serde_json::Value {
    serde_json::json!({"release": k.release, "profile": k.profile, "hz": k.hz, "hz_source": k.hz_source})
}

/// The kernel this program runs on, as JSON: release, profile (the version schedlab
/// models, stable sublevel kept), CONFIG_HZ and where it was read. Raises ValueError off
/// Linux.
#[pyfunction]
fn host_kernel() -> PyResult<String> {
    no_panic("host_kernel", || {
        let k = schedlab_core::topology::sysfs::host_kernel().map_err(PyValueError::new_err)?;
        to_json(&host_kernel_json(&k))
    })
}

/// The kernel profile of a release string ("6.18.44-fc-v657" -> "6.18.44"), or None.
#[pyfunction]
fn kernel_profile(release: &str) -> Option<String> {
    schedlab_core::topology::sysfs::profile_of_release(release)
}

fn parse_arch(arch: &str) -> PyResult<Arch> {
    serde_json::from_value(serde_json::json!(arch)).map_err(|_| PyValueError::new_err(format!("unknown arch '{arch}': expected x86_64 or arm64")))
}

fn parse_version(profile: &str) -> PyResult<KernelVersion> {
    KernelVersion::parse_profile(profile).map_err(PyValueError::new_err)
}

/// features(profile="6.6", arch="x86_64") -> str: JSON list of {name, default, reason}.
#[pyfunction]
#[pyo3(signature = (profile = "6.6", arch = "x86_64"))]
fn features(profile: &str, arch: &str) -> PyResult<String> {
    no_panic("features", || {
        let list = schedlab_core::features::list(parse_version(profile)?, parse_arch(arch)?);
        to_json(&list)
    })
}

/// kernel(profile="6.6", nr_cpus=8) -> str: JSON of the resolved profile (version,
/// policy, effective tunables) on a machine of `nr_cpus` CPUs.
#[pyfunction]
#[pyo3(signature = (profile = "6.6", nr_cpus = 8))]
fn kernel(profile: &str, nr_cpus: usize) -> PyResult<String> {
    no_panic("kernel", || {
        let k = KernelConfig::resolve(parse_version(profile)?, nr_cpus.max(1), &Default::default()).map_err(PyValueError::new_err)?;
        to_json(&k)
    })
}

/// tunables(profile="6.6", nr_cpus=8) -> str: JSON list of {name, alias, unit, doc,
/// default}, the tunables table with each default as the profile sets it on `nr_cpus`.
#[pyfunction]
#[pyo3(signature = (profile = "6.6", nr_cpus = 8))]
fn tunables(profile: &str, nr_cpus: usize) -> PyResult<String> {
    no_panic("tunables", || {
        let k = KernelConfig::resolve(parse_version(profile)?, nr_cpus.max(1), &Default::default()).map_err(PyValueError::new_err)?;
        let defaults = serde_json::to_value(&k.tunables).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let list: Vec<serde_json::Value> = schedlab_core::kernel::TUNABLE_TABLE
            .iter()
            .map(|t| {
                serde_json::json!({"name": t.name, "alias": t.alias, "unit": t.unit, "doc": t.doc,
                                   "default": defaults[t.name]})
            })
            .collect();
        to_json(&list)
    })
}

/// workloads() -> str: JSON list of the workload generators, {name, description, params:
/// [{name, default, meaning}]}.
#[pyfunction]
fn workloads() -> PyResult<String> {
    no_panic("workloads", || {
        let list: Vec<serde_json::Value> = schedlab_core::workload::GENERATORS
            .iter()
            .map(|g| {
                let params: Vec<serde_json::Value> = schedlab_core::workload::params_of(g.name)
                    .iter()
                    .map(|p| serde_json::json!({"name": p.name, "default": p.default, "meaning": p.meaning}))
                    .collect();
                serde_json::json!({"name": g.name, "description": g.description, "params": params})
            })
            .collect();
        to_json(&list)
    })
}

/// scx_schedulers() -> str: JSON list of the sched_ext schedulers a scenario can load
/// (`[kernel.sched_ext] scheduler`), {name, description}.
#[pyfunction]
fn scx_schedulers() -> PyResult<String> {
    no_panic("scx_schedulers", || {
        let list: Vec<serde_json::Value> =
            schedlab_core::ext::POLICIES.iter().map(|(name, what)| serde_json::json!({"name": name, "description": what})).collect();
        to_json(&list)
    })
}

/// bench_cases() -> str: JSON list of the speed suite's cases, {name, what, quick_ms}.
#[pyfunction]
fn bench_cases() -> PyResult<String> {
    no_panic("bench_cases", || {
        let list: Vec<serde_json::Value> =
            schedlab_core::bench::CASES.iter().map(|c| serde_json::json!({"name": c.name, "what": c.what, "quick_ms": c.quick_ms})).collect();
        to_json(&list)
    })
}

/// bench_heap(pending, ops) -> float: ns per pop+push of a bare binary heap of event keys.
#[pyfunction]
fn bench_heap(py: Python<'_>, pending: usize, ops: u64) -> f64 {
    py.detach(move || schedlab_core::bench::time_bare_heap(pending.max(1), ops.max(1)))
}

/// bench_case(name, heap_ns_per_op, quick=False, background="none") -> str: JSON of one
/// case's row (BenchRow); `quick` stops it at the case's quick_ms simulated, `background`
/// is the case's `[kernel] background`. Ctrl-C stops the case and raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (name, heap_ns_per_op, quick = false, background = "none"))]
fn bench_case(py: Python<'_>, name: &str, heap_ns_per_op: f64, quick: bool, background: &str) -> PyResult<String> {
    let case = *schedlab_core::bench::select(&[name.to_string()]).map_err(PyValueError::new_err)?[0];
    let background: schedlab_core::scenario::BackgroundSpec = serde_json::from_value(serde_json::Value::String(background.to_string()))
        .map_err(|_| PyValueError::new_err(format!("background: expected none or kernel, got '{background}'")))?;
    let (opts, cancel) = interruptible(None);
    let row = py.detach(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| schedlab_core::bench::run_case_on(&case, heap_ns_per_op, &opts, quick, background)))
            .map_err(|p| panic_message(&p))
    });
    if cancel.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("bench interrupted"));
    }
    match row {
        Ok(row) => to_json(&row),
        Err(msg) => Err(errors::InternalError::new_err(format!("internal error (a schedlab bug, please report it): {msg}"))),
    }
}

/// version() -> str: the version of the Rust core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The extension module `schedlab._core`.
#[pymodule]
mod _core {
    #[pymodule_export]
    use super::errors::{InternalError, ScenarioError, SchedlabError, SimulationLimitError};
    #[pymodule_export]
    use super::{
        available_memory, bench_case, bench_cases, bench_heap, features, host_kernel, interrupt_runs, kernel, kernel_profile, load_scenario, machine,
        machine_spec, machines, rt_app_export, run, scx_schedulers, toml_location, trace_replay, trace_timelines, tunables, version, workloads,
    };
}
