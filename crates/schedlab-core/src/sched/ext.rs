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
//! [`ScxKfuncs`]. One global DSQ (the kernel keeps one per NUMA node). Kicks reach
//! their CPU as a resched with the machine's IPI cost and latency; the irq_work that
//! sends them runs at once, except a CPU's kick of itself during its own schedule(),
//! which is sent when that pass ends (as the irq_work runs after the rq lock drops).
//! The default idle pick starts its search after `prev_cpu` (the kernel's
//! cpumask_any_and_distribute() rotates its start). The watchdog (every timeout / 2)
//! and an error eject the scheduler: every task of the class goes back to fair and the
//! run goes on. Not modeled: bypass mode (the enable and disable paths switch at once),
//! core scheduling, scx_bpf_reenqueue_local(), SCX_KICK_WAIT's wait, cgroup ops.

use crate::ext::{
    DsqId, EnqFlags, ExtOps, Kfuncs, KickFlags, ReleaseReason, WakeFlags, SCX_DSP_DFL_MAX_BATCH, SCX_DSP_MAX_LOOPS, SCX_SLICE_DFL, SCX_SLICE_INF,
    SCX_WATCHDOG_MAX_TIMEOUT,
};
use crate::sched::class::{DequeueFlags, EnqueueFlags, SchedClassOps};
use crate::state::scx::{ScxOp, ScxWhere};
use crate::state::task::{SchedClass, SchedPolicy, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

/// `ext_sched_class`.
pub(crate) struct ExtSchedClass;

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

/// The kfuncs as a scheduler sees them: the simulator, with the op being run.
pub(crate) struct ScxKfuncs<'a> {
    sim: &'a mut Simulator,
}

impl Simulator {
    /// Loads the scenario's sched_ext scheduler (scx_enable()): `ops.init()`, then every
    /// task of a fair policy (or SCHED_EXT only, with SCX_OPS_SWITCH_PARTIAL) joins the
    /// class as it starts. Refused before 6.12, which has no sched_ext.
    pub(crate) fn setup_sched_ext(&mut self, spec: &crate::scenario::SchedExtSpec) -> Result<(), crate::error::ScenarioError> {
        use crate::error::ScenarioError;
        let ops = crate::ext::load(spec, self.k.version, self.m.nr_cpus())?;
        let mut flags = ops.flags();
        flags.switch_partial |= spec.switch_partial;
        self.scx.enabled = true;
        self.scx.switched_all = !flags.switch_partial;
        self.scx.name = ops.name().to_string();
        self.scx.max_batch = if ops.dispatch_max_batch() == 0 { SCX_DSP_DFL_MAX_BATCH } else { ops.dispatch_max_batch() };
        self.scx.builtin_idle = !ops.has_update_idle() || flags.keep_builtin_idle;
        self.scx.flags = flags;
        let timeout_ms = ops.timeout_ms();
        if timeout_ms * 1_000_000 > SCX_WATCHDOG_MAX_TIMEOUT {
            return Err(ScenarioError::new("kernel.sched_ext.scheduler", format!("{}: timeout_ms {timeout_ms} above 30000 (E2BIG)", spec.scheduler)));
        }
        self.scx.timeout = if timeout_ms == 0 { SCX_WATCHDOG_MAX_TIMEOUT } else { timeout_ms * 1_000_000 };
        self.scx.ops = Some(ops);
        // At enable every online CPU starts idle.
        self.scx.idle_cpus = self.m.all_cpus();
        self.scx.idle_smt = self.m.all_cpus();
        self.scx.self_kick = vec![None; self.m.nr_cpus()];
        let r = self.scx_call(ScxOp::Other(0), "init", |ops, k| ops.init(k));
        if let Some(Err(e)) = r {
            return Err(ScenarioError::new("kernel.sched_ext.scheduler", format!("{}: ops.init() failed: {e}", spec.scheduler)));
        }
        self.arm_scx_watchdog(self.now + self.scx.timeout / 2);
        Ok(())
    }

    fn arm_scx_watchdog(&mut self, at: Ns) {
        let key = self.timers.hr.start(0, at, 0, crate::timers::hrtimer::HrtimerFn::ScxWatchdog);
        self.push_hrtimer_event(key);
    }

    /// The watchdog's pass (scx_watchdog_workfn() / check_rq_for_timeouts()) or the
    /// disable work an error queued: a runnable task of the class that has waited more
    /// than `timeout_ms` since it became runnable ejects the scheduler
    /// (SCX_EXIT_ERROR_STALL).
    pub(crate) fn scx_watchdog(&mut self, _cpu: usize) {
        if !self.scx.enabled {
            return;
        }
        if let Some(exit) = self.scx.disable_pending.take() {
            self.scx_disable(exit);
            return;
        }
        let now = self.now;
        let stalled = self.tasks.iter().enumerate().find(|(p, t)| {
            t.sched.scx && t.state == TaskState::Runnable && self.rqs[t.cpu].curr != Some(*p) && now > self.scx.get(*p).runnable_at + self.scx.timeout
        });
        if let Some((p, t)) = stalled {
            let waited = (now - self.scx.get(p).runnable_at) as f64 / 1e9;
            let msg = format!("{} [{}] failed to run for {waited:.3} s", t.stats.name, p + 1);
            self.scx_disable(crate::state::scx::ScxExit { kind: 1026, at: now, msg, disabled_at: now });
            return;
        }
        self.arm_scx_watchdog(now + self.scx.timeout / 2);
    }

    /// scx_disable_workfn(): the scheduler is gone and every task of the class goes back
    /// to the fair class, as the kernel does; the run goes on. A running task is moved
    /// when its CPU, rescheduled now, puts it (`put_prev_task_scx()`).
    fn scx_disable(&mut self, mut exit: crate::state::scx::ScxExit) {
        self.scx.ops = None;
        self.scx.enabled = false;
        self.scx.switched_all = false;
        let now = self.now;
        for p in 0..self.tasks.len() {
            if !self.tasks[p].sched.scx {
                continue;
            }
            let cpu = self.tasks[p].cpu;
            match self.tasks[p].state {
                TaskState::Running => self.resched_curr(cpu, 0),
                TaskState::Runnable => {
                    self.dequeue_task_scx(cpu, p, true);
                    self.tasks[p].sched.scx = false;
                    self.activate_task(cpu, p, EnqueueFlags { moved_from: Some(cpu), ..EnqueueFlags::NONE });
                    self.wakeup_preempt(cpu, p, 0);
                }
                _ => self.tasks[p].sched.scx = false,
            }
        }
        exit.disabled_at = now;
        self.scx.exit = Some(exit);
    }

    /// task_should_scx() when `p` starts: whether it joins the class.
    pub(crate) fn scx_task_starts(&mut self, p: TaskId) {
        let s = &self.tasks[p].sched;
        let fair_policy = matches!(s.policy, SchedPolicy::Normal | SchedPolicy::Batch | SchedPolicy::Idle);
        let joins = s.policy == SchedPolicy::Ext || (self.scx.switched_all && fair_policy);
        self.tasks[p].sched.scx = joins;
    }

    /// Runs one op of the loaded scheduler with the kfuncs (None: no scheduler, or one of
    /// its ops is already running).
    fn scx_call<R>(&mut self, op: ScxOp, name: &'static str, f: impl FnOnce(&mut dyn ExtOps, &mut dyn Kfuncs) -> R) -> Option<R> {
        let mut ops = self.scx.ops.take()?;
        let saved = self.scx.op.replace(op);
        *self.scx.op_calls.entry(name).or_default() += 1;
        let r = f(ops.as_mut(), &mut ScxKfuncs { sim: self });
        self.scx.op = saved;
        self.scx.ops = Some(ops);
        Some(r)
    }

    /// enqueue_task_scx(): `p` becomes runnable in the class on `cpu` (`restore`: a
    /// running task put back where it was, which goes straight back to the local DSQ).
    fn enqueue_task_scx(&mut self, cpu: usize, p: TaskId, flags: EnqFlags, restore: bool) {
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
    fn do_enqueue_task(&mut self, cpu: usize, p: TaskId, flags: EnqFlags) {
        if let Some((dsq, f)) = self.scx.task(p).ddsp.take() {
            self.scx.counters.direct_dispatch += 1;
            self.scx_dispatch_to(cpu, p, dsq, merge(flags, f), false);
            return;
        }
        self.scx.counters.enqueue += 1;
        self.scx.task(p).at = ScxWhere::Bpf;
        self.scx_call(ScxOp::Enqueue(cpu, p), "enqueue", |ops, k| ops.enqueue(k, p, flags));
        if let Some((dsq, f)) = self.scx.task(p).ddsp.take() {
            self.scx.counters.direct_dispatch += 1;
            self.scx.task(p).at = ScxWhere::None;
            self.scx_dispatch_to(cpu, p, dsq, merge(flags, f), false);
        }
    }

    /// Puts `p` (runnable on `task_cpu`) on `dsq` as the CPU `actor` decided:
    /// direct_dispatch() and finish_dispatch()'s part. SCX_DSQ_LOCAL is `actor`'s local
    /// DSQ from a dispatch, the task's own CPU's otherwise.
    fn scx_dispatch_to(&mut self, actor: usize, p: TaskId, dsq: DsqId, flags: EnqFlags, from_dispatch: bool) {
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
                let r = if flags_vtime(flags) { q.push_vtime(p, vtime) } else { q.push_fifo(p, flags.head || flags.preempt) };
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
    fn scx_to_local_of(&mut self, actor: usize, p: TaskId, target: usize, flags: EnqFlags) {
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
    fn scx_insert_local(&mut self, cpu: usize, actor: usize, p: TaskId, flags: EnqFlags) {
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
    fn scx_insert_global(&mut self, p: TaskId, flags: EnqFlags) {
        if flags_vtime(flags) {
            self.scx_error("cannot use vtime ordering for the built-in global DSQ".into());
        }
        let _ = self.scx.global.push_fifo(p, flags.head || flags.preempt);
        self.scx.task(p).at = ScxWhere::Dsq(DsqId::Global);
        // An idle CPU where the task is queued notices (the wakeup's resched covers a
        // wakeup; a re-enqueue from dispatch leaves it to the next balance).
    }

    /// Moves runnable `p` between runqueues (move_remote_task_to_local_dsq(): deactivate,
    /// set_task_cpu, activate), with the other runqueue's lock taken by `actor`.
    fn scx_migrate(&mut self, p: TaskId, src: usize, dst: usize, actor: usize) {
        let other = if actor == src { dst } else { src };
        let spin = self.rq_lock(other, actor, 0);
        self.charge_kernel(actor, spin);
        self.rqs[src].scx.nr_running -= 1;
        self.class_nr_sync(src);
        self.set_task_cpu(p, dst);
        self.rqs[dst].scx.nr_running += 1;
        self.class_nr_sync(dst);
    }

    /// dequeue_task_scx(): `p` leaves the class's runnable tasks; `migrating` skips the
    /// callbacks, as a move between runqueues does.
    fn dequeue_task_scx(&mut self, cpu: usize, p: TaskId, migrating: bool) {
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
    fn scx_unlink(&mut self, p: TaskId) {
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

    /// pick_task_scx() after balance_one(): the kept previous task, or the local DSQ's
    /// first (a task without slice gets the default).
    fn pick_task_scx(&mut self, cpu: usize) -> Option<TaskId> {
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
    fn consume_global_dsq(&mut self, cpu: usize) -> bool {
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
    fn flush_dispatch_buf(&mut self, cpu: usize) {
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
    fn scx_move_to_local(&mut self, cpu: usize, id: u64) -> bool {
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

    /// set_next_task_scx(): `ops.running()` (none for a kept task: the kernel skips the
    /// put and set of a task picked again).
    fn set_next_task_scx(&mut self, cpu: usize, p: TaskId) {
        if std::mem::take(&mut self.rqs[cpu].scx.bal_keep) {
            return;
        }
        self.scx_call(ScxOp::Other(cpu), "running", |ops, k| ops.running(k, p));
    }

    /// put_prev_task_scx() once the pick chose `next`: `ops.stopping()` of a runnable
    /// `prev`, which goes back to the local DSQ's head with slice left (a higher class
    /// took the CPU), else through `ops.enqueue()` (SCX_ENQ_LAST when the CPU is left
    /// idle); switch_class(): `ops.cpu_release()` when a higher class takes the CPU.
    fn put_prev_task_scx(&mut self, cpu: usize, prev: TaskId, next: Option<TaskId>) {
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
    fn task_tick_scx(&mut self, cpu: usize, p: TaskId) {
        self.scx_call(ScxOp::Other(cpu), "tick", |ops, k| ops.tick(k, p));
        if self.scx.get(p).slice == 0 {
            self.scx.counters.slice_expired += 1;
            self.resched_curr(cpu, cpu);
        }
    }

    /// select_task_rq_scx(): `ops.select_cpu()` (the default is the built-in idle pick
    /// with a direct dispatch to an idle CPU found); a task that may run on one CPU only
    /// is not asked about.
    fn select_task_rq_scx(&mut self, p: TaskId, prev: usize, this_cpu: usize, wf: WakeFlags) -> usize {
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

    /// scx_select_cpu_dfl(): an idle CPU for `p` near `prev` (claimed), else `prev`:
    /// (cpu, found idle). 6.13+: the waker's CPU for a sync wakeup sharing prev's LLC,
    /// then a wholly idle core (prev's, its LLC's, its node's, any), prev if idle, an idle
    /// CPU in prev's LLC, node, anywhere; 6.12 has no LLC and node steps.
    fn scx_select_cpu_dfl(&mut self, p: TaskId, prev: usize, wf: WakeFlags) -> (usize, bool) {
        if !self.scx.builtin_idle {
            self.scx_error("built-in idle tracking is disabled".into());
            return (prev, false);
        }
        let allowed = *self.tasks[p].cpus_allowed;
        let topo = self.k.version >= crate::kernel::KernelVersion::new(6, 13);
        let waker = self.scx.waker_cpu;
        if wf.sync && waker < self.m.nr_cpus() {
            if topo && allowed.test(prev) && self.m.share_llc(waker, prev) && self.scx_claim(prev) {
                return (prev, true);
            }
            if !self.scx.idle_cpus.is_empty() && self.rqs[waker].scx.local.is_empty() && allowed.test(waker) {
                return (waker, true);
            }
        }
        let llc = *self.m.llc_mask(prev);
        let node = self.m.node_span[self.m.cpus[prev].node];
        if self.has_smt {
            if allowed.test(prev) && self.scx.idle_smt.test(prev) && self.scx_claim(prev) {
                return (prev, true);
            }
            let smt = self.scx.idle_smt.and(&allowed);
            let scopes: &[&crate::cpumask::CpuMask] = if topo { &[&llc, &node] } else { &[] };
            for scope in scopes {
                if let Some(c) = self.scx_claim_in(&smt.and(scope), prev) {
                    return (c, true);
                }
            }
            if let Some(c) = self.scx_claim_in(&smt, prev) {
                return (c, true);
            }
        }
        if allowed.test(prev) && self.scx_claim(prev) {
            return (prev, true);
        }
        let idle = self.scx.idle_cpus.and(&allowed);
        let scopes: &[&crate::cpumask::CpuMask] = if topo { &[&llc, &node] } else { &[] };
        for scope in scopes {
            if let Some(c) = self.scx_claim_in(&idle.and(scope), prev) {
                return (c, true);
            }
        }
        if let Some(c) = self.scx_claim_in(&idle, prev) {
            return (c, true);
        }
        (prev, false)
    }

    /// The first CPU of `mask` after `prev` (wrapping) that could be claimed.
    fn scx_claim_in(&mut self, mask: &crate::cpumask::CpuMask, prev: usize) -> Option<usize> {
        let c = mask.iter_wrap(prev + 1).next()?;
        self.scx_claim(c).then_some(c)
    }

    /// scx_idle_test_and_clear_cpu(): reserves idle `cpu` (its core leaves the idle-core
    /// mask).
    fn scx_claim(&mut self, cpu: usize) -> bool {
        if !self.scx.idle_cpus.test(cpu) {
            return false;
        }
        self.scx.idle_cpus.clear(cpu);
        for &s in self.m.smt_siblings(cpu) {
            self.scx.idle_smt.clear(s);
        }
        true
    }

    /// scx_update_idle() from the idle class: `cpu` enters or leaves idle (the masks,
    /// then `ops.update_idle()` on a change).
    #[inline]
    pub(crate) fn scx_update_idle(&mut self, cpu: usize, idle: bool) {
        if !self.scx.enabled {
            return;
        }
        let was = self.scx.idle_cpus.test(cpu);
        if idle {
            self.scx.idle_cpus.set(cpu);
            if self.m.smt_siblings(cpu).iter().all(|&s| self.scx.idle_cpus.test(s)) {
                for &s in self.m.smt_siblings(cpu) {
                    self.scx.idle_smt.set(s);
                }
            }
        } else {
            self.scx.idle_cpus.clear(cpu);
            for &s in self.m.smt_siblings(cpu) {
                self.scx.idle_smt.clear(s);
            }
        }
        if was != idle {
            self.scx_call(ScxOp::Other(cpu), "update_idle", |ops, k| ops.update_idle(k, cpu, idle));
        }
    }

    /// The end of `cpu`'s schedule(): a kick the CPU sent itself during it is sent now.
    pub(crate) fn scx_schedule_done(&mut self, cpu: usize) {
        if let Some(f) = self.scx.self_kick.get_mut(cpu).and_then(Option::take) {
            self.scx_kick(cpu, cpu, f);
        }
    }

    /// kick_one_cpu(): a preempting kick ends the slice of the class's task running on
    /// `cpu`; an idle kick wakes only an idle CPU; then `cpu` reschedules.
    fn scx_kick(&mut self, from: usize, cpu: usize, f: KickFlags) {
        self.scx.counters.kicks += 1;
        let curr = self.rqs[cpu].curr;
        if f.idle && curr.is_some() {
            return;
        }
        if let Some(c) = curr.filter(|&c| self.class_of(c) == SchedClass::Ext) {
            if f.preempt {
                self.scx.task(c).slice = 0;
                self.scx.counters.kick_preempts += 1;
            }
        } else if curr.is_some() {
            // The CPU runs a higher class: it will not pick the class's tasks now.
            return;
        }
        self.resched_curr(cpu, from);
    }

    /// The bpf_timer of the scheduler fired on `cpu`.
    pub(crate) fn scx_timer_fire(&mut self, cpu: usize) {
        self.scx_call(ScxOp::Other(cpu), "timer", |ops, k| ops.timer(k));
    }

    /// scx_bpf_error(): the first error is kept for the result.
    /// The scheduler is ejected once the current path ends (the kernel's irq_work and
    /// helper kthread: scx_vexit() then scx_disable_workfn()).
    fn scx_error(&mut self, msg: String) {
        if self.scx.disable_pending.is_some() || self.scx.exit.is_some() {
            return;
        }
        self.scx.disable_pending = Some(crate::state::scx::ScxExit { kind: 1024, at: self.now, msg, disabled_at: 0 });
        let at = self.now + 1;
        self.arm_scx_watchdog(at);
    }

    /// The class's figures for the result's summary (`scx_*`) and its warnings, only in
    /// runs with a scheduler loaded.
    pub(crate) fn scx_summary(&self) -> Vec<(String, f64)> {
        if !self.scx.enabled && self.scx.exit.is_none() {
            return Vec::new();
        }
        let c = &self.scx.counters;
        let mut out: Vec<(String, f64)> = [
            ("scx_select_cpu", c.select_cpu),
            ("scx_enqueue", c.enqueue),
            ("scx_dispatch", c.dispatch),
            ("scx_dequeue", c.dequeue),
            ("scx_direct_dispatch", c.direct_dispatch),
            ("scx_dispatched", c.dispatched),
            ("scx_keep_prev", c.keep_prev),
            ("scx_keep_last", c.keep_last),
            ("scx_dispatch_loops_exhausted", c.dispatch_loops_exhausted),
            ("scx_ev_select_cpu_fallback", c.select_cpu_fallback),
            ("scx_dispatch_bad_cpu", c.dispatch_bad_cpu),
            ("scx_ev_refill_slice_dfl", c.enq_slice_dfl),
            ("scx_kicks", c.kicks),
            ("scx_kick_preempts", c.kick_preempts),
            ("scx_cpu_release", c.cpu_release),
            ("scx_cpu_acquire", c.cpu_acquire),
            ("scx_slice_expired", c.slice_expired),
            ("scx_exit_kind", self.scx.exit.as_ref().map_or(0, |x| x.kind as u64)),
        ]
        .iter()
        .map(|&(k, v)| (k.to_string(), v as f64))
        .collect();
        out.push(("scx_global_dsq_inserted".into(), self.scx.global.inserted as f64));
        for (id, q) in &self.scx.user {
            out.push((format!("scx_dsq_{id}_inserted"), q.inserted as f64));
            out.push((format!("scx_dsq_{id}_max_queued"), q.max_queued as f64));
        }
        for (name, n) in &self.scx.op_calls {
            out.push((format!("scx_ops_{name}"), *n as f64));
        }
        out
    }

    /// The warning a scheduler's error leaves in the result.
    pub(crate) fn scx_warnings(&self) -> Vec<String> {
        match &self.scx.exit {
            Some(x) => vec![format!(
                "sched_ext scheduler '{}' was ejected at {:.6} s ({}, raised at {:.6} s): {}; its tasks ran under the fair class from then on",
                self.scx.name,
                x.disabled_at as f64 / 1e9,
                if x.kind == 1026 { "SCX_EXIT_ERROR_STALL" } else { "SCX_EXIT_ERROR" },
                x.at as f64 / 1e9,
                x.msg
            )],
            None => Vec::new(),
        }
    }

    /// Every runnable task of the class is counted on its CPU once and is where its
    /// record says: running, on one DSQ, or in the scheduler's custody.
    fn check_scx_invariants(&self) -> Result<(), String> {
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

/// The enqueue flags of an insert, with the ones of the enqueue it completes.
fn merge(a: EnqFlags, b: EnqFlags) -> EnqFlags {
    EnqFlags { wakeup: a.wakeup || b.wakeup, head: a.head || b.head, preempt: a.preempt || b.preempt, last: a.last || b.last, vtime: b.vtime }
}

fn flags_vtime(f: EnqFlags) -> bool {
    f.vtime
}

impl Kfuncs for ScxKfuncs<'_> {
    fn now(&self) -> Ns {
        self.sim.now
    }

    fn nr_cpus(&self) -> usize {
        self.sim.m.nr_cpus()
    }

    fn this_cpu(&self) -> usize {
        self.sim.scx.op.map_or(0, ScxOp::cpu)
    }

    fn create_dsq(&mut self, id: u64) -> Result<(), String> {
        if id >> 63 != 0 {
            return Err(format!("DSQ id 0x{id:x} has the built-in flag"));
        }
        if self.sim.scx.user.contains_key(&id) {
            return Err(format!("DSQ 0x{id:x} exists"));
        }
        self.sim.scx.user.insert(id, Default::default());
        Ok(())
    }

    fn dsq_insert(&mut self, p: TaskId, dsq: DsqId, slice: Ns, flags: EnqFlags) {
        self.insert(p, dsq, slice, EnqFlags { vtime: false, ..flags });
    }

    fn dsq_insert_vtime(&mut self, p: TaskId, dsq: DsqId, slice: Ns, vtime: u64, flags: EnqFlags) {
        self.sim.scx.task(p).dsq_vtime = vtime;
        self.insert(p, dsq, slice, EnqFlags { vtime: true, ..flags });
    }

    fn dsq_move_to_local(&mut self, dsq: u64) -> bool {
        match self.sim.scx.op {
            Some(ScxOp::Dispatch(cpu)) => self.sim.scx_move_to_local(cpu, dsq),
            _ => {
                self.sim.scx_error("scx_bpf_dsq_move_to_local() outside ops.dispatch()".into());
                false
            }
        }
    }

    fn dsq_nr_queued(&self, dsq: DsqId) -> usize {
        let s = &self.sim.scx;
        match dsq {
            DsqId::Local => self.sim.rqs[self.this_cpu()].scx.local.len(),
            DsqId::LocalOn(c) => self.sim.rqs.get(c).map_or(0, |rq| rq.scx.local.len()),
            DsqId::Global => s.global.len(),
            DsqId::User(id) => s.user.get(&id).map_or(0, |q| q.len()),
        }
    }

    fn dispatch_nr_slots(&self) -> usize {
        match self.sim.scx.op {
            Some(ScxOp::Dispatch(_)) => self.sim.scx.max_batch.saturating_sub(self.sim.scx.dsp_buf.len()),
            _ => 0,
        }
    }

    fn kick_cpu(&mut self, cpu: usize, flags: KickFlags) {
        if cpu >= self.sim.m.nr_cpus() {
            self.sim.scx_error(format!("scx_bpf_kick_cpu() of invalid CPU {cpu}"));
            return;
        }
        let from = self.this_cpu();
        if cpu == from && self.sim.scx.in_balance == Some(cpu) {
            // Sent by the irq_work once this CPU's schedule() drops the rq lock.
            let k = &mut self.sim.scx.self_kick[cpu];
            let prev = k.unwrap_or_default();
            *k = Some(KickFlags { idle: prev.idle && flags.idle, preempt: prev.preempt || flags.preempt });
            return;
        }
        self.sim.scx_kick(from, cpu, flags);
    }

    fn select_cpu_dfl(&mut self, p: TaskId, prev_cpu: usize, wake_flags: WakeFlags) -> (usize, bool) {
        self.sim.scx_select_cpu_dfl(p, prev_cpu, wake_flags)
    }

    fn task_running(&self, p: TaskId) -> bool {
        self.sim.rqs[self.sim.tasks[p].cpu].curr == Some(p)
    }

    fn task_cpu(&self, p: TaskId) -> usize {
        self.sim.tasks[p].cpu
    }

    fn task_allowed_on(&self, p: TaskId, cpu: usize) -> bool {
        self.sim.tasks[p].cpus_allowed.test(cpu)
    }

    fn task_weight(&self, p: TaskId) -> u64 {
        self.sim.scx.get(p).weight
    }

    fn task_vtime(&self, p: TaskId) -> u64 {
        self.sim.scx.get(p).dsq_vtime
    }

    fn set_task_vtime(&mut self, p: TaskId, v: u64) {
        self.sim.scx.task(p).dsq_vtime = v;
    }

    fn task_slice(&self, p: TaskId) -> Ns {
        self.sim.scx.get(p).slice
    }

    fn timer_start(&mut self, delay: Ns) {
        let cpu = self.this_cpu();
        let at = self.sim.now + delay.max(1);
        let key = self.sim.timers.hr.start(cpu, at, 0, crate::timers::hrtimer::HrtimerFn::ScxTimer);
        self.sim.push_hrtimer_event(key);
    }

    fn error(&mut self, msg: String) {
        self.sim.scx_error(msg);
    }
}

impl ScxKfuncs<'_> {
    /// scx_bpf_dsq_insert[_vtime]()'s common part: the slice (0 keeps what is left, at
    /// least 1 ns), then a direct dispatch from select_cpu / enqueue or a slot of the
    /// dispatch buffer.
    fn insert(&mut self, p: TaskId, dsq: DsqId, slice: Ns, flags: EnqFlags) {
        let e = self.sim.scx.task(p);
        e.slice = if slice != 0 { slice } else { e.slice.max(1) };
        match self.sim.scx.op {
            Some(ScxOp::SelectCpu(_, q)) | Some(ScxOp::Enqueue(_, q)) => {
                if q != p {
                    self.sim.scx_error(format!("insert of task {p} from an op of task {q}"));
                    return;
                }
                let e = self.sim.scx.task(p);
                if e.ddsp.is_some() {
                    self.sim.scx_error("task already direct-dispatched".into());
                    return;
                }
                e.ddsp = Some((dsq, flags));
            }
            Some(ScxOp::Dispatch(_)) => {
                if self.sim.scx.dsp_buf.len() >= self.sim.scx.max_batch {
                    self.sim.scx_error(format!("dispatch buffer overflow ({} slots)", self.sim.scx.max_batch));
                    return;
                }
                self.sim.scx.dsp_buf.push((p, dsq, flags));
            }
            _ => self.sim.scx_error("DSQ insert outside ops.select_cpu(), ops.enqueue() and ops.dispatch()".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ext::WakeFlags;
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// A 2-core, 2-thread machine with scx_simple loaded and a task that starts later.
    fn smt_machine() -> Simulator {
        let toml = "[machine]\ntopo = { cores = 2, smt = 2 }\n[kernel]\nprofile = \"6.12\"\nsched_ext = { scheduler = \"simple\" }\n\
                    [[tasks]]\nname = \"t\"\nstart = \"1s\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 2\n";
        let s = Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// scx_select_cpu_dfl() takes a wholly idle core before an idle SMT sibling of a busy
    /// CPU, even the task's own prev; with no idle core left, prev if idle.
    #[test]
    fn the_default_pick_prefers_an_idle_core_to_an_idle_sibling() {
        let mut sim = smt_machine();
        sim.scx_update_idle(0, false);
        let sibling = sim.m.smt_siblings(0).iter().copied().find(|&c| c != 0).expect("SMT");
        let wake = WakeFlags { ttwu: true, ..Default::default() };
        let (cpu, idle) = sim.scx_select_cpu_dfl(0, sibling, wake);
        assert!(idle && !sim.m.smt_siblings(0).contains(&cpu), "picked CPU {cpu}, on the busy core");
        // The claim took the other core out of the idle-core mask: now prev itself.
        assert_eq!(sim.scx_select_cpu_dfl(0, sibling, wake), (sibling, true));
        // Nothing idle but one claimed CPU's sibling: that one, then nothing.
        let last = sim.scx.idle_cpus.first().expect("one idle CPU left");
        assert_eq!(sim.scx_select_cpu_dfl(0, sibling, wake), (last, true));
        assert_eq!(sim.scx_select_cpu_dfl(0, sibling, wake), (sibling, false));
    }
}
