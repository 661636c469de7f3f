//! `rseq_burst`: librseq's "intermittent workload" benchmark (the mm_cid seed's).
//!
//! Mirrors: librseq tests/basic_percpu_benchmark.c (compudj/librseq, added 2024-08-29;
//! read, not run):
//!
//! ```text
//!  main:   pool = rseq_mempool_create(NULL, 16 KiB, NULL)   per-cpu, 64 KiB stride,
//!          area = rseq_mempool_percpu_zmalloc(pool)         COW_INIT (see cid_cache.rs)
//!          T = weight of the affinity mask; random rank per thread; register rseq
//!          create T threads; pthread_join them all
//!  thread: pin to the next allowed CPU; register rseq
//!          spin until all T threads are registered            (start rendezvous)
//!          poll(NULL, 0, rank x delay)
//!          20000 x { id = cpu_id or mm_cid; increment the 16384 bytes of area[id] }
//!          5 x { id = ...; t1; increment area[id]; t2; total += t2 - t1;
//!                poll(NULL, 0, delay x T) }
//!          spin until all T threads are done                  (end rendezvous)
//!  report: total / (T x 5) ns per pass
//! ```
//!
//! Model: the main thread is a thread of the process (mm_users = T + 1): it creates the
//! threads one after the other (`create` each; thread i starts at (i + 1) x `create`) and
//! waits for them. Each thread spins (runs) until the last one has started, and at the
//! end until the last one is done: a thread of rank k finishes its last pass about
//! (T - 1 - k) x delay before the last rank, and spins that long (the rendezvous as a
//! computed spin: the ranks' warm-ups differ by a few ms, which this ignores). The
//! sleeps are poll() timeouts, whose slack is 0.1 % of the timeout (at least 50 us):
//! 1.6 ms for the 1.6 s sleep of 8 threads 200 ms apart. Reported: mean ns per timed
//! pass, and its instruction and memory parts (`pass_instr_ns`, `pass_miss_ns`).

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
    #[serde(default = "super::num::<20000>")]
    warmup: u64,
    /// Timed passes per thread.
    #[serde(default = "super::num::<5>")]
    loops: u64,
    /// Main thread's time per created thread (pthread_create + sched_setaffinity); 0: no
    /// main thread, no rendezvous, every thread starts at once (the simpler model).
    #[serde(default = "default_create")]
    create: Duration,
}

fn default_delay() -> Duration {
    Duration(200_000_000)
}
fn default_area() -> u64 {
    16 * 1024
}
fn default_create() -> Duration {
    // estimate: as fibtest's (workload/fibtest.rs): tens of us per thread.
    Duration(20_000)
}

pub(super) fn build(v: &serde_json::Value, m: &Machine, seed: u64) -> Result<Generated, ScenarioError> {
    let p: Params = params(v)?;
    let allowed = match &p.cpus {
        Some(list) => CpuMask::parse_list(list).map_err(|e| ScenarioError::new("workload.params.cpus", e))?,
        None => m.all_cpus(),
    }
    .and(&m.all_cpus());
    let cpus: Vec<usize> = allowed.iter().collect();
    if cpus.is_empty() || p.loops == 0 {
        return Err(ScenarioError::new("workload.params", "expected at least one CPU of the machine and one timed loop"));
    }
    let n = cpus.len() as u64;
    let mut order: Vec<u64> = (0..n).collect();
    let mut rng = crate::rng::Stream::new(seed, "rseq_burst:order");
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let touch = |record| OpSpec::TouchArea(TouchAreaSpec { bytes: p.area_bytes, index: p.index, record });
    let rendezvous = p.create.0 > 0;
    let mut tasks: Vec<_> = cpus
        .iter()
        .zip(order)
        .enumerate()
        .map(|(i, (&cpu, rank))| {
            let mut program = Vec::new();
            if rendezvous && (i as u64) + 1 < n {
                program.push(OpSpec::Run(Duration((n - 1 - i as u64) * p.create.0)));
            }
            if rank > 0 {
                program.push(OpSpec::Poll(Duration(rank * p.delay.0)));
            }
            if p.warmup > 0 {
                program.push(OpSpec::Loop(LoopSpec { count: Some(p.warmup), body: vec![touch(false)] }));
            }
            program.push(OpSpec::Loop(LoopSpec { count: Some(p.loops), body: vec![touch(true), OpSpec::Poll(Duration(p.delay.0 * n))] }));
            if rendezvous {
                if rank + 1 < n {
                    program.push(OpSpec::Run(Duration((n - 1 - rank) * p.delay.0)));
                }
                program.push(OpSpec::Signal("rseq-join".into()));
            }
            let mut t = task(&format!("rseq-{cpu}"), program);
            t.affinity = Some(cpu.to_string());
            t.process = Some("rseq_burst".into());
            if rendezvous {
                t.start = Some(Duration((i as u64 + 1) * p.create.0));
            }
            t
        })
        .collect();
    if rendezvous {
        let mut main = task(
            "rseq-main",
            vec![OpSpec::Run(Duration(n * p.create.0)), OpSpec::Loop(LoopSpec { count: Some(n), body: vec![OpSpec::Wait("rseq-join".into())] })],
        );
        main.affinity = Some(allowed.to_list());
        main.process = Some("rseq_burst".into());
        tasks.insert(0, main);
    }
    Ok(Generated::new(
        tasks,
        Box::new(|r| {
            let mut out = std::collections::BTreeMap::new();
            if let Some(h) = r.histograms.get("touch_area") {
                out.insert("ns_per_pass".into(), h.mean_ns);
                out.insert("passes".into(), h.count as f64);
                let per = |k: &str| r.summary.get(k).copied().unwrap_or(0.0) / h.count.max(1) as f64;
                out.insert("pass_instr_ns".into(), per("touch_area_instr_ns"));
                out.insert("pass_miss_ns".into(), per("touch_area_miss_ns"));
                out.insert("cow_faults_per_pass".into(), per("touch_area_cow_faults"));
            }
            out
        }),
    ))
}
