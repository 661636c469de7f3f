//! The ext class's DSQs and pick: where an insert puts a task, balance_one() with
//! keep-prev and the dispatch loop, the dispatch buffer, moves between runqueues (the
//! class's overview is mod.rs).

use crate::ext::{DsqId, EnqFlags, KickFlags, SCX_DSP_MAX_LOOPS, SCX_SLICE_DFL};
use crate::state::scx::{ScxOp, ScxWhere};
use crate::state::task::{SchedClass, TaskId};
use crate::state::Simulator;

/// What balance_one() found for the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Balanced {
    /// The previous task runs on (SCX_RQ_BAL_KEEP).
    KeepPrev,
    /// A task on the local DSQ.
    Local,
    /// Nothing of the class.
    Empty,
}

impl Simulator {
    /// Puts `p` (runnable on `task_cpu`) on `dsq` as the CPU `actor` decided:
    /// direct_dispatch() and finish_dispatch()'s part. SCX_DSQ_LOCAL is `actor`'s local
    /// DSQ from a dispatch, the task's own CPU's otherwise.
    pub(super) fn scx_dispatch_to(&mut self, actor: usize, p: TaskId, dsq: DsqId, flags: EnqFlags, from_dispatch: bool) {
        let local = if from_dispatch { actor } else { self.tasks[p].cpu };
        match dsq {
            DsqId::Local => self.scx_to_local_of(actor, p, local, flags),
            DsqId::LocalOn(c) if c < self.m.nr_cpus() => self.scx_to_local_of(actor, p, c, flags),
            DsqId::LocalOn(c) => {
                self.scx_error(format!("invalid CPU {c} in SCX_DSQ_LOCAL_ON"));
                self.scx_insert_global(p, flags);
            }
            DsqId::Global => self.scx_insert_global(p, flags),
            DsqId::User(id) => {
                if !self.scx.user.contains_key(&id) {
                    self.scx_error(format!("non-existent DSQ 0x{id:x}"));
                    self.scx_insert_global(p, flags);
                    return;
                }
                let vtime = self.scx.get(p).dsq_vtime;
                let q = self.scx.user.get_mut(&id).expect("checked");
                let r = if flags.vtime { q.push_vtime(p, vtime) } else { q.push_fifo(p, flags.head || flags.preempt) };
                self.scx.task(p).at = ScxWhere::Dsq(dsq);
                if let Err(e) = r {
                    // The kernel reports it and inserts anyway in the order asked.
                    self.scx_error(format!("DSQ 0x{id:x}: {e}"));
                    let q = self.scx.user.get_mut(&id).expect("checked");
                    q.remove(p);
                    q.push_fifo(p, false).or_else(|_| q.push_vtime(p, vtime)).ok();
                }
            }
        }
    }

    /// dispatch_to_local_dsq(): into `target`'s local DSQ, moving the task there if it
    /// is on another CPU; one that may not run there goes to the global DSQ (an error of
    /// the scheduler's).
    pub(super) fn scx_to_local_of(&mut self, actor: usize, p: TaskId, target: usize, flags: EnqFlags) {
        let src = self.tasks[p].cpu;
        if src != target {
            if !self.tasks[p].cpus_allowed.test(target) {
                self.scx.counters.dispatch_bad_cpu += 1;
                self.scx_error(format!("task {} dispatched to CPU {target}, outside its cpumask", self.tasks[p].stats.name));
                self.scx_insert_global(p, flags);
                return;
            }
            self.scx_migrate(p, src, target, actor);
        }
        self.scx_insert_local(target, actor, p, flags);
    }

    /// dispatch_enqueue() into `cpu`'s local DSQ (FIFO; SCX_ENQ_HEAD or PREEMPT at the
    /// head), then local_dsq_post_enq(): an idle CPU reschedules, and a preempting insert
    /// ends the slice of the class's task running there.
    pub(super) fn scx_insert_local(&mut self, cpu: usize, actor: usize, p: TaskId, flags: EnqFlags) {
        let _ = self.rqs[cpu].scx.local.push_fifo(p, flags.head || flags.preempt);
        self.scx.task(p).at = ScxWhere::Dsq(DsqId::LocalOn(cpu));
        if self.scx.in_balance == Some(cpu) {
            return;
        }
        match self.rqs[cpu].curr {
            None => self.resched_curr(cpu, actor),
            Some(c) if flags.preempt && self.class_of(c) == SchedClass::Ext => {
                self.scx.task(c).slice = 0;
                self.resched_curr(cpu, actor);
            }
            _ => {}
        }
    }

    /// dispatch_enqueue() into the global DSQ (FIFO only: a vtime insert there is the
    /// scheduler's error, done in FIFO order).
    pub(super) fn scx_insert_global(&mut self, p: TaskId, flags: EnqFlags) {
        if flags.vtime {
            self.scx_error("cannot use vtime ordering for the built-in global DSQ".into());
        }
        let _ = self.scx.global.push_fifo(p, flags.head || flags.preempt);
        self.scx.task(p).at = ScxWhere::Dsq(DsqId::Global);
        // An idle CPU where the task is queued notices (the wakeup's resched covers a
        // wakeup; a re-enqueue from dispatch leaves it to the next balance).
    }

    /// Moves runnable `p` between runqueues (move_remote_task_to_local_dsq(): deactivate,
    /// set_task_cpu, activate), with the other runqueue's lock taken by `actor`.
    pub(super) fn scx_migrate(&mut self, p: TaskId, src: usize, dst: usize, actor: usize) {
        let other = if actor == src { dst } else { src };
        let spin = self.rq_lock(other, actor, 0);
        self.charge_kernel(actor, spin);
        self.rqs[src].scx.nr_running -= 1;
        self.class_nr_sync(src);
        self.set_task_cpu(p, dst);
        self.rqs[dst].scx.nr_running += 1;
        self.class_nr_sync(dst);
    }

    /// pick_task_scx() after balance_one(): the kept previous task, or the local DSQ's
    /// first (a task without slice gets the default).
    pub(super) fn pick_task_scx(&mut self, cpu: usize) -> Option<TaskId> {
        if !self.scx.enabled {
            return None;
        }
        let prev = self.rqs[cpu].curr.filter(|&p| self.class_of(p) == SchedClass::Ext);
        self.scx.in_balance = Some(cpu);
        let found = self.balance_one(cpu, prev);
        self.scx.in_balance = None;
        let p = match (found, prev) {
            (Balanced::KeepPrev, Some(prev)) => {
                self.scx.counters.keep_prev += 1;
                self.rqs[cpu].scx.bal_keep = true;
                prev
            }
            (Balanced::Empty, _) => return None,
            _ => {
                let p = self.rqs[cpu].scx.local.pop_first()?;
                self.scx.task(p).at = ScxWhere::None;
                p
            }
        };
        let e = self.scx.task(p);
        if e.slice == 0 {
            e.slice = SCX_SLICE_DFL;
            self.scx.counters.enq_slice_dfl += 1;
        }
        Some(p)
    }

    /// balance_one(): whether `cpu` has a task of the class to run: a runnable `prev`
    /// with slice left, the local DSQ, the global DSQ, then `ops.dispatch()` in a loop
    /// while it dispatches and nothing lands here; at the end a runnable `prev` is kept
    /// unless SCX_OPS_ENQ_LAST.
    fn balance_one(&mut self, cpu: usize, prev: Option<TaskId>) -> Balanced {
        if self.rqs[cpu].scx.cpu_released {
            self.rqs[cpu].scx.cpu_released = false;
            self.scx.counters.cpu_acquire += 1;
            self.scx_call(ScxOp::Other(cpu), "cpu_acquire", |ops, k| ops.cpu_acquire(k, cpu));
        }
        let prev_runs_on = |sim: &Simulator| prev.is_some_and(|p| sim.scx.get(p).queued && sim.scx.get(p).slice > 0);
        if prev_runs_on(self) {
            return Balanced::KeepPrev;
        }
        if !self.rqs[cpu].scx.local.is_empty() || self.consume_global_dsq(cpu) {
            return Balanced::Local;
        }
        let mut loops = SCX_DSP_MAX_LOOPS;
        loop {
            self.scx.dsp_nr_tasks = 0;
            self.scx.counters.dispatch += 1;
            self.scx_call(ScxOp::Dispatch(cpu), "dispatch", |ops, k| ops.dispatch(k, cpu, prev));
            self.flush_dispatch_buf(cpu);
            if prev_runs_on(self) {
                return Balanced::KeepPrev;
            }
            if !self.rqs[cpu].scx.local.is_empty() || self.consume_global_dsq(cpu) {
                return Balanced::Local;
            }
            loops -= 1;
            if loops == 0 {
                // The CPU tries again after this pass.
                self.scx.counters.dispatch_loops_exhausted += 1;
                self.scx.self_kick[cpu] = Some(KickFlags::default());
                break;
            }
            if self.scx.dsp_nr_tasks == 0 {
                break;
            }
        }
        if prev.is_some_and(|p| self.scx.get(p).queued) && !self.scx.flags.enq_last {
            self.scx.counters.keep_last += 1;
            return Balanced::KeepPrev;
        }
        Balanced::Empty
    }

    /// consume_global_dsq(): the global DSQ's first task that may run on `cpu` moves to
    /// its local DSQ.
    pub(super) fn consume_global_dsq(&mut self, cpu: usize) -> bool {
        if self.scx.global.is_empty() {
            return false;
        }
        let tasks = &self.tasks;
        let Some(p) = self.scx.global.pop_first_where(|p| tasks[p].cpu == cpu || tasks[p].cpus_allowed.test(cpu)) else { return false };
        self.scx.task(p).at = ScxWhere::None;
        self.scx_to_local_of(cpu, p, cpu, EnqFlags::default());
        true
    }

    /// flush_dispatch_buf() / finish_dispatch(): the inserts `ops.dispatch()` made, of the
    /// tasks still in the scheduler's custody (others are dropped, as a stale qseq is).
    pub(super) fn flush_dispatch_buf(&mut self, cpu: usize) {
        let buf = std::mem::take(&mut self.scx.dsp_buf);
        for &(p, dsq, flags) in &buf {
            if self.scx.get(p).at != ScxWhere::Bpf || !self.scx.get(p).queued {
                continue;
            }
            self.scx.task(p).at = ScxWhere::None;
            self.scx.counters.dispatched += 1;
            self.scx.dsp_nr_tasks += 1;
            self.scx_dispatch_to(cpu, p, dsq, flags, true);
        }
        let mut buf = buf;
        buf.clear();
        self.scx.dsp_buf = buf;
    }

    /// scx_bpf_dsq_move_to_local(): the first task of user DSQ `id` that may run on
    /// `cpu` moves to its local DSQ.
    pub(super) fn scx_move_to_local(&mut self, cpu: usize, id: u64) -> bool {
        self.flush_dispatch_buf(cpu);
        let tasks = &self.tasks;
        let Some(q) = self.scx.user.get_mut(&id) else {
            self.scx_error(format!("invalid DSQ ID 0x{id:x}"));
            return false;
        };
        let Some(p) = q.pop_first_where(|p| tasks[p].cpu == cpu || tasks[p].cpus_allowed.test(cpu)) else { return false };
        self.scx.task(p).at = ScxWhere::None;
        self.scx_to_local_of(cpu, p, cpu, EnqFlags::default());
        self.scx.dsp_nr_tasks += 1;
        true
    }
}

/// The enqueue flags of an insert, with the ones of the enqueue it completes.
pub(super) fn merge(a: EnqFlags, b: EnqFlags) -> EnqFlags {
    EnqFlags { wakeup: a.wakeup || b.wakeup, head: a.head || b.head, preempt: a.preempt || b.preempt, last: a.last || b.last, vtime: b.vtime }
}
