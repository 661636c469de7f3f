//! `swap_bench`: the TLB seed's MADV_PAGEOUT micro-benchmark.
//!
//! Model: one thread pinned to a CPU maps a shared anonymous region, fills it
//! (memset), then repeats: read every page (swapping it back in), MADV_PAGEOUT the
//! region. Reported like `time` and `perf report`: elapsed, user and sys seconds, and
//! the share of time in ptep_clear_flush (the synchronous flush path).

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{LoopSpec, OpSpec, PageOutSpec, TouchPagesSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// CPU the benchmark is pinned to (taskset -c).
    #[serde(default = "default_cpu")]
    cpu: usize,
    /// Region size, KiB.
    #[serde(default = "default_region")]
    region_kib: u64,
    /// Iterations of touch + page-out.
    #[serde(default = "default_iterations")]
    iterations: u64,
    /// Other processes mapping every page.
    #[serde(default)]
    extra_mappers: u32,
    /// Reclaim as kswapd would (needed for pages mapped by several processes).
    #[serde(default)]
    kswapd: bool,
}

fn default_cpu() -> usize {
    4
}
fn default_region() -> u64 {
    1024
}
fn default_iterations() -> u64 {
    10_000
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: Params = params(v)?;
    if p.cpu >= m.nr_cpus() {
        return Err(ScenarioError::new("workload.params.cpu", format!("CPU {} does not exist on a {}-CPU machine", p.cpu, m.nr_cpus())));
    }
    let pages = p.region_kib.div_ceil(4);
    let touch = |write| OpSpec::TouchPages(TouchPagesSpec { region: "buf".into(), pages, write });
    let page_out = OpSpec::PageOut(PageOutSpec { region: "buf".into(), extra_mappers: p.extra_mappers, kswapd: p.kswapd });
    let mut t = task(
        "swap_bench",
        vec![touch(true), OpSpec::Loop(LoopSpec { count: Some(p.iterations), body: vec![touch(false), page_out] })],
    );
    t.affinity = Some(p.cpu.to_string());
    t.process = Some("swap_bench".into());
    Ok(Generated {
        tasks: vec![t],
        templates: vec![],
        groups: vec![],
        timers: vec![],
        reporter: Box::new(|r| {
            let t = &r.tasks[0];
            let elapsed = t.exit_ns.unwrap_or(r.engine.sim_ns).saturating_sub(t.start_ns) as f64 / 1e9;
            let flush = r.summary.get("kernel_ptep_clear_flush_seconds").copied().unwrap_or(0.0);
            let mut out = std::collections::BTreeMap::new();
            out.insert("elapsed_s".into(), elapsed);
            out.insert("sys_s".into(), t.sys_ns as f64 / 1e9);
            out.insert("user_s".into(), (t.run_ns - t.sys_ns) as f64 / 1e9);
            out.insert("ptep_clear_flush_pct".into(), if elapsed > 0.0 { flush / elapsed * 100.0 } else { 0.0 });
            for k in ["tlb_completion_waits", "tlb_ipis", "tlb_ipi_rounds"] {
                out.insert(k.into(), r.summary.get(k).copied().unwrap_or(0.0));
            }
            out
        }),
    })
}
