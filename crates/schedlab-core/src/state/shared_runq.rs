//! The shared wakequeue's state: its shards, their locks and what each holds.
//!
//! Mirrors: the shared_runq patch set's `struct shared_runq` / `shared_runq_shard`; the
//! behaviour (enqueue at wakeup, pull at newidle, versions v1-v4) is `fair::shared_runq`.

use crate::cpumask::CpuId;
use crate::features::{Feature, Features};
use crate::lock::LineLock;
pub use crate::lock::LockStats;
use crate::state::task::{TaskId, TaskState};
use crate::topology::Machine;
use std::collections::VecDeque;

/// Which published form is in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// swqueue RFC (seed 000).
    V1,
    /// shared_runq v2.
    V2,
    /// shared_runq v3.
    V3,
    /// shared_runq v4.
    V4,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Shard {
    /// (task, its enqueue sequence number), oldest first; dead entries are skipped.
    pub(crate) list: VecDeque<(TaskId, u32)>,
    /// Live entries.
    pub(crate) len: usize,
    pub(crate) lock: LineLock,
}

/// The shards of every LLC and where each task is queued.
#[derive(Clone, Debug, Default)]
pub struct SharedRunq {
    pub(crate) version: Option<Version>,
    /// Enqueue from __enqueue_entity() (v2 ALL, v3, v4) rather than on wakeup.
    pub(crate) all: bool,
    pub(crate) steal: bool,
    /// First shard and shard count of each LLC.
    pub(crate) llc_shards: Vec<(usize, usize)>,
    /// Each CPU's own shard (global index).
    pub(crate) cpu_shard: Vec<usize>,
    pub(crate) shards: Vec<Shard>,
    /// Per task: its shard + 1 (0 = not queued) and its entry's sequence number.
    pub(crate) queued_in: Vec<usize>,
    pub(crate) seq: Vec<u32>,
    /// The CPU doing the current enqueue (the waker in try_to_wake_up); None: the rq's.
    pub(crate) actor: Option<CpuId>,
    pub(crate) enqueues: u64,
    /// Popped tasks a pull could not move (found on a CPU, not queued, not allowed).
    pub(crate) failed_pulls: u64,
    /// Entries the pop dropped because their task already runs (SHARED_RUNQ_DISCARD).
    pub(crate) discards: u64,
    /// SHARED_RUNQ_DISCARD in force.
    pub(crate) discard: bool,
}

impl SharedRunq {
    /// Lays the shards out for the features in force; more than one version is an error.
    pub fn new(m: &Machine, feat: &Features, shard_sz: usize) -> Result<SharedRunq, String> {
        let versions: Vec<Version> = [
            (Feature::SHARED_RUNQ, Version::V1),
            (Feature::SHARED_RUNQ_V2, Version::V2),
            (Feature::SHARED_RUNQ_V3, Version::V3),
            (Feature::SHARED_RUNQ_V4, Version::V4),
        ]
        .iter()
        .filter(|(f, _)| feat.has(*f))
        .map(|&(_, v)| v)
        .collect();
        if versions.len() > 1 {
            return Err("turn on at most one of SHARED_RUNQ, SHARED_RUNQ_V2, SHARED_RUNQ_V3, SHARED_RUNQ_V4".into());
        }
        let Some(&version) = versions.first() else { return Ok(SharedRunq::default()) };
        if shard_sz == 0 {
            return Err("kernel.tunables.shared_runq_shard_sz must be at least 1".into());
        }
        // The review's shard size (SHARED_RUNQ_SHARD_16) replaces the tunable's.
        let shard_sz = if feat.has(Feature::SHARED_RUNQ_SHARD_16) { 16 } else { shard_sz };
        let sharded = version == Version::V3 || (feat.has(Feature::SHARED_RUNQ_SHARDS) && version != Version::V1);
        let mut q = SharedRunq {
            version: Some(version),
            all: matches!(version, Version::V3 | Version::V4) || (version == Version::V2 && feat.has(Feature::SHARED_RUNQ_ALL)),
            steal: version == Version::V1 && feat.has(Feature::SHARED_RUNQ_STEAL),
            discard: feat.has(Feature::SHARED_RUNQ_DISCARD),
            cpu_shard: vec![0; m.nr_cpus()],
            ..Default::default()
        };
        for (llc, span) in m.llc_span.iter().enumerate() {
            let size = span.weight();
            let n = match (sharded, version) {
                (false, _) => 1,
                (true, Version::V2) => (size / shard_sz).max(1),
                (true, _) => size.div_ceil(shard_sz).max(1),
            };
            let first = q.shards.len();
            for s in 0..n {
                q.shards.push(Shard { lock: LineLock::new(format!("llc{llc}.shard{s}")), ..Default::default() });
            }
            q.llc_shards.push((first, n));
            for cpu in span.iter() {
                let idx = if version == Version::V2 { cpu % n } else { (cpu >> 1) % n };
                q.cpu_shard[cpu] = first + idx;
            }
        }
        Ok(q)
    }

    /// The version in force, if any.
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// Per-lock statistics (empty when off).
    pub fn lock_stats(&self) -> Vec<LockStats> {
        self.shards.iter().map(|s| s.lock.stats.clone()).collect()
    }

    /// Starts every shard lock's maximum wait again.
    pub fn restart_max(&mut self) {
        self.shards.iter_mut().for_each(|s| s.lock.restart_max());
    }

    /// Tasks put on a shard.
    pub fn enqueues(&self) -> u64 {
        self.enqueues
    }

    /// The shard `p` is queued on, if any.
    pub fn shard_of(&self, p: TaskId) -> Option<usize> {
        self.queued_in.get(p).copied().filter(|&s| s > 0).map(|s| s - 1)
    }

    /// Live tasks of shard `s`, head first.
    pub fn shard_tasks(&self, s: usize) -> Vec<TaskId> {
        self.shards[s].list.iter().filter(|&&(p, n)| self.is_live(p, n, s)).map(|&(p, _)| p).collect()
    }

    /// The shards of the LLC `llc`: (first, count).
    pub fn llc_shards(&self, llc: usize) -> (usize, usize) {
        self.llc_shards[llc]
    }

    pub(crate) fn is_live(&self, p: TaskId, n: u32, s: usize) -> bool {
        self.queued_in.get(p) == Some(&(s + 1)) && self.seq[p] == n
    }

    /// Every live entry is its task's only one, and the shard counts agree.
    pub fn check(&self, state: impl Fn(TaskId) -> TaskState) -> Result<(), String> {
        let mut live = vec![0u32; self.queued_in.len()];
        for (s, shard) in self.shards.iter().enumerate() {
            let mut n = 0;
            for &(p, k) in &shard.list {
                if self.is_live(p, k, s) {
                    n += 1;
                    live[p] += 1;
                    if !matches!(state(p), TaskState::Runnable | TaskState::Throttled) {
                        return Err(format!("task {p} is in shared runqueue shard {s} in state {:?}", state(p)));
                    }
                }
            }
            if n != shard.len {
                return Err(format!("shared runqueue shard {s} counts {} tasks but holds {n}", shard.len));
            }
        }
        if let Some(p) = live.iter().position(|&c| c > 1) {
            return Err(format!("task {p} is queued twice in the shared runqueue"));
        }
        for (p, &s) in self.queued_in.iter().enumerate() {
            if s > 0 && live[p] != 1 {
                return Err(format!("task {p} is marked queued in shard {} but has no entry there", s - 1));
            }
        }
        Ok(())
    }
}
