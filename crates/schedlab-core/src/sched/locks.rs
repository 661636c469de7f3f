//! The engine's side of the modeled spinlocks (`crate::lock`): which kernel paths take a
//! runqueue or bandwidth lock, what they hold it for, and who pays.
//!
//! Mirrors: kernel/sched/core.c: __schedule() (rq_lock() to finish_task_switch()),
//! ttwu_queue() with ttwu_queue_cond() / __ttwu_queue_wakelist() and
//! sched_ttwu_pending(), task_rq_lock() and move_queued_task(); kernel/sched/fair.c:
//! detach_tasks() under the busiest runqueue's lock and attach_tasks() under the
//! destination's, newidle_balance()'s unlock and relock of its own runqueue,
//! __assign_cfs_rq_runtime() / __return_cfs_rq_runtime() / unthrottle_cfs_rq() and
//! the period timer under cfs_b->lock.
//! Model: a lock's hold is the modeled code of its critical section plus the lines it
//! pulls from other CPUs; the CPU taking it pays the spin (queue wait and hand-over, or
//! the line's transfer) and the hold. Scheduler work done outside a task's own steps
//! is charged by `charge_sched`: the running task when there is one, otherwise what
//! the CPU does next (the task it switches to, or its idle entry).

use crate::features::Feature;
use crate::kernel::KernelVersion;
use crate::lock::{LockClass, LockClassStats, LockStats};
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

/// derived: __ttwu_queue_wakelist() writes two lines of the target CPU: its
/// call_single_queue llist head (llist_add) and rq->ttwu_pending.
const WAKELIST_LINES: f64 = 2.0;
/// derived: detach_task() and attach_task() pull, besides the source runqueue's lock,
/// its cfs_rq (nr_running, load, the tree) and the task's sched_entity (the migration
/// cost estimate used to count four lines at same-LLC distance: lock, rq/cfs_rq, entity,
/// PELT average). Band 2-4.
const MIGRATION_LINES: f64 = 3.0;
/// estimate: __assign_cfs_rq_runtime() / __return_cfs_rq_runtime() under cfs_b->lock:
/// a few loads and stores on the pool's own line and the period-timer check, ~100
/// cycles. Band 50-300.
const CFS_B_HOLD_CYCLES: f64 = 100.0;

impl Simulator {
    /// When `cpu`'s next lock operation of this event starts.
    #[inline]
    fn lock_at(&self, cpu: usize) -> Ns {
        self.now.max(self.spinlocks.cpu_free[cpu])
    }

    /// `cpu`'s lock operations of this event go on after `ns` more of its work.
    #[inline]
    pub(crate) fn lock_clock_advance(&mut self, cpu: usize, ns: Ns) {
        self.spinlocks.cpu_free[cpu] = self.lock_at(cpu) + ns;
    }

    /// `cpu` takes runqueue `rq`'s lock and holds it `hold`; returns its spin (queue wait
    /// and hand-over, or the line's transfer). The CPU's next lock operation comes after.
    pub(crate) fn rq_lock(&mut self, rq: usize, cpu: usize, hold: Ns) -> Ns {
        let at = self.lock_at(cpu);
        let (m, reads) = (&self.m, &self.stats.cost_reads);
        let a = self.spinlocks.rq[rq].acquire(at, cpu, hold, |last| {
            let d = m.distance(last, cpu);
            reads.note_line(d);
            m.cost.cacheline.at(d) as Ns
        });
        self.spinlocks.cpu_free[cpu] = a.start + hold;
        a.spin
    }

    /// raw_spin_rq_unlock() of `cpu`'s own runqueue before the rest of what its last
    /// acquisition reserved (newidle balance drops it while it balances).
    pub(crate) fn rq_unlock_early(&mut self, cpu: usize) {
        let at = self.lock_at(cpu);
        self.spinlocks.rq[cpu].release_at(cpu, at);
    }

    /// Kernel time of the scheduler on `cpu` outside a task's own steps: the running
    /// task's if it runs, else whatever the CPU does next (the task it switches to, or
    /// its entry into idle) starts that much later.
    pub(crate) fn charge_sched(&mut self, cpu: usize, ns: Ns) {
        if ns == 0 {
            return;
        }
        match self.rqs[cpu].curr.filter(|&c| self.tasks[c].state == TaskState::Running) {
            Some(c) => {
                self.tasks[c].overhead_ns += ns;
                self.tasks[c].stats.sys_ns += ns;
            }
            None => self.rqs[cpu].irq_until = self.rqs[cpu].irq_until.max(self.now) + ns,
        }
    }

    /// ttwu_queue_cond(): whether a wakeup from `this_cpu` onto `cpu` goes through the
    /// target's wake list (TTWU_QUEUE) instead of taking its lock. Since 3.6
    /// (518cd6234178) when the two CPUs share no cache; since 6.0 (f3dd3f674555) also
    /// when the target runs nothing.
    pub(crate) fn ttwu_queue_cond(&self, this_cpu: usize, cpu: usize) -> bool {
        if !self.feat.has(Feature::TTWU_QUEUE) || cpu == this_cpu {
            return false;
        }
        let v = self.k.version;
        if v < KernelVersion::new(3, 6) || !self.m.share_llc(this_cpu, cpu) {
            return true;
        }
        v >= KernelVersion::new(6, 0) && self.rqs[cpu].nr_running == 0
    }

    /// ttwu_queue(): `p`, woken from `this_cpu`, is activated on `cpu` (already done in
    /// the model's order of events); prices who did it. On the wake list the waker writes
    /// the list and the target's ttwu_pending, and the target runs ttwu_do_activate()
    /// under its own lock (sched_ttwu_pending(), from its IPI or its idle loop; a busy
    /// target takes an IPI for it). Otherwise the waker takes the target's lock and
    /// runs the activation there, pulling the target's runqueue lines.
    /// Returns what the waker spends beyond `ttwu_ns`, less the activation it hands off.
    pub(crate) fn ttwu_queue(&mut self, p: TaskId, cpu: usize, this_cpu: usize, wakelist: bool) -> i64 {
        let activate = self.path_ns(cpu, cost!(self, kernel.ttwu_activate_ns));
        if wakelist {
            let lines = (WAKELIST_LINES * self.line_latency(this_cpu, cpu)) as Ns;
            // The target's side: its lock (from whoever held it last) and the entity's
            // line from where the task last ran.
            let se = self.line_ns(self.tasks[p].data_cpu, cpu);
            let spin = self.rq_lock(cpu, cpu, activate + se);
            let mut target = spin + activate + se;
            if self.rqs[cpu].curr.is_some() && !self.rqs[cpu].resched_pending {
                // send_call_function_single_ipi(): a busy target is interrupted for it.
                self.send_ipi(this_cpu, cpu);
                target += self.path_ns(cpu, cost!(self, kernel.irq_entry_ns) + cost!(self, kernel.irq_exit_ns));
                let send = self.path_ns(this_cpu, cost!(self, ipi_send_ns)) as i64;
                self.charge_sched(cpu, target);
                return lines as i64 + send - activate as i64;
            }
            self.charge_sched(cpu, target);
            return lines as i64 - activate as i64;
        }
        let rq_lines = if cpu == this_cpu { 0 } else { (cost!(self, kernel.ttwu_rq_lines) * self.line_latency(this_cpu, cpu)) as Ns };
        let spin = self.rq_lock(cpu, this_cpu, activate + rq_lines);
        (spin + rq_lines) as i64
    }

    /// ttwu_runnable(): the wakee is still on its runqueue; the waker takes that
    /// runqueue's lock (__task_rq_lock()) to set it running. Returns the spin.
    pub(crate) fn ttwu_runnable_lock(&mut self, cpu: usize, this_cpu: usize) -> Ns {
        let hold = self.path_ns(cpu, cost!(self, kernel.ttwu_activate_ns)) / 4;
        self.rq_lock(cpu, this_cpu, hold)
    }

    /// What `by` spends moving a queued task from runqueue `src` to `dst`
    /// (detach_task() under the source's lock, attach_task() under the destination's,
    /// as load_balance(), move_queued_task() and the stopper do): each lock, the code,
    /// and the source's lines pulled at their distance.
    pub(crate) fn move_task_cost(&mut self, by: usize, src: usize, dst: usize) -> Ns {
        let code = self.path_ns(by, cost!(self, migration_ns));
        let lines = (MIGRATION_LINES * self.line_latency(by, src)) as Ns;
        let detach = code / 2 + lines;
        let attach = code - code / 2;
        let spin = self.rq_lock(src, by, detach) + self.rq_lock(dst, by, attach);
        spin + detach + attach
    }

    /// The cfs_b->lock acquisitions the bandwidth state machine made this event: each
    /// CPU takes its group's pool lock for the assign/return/unthrottle it did.
    pub(crate) fn bw_lock_log(&mut self) {
        let Some(bw) = &mut self.bw.control else { return };
        if !bw.has_lock_log() {
            return;
        }
        let mut log = std::mem::take(&mut self.bw.lock_scratch);
        bw.take_lock_log(&mut log);
        for &(g, cpu) in &log {
            self.cfs_b_lock(g, cpu, 0);
        }
        self.bw.lock_scratch = log;
    }

    /// `cpu` takes group `g`'s cfs_b->lock for the pool's code plus `extra` ns; charged to
    /// the CPU.
    pub(crate) fn cfs_b_lock(&mut self, g: usize, cpu: usize, extra: Ns) {
        if g >= self.spinlocks.cfs_b.len() {
            return;
        }
        let hold = (CFS_B_HOLD_CYCLES * 1000.0 / self.m.cpus[cpu].freq_mhz as f64) as Ns + extra;
        let at = self.lock_at(cpu);
        let (m, reads) = (&self.m, &self.stats.cost_reads);
        let a = self.spinlocks.cfs_b[g].acquire(at, cpu, hold, |last| {
            let d = m.distance(last, cpu);
            reads.note_line(d);
            m.cost.cacheline.at(d) as Ns
        });
        self.spinlocks.cpu_free[cpu] = a.start + hold;
        self.charge_kernel(cpu, a.spin + hold);
    }

    /// lock_stat's class lines from per-instance figures (after any warm-up share is
    /// subtracted): the classes that were taken at all.
    pub(crate) fn lock_stat_classes(rq: &[LockStats], shards: &[LockStats], cfs_b: &[LockStats]) -> Vec<LockClassStats> {
        [(LockClass::RqLock, rq), (LockClass::SharedRunqShard, shards), (LockClass::CfsBandwidth, cfs_b)]
            .into_iter()
            .filter(|(_, l)| l.iter().any(|s| s.acquisitions > 0))
            .map(|(class, l)| LockClassStats::of(class, l.iter()))
            .collect()
    }
}
