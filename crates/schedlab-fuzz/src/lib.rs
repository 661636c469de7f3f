//! schedlab-fuzz: fuzz targets for every parser and for the engine, and the table the
//! harness (`src/main.rs`, `scripts/fuzz`) runs them from.
//!
//! A target is a function from bytes to an [`Outcome`]: it returns normally for any
//! input the program handles (an error message is handling it) and panics (or returns
//! `Err`) for a bug: a panic in the core, an invariant broken, an `Internal` error, a
//! multi-line or position-less error message. Adding a target is one function and one
//! line in [`TARGETS`]; the same functions fit a `libfuzzer-sys` `fuzz_target!` as they
//! are, for coverage-guided runs where a nightly toolchain and cargo-fuzz exist.

pub mod gen;
pub mod mutate;

use schedlab_core::api::{self, RunOptions};
use schedlab_core::{Scenario, ScenarioError, SimError};

/// What an input did, as a small signature: inputs with a new signature join the
/// corpus (the harness's only feedback: it has no coverage instrumentation).
pub type Outcome = Result<u64, String>;

/// One fuzz target.
pub struct Target {
    /// Name (the corpus directory under `fuzz/corpus/`).
    pub name: &'static str,
    /// What it feeds and to what.
    pub about: &'static str,
    /// Runs one input.
    pub run: fn(&[u8]) -> Outcome,
    /// Whether inputs are text files (seeded from `examples/`) or raw bytes.
    pub text_seeds: bool,
    /// Turns a seed file (TOML) into this target's input format, if it differs.
    pub seed_as: Option<fn(&[u8]) -> Option<Vec<u8>>>,
}

/// Every target, in the order `scripts/fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "scenario_toml",
        about: "Scenario::from_toml_str, then what loading checks (machine, tunables, generator)",
        run: scenario_toml,
        text_seeds: true,
        seed_as: None,
    },
    Target {
        name: "scenario_json",
        about: "Scenario::from_json_str and the same checks",
        run: scenario_json,
        text_seeds: true,
        seed_as: Some(toml_to_json),
    },
    Target {
        name: "fields",
        about: "the field parsers: durations, cpulists, cpu.max, kernel versions",
        run: fields,
        text_seeds: false,
        seed_as: None,
    },
    Target {
        name: "engine",
        about: "a drawn scenario (gen.rs) run with every invariant checked after every event",
        run: engine,
        text_seeds: false,
        seed_as: None,
    },
    Target {
        name: "rt_app",
        about: "interchange::rt_app::import (lenient JSON, every event), then the scenario's checks",
        run: rt_app,
        text_seeds: true,
        seed_as: None,
    },
    Target {
        name: "trace_text",
        about: "interchange::trace_text::parse (ftrace, trace-cmd, perf script), timelines, replay as a scenario",
        run: trace_text,
        text_seeds: true,
        seed_as: Some(toml_to_ftrace),
    },
];

/// A TOML scenario's first simulated millisecond as ftrace text (seeds of `trace_text`).
pub fn toml_to_ftrace(data: &[u8]) -> Option<Vec<u8>> {
    let mut s = Scenario::from_toml_str(std::str::from_utf8(data).ok()?, "seed.toml").ok()?;
    s.run.duration_s = Some(0.001);
    s.run.until = None;
    let opts = RunOptions { trace: true, ..RunOptions::default() };
    let trace = api::run(&s, 1, &opts).ok()?.trace?;
    let mut out = Vec::new();
    trace.write_ftrace(&mut out).ok()?;
    Some(out)
}

/// An importer's error: one line, naming the file.
fn import_error(e: schedlab_core::interchange::ImportError, origin: &str) -> Outcome {
    let e: ScenarioError = e.into();
    check_error(&e, origin)?;
    Ok(error_signature(&e))
}

/// A scenario an importer made: it validates, or says why in one line.
fn imported(s: &Scenario, origin: &str) -> Outcome {
    match s.validate() {
        Ok(()) => load_checks(s, origin),
        Err(e) => {
            let e = e.with_origin(origin);
            check_error(&e, origin)?;
            Ok(error_signature(&e))
        }
    }
}

/// rt-app JSON through the importer.
pub fn rt_app(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(hash(&[b"not utf-8"]));
    };
    match schedlab_core::interchange::rt_app::import(text, "fuzz.json", &Default::default()) {
        Ok(imp) => imported(&imp.scenario, "fuzz.json"),
        Err(e) => import_error(e, "fuzz.json"),
    }
}

/// Trace text through the parser, the timelines and the replay.
pub fn trace_text(data: &[u8]) -> Outcome {
    use schedlab_core::interchange::{replay, task_timelines, trace_text};
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(hash(&[b"not utf-8"]));
    };
    match trace_text::parse(text, "fuzz.trace") {
        Ok(parsed) => {
            let tl = task_timelines::build(&parsed);
            let machine = schedlab_core::scenario::MachineSpec {
                topo: Some(schedlab_core::scenario::TopoSpec { sockets: 1, llcs: 1, cores: 4, smt: 1, arch: None }),
                ..Default::default()
            };
            let s = replay::to_scenario(&tl, machine, &replay::ReplayOptions::default(), "fuzz");
            imported(&s, "fuzz.trace")
        }
        Err(e) => import_error(e, "fuzz.trace"),
    }
}

/// A TOML scenario as the JSON document the loader takes (seeds of `scenario_json`).
pub fn toml_to_json(data: &[u8]) -> Option<Vec<u8>> {
    let s = Scenario::from_toml_str(std::str::from_utf8(data).ok()?, "seed.toml").ok()?;
    serde_json::to_vec_pretty(&s).ok()
}

/// Looks a target up by name.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// FNV-1a, for outcome signatures (stable across runs and hosts).
pub fn hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        h = (h ^ 0xff).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The shape of an error (field with indices dropped, the message's first words), so
/// that one kind of error counts once whatever the numbers in it.
fn error_signature(e: &ScenarioError) -> u64 {
    let field: String = e.field.chars().filter(|c| !c.is_ascii_digit()).collect();
    let words: Vec<&str> = e.message.split_whitespace().take(3).collect();
    hash(&[b"err", field.as_bytes(), words.join(" ").as_bytes()])
}

/// Every user-facing error is one line naming its origin.
fn check_error(e: &ScenarioError, origin: &str) -> Result<(), String> {
    let line = e.to_string();
    if line.contains('\n') || e.message.contains('\n') {
        return Err(format!("multi-line error: {line:?}"));
    }
    if e.origin != origin {
        return Err(format!("error does not name its origin {origin}: {line}"));
    }
    if e.message.trim().is_empty() {
        return Err(format!("empty error message: {line:?}"));
    }
    Ok(())
}

/// What loading a scenario checks beyond parsing (`api::check`, as the bindings' load
/// runs it): the machine, the kernel profile and tunables, the generator's parameters.
fn load_checks(s: &Scenario, origin: &str) -> Result<u64, String> {
    let outcome = api::check(s).map(|(m, generated)| match &s.workload {
        Some(w) => hash(&[b"gen", w.kind.as_bytes(), &(generated.min(64) as u64).to_le_bytes()]),
        None => hash(&[b"ok", &(m.nr_cpus() as u64).to_le_bytes(), &(s.tasks.len() as u64).to_le_bytes()]),
    });
    match outcome {
        Ok(sig) => Ok(sig),
        Err(e) => {
            let e = e.with_origin(origin);
            check_error(&e, origin)?;
            Ok(error_signature(&e))
        }
    }
}

fn loader(data: &[u8], origin: &str, parse: fn(&str, &str) -> Result<Scenario, ScenarioError>) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(hash(&[b"not utf-8"]));
    };
    match parse(text, origin) {
        Ok(s) => load_checks(&s, origin),
        Err(e) => {
            check_error(&e, origin)?;
            if !e.location.is_empty() && !e.location.starts_with(':') {
                return Err(format!("location {:?} is not :LINE:COL", e.location));
            }
            Ok(error_signature(&e))
        }
    }
}

/// TOML text through the loader.
pub fn scenario_toml(data: &[u8]) -> Outcome {
    loader(data, "fuzz.toml", Scenario::from_toml_str)
}

/// JSON text through the loader.
pub fn scenario_json(data: &[u8]) -> Outcome {
    loader(data, "fuzz.json", Scenario::from_json_str)
}

/// The small parsers, picked by the first byte: durations, cpulists, cgroup `cpu.max`
/// and v1 quota/period/burst, kernel versions.
pub fn fields(data: &[u8]) -> Outcome {
    let Some((&which, rest)) = data.split_first() else { return Ok(0) };
    let text = String::from_utf8_lossy(rest);
    let sig = match which % 4 {
        0 => match schedlab_core::time::parse_duration(&text) {
            Ok(ns) => hash(&[b"dur", &(ns.checked_ilog2().unwrap_or(0) as u64).to_le_bytes()]),
            Err(e) => hash(&[b"dur-err", e.split_whitespace().next().unwrap_or("").as_bytes()]),
        },
        1 => match schedlab_core::cpumask::CpuMask::parse_list(&text) {
            Ok(m) => {
                let list = m.to_list();
                let again = schedlab_core::cpumask::CpuMask::parse_list(&list).map_err(|e| format!("to_list {list:?} does not parse back: {e}"))?;
                if again != m {
                    return Err(format!("cpulist {text:?} -> {list:?} -> a different mask"));
                }
                hash(&[b"mask", &(m.weight() as u64).to_le_bytes()])
            }
            Err(e) => hash(&[b"mask-err", e.split_whitespace().take(2).collect::<Vec<_>>().join(" ").as_bytes()]),
        },
        2 => {
            let mut nums = rest.chunks(8).map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                i64::from_le_bytes(b)
            });
            let g = schedlab_core::scenario::GroupSpec {
                name: "g".into(),
                parent: None,
                cpu_max: (rest.len() % 3 == 0).then(|| text.to_string()),
                cfs_quota_us: nums.next(),
                cfs_period_us: nums.next().map(|v| v as u64),
                cfs_burst_us: nums.next().map(|v| v as u64),
                // The rest (shares, weight, uclamp) as absent: from_group reads only the
                // bandwidth fields, and a field added to GroupSpec needs no change here.
                ..Default::default()
            };
            match schedlab_core::scenario::BandwidthSpec::from_group(&g) {
                Ok(b) => {
                    if b.period_ns == 0 || b.quota_ns == Some(0) {
                        return Err(format!("accepted a zero period or quota: {b:?}"));
                    }
                    hash(&[b"bw-ok"])
                }
                Err((f, _)) => hash(&[b"bw-err", f.as_bytes()]),
            }
        }
        _ => match schedlab_core::kernel::KernelVersion::parse(&text) {
            Ok(v) => hash(&[b"ver", &v.major.to_le_bytes()]),
            Err(_) => hash(&[b"ver-err"]),
        },
    };
    Ok(sig)
}

/// Events one engine input may take (tens of milliseconds with every invariant checked).
pub const ENGINE_MAX_EVENTS: u64 = 30_000;

/// Draws a scenario from the bytes (see [`gen`]) and runs it with every invariant
/// checked after every event; then checks CPU-time conservation and that a second run
/// gives the same result.
pub fn engine(data: &[u8]) -> Outcome {
    let text = engine_text(data);
    let mut s = match Scenario::from_toml_str(&text, "fuzz.toml") {
        Ok(s) => s,
        Err(e) => {
            check_error(&e, "fuzz.toml")?;
            return Ok(error_signature(&e));
        }
    };
    s.run.max_events = s.run.max_events.min(ENGINE_MAX_EVENTS);
    let opts = RunOptions { check_invariants: true, ..Default::default() };
    let r = match api::run(&s, 7, &opts) {
        Ok(out) => out.result,
        Err(SimError::Scenario(e)) => {
            // Found while building the run: the error has no origin yet.
            check_error(&e.clone().with_origin("fuzz.toml"), "fuzz.toml")?;
            return Ok(error_signature(&e));
        }
        // A limit the engine stops a bad program with (a loop that takes no time).
        Err(SimError::Limit(msg)) => return Ok(hash(&[b"limit", msg.split('\'').next().unwrap_or("").as_bytes()])),
        Err(e) => return Err(format!("{e}\n--- scenario ---\n{text}")),
    };
    let end = r.engine.sim_ns;
    for c in &r.cpus {
        if c.busy_ns + c.idle_ns != end {
            return Err(format!("CPU {}: busy {} + idle {} != {end}\n--- scenario ---\n{text}", c.cpu, c.busy_ns, c.idle_ns));
        }
    }
    let ran: u64 = r.tasks.iter().map(|t| t.run_ns).sum();
    let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
    if ran != busy {
        return Err(format!("tasks ran {ran} ns but CPUs were busy {busy} ns\n--- scenario ---\n{text}"));
    }
    let again = api::run(&s, 7, &RunOptions::default()).map_err(|e| format!("second run: {e}"))?.result;
    if again.engine.events != r.engine.events || again.engine.sim_ns != end {
        return Err(format!("not deterministic: {} vs {} events\n--- scenario ---\n{text}", r.engine.events, again.engine.events));
    }
    let events_log = 64 - r.engine.events.leading_zeros() as u64;
    Ok(hash(&[b"run", r.engine.stopped_by.as_bytes(), &events_log.to_le_bytes(), &(r.tasks.len().min(16) as u64).to_le_bytes()]))
}

/// The scenario text the engine target runs for these bytes (what a reproducer means).
pub fn engine_text(data: &[u8]) -> String {
    let mut u = arbitrary::Unstructured::new(data);
    gen::scenario(&mut u).unwrap_or_else(|_| {
        // Out of bytes: the same draw on the bytes repeated is still a function of them.
        let mut long = data.to_vec();
        while long.len() < 4096 {
            long.extend_from_slice(if data.is_empty() { &[0] } else { data });
        }
        gen::scenario(&mut arbitrary::Unstructured::new(&long)).unwrap_or_default()
    })
}
