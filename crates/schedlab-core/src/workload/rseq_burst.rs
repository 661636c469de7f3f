//! `rseq_burst`: librseq's "intermittent workload" benchmark (the mm_cid seed's).
//!
//! Model: T threads of one process, thread i pinned to the i-th allowed CPU; a random
//! permutation gives each its rank k; thread k sleeps k × delay (so they start one at
//! a time), runs a warm-up of passes over its area, then 5 timed passes, each followed
//! by a sleep of delay × T. A pass increments every byte of the 16 KiB area indexed by
//! rseq cpu_id or mm_cid. Reported: mean ns per timed pass.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::cpumask::CpuMask;
use crate::error::ScenarioError;
use crate::scenario::{AreaIndex, Duration, LoopSpec, OpSpec, TouchAreaSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// CPUs the process may use (taskset); one thread per CPU.
    cpus: Option<String>,
    /// Delay between threads.
    #[serde(default = "default_delay")]
    delay: Duration,
    /// Area indexing: "cpu_id" or "mm_cid".
    index: AreaIndex,
    /// Area size, bytes.
    #[serde(default = "default_area")]
    area_bytes: u64,
    /// Warm-up passes per thread.
    #[serde(default = "default_warmup")]
    warmup: u64,
    /// Timed passes per thread.
    #[serde(default = "default_loops")]
    loops: u64,
}

fn default_delay() -> Duration {
    Duration(200_000_000)
}
fn default_area() -> u64 {
    16 * 1024
}
fn default_warmup() -> u64 {
    20_000
}
fn default_loops() -> u64 {
    5
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, seed: u64) -> Result<Generated, ScenarioError> {
    let p: Params = params(v)?;
    let cpus = match &p.cpus {
        Some(list) => CpuMask::parse_list(list).map_err(|e| ScenarioError::new("workload.params.cpus", e))?,
        None => m.all_cpus(),
    }
    .and(&m.all_cpus());
    let cpus: Vec<usize> = cpus.iter().collect();
    if cpus.is_empty() || p.loops == 0 {
        return Err(ScenarioError::new("workload.params", "expected at least one CPU of the machine and one timed loop"));
    }
    let n = cpus.len() as u64;
    let mut order: Vec<u64> = (0..n).collect();
    let mut rng = crate::engine::rng::Stream::new(seed, "rseq_burst:order");
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let touch = |record| OpSpec::TouchArea(TouchAreaSpec { bytes: p.area_bytes, index: p.index, record });
    let tasks = cpus
        .iter()
        .zip(order)
        .map(|(&cpu, rank)| {
            let mut program = Vec::new();
            if rank > 0 {
                program.push(OpSpec::Sleep(Duration(rank * p.delay.0)));
            }
            if p.warmup > 0 {
                program.push(OpSpec::Loop(LoopSpec { count: Some(p.warmup), body: vec![touch(false)] }));
            }
            program.push(OpSpec::Loop(LoopSpec {
                count: Some(p.loops),
                body: vec![touch(true), OpSpec::Sleep(Duration(p.delay.0 * n))],
            }));
            let mut t = task(&format!("rseq-{cpu}"), program);
            t.affinity = Some(cpu.to_string());
            t.process = Some("rseq_burst".into());
            t
        })
        .collect();
    Ok(Generated {
        tasks,
        templates: vec![],
        groups: vec![],
        timers: vec![],
        reporter: Box::new(|r| {
            let mut out = std::collections::BTreeMap::new();
            if let Some(h) = r.histograms.get("touch_area") {
                out.insert("ns_per_pass".into(), h.mean_ns);
                out.insert("passes".into(), h.count as f64);
            }
            out
        }),
    })
}
