//! `make -jN`: a job server forking short compile jobs, like a kernel build.
//!
//! Model: make holds N job slots (the jobserver pipe); for every unit it takes a slot
//! and forks a compiler process that computes for an exponentially distributed time,
//! returns the slot and exits; after the last unit make waits for its children and
//! runs a serial link step. Work per unit is CPU time at capacity 1024.

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
    #[serde(default = "default_units")]
    units: u64,
    /// Mean CPU time of one unit.
    #[serde(default = "default_unit_mean")]
    unit_mean: Duration,
    /// Serial link step at the end.
    #[serde(default = "default_link")]
    link: Duration,
    /// Working set of a compile job, KiB (refilled after a migration).
    #[serde(default = "default_footprint")]
    footprint_kib: u64,
}

fn default_units() -> u64 {
    2000
}
fn default_unit_mean() -> Duration {
    Duration(40_000_000)
}
fn default_link() -> Duration {
    Duration(0)
}
fn default_footprint() -> u64 {
    1024
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: MakeParams = params(v)?;
    let jobs = p.jobs.unwrap_or(m.nr_cpus());
    if jobs == 0 || p.units == 0 {
        return Err(ScenarioError::new("workload.params", "jobs and units must be at least 1"));
    }
    let mut make = task(
        "make",
        vec![
            OpSpec::Loop(LoopSpec { count: Some(jobs as u64), body: vec![OpSpec::Signal("jobserver".into())] }),
            OpSpec::Loop(LoopSpec {
                count: Some(p.units),
                body: vec![OpSpec::Wait("jobserver".into()), OpSpec::Fork(ForkSpec { template: "cc1".into(), count: 1 })],
            }),
            OpSpec::WaitChildren,
        ],
    );
    if p.link.0 > 0 {
        make.program.push(OpSpec::Run(p.link));
    }
    let mut cc1 = task("cc1", vec![OpSpec::RunExp(p.unit_mean), OpSpec::Signal("jobserver".into())]);
    cc1.footprint_kib = p.footprint_kib;
    Ok(Generated {
        tasks: vec![make],
        templates: vec![cc1],
        groups: vec![],
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
