//! The scheduling classes in their order: what core.c does through `p->sched_class`
//! (enqueue, dequeue, put_prev, the pick, the tick, wakeup preemption, CPU selection)
//! dispatched to the deadline, RT and fair classes.
//!
//! Mirrors: kernel/sched/core.c `__pick_next_task()` (stop > dl > rt > fair > idle; the
//! fast path straight to the fair class when every runnable task is fair),
//! `wakeup_preempt()` (same class: the class decides; a higher class preempts at once; a
//! lower one never), `select_task_rq()`, `put_prev_task_balance()` (balance_rt():
//! pull_rt_task() when the previous RT task leaves), and `sched_tick()`'s
//! `curr->sched_class->task_tick()`.
//! Model: in a run with no RT or deadline task (`rtc.in_use` false) every path is the
//! fair class's as before, so such runs are unchanged.

use crate::features::Feature;
use crate::state::task::{SchedClass, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    /// The class of `p`.
    #[inline]
    pub(crate) fn class_of(&self, p: TaskId) -> SchedClass {
        self.tasks[p].sched.class()
    }

    /// select_task_rq(): the class's choice of CPU for a waking or new task.
    pub(crate) fn select_task_rq(&mut self, p: TaskId, prev: usize, this_cpu: usize, waker: Option<TaskId>, sync: bool, fork: bool) -> usize {
        let cpu = match self.class_of(p) {
            SchedClass::Fair => return self.select_task_rq_fair(p, prev, this_cpu, waker, sync, fork),
            SchedClass::Rt => self.select_task_rq_rt(p, prev),
            SchedClass::Dl => self.select_task_rq_dl(p, prev, this_cpu, fork),
        };
        // select_fallback_rq(): a CPU it may run on.
        if self.tasks[p].cpus_allowed.test(cpu) {
            cpu
        } else {
            self.tasks[p].cpus_allowed.first().unwrap_or(prev)
        }
    }

    /// enqueue_task() of an RT or deadline task (activate_task()); false for a fair one,
    /// which the caller enqueues.
    pub(crate) fn enqueue_task_class(&mut self, cpu: usize, p: TaskId, wakeup: bool) -> bool {
        match self.class_of(p) {
            SchedClass::Fair => false,
            SchedClass::Rt => {
                if wakeup {
                    self.update_curr(cpu);
                }
                self.enqueue_task_rt(cpu, p, false);
                true
            }
            SchedClass::Dl => {
                if wakeup {
                    self.update_curr(cpu);
                }
                self.enqueue_task_dl(cpu, p, true);
                true
            }
        }
    }

    /// dequeue_task() of the running task `p` that blocks or exits.
    pub(crate) fn dequeue_task(&mut self, cpu: usize, p: TaskId, sleep: bool) {
        match self.class_of(p) {
            SchedClass::Fair => self.dequeue_task_fair(cpu, p, sleep),
            cls => {
                self.update_curr(cpu);
                if cls == SchedClass::Rt {
                    // A boosted task keeps its boost while it blocks (rtmutex.c).
                    self.dequeue_task_rt(cpu, p);
                } else {
                    self.dequeue_task_dl(cpu, p, sleep);
                }
                self.tasks[p].state = TaskState::Blocked;
            }
        }
    }

    /// put_prev_task() of a running task that stays runnable.
    pub(crate) fn put_prev_task_class(&mut self, cpu: usize, p: TaskId) {
        match self.class_of(p) {
            SchedClass::Fair => self.put_prev_task(cpu, p),
            _ => self.put_prev_task_rt(cpu, p),
        }
    }

    /// put_prev_task() of a task that left the runqueue (blocked or exited).
    pub(crate) fn put_prev_gone(&mut self, cpu: usize, p: TaskId) {
        if self.class_of(p) != SchedClass::Fair {
            return;
        }
        if self.tasks[p].state != TaskState::Exited {
            // put_prev_entity checks the runtime of a sleeping task's cfs_rq too.
            self.bw_put_prev(cpu, p);
        }
        self.put_prev_entities(cpu, p);
    }

    /// balance_rt() before the pick: the previous task was RT and is gone or lower, so
    /// this CPU may pull higher RT work waiting elsewhere.
    pub(crate) fn put_prev_balance(&mut self, cpu: usize, prev: Option<TaskId>) {
        if !self.rtc.in_use {
            return;
        }
        if let Some(p) = prev {
            if self.is_rt(p) && !self.tasks[p].sched.on_rq && self.rt_highest_prio(cpu) > self.tasks[p].sched.rt_prio() {
                self.pull_rt_task(cpu);
            }
            // balance_dl(): a deadline task left the dl_rq (blocked, throttled, exited).
            if self.is_dl(p) && !self.tasks[p].sched.on_rq {
                self.pull_dl_task(cpu);
            }
        }
    }

    /// __pick_next_task(): the first class with a task: dl (and the fair server), rt, fair.
    pub(crate) fn pick_next_task(&mut self, cpu: usize) -> Option<TaskId> {
        if !self.rtc.in_use {
            return self.pick_next_task_fair(cpu);
        }
        self.dl_server_put(cpu);
        if let Some(p) = self.pick_next_task_dl(cpu) {
            return Some(p);
        }
        if let Some(p) = self.pick_next_task_rt(cpu) {
            return Some(p);
        }
        self.pick_next_task_fair(cpu)
    }

    /// After the switch: set_next_task_rt()'s rt_queue_push_tasks().
    pub(crate) fn after_pick(&mut self, cpu: usize, next: Option<TaskId>) {
        if self.rtc.in_use && next.is_some_and(|n| self.is_rt(n)) {
            self.push_rt_tasks(cpu);
        }
        // set_next_task_dl()'s deadline_queue_push_tasks().
        if self.rtc.in_use && next.is_some_and(|n| self.is_dl(n)) {
            self.push_dl_tasks(cpu);
        }
    }

    /// The class part of update_curr(): fair vruntime and bandwidth, RT throttling's
    /// time, a deadline task's or the fair server's reservation.
    pub(crate) fn update_curr_class(&mut self, cpu: usize, c: TaskId, delta: Ns) {
        match self.class_of(c) {
            SchedClass::Fair => {
                self.update_curr_fair(cpu, c, delta);
                self.bw_account(cpu, c, delta);
                if self.rtc.in_use {
                    self.dl_server_update(cpu, delta);
                }
            }
            SchedClass::Rt => self.update_curr_rt(cpu, delta),
            SchedClass::Dl => self.update_curr_dl(cpu, c, delta),
        }
    }

    /// sched_tick()'s task_tick() of the running task's class.
    pub(crate) fn task_tick(&mut self, cpu: usize) {
        match self.rqs[cpu].curr.map(|c| (c, self.class_of(c))) {
            Some((_, SchedClass::Fair)) | None => self.task_tick_fair(cpu),
            Some((c, SchedClass::Rt)) => self.task_tick_rt(cpu, c),
            Some((_, SchedClass::Dl)) => {}
        }
    }

    /// wakeup_preempt() across classes: Some(()) when decided here (a higher class
    /// preempts, a lower one never does, RT and deadline decide among their own), None
    /// for a fair task waking where a fair task runs.
    pub(crate) fn class_wakeup_preempt(&mut self, cpu: usize, p: TaskId, from_cpu: usize) -> Option<()> {
        if !self.rtc.in_use {
            return None;
        }
        let c = self.rqs[cpu].curr?;
        let (pc, cc) = (self.class_of(p), self.class_of(c));
        if pc == SchedClass::Fair && cc == SchedClass::Fair {
            return None;
        }
        let preempt = if pc != cc {
            pc < cc
        } else if pc == SchedClass::Rt {
            self.wakeup_preempt_rt(cpu, p)
        } else {
            self.wakeup_preempt_dl(cpu, p)
        };
        if preempt && self.feat.has(Feature::WAKEUP_PREEMPTION) {
            self.resched_curr(cpu, from_cpu);
        }
        if pc == SchedClass::Rt && c != p {
            self.task_woken_rt(cpu, p);
        }
        if pc == SchedClass::Dl && c != p {
            self.task_woken_dl(cpu, p);
        }
        Some(())
    }

    /// add_nr_running() / sub_nr_running() of the RT and deadline classes: rq->nr_running
    /// counts the RT tasks of an rt_rq that is not throttled (enqueue_top_rt_rq(),
    /// dequeue_top_rt_rq() when sched_rt_runtime_exceeded() throttles it) and the queued
    /// deadline tasks (inc_dl_tasks(); a CBS-throttled task is dequeued), so the load
    /// balance's sums, the overload mask and sched_idle_rq() see them.
    pub(crate) fn class_nr_sync(&mut self, cpu: usize) {
        let rt = &self.rtc.rt[cpu];
        let want = if rt.rt_throttled { 0 } else { rt.rt_nr_running } + self.rtc.dl[cpu].queued.len();
        let had = self.rtc.nr_counted[cpu];
        if want != had {
            self.rtc.nr_counted[cpu] = want;
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
            let rq = &self.rtc.rt[cpu];
            if rq.active.len() != rq.rt_nr_running {
                return Err(format!("CPU {cpu}: rt_nr_running {} but {} queued", rq.rt_nr_running, rq.active.len()));
            }
            for p in rq.active.iter() {
                let t = &self.tasks[p];
                if t.cpu != cpu || !matches!(t.state, TaskState::Runnable | TaskState::Running) || !self.is_rt(p) {
                    return Err(format!("RT task {p} queued on CPU {cpu} in state {:?} (task_cpu {})", t.state, t.cpu));
                }
            }
            for &p in &self.rtc.dl[cpu].queued {
                let t = &self.tasks[p];
                if t.cpu != cpu || !matches!(t.state, TaskState::Runnable | TaskState::Running) {
                    return Err(format!("deadline task {p} queued on CPU {cpu} in state {:?}", t.state));
                }
            }
            // The class order: an RT task runnable here never waits behind a fair task
            // or an idle CPU unless its rt_rq is throttled or a resched is under way.
            let curr_class = self.rqs[cpu].curr.map(|c| self.class_of(c));
            let server_runs = self.rtc.dl[cpu].server.as_ref().is_some_and(|s| s.running);
            let rt_waits = self.rt_runnable(cpu) && curr_class.is_none_or(|c| c == SchedClass::Fair) && !server_runs;
            let dl_waits = !self.rtc.dl[cpu].queued.is_empty() && curr_class != Some(SchedClass::Dl);
            if (rt_waits || dl_waits) && !self.resched_pending[cpu] && !self.rqs[cpu].curr.is_some_and(|c| self.tasks[c].blocking.is_some()) {
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
