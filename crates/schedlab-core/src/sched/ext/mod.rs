//! The ext class (sched_ext): the class below fair whose decisions a loaded scheduler
//! makes through `ops` callbacks and kfuncs, with the kernel's own machinery between
//! them (DSQs, the dispatch loop, keep-prev, slices, kicks, the built-in idle tracking).
//!
//! Mirrors: kernel/sched/ext.c (6.12-6.18) `DEFINE_SCHED_CLASS(ext)`:
//! enqueue_task_scx() / do_enqueue_task() / direct_dispatch(), dequeue_task_scx() /
//! ops_dequeue(), balance_one() with its dispatch loop (SCX_DSP_MAX_LOOPS) and
//! flush_dispatch_buf() / finish_dispatch(), consume_global_dsq(), pick_task_scx(),
//! set_next_task_scx(), put_prev_task_scx() and switch_class() (cpu_release),
//! update_curr_scx(), task_tick_scx(), select_task_rq_scx(), dispatch_enqueue() with
//! its FIFO/PRIQ rules and local_dsq_post_enq(), dispatch_to_local_dsq(),
//! consume_dispatch_q(), kick_one_cpu(); kernel/sched/ext_idle.c
//! scx_select_cpu_dfl() and the idle masks (update_builtin_idle(),
//! scx_idle_test_and_clear_cpu()).
//! Model: a policy ([`crate::ext::ExtOps`]) is called with the kfuncs of
//! `kfuncs.rs`. One global DSQ (the kernel keeps one per NUMA node). Kicks reach
//! their CPU as a resched with the machine's IPI cost and latency; the irq_work that
//! sends them runs at once, except a CPU's kick of itself during its own schedule(),
//! which is sent when that pass ends (as the irq_work runs after the rq lock drops).
//! The default idle pick starts its search after `prev_cpu` (the kernel's
//! cpumask_any_and_distribute() rotates its start). The watchdog (every timeout / 2)
//! and an error eject the scheduler: every task of the class goes back to fair and the
//! run goes on. Not modeled: bypass mode (the enable and disable paths switch at once),
//! core scheduling, scx_bpf_reenqueue_local(), SCX_KICK_WAIT's wait, cgroup ops.

//!
//! Files: this one holds the class's op table and a task's way in and out of the class
//! (enqueue, dequeue, put, set, tick, select_cpu); `dispatch.rs` the DSQs and the pick
//! (balance_one(), the dispatch loop, inserts and moves); `idle.rs` the built-in idle
//! tracking, scx_select_cpu_dfl() and kicks; `kfuncs.rs` what a policy calls;
//! `lifecycle.rs` loading, the watchdog, ejection and the result's figures.

mod dispatch;
mod idle;
mod kfuncs;
mod lifecycle;

use crate::ext::{DsqId, EnqFlags, ExtOps, Kfuncs, KickFlags, ReleaseReason, WakeFlags, SCX_SLICE_DFL, SCX_SLICE_INF};
use crate::sched::class::{DequeueFlags, EnqueueFlags, SchedClassOps};
use crate::state::scx::{ScxOp, ScxWhere};
use crate::state::task::{SchedClass, SchedPolicy, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

/// `ext_sched_class`.
pub(crate) struct ExtSchedClass;

impl SchedClassOps for ExtSchedClass {
    const PUT_PREV_AFTER_PICK: bool = true;

    fn enqueue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: EnqueueFlags) {
        sim.enqueue_task_scx(cpu, p, EnqFlags { wakeup: flags.wakeup, ..Default::default() }, flags.moved_from == Some(cpu));
    }

    fn dequeue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: DequeueFlags) {
        sim.update_curr(cpu);
        sim.dequeue_task_scx(cpu, p, false);
        if !flags.moving {
            sim.tasks[p].state = TaskState::Blocked;
        }
    }

    /// No ops.yield here: the slice ends and schedule() re-enqueues the task.
    fn yield_task(sim: &mut Simulator, _cpu: usize, p: TaskId) {
        sim.scx.task(p).slice = 0;
    }

    /// wakeup_preempt_scx() is empty: within the class only a scheduler's kick or a
    /// preempting insert takes a CPU from a running task.
    fn wakeup_preempt(_sim: &mut Simulator, _cpu: usize, _p: TaskId, _curr: TaskId, _from_cpu: usize) {}

    fn pick_task(sim: &mut Simulator, cpu: usize) -> Option<TaskId> {
        sim.pick_task_scx(cpu)
    }

    fn put_prev_after_pick(sim: &mut Simulator, cpu: usize, prev: TaskId, next: Option<TaskId>) {
        sim.put_prev_task_scx(cpu, prev, next);
    }

    fn set_next_task(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.set_next_task_scx(cpu, p);
    }

    fn select_task_rq(sim: &mut Simulator, p: TaskId, prev: usize, this_cpu: usize, _waker: Option<TaskId>, sync: bool, fork: bool) -> usize {
        sim.select_task_rq_scx(p, prev, this_cpu, WakeFlags { fork, ttwu: !fork, sync })
    }

    fn task_tick(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.task_tick_scx(cpu, p);
    }

    fn task_dead(sim: &mut Simulator, p: TaskId) {
        let e = sim.scx.task(p);
        e.ddsp = None;
        e.at = ScxWhere::None;
    }

    /// update_curr_scx(): the slice runs down with the time run (an infinite one never).
    fn update_curr(sim: &mut Simulator, _cpu: usize, p: TaskId, delta: Ns) {
        let e = sim.scx.task(p);
        if e.slice != SCX_SLICE_INF {
            e.slice = e.slice.saturating_sub(delta);
        }
    }

    fn nr_running(sim: &Simulator, cpu: usize) -> usize {
        sim.rqs[cpu].scx.nr_running
    }

    fn check_invariants(sim: &Simulator) -> Result<(), String> {
        sim.check_scx_invariants()
    }
}

impl Simulator {
    /// task_should_scx() when `p` starts: whether it joins the class.
    pub(crate) fn scx_task_starts(&mut self, p: TaskId) {
        let s = &self.tasks[p].sched;
        let fair_policy = matches!(s.policy, SchedPolicy::Normal | SchedPolicy::Batch | SchedPolicy::Idle);
        let joins = s.policy == SchedPolicy::Ext || (self.scx.switched_all && fair_policy);
        self.tasks[p].sched.scx = joins;
    }

    /// Runs one op of the loaded scheduler with the kfuncs (None: no scheduler, or one of
    /// its ops is already running).
    pub(super) fn scx_call<R>(&mut self, op: ScxOp, name: &'static str, f: impl FnOnce(&mut dyn ExtOps, &mut dyn Kfuncs) -> R) -> Option<R> {
        let mut ops = self.scx.ops.take()?;
        let saved = self.scx.op.replace(op);
        *self.scx.op_calls.entry(name).or_default() += 1;
        let r = f(ops.as_mut(), &mut kfuncs::ScxKfuncs { sim: self });
        self.scx.op = saved;
        self.scx.ops = Some(ops);
        Some(r)
    }

    /// enqueue_task_scx(): `p` becomes runnable in the class on `cpu` (`restore`: a
    /// running task put back where it was, which goes straight back to the local DSQ).
    pub(super) fn enqueue_task_scx(&mut self, cpu: usize, p: TaskId, flags: EnqFlags, restore: bool) {
        if self.scx.task(p).queued {
            return;
        }
        if !self.scx.task(p).enabled {
            // ops.enable() as the task enters the class, its weight set first
            // (sched_weight_to_cgroup(): 100 at nice 0).
            let w = (self.tasks[p].se.weight * 100).div_ceil(1024).clamp(1, 10_000);
            let e = self.scx.task(p);
            e.weight = w;
            e.enabled = true;
            e.slice = SCX_SLICE_DFL;
            self.scx_call(ScxOp::Other(cpu), "enable", |ops, k| ops.enable(k, p));
        }
        let now = self.now;
        let e = self.scx.task(p);
        e.queued = true;
        e.runnable_at = now;
        self.rqs[cpu].scx.nr_running += 1;
        self.class_nr_sync(cpu);
        self.scx_call(ScxOp::Other(cpu), "runnable", |ops, k| ops.runnable(k, p, flags));
        if self.scx.get(p).selected_cpu.is_some_and(|s| s != cpu) {
            self.scx.counters.select_cpu_fallback += 1;
        }
        self.scx.task(p).selected_cpu = None;
        if restore {
            let head = EnqFlags { head: true, ..flags };
            self.scx_insert_local(cpu, cpu, p, head);
            return;
        }
        self.do_enqueue_task(cpu, p, flags);
    }

    /// do_enqueue_task(): a direct dispatch asked for earlier, else `ops.enqueue()`; a
    /// task the op inserts nowhere stays in the scheduler's custody (SCX_OPSS_QUEUED).
    pub(super) fn do_enqueue_task(&mut self, cpu: usize, p: TaskId, flags: EnqFlags) {
        if let Some((dsq, f)) = self.scx.task(p).ddsp.take() {
            self.scx.counters.direct_dispatch += 1;
            self.scx_dispatch_to(cpu, p, dsq, dispatch::merge(flags, f), false);
            return;
        }
        self.scx.counters.enqueue += 1;
        self.scx.task(p).at = ScxWhere::Bpf;
        self.scx_call(ScxOp::Enqueue(cpu, p), "enqueue", |ops, k| ops.enqueue(k, p, flags));
        if let Some((dsq, f)) = self.scx.task(p).ddsp.take() {
            self.scx.counters.direct_dispatch += 1;
            self.scx.task(p).at = ScxWhere::None;
            self.scx_dispatch_to(cpu, p, dsq, dispatch::merge(flags, f), false);
        }
    }

    /// dequeue_task_scx(): `p` leaves the class's runnable tasks; `migrating` skips the
    /// callbacks, as a move between runqueues does.
    pub(super) fn dequeue_task_scx(&mut self, cpu: usize, p: TaskId, migrating: bool) {
        let e = self.scx.get(p);
        if !e.queued {
            return;
        }
        self.scx_unlink(p);
        if e.at == ScxWhere::Bpf && !migrating {
            self.scx.counters.dequeue += 1;
            self.scx_call(ScxOp::Other(cpu), "dequeue", |ops, k| ops.dequeue(k, p));
        }
        if self.rqs[cpu].curr == Some(p) && !migrating {
            self.scx_call(ScxOp::Other(cpu), "stopping", |ops, k| ops.stopping(k, p, false));
        }
        if !migrating {
            self.scx_call(ScxOp::Other(cpu), "quiescent", |ops, k| ops.quiescent(k, p));
        }
        let e = self.scx.task(p);
        e.queued = false;
        e.ddsp = None;
        self.rqs[cpu].scx.nr_running -= 1;
        self.class_nr_sync(cpu);
    }

    /// task_unlink_from_dsq(): takes `p` off whatever DSQ holds it.
    pub(super) fn scx_unlink(&mut self, p: TaskId) {
        let at = std::mem::take(&mut self.scx.task(p).at);
        if let ScxWhere::Dsq(d) = at {
            match d {
                DsqId::LocalOn(c) => {
                    self.rqs[c].scx.local.remove(p);
                }
                DsqId::Global => {
                    self.scx.global.remove(p);
                }
                DsqId::User(id) => {
                    if let Some(q) = self.scx.user.get_mut(&id) {
                        q.remove(p);
                    }
                }
                DsqId::Local => {}
            }
        }
    }

    /// set_next_task_scx(): `ops.running()` (none for a kept task: the kernel skips the
    /// put and set of a task picked again).
    pub(super) fn set_next_task_scx(&mut self, cpu: usize, p: TaskId) {
        if std::mem::take(&mut self.rqs[cpu].scx.bal_keep) {
            return;
        }
        self.scx_call(ScxOp::Other(cpu), "running", |ops, k| ops.running(k, p));
    }

    /// put_prev_task_scx() once the pick chose `next`: `ops.stopping()` of a runnable
    /// `prev`, which goes back to the local DSQ's head with slice left (a higher class
    /// took the CPU), else through `ops.enqueue()` (SCX_ENQ_LAST when the CPU is left
    /// idle); switch_class(): `ops.cpu_release()` when a higher class takes the CPU.
    pub(super) fn put_prev_task_scx(&mut self, cpu: usize, prev: TaskId, next: Option<TaskId>) {
        self.rqs[cpu].scx.bal_keep = false;
        if !self.scx.enabled {
            // Ejected while it ran: to the fair class now (dequeue SAVE|MOVE, enqueue
            // RESTORE|MOVE), and the CPU picks again.
            let queued = self.scx.get(prev).queued;
            self.dequeue_task_scx(cpu, prev, true);
            self.tasks[prev].sched.scx = false;
            if queued {
                let t = &mut self.tasks[prev];
                t.state = TaskState::Runnable;
                t.runnable_since = self.now;
                self.activate_task(cpu, prev, EnqueueFlags { moved_from: Some(cpu), ..EnqueueFlags::NONE });
                // After this pass (which clears a resched raised during it).
                self.scx.self_kick[cpu] = Some(KickFlags::default());
            }
            return;
        }
        let e = self.scx.get(prev);
        if e.queued {
            // Runnable again from now (SCX_TASK_RESET_RUNNABLE_AT): the watchdog's clock.
            self.scx.task(prev).runnable_at = self.now;
            self.scx_call(ScxOp::Other(cpu), "stopping", |ops, k| ops.stopping(k, prev, true));
            if e.slice > 0 {
                self.scx_insert_local(cpu, cpu, prev, EnqFlags { head: true, ..Default::default() });
            } else {
                let last = next.is_none();
                self.do_enqueue_task(cpu, prev, EnqFlags { last, ..Default::default() });
            }
        }
        let next_class = next.map(|n| self.class_of(n));
        if let Some(c) = next_class.filter(|&c| c < SchedClass::Ext) {
            if !self.rqs[cpu].scx.cpu_released {
                self.rqs[cpu].scx.cpu_released = true;
                self.scx.counters.cpu_release += 1;
                let reason = match c {
                    SchedClass::Dl => ReleaseReason::Dl,
                    SchedClass::Rt => ReleaseReason::Rt,
                    _ => ReleaseReason::Unknown,
                };
                self.scx_call(ScxOp::Other(cpu), "cpu_release", |ops, k| ops.cpu_release(k, cpu, reason));
            }
        }
    }

    /// task_tick_scx(): `ops.tick()`, and a slice that ran out ends at this tick.
    pub(super) fn task_tick_scx(&mut self, cpu: usize, p: TaskId) {
        self.scx_call(ScxOp::Other(cpu), "tick", |ops, k| ops.tick(k, p));
        if self.scx.get(p).slice == 0 {
            self.scx.counters.slice_expired += 1;
            self.resched_curr(cpu, cpu);
        }
    }

    /// select_task_rq_scx(): `ops.select_cpu()` (the default is the built-in idle pick
    /// with a direct dispatch to an idle CPU found); a task that may run on one CPU only
    /// is not asked about.
    pub(super) fn select_task_rq_scx(&mut self, p: TaskId, prev: usize, this_cpu: usize, wf: WakeFlags) -> usize {
        if self.tasks[p].nr_cpus_allowed < 2 {
            return prev;
        }
        self.scx.counters.select_cpu += 1;
        self.scx.waker_cpu = this_cpu;
        let cpu = self.scx_call(ScxOp::SelectCpu(this_cpu, p), "select_cpu", |ops, k| ops.select_cpu(k, p, prev, wf)).unwrap_or(prev);
        if cpu >= self.m.nr_cpus() {
            self.scx_error(format!("select_cpu returned invalid CPU {cpu}"));
            return prev;
        }
        self.scx.task(p).selected_cpu = Some(cpu);
        cpu
    }

    /// Every runnable task of the class is counted on its CPU once and is where its
    /// record says: running, on one DSQ, or in the scheduler's custody.
    pub(super) fn check_scx_invariants(&self) -> Result<(), String> {
        if !self.scx.enabled {
            return Ok(());
        }
        let mut per_cpu = vec![0usize; self.m.nr_cpus()];
        for (p, t) in self.tasks.iter().enumerate() {
            if !t.sched.scx || !matches!(t.state, TaskState::Runnable | TaskState::Running) {
                continue;
            }
            let e = self.scx.get(p);
            if !e.queued {
                return Err(format!("runnable ext task {p} is not queued in the class"));
            }
            per_cpu[t.cpu] += 1;
            let running = self.rqs[t.cpu].curr == Some(p);
            let on = match e.at {
                ScxWhere::None => running,
                ScxWhere::Bpf => true,
                ScxWhere::Dsq(DsqId::LocalOn(c)) => self.rqs[c].scx.local.contains(p) && c == t.cpu,
                ScxWhere::Dsq(DsqId::Global) => self.scx.global.contains(p),
                ScxWhere::Dsq(DsqId::User(id)) => self.scx.user.get(&id).is_some_and(|q| q.contains(p)),
                ScxWhere::Dsq(DsqId::Local) => false,
            };
            if !on {
                return Err(format!("ext task {p} (state {:?}, CPU {}) is not where its record says ({:?})", t.state, t.cpu, e.at));
            }
        }
        for (cpu, &n) in per_cpu.iter().enumerate() {
            if self.rqs[cpu].scx.nr_running != n {
                return Err(format!("CPU {cpu}: scx.nr_running {} but {n} runnable ext tasks there", self.rqs[cpu].scx.nr_running));
            }
        }
        Ok(())
    }
}
