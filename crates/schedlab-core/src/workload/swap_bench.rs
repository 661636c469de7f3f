//! `swap_bench`: the TLB seed's MADV_PAGEOUT micro-benchmark.
//!
//! Model: one thread pinned to a CPU maps a shared anonymous region, fills it
//! (memset), then repeats: read every page (swapping it back in), MADV_PAGEOUT the
//! region. Reported like `time` and `perf report`: elapsed, user and sys seconds, and
//! the share of time in ptep_clear_flush (the synchronous flush path).
//!
//! `extra_mappers` = M adds M other processes that map the same region, pinned round
//! robin to the CPUs after the benchmark's (never its own): each reads every page (mapping it,
//! and swapping in what was reclaimed), computes for `mapper_run`, sleeps `mapper_sleep`
//! (0: never; the process then stays running and its CPU is never lazy), as many rounds
//! as the benchmark has iterations.
//! MADV_PAGEOUT leaves pages mapped by more than one process alone, so with mappers the
//! benchmark reclaims with `memory_reclaim = true`: the LRU path of memory.reclaim
//! (batches of SWAP_CLUSTER_MAX, every mapping unmapped). `kswapd` is its old name.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{Duration, LoopSpec, OpSpec, PageOutSpec, TouchPagesSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// CPU the benchmark is pinned to (taskset -c).
    #[serde(default = "super::count::<4>")]
    cpu: usize,
    /// Region size, KiB.
    #[serde(default = "super::num::<1024>")]
    region_kib: u64,
    /// Iterations of touch + page-out.
    #[serde(default = "super::num::<10000>")]
    iterations: u64,
    /// Other processes mapping every page (running processes, one per CPU).
    #[serde(default)]
    extra_mappers: u32,
    /// Reclaim through memory.reclaim (LRU batches, shared pages unmapped) instead of
    /// MADV_PAGEOUT.
    #[serde(default, alias = "kswapd")]
    memory_reclaim: bool,
    /// A mapper's computation between two reads of the region.
    #[serde(default = "default_mapper_run")]
    mapper_run: Duration,
    /// A mapper's sleep after each computation (0 = none: it runs all the time).
    #[serde(default)]
    mapper_sleep: Duration,
}

fn default_mapper_run() -> Duration {
    Duration(1_000_000)
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: Params = params(v)?;
    if p.cpu >= m.nr_cpus() {
        return Err(ScenarioError::new("workload.params.cpu", format!("CPU {} does not exist on a {}-CPU machine", p.cpu, m.nr_cpus())));
    }
    if p.extra_mappers > 0 && m.nr_cpus() < 2 {
        return Err(ScenarioError::new("workload.params.extra_mappers", "mappers need a CPU besides the benchmark's"));
    }
    let pages = p.region_kib.div_ceil(4);
    let touch = |write| OpSpec::TouchPages(TouchPagesSpec { region: "buf".into(), pages, write });
    let page_out = OpSpec::PageOut(PageOutSpec { region: "buf".into(), extra_mappers: 0, kswapd: p.memory_reclaim });
    let mut t = task("swap_bench", vec![touch(true), OpSpec::Loop(LoopSpec { count: Some(p.iterations), body: vec![touch(false), page_out] })]);
    t.affinity = Some(p.cpu.to_string());
    t.process = Some("swap_bench".into());
    let mut tasks = vec![t];
    for i in 0..p.extra_mappers as usize {
        let mut body = vec![touch(false), OpSpec::Run(p.mapper_run)];
        if p.mapper_sleep.0 > 0 {
            body.push(OpSpec::Sleep(p.mapper_sleep));
        }
        // As many rounds as the benchmark: the run ends when every process has exited.
        let mut mt = task(&format!("mapper-{i}"), vec![OpSpec::Loop(LoopSpec { count: Some(p.iterations), body })]);
        // The CPUs after the benchmark's, round robin, never the benchmark's own.
        let others = m.nr_cpus() - 1;
        mt.affinity = Some(((p.cpu + 1 + i % others) % m.nr_cpus()).to_string());
        mt.process = Some(format!("mapper-{i}"));
        // The benchmark's process maps the region first.
        mt.start = Some(Duration(1_000));
        tasks.push(mt);
    }
    Ok(Generated::new(
        tasks,
        Box::new(|r| {
            let t = &r.tasks[0];
            let elapsed = t.exit_ns.unwrap_or(r.engine.sim_ns).saturating_sub(t.start_ns) as f64 / 1e9;
            let flush = r.summary.get("kernel_ptep_clear_flush_seconds").copied().unwrap_or(0.0);
            let batched = r.summary.get("kernel_try_to_unmap_flush_seconds").copied().unwrap_or(0.0);
            let mut out = std::collections::BTreeMap::new();
            out.insert("elapsed_s".into(), elapsed);
            out.insert("sys_s".into(), t.sys_ns as f64 / 1e9);
            out.insert("user_s".into(), (t.run_ns - t.sys_ns) as f64 / 1e9);
            // perf's share: cycles in ptep_clear_flush over all cycles of the (single-threaded,
            // never waiting) process.
            out.insert("ptep_clear_flush_pct".into(), if elapsed > 0.0 { flush / elapsed * 100.0 } else { 0.0 });
            out.insert("ptep_clear_flush_s".into(), flush);
            // Time in TLB maintenance (synchronous flushes, deferred posts, batch waits): the
            // hardware part a calibration of the instruction path leaves alone.
            out.insert("tlb_s".into(), flush + batched);
            for k in ["tlb_completion_waits", "tlb_ipis", "tlb_ipi_rounds"] {
                out.insert(k.into(), r.summary.get(k).copied().unwrap_or(0.0));
            }
            out
        }),
    ))
}
