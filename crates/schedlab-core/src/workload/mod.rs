//! Workload generators: benchmarks expressed as task programs.
//!
//! Model: a generator reads its typed parameters and emits ordinary task specs (the
//! same programs a scenario can write by hand), plus a reporter that computes the
//! benchmark's own figures (makespan, round-trip time, ...) from the run's results.

pub mod background;
mod benchmarks;
mod fibtest;
mod make;
mod netperf;
mod params_doc;
mod rseq_burst;
mod swap_bench;
mod synthetic;
mod timers;

use std::collections::BTreeMap;

pub use params_doc::{params_of, ParamDoc};

use serde::de::DeserializeOwned;

use crate::error::ScenarioError;
use crate::metrics::RunResult;
use crate::scenario::{GroupSpec, TaskSpec, WorkloadSpec};
use crate::topology::Machine;

/// Computes a workload's own figures from a finished run.
pub type Reporter = Box<dyn Fn(&RunResult) -> BTreeMap<String, f64> + Send>;

/// What a generator produces.
pub struct Generated {
    /// Tasks to create at start.
    pub tasks: Vec<TaskSpec>,
    /// Templates the tasks fork.
    pub templates: Vec<TaskSpec>,
    /// cgroups the tasks use.
    pub groups: Vec<GroupSpec>,
    /// Background kernel timers the benchmark's environment has.
    pub timers: Vec<crate::scenario::KernelTimerSpec>,
    /// The benchmark's figures.
    pub reporter: Reporter,
}

impl Generated {
    /// Tasks and their figures only (no templates, groups or background timers).
    pub(super) fn new(tasks: Vec<TaskSpec>, reporter: Reporter) -> Generated {
        Generated { tasks, templates: vec![], groups: vec![], timers: vec![], reporter }
    }
}

/// A generator: name, one-line description, constructor.
pub struct GeneratorInfo {
    /// `kind` in the scenario.
    pub name: &'static str,
    /// What it models.
    pub description: &'static str,
    build: fn(&serde_json::Value, &Machine, u64) -> Result<Generated, ScenarioError>,
}

/// Every generator.
pub const GENERATORS: &[GeneratorInfo] = &[
    GeneratorInfo { name: "fibtest", description: "indeedeng/fibtest: one CPU-bound and N-1 mostly sleeping threads in one CPU-limited cgroup", build: fibtest::build },
    GeneratorInfo { name: "make", description: "make -jN: a job server forking short compile jobs (kernel build)", build: make::build },
    GeneratorInfo { name: "pingpong", description: "pairs of tasks bouncing a message through two pipes", build: synthetic::pingpong },
    GeneratorInfo { name: "threadpool", description: "a dispatcher handing requests to a pool of worker threads", build: synthetic::threadpool },
    GeneratorInfo { name: "rseq_burst", description: "librseq's intermittent-burst benchmark: per-cpu/mm_cid areas touched one thread at a time", build: rseq_burst::build },
    GeneratorInfo { name: "timer_enqueue", description: "the timer seed's micro-benchmark: enqueue+dequeue a timer in a loop on an isolated CPU, a quarter of the others busy", build: timers::timer_enqueue },
    GeneratorInfo { name: "dbench_pairs", description: "dbench network mode (tbench): client/server pairs over loopback TCP, blocking reads, TCP retransmit and delayed-ACK timers re-armed per write", build: timers::dbench_pairs },
    GeneratorInfo { name: "ui_frame", description: "Android-like UI frames (UI, render, compositor at 60/90 Hz), background apps and kernel timers", build: timers::ui_frame },
    GeneratorInfo { name: "hackbench", description: "rt-tests hackbench: groups of senders spraying messages to receivers over sockets or pipes; Time: from GO to the last exit", build: benchmarks::hackbench },
    GeneratorInfo { name: "schbench", description: "schbench: message threads waking workers that sleep then multiply matrices; wakeup and request latency percentiles, RPS", build: benchmarks::schbench },
    GeneratorInfo { name: "hhvm", description: "an HHVM-like web tier: Poisson requests to a worker pool, CPU bursts between backend waits, poor cache locality; throughput, p95/p99", build: benchmarks::hhvm },
    GeneratorInfo { name: "netperf", description: "netperf -t UDP_RR over loopback: N instances, each a netperf and its netserver exchanging one request and one response at a time; transactions per second, service demand", build: netperf::build },
    GeneratorInfo { name: "swap_bench", description: "the arm64 TLB seed's MADV_PAGEOUT swap loop on one pinned CPU", build: swap_bench::build },
];

/// Runs the generator a scenario names; `seed` feeds generators that draw (e.g. orders).
pub fn generate(spec: &WorkloadSpec, m: &Machine, seed: u64) -> Result<Generated, ScenarioError> {
    let g = GENERATORS.iter().find(|g| g.name == spec.kind).ok_or_else(|| {
        let names: Vec<_> = GENERATORS.iter().map(|g| g.name).collect();
        ScenarioError::new("workload.kind", format!("unknown generator '{}': expected one of {}", spec.kind, names.join(", ")))
    })?;
    (g.build)(&serde_json::Value::Object(spec.params.clone()), m, seed)
}

/// Reads a generator's typed parameters, naming the offending field on error.
pub(crate) fn params<T: DeserializeOwned>(v: &serde_json::Value) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "workload.params".to_string() } else { format!("workload.params.{path}") };
        ScenarioError::new(field, e.into_inner().to_string())
    })
}

/// serde defaults for plain counts (`#[serde(default = "super::num::<100>")]`): one
/// place instead of a `fn hundred()` in every generator.
pub(super) fn num<const N: u64>() -> u64 {
    N
}

/// [`num`] for `usize` fields.
pub(super) fn count<const N: usize>() -> usize {
    N
}

/// Returns a task spec with defaults.
pub(crate) fn task(name: &str, program: Vec<crate::scenario::OpSpec>) -> TaskSpec {
    TaskSpec {
        name: name.to_string(),
        count: 1,
        nice: 0,
        affinity: None,
        cpu: None,
        pin_each: false,
        group: None,
        process: None,
        footprint_kib: 0,
        start: None,
        timer_slack: None,
        cputime_poll: None,
        timer_histogram: None,
        sched_attr: None,
        slice_us: None,
        pid: None,
        program,
    }
}
