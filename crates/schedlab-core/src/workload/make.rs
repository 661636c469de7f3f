//! `make -jN`: a job server forking short compile jobs, like a kernel build.
//!
//! Model: make holds N job slots (the jobserver pipe); for every unit it takes a slot
//! and forks a compiler process that computes for an exponentially distributed time,
//! returns the slot and exits; after the last unit make waits for its children and
//! runs a serial link step. Work per unit is CPU time at capacity 1024.
//! With `pipe_chunks` > 0 each unit is instead a gcc driver that forks `cc1 | as`: cc1
//! writes its output to a pipe in that many chunks and `as` wakes for each one (the
//! wakeups a real build makes), doing `as_fraction` of the unit's work.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{Duration, ForkSpec, LoopSpec, OpSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MakeParams {
    /// Parallel jobs (-jN); default: the machine's CPU count.
    jobs: Option<usize>,
    /// Compile units in the build.
    #[serde(default = "super::num::<2000>")]
    units: u64,
    /// Mean CPU time of one unit.
    #[serde(default = "default_unit_mean")]
    unit_mean: Duration,
    /// Serial link step at the end.
    #[serde(default = "default_link")]
    link: Duration,
    /// Working set of a compile job, KiB (refilled after a migration).
    #[serde(default = "super::num::<1024>")]
    footprint_kib: u64,
    /// Pipe writes from cc1 to as per unit (0 = one compiler process, no pipe).
    #[serde(default)]
    pipe_chunks: u64,
    /// Share of a unit's work done by `as` when piped.
    #[serde(default = "default_as_fraction")]
    as_fraction: f64,
}

fn default_as_fraction() -> f64 {
    0.1
}

fn default_unit_mean() -> Duration {
    Duration(40_000_000)
}
fn default_link() -> Duration {
    Duration(0)
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: MakeParams = params(v)?;
    let jobs = p.jobs.unwrap_or(m.nr_cpus());
    if jobs == 0 || p.units == 0 {
        return Err(ScenarioError::new("workload.params", "jobs and units must be at least 1"));
    }
    if !(0.0..1.0).contains(&p.as_fraction) {
        return Err(ScenarioError::new("workload.params.as_fraction", "expected a fraction in [0, 1)"));
    }
    let unit = if p.pipe_chunks > 0 { "gcc" } else { "cc1" };
    let mut make = task(
        "make",
        vec![
            OpSpec::Loop(LoopSpec { count: Some(jobs as u64), body: vec![OpSpec::Signal("jobserver".into())] }),
            OpSpec::Loop(LoopSpec {
                count: Some(p.units),
                body: vec![OpSpec::Wait("jobserver".into()), OpSpec::Fork(ForkSpec { template: unit.into(), count: 1 })],
            }),
            OpSpec::WaitChildren,
        ],
    );
    if p.link.0 > 0 {
        make.program.push(OpSpec::Run(p.link));
    }
    let templates = if p.pipe_chunks == 0 {
        let mut cc1 = task("cc1", vec![OpSpec::RunExp(p.unit_mean), OpSpec::Signal("jobserver".into())]);
        cc1.footprint_kib = p.footprint_kib;
        vec![cc1]
    } else {
        piped_unit(&p)
    };
    Ok(Generated {
        tasks: vec![make],
        templates,
        groups: vec![],
        timers: vec![],
        reporter: Box::new(|r| {
            let mut out = std::collections::BTreeMap::new();
            let makespan = r.tasks.first().and_then(|t| t.exit_ns).unwrap_or(r.engine.sim_ns) as f64 / 1e9;
            let cpu: u64 = r.tasks.iter().map(|t| t.run_ns).sum();
            out.insert("makespan_s".into(), makespan);
            out.insert("cpu_pct".into(), if makespan > 0.0 { cpu as f64 / 1e9 / makespan * 100.0 } else { 0.0 });
            out
        }),
    })
}

/// gcc driver forking `cc1 | as`, connected by a pipe private to the driver's children.
fn piped_unit(p: &MakeParams) -> Vec<crate::scenario::TaskSpec> {
    let n = p.pipe_chunks;
    let cc1_chunk = Duration((p.unit_mean.0 as f64 * (1.0 - p.as_fraction) / n as f64) as u64);
    let as_chunk = Duration((p.unit_mean.0 as f64 * p.as_fraction / n as f64) as u64);
    let gcc = task(
        "gcc",
        vec![
            OpSpec::Fork(ForkSpec { template: "cc1".into(), count: 1 }),
            OpSpec::Fork(ForkSpec { template: "as".into(), count: 1 }),
            OpSpec::WaitChildren,
            OpSpec::Signal("jobserver".into()),
        ],
    );
    let mut cc1 = task("cc1", vec![OpSpec::Loop(LoopSpec { count: Some(n), body: vec![OpSpec::RunExp(cc1_chunk), OpSpec::Signal("@pipe".into())] })]);
    cc1.footprint_kib = p.footprint_kib;
    let mut asm = task("as", vec![OpSpec::Loop(LoopSpec { count: Some(n), body: vec![OpSpec::Wait("@pipe".into()), OpSpec::RunExp(as_chunk)] })]);
    asm.footprint_kib = p.footprint_kib / 4;
    vec![gcc, cc1, asm]
}
