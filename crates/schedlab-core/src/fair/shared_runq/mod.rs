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
//!
//! `SHARED_RUNQ_STEAL` (v1 only): the RFC's stated next step, other LLCs of the node.
//! `SHARED_RUNQ_DISCARD` and `SHARED_RUNQ_SHARD_16`: the v3 review's proposals, a pop
//! that drops entries whose task already runs, and shards of 16 CPUs.
//! Model: each shard's lock is a modeled cache line (`crate::lock`): every enqueue,
//! removal and pop takes it, its hold the list operation and the list nodes it writes
//! (other tasks' lines, last written by the lock's last holder), so contention on large
//! LLCs costs time and is reported per lock. Removal is lazy (the entry stays, a
//! per-task sequence number marks it dead), which is equivalent to list_del_init()
//! under the lock, whose cost is charged when it happens. A pull runs the posted path:
//! pop; drop its own rq lock; task_rq_lock() of the popped task (its pi_lock line, its
//! runqueue's lock); the checks (queued, not on a CPU, allowed here); on success
//! move_queued_task() (detach under the source lock, attach under its own), otherwise
//! unlock and relock its own runqueue. The popped task is on a CPU when its own CPU's
//! __schedule(), already on its way to pick it (a resched pending there for a task
//! woken onto that idle CPU), takes that CPU's lock before the puller does: the puller
//! waits for the switch and finds it running. What a failure returns decides what
//! follows, as each version wrote it: v1 ret 1 and v2 ret 1 (the inverted return v3
//! fixed) send pick_next_task_fair() back to its idle path, v3 ret -1 is RETRY_TASK:
//! either way the pick starts over and pops again; v4 returns 0 and goes on to the
//! regular newidle balance.

#[cfg(test)]
mod tests;

pub use crate::lock::LockStats;

use crate::cpumask::CpuId;
use crate::features::Feature;
use crate::state::shared_runq::Version;
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;
use crate::topology::SdFlags;
/// estimate: a list_add_tail() / list_del_init() on lines already held, a few ns.
pub(crate) const CRITICAL_SECTION_NS: Ns = 5;
/// derived: list_add_tail() writes the old tail's node (a line of the task queued last,
/// last written under this lock by its last holder); the head is in the lock's line.
const PUSH_LINES: Ns = 1;
/// derived: list_del_init() writes the neighbours' nodes, before and after.
const REMOVE_LINES: Ns = 2;
/// derived: the pop reads the first node and list_del_init() writes the next one's.
const POP_LINES: Ns = 2;

/// What a pull of one popped task came to.
enum Pulled {
    Moved,
    /// Not moved; the popped task is left where it was (or running there).
    Failed,
}

impl Simulator {
    /// Kernel time on `cpu`: the running task's, or what runs before the next task.
    fn srq_charge(&mut self, cpu: CpuId, ns: Ns) {
        self.charge_sched(cpu, ns);
    }

    /// `cpu` takes and releases shard `s`'s lock for an operation writing `lines` list
    /// nodes (besides the lock's own line) and `extra` more node reads; its CPU pays the
    /// spin and the hold.
    fn srq_lock(&mut self, s: usize, cpu: CpuId, lines: Ns, extra: Ns) {
        let at = self.now.max(self.spinlocks.cpu_free[cpu]);
        // The nodes were last written under this lock, by its last holder.
        let node = self.swq.shards[s].lock.last_cpu().map_or(0, |last| self.line_ns(last, cpu));
        let hold = CRITICAL_SECTION_NS + (lines + extra) * node;
        let (m, reads) = (&self.m, &self.stats.cost_reads);
        let a = self.swq.shards[s].lock.acquire(at, cpu, hold, |last| {
            let d = m.distance(last, cpu);
            reads.note_line(d);
            m.cost.cacheline.at(d) as Ns
        });
        self.spinlocks.cpu_free[cpu] = a.start + hold;
        self.srq_charge(cpu, a.spin + hold);
    }

    /// shared_runq_push_task(): `p` joins the tail of `cpu`'s shard.
    fn srq_push(&mut self, p: TaskId, cpu: CpuId, actor: CpuId) {
        if self.tasks[p].nr_cpus_allowed <= 1 || self.swq.shard_of(p).is_some() {
            return;
        }
        let s = self.swq.cpu_shard[cpu];
        self.srq_lock(s, actor, PUSH_LINES, 0);
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
        self.srq_lock(s, cpu, REMOVE_LINES, 0);
        self.swq.queued_in[p] = 0;
        self.swq.shards[s].len -= 1;
    }

    /// Whether `p`'s own CPU `src` is already on its way to run it when `cpu` would get
    /// `src`'s lock at `at`: an idle `src` with `p` its only task and a resched due by
    /// then (the wakeup that queued `p` there). Its __schedule() holds the lock through
    /// the switch; returns the wait for that, or None when `cpu` gets there first.
    fn srq_src_runs_first(&self, p: TaskId, src: CpuId, cpu: CpuId, at: Ns) -> Option<Ns> {
        let rq = &self.rqs[src];
        if !self.rqs[src].resched_pending || rq.curr.is_some() || rq.nr_running != 1 || rq.queue.first() != Some(&p) {
            return None;
        }
        let due = self.rqs[src].resched_at;
        if due > at {
            return None;
        }
        let hold = self.path_ns(src, cost!(self, kernel.schedule_ns) + cost!(self, context_switch_ns));
        // Its hold, then the hand-over of its lock's line.
        Some((due + hold).saturating_sub(at) + self.line_ns(src, cpu))
    }

    /// The pop (shared_runq_pop_task() / swqueue_pull_task()): the first live entry of
    /// shard `s` for `cpu`, under the shard lock. With `head_only` (v2+), a head that
    /// may not run on `cpu` is left where it is and nothing is returned. With
    /// SHARED_RUNQ_DISCARD, entries whose task is already being switched in on its own
    /// CPU are dropped and the pop goes on.
    fn srq_pop(&mut self, s: usize, cpu: CpuId, head_only: bool) -> Option<TaskId> {
        if self.swq.shards[s].len == 0 {
            return None; // the unlocked list_empty() peek
        }
        // Walk first (what the hold will cover), then take the lock and unlink.
        let at = self.now.max(self.spinlocks.cpu_free[cpu]);
        let mut dropped: Vec<TaskId> = Vec::new();
        let mut found = None;
        for &(p, n) in &self.swq.shards[s].list {
            if !self.swq.is_live(p, n, s) {
                continue;
            }
            // Already being switched in there: p->on_cpu is set by now.
            if self.swq.discard && self.srq_src_runs_first(p, self.tasks[p].cpu, cpu, at).is_some() {
                dropped.push(p);
                continue;
            }
            if head_only && !self.tasks[p].cpus_allowed.test(cpu) {
                break;
            }
            found = Some(p);
            break;
        }
        self.srq_lock(s, cpu, POP_LINES, dropped.len() as Ns);
        for &p in &dropped {
            self.swq.queued_in[p] = 0;
            self.swq.shards[s].len -= 1;
            self.swq.discards += 1;
        }
        let p = found?;
        self.swq.queued_in[p] = 0;
        self.swq.shards[s].len -= 1;
        // Dead entries in front of it go with it.
        while let Some(&(q, n)) = self.swq.shards[s].list.front() {
            self.swq.shards[s].list.pop_front();
            if q == p && n == self.swq.seq[p] {
                break;
            }
        }
        Some(p)
    }

    /// The rest of a pull of popped `p` to `cpu` (shared_runq_pick_next_task() /
    /// swqueue_pick_next_task() after the pop): drop its own rq lock, task_rq_lock(p),
    /// the checks, then move_queued_task() or the relock.
    fn srq_move(&mut self, p: TaskId, cpu: CpuId) -> Pulled {
        let src = self.tasks[p].cpu;
        // raw_spin_rq_unlock(rq), then p->pi_lock: its line is where p was last woken.
        self.rq_unlock_early(cpu);
        let pi = self.line_ns(self.tasks[p].woken_from.unwrap_or(src), cpu);
        self.lock_clock_advance(cpu, pi);
        let at = self.now.max(self.spinlocks.cpu_free[cpu]);
        let relock_hold = self.path_ns(cpu, cost!(self, context_switch_ns));
        if let Some(wait) = self.srq_src_runs_first(p, src, cpu, at) {
            // task_on_cpu(): src switched to p while we waited for its lock.
            self.spinlocks.rq[src].record_wait(cpu, wait, 0);
            self.lock_clock_advance(cpu, wait);
            let relock = self.rq_lock(cpu, cpu, relock_hold);
            self.srq_charge(cpu, pi + wait + relock);
            self.swq.failed_pulls += 1;
            return Pulled::Failed;
        }
        let movable = self.tasks[p].state == TaskState::Runnable && self.tasks[p].cpus_allowed.test(cpu) && src != cpu;
        if !movable {
            // Not queued (or not allowed here): task_rq_unlock(), then the relock.
            let spin = self.rq_lock(src, cpu, 0);
            let relock = self.rq_lock(cpu, cpu, relock_hold);
            self.srq_charge(cpu, pi + spin + relock);
            self.swq.failed_pulls += 1;
            return Pulled::Failed;
        }
        // move_queued_task(): detach under src's lock, attach under ours (the relock).
        let spent = self.move_task_cost(cpu, src, cpu);
        self.srq_charge(cpu, pi + spent);
        self.trace_event(cpu, crate::trace::TraceEvent::SharedRunqPull { pid: p + 1, from_cpu: src });
        self.detach_task(src, p);
        self.attach_task(cpu, p);
        self.rqs[cpu].stats.shared_runq_pulls += 1;
        Pulled::Moved
    }

    /// v1's swqueue_pick_next_task(), in pick_next_task_fair() before newidle balance:
    /// pops the oldest task of the LLC (or, with SHARED_RUNQ_STEAL, of the node); a
    /// popped task it could not move sends the pick round again (ret 1, `goto again`),
    /// which pops the next. True if one was pulled.
    pub(crate) fn swq_pull(&mut self, cpu: CpuId) -> bool {
        if self.swq.version != Some(Version::V1) {
            return false;
        }
        let own = self.m.cpus[cpu].llc;
        let mut order = vec![own];
        if self.swq.steal {
            let node = self.m.cpus[cpu].node;
            order.extend((0..self.m.llc_span.len()).filter(|&l| l != own && self.m.llc_span[l].first().is_some_and(|c| self.m.cpus[c].node == node)));
        }
        for llc in order {
            let (s, _) = self.swq.llc_shards[llc];
            while let Some(p) = self.srq_pop(s, cpu, false) {
                if matches!(self.srq_move(p, cpu), Pulled::Moved) {
                    return true;
                }
            }
        }
        false
    }

    /// shared_runq_pick_next_task() (v2-v4): the CPU's own shard first, then the others
    /// of its LLC; head-only pops. A popped task that cannot move makes v2 (ret 1) and
    /// v3 (ret -1) start the pick over, which enters newidle balance again and pops
    /// again (`retry`); v4 returns 0 and goes on. True if a task was pulled.
    fn srq_pick_next_task(&mut self, cpu: CpuId, retry: bool) -> bool {
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
            let Some(p) = popped else { return false };
            match self.srq_move(p, cpu) {
                Pulled::Moved => return true,
                Pulled::Failed if retry => self.rqs[cpu].stats.newidle_attempts += 1,
                Pulled::Failed => return false,
            }
        }
    }

    /// v2/v3: the pull at the top of newidle_balance(), ahead of idle_stamp and gates.
    pub(crate) fn srq_newidle_top(&mut self, cpu: CpuId) -> bool {
        matches!(self.swq.version, Some(Version::V2 | Version::V3)) && self.srq_pick_next_task(cpu, true)
    }

    /// v4: the pull after the rd->overload gate, ignoring avg_idle.
    pub(crate) fn srq_newidle_overloaded(&mut self, cpu: CpuId) -> bool {
        self.swq.version == Some(Version::V4) && self.srq_pick_next_task(cpu, false)
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
