//! The shared runqueue (swqueue RFC v1, shared_runq v2-v4): per-LLC FIFOs of runnable
//! tasks that a CPU about to go idle pulls from, in every published form.
//!
//! Mirrors: David Vernet's series, kernel/sched/fair.c as each version patched it:
//! - v1 (2023-06-13, seed 000), `SHARED_RUNQ`: swqueue_enqueue() at the end of
//!   enqueue_task_fair() for ENQUEUE_WAKEUP && !ENQUEUE_MIGRATED && nr_cpus_allowed > 1;
//!   swqueue_remove_task() on pick and dequeue; swqueue_pick_next_task() in
//!   pick_next_task_fair()'s idle path ahead of newidle_balance(), no gate.
//! - v2 (2023-07-10), `SHARED_RUNQ_V2`: the pull moves to the top of newidle_balance()
//!   (after cpu_active, before idle_stamp and every gate); shared_runq_pop_task() takes
//!   the head only if is_cpu_allowed() (no list walk). Enqueue on wakeup as v1, or with
//!   `SHARED_RUNQ_ALL` ("Move shared_runq to __{enqueue,dequeue}_entity()") every time a
//!   task enters the CFS tree (wakeups, preempted tasks put back, migrations) and leave
//!   it when it leaves the tree. `SHARED_RUNQ_SHARDS`: the v2 sharding patch,
//!   max(llc_size / SHARED_RUNQ_SHARD_SZ, 1) shards, a CPU's shard cpu % n, pulls try
//!   every shard from the CPU's own.
//! - v3 (2023-08-09), `SHARED_RUNQ_V3`: v2 with __enqueue_entity() enqueueing and shards
//!   ceil(llc_size / SHARD_SZ), index (cpu >> 1) % n. `SHARED_RUNQ_V3_LLC_SKIP`: its
//!   attempt to skip <= LLC domains in newidle_balance() set `sd` to sd_llc->parent, but
//!   for_each_domain() restarts from rq->sd, so every domain is still walked: the only
//!   effect is that the avg_idle gate reads the parent's max_newidle_lb_cost (or, with
//!   no parent, no avg_idle gate at all).
//! - v4 (2023-12-11), `SHARED_RUNQ_V4`: __enqueue_entity() enqueues only when the rq is
//!   not empty (rq->nr_running >= 1: the task would be picked next anyway); newidle skips
//!   everything unless rd->overload, then pulls ignoring avg_idle, then runs the regular
//!   loop without the <= LLC domains (SD_SHARE_PKG_RESOURCES). Sharding was a separate
//!   later patch: `SHARED_RUNQ_SHARDS` adds it with v3's layout.
//! `SHARED_RUNQ_STEAL` (v1 only): the RFC's stated next step, other LLCs of the node.
//! Model: each shard's lock is a modeled cache line (lock.rs): every enqueue, removal
//! and pop takes it, so contention on large LLCs costs time and is reported per lock.
//! Removal is lazy (the entry stays, a per-task sequence number marks it dead), which is
//! equivalent to list_del_init() under the lock, whose cost is charged when it happens.
//! A pull migrates like move_queued_task(): the remote rq's lock line plus migration.

mod lock;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

pub use lock::LockStats;
use lock::LineLock;

use crate::cpumask::CpuId;
use crate::engine::Simulator;
use crate::features::{Feature, Features};
use crate::task::{TaskId, TaskState};
use crate::time::Ns;
use crate::topology::{Machine, SdFlags};

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
struct Shard {
    /// (task, its enqueue sequence number), oldest first; dead entries are skipped.
    list: VecDeque<(TaskId, u32)>,
    /// Live entries.
    len: usize,
    lock: LineLock,
}

/// The shards of every LLC and where each task is queued.
#[derive(Clone, Debug, Default)]
pub struct SharedRunq {
    version: Option<Version>,
    /// Enqueue from __enqueue_entity() (v2 ALL, v3, v4) rather than on wakeup.
    all: bool,
    steal: bool,
    /// First shard and shard count of each LLC.
    llc_shards: Vec<(usize, usize)>,
    /// Each CPU's own shard (global index).
    cpu_shard: Vec<usize>,
    shards: Vec<Shard>,
    /// Per task: its shard + 1 (0 = not queued) and its entry's sequence number.
    queued_in: Vec<usize>,
    seq: Vec<u32>,
    /// The CPU doing the current enqueue (the waker in try_to_wake_up); None: the rq's.
    pub(crate) actor: Option<CpuId>,
    /// Per CPU: when its last shard-lock operation ended.
    cpu_free: Vec<Ns>,
    enqueues: u64,
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
        let sharded = version == Version::V3 || (feat.has(Feature::SHARED_RUNQ_SHARDS) && version != Version::V1);
        let mut q = SharedRunq {
            version: Some(version),
            all: matches!(version, Version::V3 | Version::V4) || (version == Version::V2 && feat.has(Feature::SHARED_RUNQ_ALL)),
            steal: version == Version::V1 && feat.has(Feature::SHARED_RUNQ_STEAL),
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

    fn is_live(&self, p: TaskId, n: u32, s: usize) -> bool {
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

impl Simulator {
    /// Kernel time on `cpu`: the running task's, or what runs before the next task.
    fn srq_charge(&mut self, cpu: CpuId, ns: Ns) {
        match self.rqs[cpu].curr.filter(|&c| self.tasks[c].state == TaskState::Running) {
            Some(c) => {
                self.tasks[c].overhead_ns += ns;
                self.tasks[c].stats.sys_ns += ns;
            }
            None => self.irq_until[cpu] = self.irq_until[cpu].max(self.now) + ns,
        }
    }

    /// `cpu` takes and releases shard `s`'s lock; its CPU pays wait, transfer and hold.
    /// Acquisitions happen at event time, in the order events run (a CPU's pending
    /// kernel time is not added: it would let a later event's acquisition jump ahead),
    /// but a CPU's own lock operations within one event follow each other.
    fn srq_lock(&mut self, s: usize, cpu: CpuId) {
        let q = &mut self.swq;
        if q.cpu_free.len() <= cpu {
            q.cpu_free.resize(self.m.nr_cpus(), 0);
        }
        let at = self.now.max(q.cpu_free[cpu]);
        let transfer = match q.shards[s].lock.last_cpu() {
            Some(last) if last != cpu => self.m.cost.cacheline.at(self.m.distance(last, cpu)) as Ns,
            _ => 0,
        };
        let ns = q.shards[s].lock.acquire(at, cpu, transfer);
        q.cpu_free[cpu] = at + ns;
        self.srq_charge(cpu, ns);
    }

    /// shared_runq_push_task(): `p` joins the tail of `cpu`'s shard.
    fn srq_push(&mut self, p: TaskId, cpu: CpuId, actor: CpuId) {
        if self.tasks[p].nr_cpus_allowed <= 1 || self.swq.shard_of(p).is_some() {
            return;
        }
        let s = self.swq.cpu_shard[cpu];
        self.srq_lock(s, actor);
        let q = &mut self.swq;
        if q.queued_in.len() <= p {
            q.queued_in.resize(p + 1, 0);
            q.seq.resize(p + 1, 0);
        }
        q.seq[p] = q.seq[p].wrapping_add(1);
        q.queued_in[p] = s + 1;
        q.shards[s].list.push_back((p, q.seq[p]));
        q.shards[s].len += 1;
        q.enqueues += 1;
    }

    /// Wakeup-path enqueue (v1, v2 WAKEUP): a task woken on the CPU it last ran on
    /// (select_task_rq kept prev: not ENQUEUE_MIGRATED); `waker_cpu` does it.
    pub(crate) fn swq_enqueue(&mut self, p: TaskId, cpu: CpuId, waker_cpu: CpuId) {
        if matches!(self.swq.version, Some(Version::V1 | Version::V2)) && !self.swq.all {
            self.srq_push(p, cpu, waker_cpu);
        }
    }

    /// __enqueue_entity() hook (v2 ALL, v3, v4): `p` enters `cpu`'s CFS tree.
    #[inline]
    pub(crate) fn srq_enqueue_entity(&mut self, cpu: CpuId, p: TaskId) {
        if !self.swq.all {
            return;
        }
        // v4: not when the rq is empty (nr_running is raised after the tree insert).
        if self.swq.version == Some(Version::V4) && self.rqs[cpu].nr_running < 1 {
            return;
        }
        let actor = self.swq.actor.unwrap_or(cpu);
        self.srq_push(p, cpu, actor);
    }

    /// shared_runq_dequeue_task() / swqueue_remove_task(): `p` was picked, slept, left
    /// its rq or the tree. Takes the shard lock only if `p` is still queued.
    #[inline]
    pub(crate) fn swq_remove(&mut self, p: TaskId) {
        let Some(s) = self.swq.shard_of(p) else { return };
        let cpu = self.swq.actor.unwrap_or(self.tasks[p].cpu);
        self.srq_lock(s, cpu);
        self.swq.queued_in[p] = 0;
        self.swq.shards[s].len -= 1;
    }

    /// Pops the first live task of shard `s` for `cpu`; with `head_only` (v2+), a head
    /// that may not run on `cpu` is left where it is and nothing is returned.
    fn srq_pop(&mut self, s: usize, cpu: CpuId, head_only: bool) -> Option<TaskId> {
        if self.swq.shards[s].len == 0 {
            return None; // the unlocked list_empty() peek
        }
        self.srq_lock(s, cpu);
        loop {
            let &(p, n) = self.swq.shards[s].list.front()?;
            if !self.swq.is_live(p, n, s) {
                self.swq.shards[s].list.pop_front();
                continue;
            }
            if head_only && !self.tasks[p].cpus_allowed.test(cpu) {
                return None;
            }
            self.swq.shards[s].list.pop_front();
            self.swq.queued_in[p] = 0;
            self.swq.shards[s].len -= 1;
            return Some(p);
        }
    }

    /// move_queued_task() of a popped task to `cpu`; false if it cannot move.
    fn srq_move(&mut self, p: TaskId, cpu: CpuId) -> bool {
        let src = self.tasks[p].cpu;
        if self.tasks[p].state != TaskState::Runnable || !self.tasks[p].cpus_allowed.test(cpu) || src == cpu {
            return false;
        }
        // task_rq_lock() of the source: its rq line comes from where it lives.
        let line = self.m.cost.cacheline.at(self.m.distance(cpu, src)) as Ns;
        self.trace_event(cpu, crate::trace::TraceEvent::SharedRunqPull { pid: p + 1, from_cpu: src });
        self.detach_task(src, p);
        self.tasks[p].overhead_ns += self.m.cost.migration_ns as Ns + line;
        self.attach_task(cpu, p);
        self.rqs[cpu].stats.shared_runq_pulls += 1;
        true
    }

    /// v1's swqueue_pick_next_task(), in pick_next_task_fair() before newidle balance:
    /// pops the oldest task of the LLC (or, with SHARED_RUNQ_STEAL, of the node) and
    /// retries while the popped task cannot move; true if one was pulled.
    pub(crate) fn swq_pull(&mut self, cpu: CpuId) -> bool {
        if self.swq.version != Some(Version::V1) {
            return false;
        }
        let own = self.m.cpus[cpu].llc;
        let mut order = vec![own];
        if self.swq.steal {
            let node = self.m.cpus[cpu].node;
            order.extend((0..self.m.llc_span.len()).filter(|&l| {
                l != own && self.m.llc_span[l].first().is_some_and(|c| self.m.cpus[c].node == node)
            }));
        }
        for llc in order {
            let (s, _) = self.swq.llc_shards[llc];
            while let Some(p) = self.srq_pop(s, cpu, false) {
                if self.srq_move(p, cpu) {
                    return true;
                }
            }
        }
        false
    }

    /// shared_runq_pick_next_task() (v2-v4): the CPU's own shard first, then the others
    /// of its LLC; head-only pops. True if a task was pulled.
    fn srq_pick_next_task(&mut self, cpu: CpuId) -> bool {
        let (first, n) = self.swq.llc_shards[self.m.cpus[cpu].llc];
        let start = self.swq.cpu_shard[cpu] - first;
        loop {
            let mut popped = None;
            for i in 0..n {
                if let Some(p) = self.srq_pop(first + (start + i) % n, cpu, true) {
                    popped = Some(p);
                    break;
                }
            }
            match popped {
                None => return false,
                Some(p) if self.srq_move(p, cpu) => return true,
                Some(_) => continue, // ret -1: pick again (RETRY_TASK)
            }
        }
    }

    /// v2/v3: the pull at the top of newidle_balance(), ahead of idle_stamp and gates.
    pub(crate) fn srq_newidle_top(&mut self, cpu: CpuId) -> bool {
        matches!(self.swq.version, Some(Version::V2 | Version::V3)) && self.srq_pick_next_task(cpu)
    }

    /// v4: the pull after the rd->overload gate, ignoring avg_idle.
    pub(crate) fn srq_newidle_overloaded(&mut self, cpu: CpuId) -> bool {
        self.swq.version == Some(Version::V4) && self.srq_pick_next_task(cpu)
    }

    /// The domain level whose max_newidle_lb_cost the avg_idle gate reads: the lowest,
    /// or with v3's LLC-skip attempt the LLC's parent (None: no parent, no gate).
    pub(crate) fn srq_gate_level(&self, cpu: CpuId) -> Option<usize> {
        if self.swq.version == Some(Version::V3) && self.feat.has(Feature::SHARED_RUNQ_V3_LLC_SKIP) {
            let llc = self.m.domains[cpu].iter().rposition(|d| d.flags.has(SdFlags::SHARE_LLC))?;
            return (llc + 1 < self.m.domains[cpu].len()).then_some(llc + 1);
        }
        Some(0)
    }

    /// Whether newidle balance's loop skips domain `level` (before its cost checks):
    /// v4 skips the <= LLC domains; v3's attempt walks every domain (for_each_domain
    /// restarts from rq->sd), as does every other form.
    #[inline]
    pub(crate) fn srq_skips_level(&self, cpu: CpuId, level: usize) -> bool {
        self.swq.version == Some(Version::V4) && self.m.domains[cpu][level].flags.has(SdFlags::SHARE_LLC)
    }
}
