//! Small synthetic workloads: pipe ping-pong and a thread-pool server.

use serde::Deserialize;

use super::{params, task, Generated};
use crate::error::ScenarioError;
use crate::scenario::{Duration, LoopSpec, OpSpec};
use crate::topology::Machine;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PingPong {
    #[serde(default = "super::count::<1>")]
    pairs: usize,
    #[serde(default = "super::num::<1000>")]
    rounds: u64,
    #[serde(default = "two_us")]
    work: Duration,
    /// Each pair is two threads of one process (no address-space switch between them);
    /// default: two processes, as `perf bench sched pipe` forks.
    #[serde(default)]
    threads: bool,
}

fn two_us() -> Duration {
    Duration(2_000)
}

/// Pairs of tasks passing a token through two pipes `rounds` times.
pub(super) fn pingpong(v: &serde_json::Value, _m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: PingPong = params(v)?;
    let mut tasks = Vec::new();
    for i in 0..p.pairs {
        let (a2b, b2a) = (format!("ping{i}"), format!("pong{i}"));
        let body_a = vec![OpSpec::Run(p.work), OpSpec::Signal(a2b.clone()), OpSpec::Wait(b2a.clone())];
        let body_b = vec![OpSpec::Wait(a2b), OpSpec::Run(p.work), OpSpec::Signal(b2a)];
        let process = p.threads.then(|| format!("pingpong{i}"));
        for (name, body) in [(format!("ping{i}"), body_a), (format!("pong{i}"), body_b)] {
            let mut t = task(&name, vec![OpSpec::Loop(LoopSpec { count: Some(p.rounds), body })]);
            t.process = process.clone();
            tasks.push(t);
        }
    }
    let rounds = p.rounds as f64;
    Ok(Generated::new(
        tasks,
        Box::new(move |r| {
            let done: Vec<f64> = r.tasks.iter().step_by(2).filter_map(|t| t.exit_ns).map(|e| e as f64).collect();
            let mean = if done.is_empty() { f64::NAN } else { done.iter().sum::<f64>() / done.len() as f64 };
            [("round_trip_us".to_string(), mean / rounds / 1e3)].into_iter().collect()
        }),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadPool {
    threads: usize,
    #[serde(default = "super::count::<1>")]
    clients: usize,
    service: Duration,
    interval: Duration,
}

/// Clients send requests at exponential intervals; workers serve them from a queue.
pub(super) fn threadpool(v: &serde_json::Value, _m: &Machine, _seed: u64) -> Result<Generated, ScenarioError> {
    let p: ThreadPool = params(v)?;
    if p.threads == 0 {
        return Err(ScenarioError::new("workload.params.threads", "expected at least 1"));
    }
    let mut client =
        task("client", vec![OpSpec::Loop(LoopSpec { count: None, body: vec![OpSpec::SleepExp(p.interval), OpSpec::Signal("requests".into())] })]);
    client.count = p.clients;
    let mut worker =
        task("worker", vec![OpSpec::Loop(LoopSpec { count: None, body: vec![OpSpec::Wait("requests".into()), OpSpec::RunExp(p.service)] })]);
    worker.count = p.threads;
    worker.process = Some("server".into());
    Ok(Generated {
        tasks: vec![client, worker],
        templates: vec![],
        groups: vec![],
        timers: vec![],
        reporter: Box::new(|r| {
            let served: u64 = r.tasks.iter().filter(|t| t.name.starts_with("worker")).map(|t| t.nr_wakeups).sum();
            let secs = r.measured_s();
            [("requests_per_s".to_string(), if secs > 0.0 { served as f64 / secs } else { 0.0 })].into_iter().collect()
        }),
    })
}
