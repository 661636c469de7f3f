//! The scheduling classes as the kernel's `struct sched_class`: one op table
//! ([`SchedClassOps`]) that every class implements, the classes in their order, and the
//! one place that dispatches on a task's class ([`for_class!`]).
//!
//! Mirrors: kernel/sched/sched.h `struct sched_class` (the ops and their names) and
//! `for_each_class()` (stop > dl > rt > fair > ext > idle); core.c calls a class only
//! through its ops (`p->sched_class->enqueue_task(...)`).
//! Model: the classes are zero-sized types (`DlSchedClass` in `deadline.rs`,
//! `RtSchedClass` in `rt.rs`, `FairSchedClass` in `fair/class.rs`); an op is an
//! associated function taking the simulator, so dispatch is a `match` on
//! [`SchedClass`] that the compiler resolves statically (no `dyn` on the hot path).
//! An op a class leaves out has the kernel's default: a NULL op in the kernel is an op
//! that does nothing here. A new class is one more type implementing the trait, one
//! more variant of `SchedClass` and one more arm in [`for_class!`] and [`CLASS_ORDER`]
//! (docs/architecture.md, "Adding a scheduling class").
//! The stop class has no task of a scenario's; the idle class is the pick's end
//! (`sched/core.rs`: `set_next_task_idle()`).

use crate::state::task::{SchedClass, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

/// enqueue_task()'s flags (kernel/sched/sched.h `ENQUEUE_*`), as far as the model uses them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct EnqueueFlags {
    /// ENQUEUE_WAKEUP: a woken task (placed by its lag, its reservation renewed).
    pub wakeup: bool,
    /// ENQUEUE_DELAYED: a delayed-dequeue sleeper woken where it still is (ttwu_runnable()).
    pub delayed: bool,
    /// ENQUEUE_RESTORE | ENQUEUE_MOVE: a running task put back after a change of
    /// affinity or group (sched_move_task(), migration_cpu_stop()); `Some(from)` names
    /// the CPU it ran on.
    pub moved_from: Option<usize>,
    /// The CPU doing a wakeup's enqueue (ttwu_do_activate() on the waker's CPU), which
    /// takes the locks the enqueue needs (the shared runqueue's shard).
    pub waker_cpu: Option<usize>,
}

impl EnqueueFlags {
    /// A wakeup (ENQUEUE_WAKEUP).
    pub(crate) const WAKEUP: Self = Self { wakeup: true, delayed: false, moved_from: None, waker_cpu: None };
    /// A new, migrated or unthrottled task (no flag the model reads).
    pub(crate) const NONE: Self = Self { wakeup: false, delayed: false, moved_from: None, waker_cpu: None };
}

/// dequeue_task()'s flags (`DEQUEUE_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DequeueFlags {
    /// DEQUEUE_SLEEP: the task blocks or exits.
    pub sleep: bool,
    /// DEQUEUE_SAVE | DEQUEUE_MOVE of the running task (sched_move_task()): the class
    /// also puts its running state (put_prev_task()), as the caller then does.
    pub moving: bool,
}

impl DequeueFlags {
    /// DEQUEUE_SLEEP.
    pub(crate) const SLEEP: Self = Self { sleep: true, moving: false };
    /// No flag (an exit's dequeue; a migration's).
    pub(crate) const NONE: Self = Self { sleep: false, moving: false };
    /// DEQUEUE_SAVE | DEQUEUE_MOVE.
    pub(crate) const MOVE: Self = Self { sleep: false, moving: true };
}

/// `struct sched_class`: the ops core.c calls, named as the kernel names them. Each is
/// an associated function on a zero-sized class type; the defaults are the kernel's for
/// an op a class leaves NULL (or, where core.c has a fallback, that fallback).
pub(crate) trait SchedClassOps {
    /// Its tasks sleep with timer slack (`rt_or_dl_task_policy()` drops it for RT and
    /// deadline tasks: hrtimer_nanosleep(), select_estimate_accuracy(), and from 6.11
    /// sched_setscheduler()).
    const TIMER_SLACK: bool = true;
    /// The class puts its previous task where the kernel does, after the pick
    /// (put_prev_set_next_task(), which knows the next task), through
    /// `put_prev_after_pick`; the others put it before the pick (see `schedule()`).
    const PUT_PREV_AFTER_PICK: bool = false;

    /// enqueue_task(): `p` joins `cpu`'s queues.
    fn enqueue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: EnqueueFlags);
    /// dequeue_task() of the running task `p` (it blocks, exits or is moved).
    fn dequeue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: DequeueFlags);
    /// yield_task(): sched_yield() of the running task.
    fn yield_task(_sim: &mut Simulator, _cpu: usize, _p: TaskId) {}
    /// wakeup_preempt() of woken `p` against `curr` of the same class: the class decides
    /// and reschedules `cpu` itself.
    fn wakeup_preempt(sim: &mut Simulator, cpu: usize, p: TaskId, curr: TaskId, from_cpu: usize);
    /// pick_task() (with pick_next_task()'s own work where the class has one, such as
    /// the fair class's newidle balance): the class's next task, taken as `cpu`'s curr.
    fn pick_task(sim: &mut Simulator, cpu: usize) -> Option<TaskId>;
    /// put_prev_task(): `p` stops running on `cpu`, still runnable or gone (blocked,
    /// exited: its state says which).
    fn put_prev_task(_sim: &mut Simulator, _cpu: usize, _p: TaskId) {}
    /// put_prev_task() after the pick of a class with `PUT_PREV_AFTER_PICK`: `prev` stops
    /// running on `cpu` for `next` (None: idle); not called when `prev` was picked again.
    fn put_prev_after_pick(_sim: &mut Simulator, _cpu: usize, _prev: TaskId, _next: Option<TaskId>) {}
    /// set_next_task(): `p` was picked to run on `cpu` (after the switch).
    fn set_next_task(_sim: &mut Simulator, _cpu: usize, _p: TaskId) {}
    /// balance() (put_prev_task_balance()), before the pick: the previous task `prev`
    /// of this class left or dropped, so `cpu` may pull work of this class.
    fn balance(_sim: &mut Simulator, _cpu: usize, _prev: TaskId) {}
    /// select_task_rq(): a CPU for waking or new `p`; the default keeps it where it is
    /// (core.c without the op: task_cpu(p)).
    fn select_task_rq(_sim: &mut Simulator, _p: TaskId, prev: usize, _this_cpu: usize, _waker: Option<TaskId>, _sync: bool, _fork: bool) -> usize {
        prev
    }
    /// migrate_task_rq(): `p`, not running, moves from `src` to `dst` (set_task_cpu()).
    fn migrate_task_rq(_sim: &mut Simulator, _p: TaskId, _src: usize, _dst: usize) {}
    /// task_woken(): after the wakeup's preemption check, `p` waits on `cpu` behind its
    /// current task.
    fn task_woken(_sim: &mut Simulator, _cpu: usize, _p: TaskId) {}
    /// task_tick(): the scheduler tick with `p` running on `cpu`.
    fn task_tick(_sim: &mut Simulator, _cpu: usize, _p: TaskId) {}
    /// task_fork(): a new task, before its first enqueue on `cpu`.
    fn task_fork(_sim: &mut Simulator, _cpu: usize, _p: TaskId) {}
    /// task_dead(): `p` exited and was dequeued.
    fn task_dead(_sim: &mut Simulator, _p: TaskId) {}
    /// switched_to(): `p` entered the class (here: created in it, sched_setscheduler()).
    fn switched_to(_sim: &mut Simulator, _p: TaskId) {}
    /// update_curr(): the class's accounting of `delta` ns the running `p` ran.
    fn update_curr(_sim: &mut Simulator, _cpu: usize, _p: TaskId, _delta: Ns) {}

    /// The class's runnable tasks on `cpu` that rq->nr_running counts (the fair class
    /// counts its own through its enqueue and dequeue; any other class's are synced by
    /// `class_nr_sync()` when its queue changes).
    fn nr_running(_sim: &Simulator, _cpu: usize) -> usize {
        0
    }
    /// The class's own invariants (engine/invariants.rs runs every class's).
    fn check_invariants(_sim: &Simulator) -> Result<(), String> {
        Ok(())
    }
}

/// Runs `$body` with `$C` the class type of `$class`, the one dispatch on a class:
/// `for_class!(cls, |C| C::enqueue_task(self, cpu, p, flags))`.
macro_rules! for_class {
    ($class:expr, |$C:ident| $body:expr) => {
        match $class {
            $crate::state::task::SchedClass::Dl => {
                type $C = $crate::sched::deadline::DlSchedClass;
                $body
            }
            $crate::state::task::SchedClass::Rt => {
                type $C = $crate::sched::rt::RtSchedClass;
                $body
            }
            $crate::state::task::SchedClass::Fair => {
                type $C = $crate::fair::class::FairSchedClass;
                $body
            }
            $crate::state::task::SchedClass::Ext => {
                type $C = $crate::sched::ext::ExtSchedClass;
                $body
            }
        }
    };
}
pub(crate) use for_class;

/// for_each_class(): the classes with tasks, highest first (the idle class follows).
pub(crate) const CLASS_ORDER: &[SchedClass] = &[SchedClass::Dl, SchedClass::Rt, SchedClass::Fair, SchedClass::Ext];

impl Simulator {
    /// The class of `p` (`p->sched_class`).
    #[inline]
    pub(crate) fn class_of(&self, p: TaskId) -> SchedClass {
        self.tasks[p].sched.class()
    }

    /// Whether `p` sleeps with timer slack (its class's `TIMER_SLACK`).
    pub(crate) fn task_has_timer_slack(&self, p: TaskId) -> bool {
        for_class!(self.class_of(p), |C| C::TIMER_SLACK)
    }

    /// add_nr_running() / sub_nr_running() of the classes other than fair, after one of
    /// their queues changed: rq->nr_running counts what each class's `nr_running` op says
    /// (the RT tasks of an rt_rq that is not throttled, the queued deadline tasks), so the
    /// load balance's sums, the overload mask and sched_idle_rq() see them.
    pub(crate) fn class_nr_sync(&mut self, cpu: usize) {
        let want: usize = CLASS_ORDER.iter().map(|&cls| for_class!(cls, |C| C::nr_running(self, cpu))).sum();
        let had = self.rqs[cpu].nr_running_other;
        if want != had {
            self.rqs[cpu].nr_running_other = want;
            self.add_nr_running(cpu, want as isize - had as isize);
        }
    }

    /// The classes' invariants: every runnable RT or deadline task is on its CPU's
    /// queue once, and a CPU whose current task is of a lower class than a runnable
    /// (unthrottled) RT or deadline task there has a reschedule on its way.
    pub(crate) fn check_class_invariants(&self) -> Result<(), String> {
        if !self.rtc.in_use {
            return Ok(());
        }
        for cpu in 0..self.m.nr_cpus() {
            let rq = &self.rqs[cpu].rt;
            if rq.active.len() != rq.rt_nr_running {
                return Err(format!("CPU {cpu}: rt_nr_running {} but {} queued", rq.rt_nr_running, rq.active.len()));
            }
            for p in rq.active.iter() {
                let t = &self.tasks[p];
                if t.cpu != cpu || !matches!(t.state, TaskState::Runnable | TaskState::Running) || !self.is_rt(p) {
                    return Err(format!("RT task {p} queued on CPU {cpu} in state {:?} (task_cpu {})", t.state, t.cpu));
                }
            }
            for &p in &self.rqs[cpu].dl.queued {
                let t = &self.tasks[p];
                if t.cpu != cpu || !matches!(t.state, TaskState::Runnable | TaskState::Running) {
                    return Err(format!("deadline task {p} queued on CPU {cpu} in state {:?}", t.state));
                }
            }
            // The class order: an RT task runnable here never waits behind a lower class
            // or an idle CPU unless its rt_rq is throttled or a resched is under way.
            let curr_class = self.rqs[cpu].curr.map(|c| self.class_of(c));
            let server_runs = self.rqs[cpu].dl.server.as_ref().is_some_and(|s| s.running);
            let rt_waits = self.rt_runnable(cpu) && curr_class.is_none_or(|c| c > SchedClass::Rt) && !server_runs;
            let dl_waits = !self.rqs[cpu].dl.queued.is_empty() && curr_class != Some(SchedClass::Dl);
            if (rt_waits || dl_waits) && !self.rqs[cpu].resched_pending && self.rqs[cpu].curr.is_none_or(|c| self.tasks[c].blocking.is_none()) {
                return Err(format!(
                    "CPU {cpu}: a runnable {} task waits while {:?} runs and no reschedule is pending",
                    if dl_waits { "deadline" } else { "RT" },
                    self.rqs[cpu].curr
                ));
            }
        }
        for (p, t) in self.tasks.iter().enumerate() {
            if !t.sched.is_rt_or_dl() || !matches!(t.state, TaskState::Runnable | TaskState::Running) {
                continue;
            }
            let throttled_dl = t.sched.dl.is_some_and(|d| d.throttled);
            if !t.sched.on_rq && !throttled_dl {
                return Err(format!("runnable {:?} task {p} is on no runqueue", t.sched.class()));
            }
        }
        Ok(())
    }

    /// The classes' figures for the result's summary, only in runs with an RT or
    /// deadline task (others keep their documents as they were). Per task:
    /// `dl_misses:NAME` (jobs finished after their absolute deadline) and
    /// `dl_overruns:NAME` (reservations exhausted, CBS throttles).
    pub(crate) fn class_summary(&self) -> Vec<(String, f64)> {
        if !self.rtc.in_use {
            return Vec::new();
        }
        let r = &self.rtc;
        let mut out = vec![
            ("rt_throttles".to_string(), r.rt_throttles as f64),
            ("rt_pushes".to_string(), r.rt_pushes as f64),
            ("rt_pulls".to_string(), r.rt_pulls as f64),
            ("rt_push_ipis".to_string(), r.rt_push_ipis as f64),
            ("dl_pushes".to_string(), r.dl_pushes as f64),
            ("dl_pulls".to_string(), r.dl_pulls as f64),
            ("dl_server_picks".to_string(), r.server_picks as f64),
            ("dl_refused".to_string(), r.dl_refused as f64),
        ];
        let (mut misses, mut overruns) = (0, 0);
        for t in self.tasks.iter().filter(|t| t.sched.dl.is_some()) {
            misses += t.sched.dl_misses;
            overruns += t.sched.dl_overruns;
            out.push((format!("dl_misses:{}", t.stats.name), t.sched.dl_misses as f64));
            out.push((format!("dl_overruns:{}", t.stats.name), t.sched.dl_overruns as f64));
        }
        if r.fork_eagain > 0 {
            out.push(("fork_eagain".to_string(), r.fork_eagain as f64));
        }
        out.push(("dl_misses".to_string(), misses as f64));
        out.push(("dl_overruns".to_string(), overruns as f64));
        out
    }
}

impl Simulator {
    /// switched_to() of a task created in its class (the scenario's sched_setattr()).
    pub(crate) fn class_switched_to(&mut self, p: TaskId) {
        for_class!(self.class_of(p), |C| C::switched_to(self, p));
    }
}
