//! The engine's side of CFS bandwidth control: accounting, throttling, unthrottling.
//!
//! Mirrors: kernel/sched/fair.c call sites of the bandwidth code: update_curr() →
//! account_cfs_rq_runtime(), put_prev_entity() → check_cfs_rq_runtime(),
//! enqueue_entity() → check_enqueue_throttle(), dequeue_entity() →
//! return_cfs_rq_runtime(), throttle_cfs_rq()/unthrottle_cfs_rq() dequeuing and
//! re-enqueuing the group's tasks, and the period/slack hrtimers.
//! Model: the state machine is `crate::bandwidth`; the engine keeps, per (group level,
//! CPU), the number of the subtree's tasks that are runnable there, throttled ones
//! included (so throttling a child does not empty its parent's cfs_rq: a parent's slack
//! is returned when its tasks sleep or leave, not when a child is throttled).
//! Throttled tasks leave the runqueue's sums and wait on the CPU's throttled list.

use crate::bandwidth::{BwTimerKind, BwTimerRequest, GroupId};
use crate::engine::queue::{EventClass, EventKind};
use crate::engine::Simulator;
use crate::kernel::FairPolicy;
use crate::task::{TaskId, TaskState};
use crate::time::Ns;

impl Simulator {
    #[inline]
    fn bw_limited(&self, p: TaskId) -> bool {
        self.bw.as_ref().is_some_and(|b| b.has_limits(self.tasks[p].group))
    }

    fn bw_arm(&mut self, timers: Vec<BwTimerRequest>) {
        for t in timers {
            let kind = EventKind::Bandwidth { group: t.group as u32, slack: t.kind == BwTimerKind::Slack };
            self.q.push(t.at, EventClass::Timer, kind);
        }
    }

    /// account_cfs_rq_runtime() for the running task `p`.
    pub(crate) fn bw_account(&mut self, cpu: usize, p: TaskId, delta: Ns) {
        if !self.bw_limited(p) {
            return;
        }
        let mut timers = Vec::new();
        let g = self.tasks[p].group;
        let now = self.now;
        let resched = self.bw.as_mut().expect("limited").account(g, cpu, delta, now, &mut timers);
        self.bw_arm(timers);
        if resched && self.tasks[p].state == TaskState::Running {
            self.resched_curr(cpu, cpu);
        }
    }

    /// A task of a limited group became runnable on `cpu`; returns true if it must wait
    /// throttled.
    pub(crate) fn bw_enqueue(&mut self, cpu: usize, p: TaskId) -> bool {
        if !self.bw_limited(p) {
            return false;
        }
        let g = self.tasks[p].group;
        let nr = self.m.nr_cpus();
        let mut timers = Vec::new();
        let levels = self.bw.as_ref().expect("limited").levels(g);
        let mut newly = None;
        for level in levels {
            let n = &mut self.bw_nr[level * nr + cpu];
            *n += 1;
            if *n == 1 && newly.is_none() {
                newly = self.bw.as_mut().expect("limited").enqueue_check(level, cpu, self.now, &mut timers);
            }
        }
        self.bw_arm(timers);
        if let Some(top) = newly {
            self.throttle_subtree(top, cpu, Some(p));
        }
        let bw = self.bw.as_mut().expect("limited");
        let throttled = bw.is_throttled(g, cpu);
        if throttled && newly.is_none() {
            bw.queued_while_throttled(g, cpu, self.now);
        }
        throttled
    }

    /// A task of a limited group stopped being runnable on `cpu` (sleep, exit, migration).
    pub(crate) fn bw_dequeue(&mut self, cpu: usize, p: TaskId) {
        if !self.bw_limited(p) {
            return;
        }
        let g = self.tasks[p].group;
        let nr = self.m.nr_cpus();
        let mut timers = Vec::new();
        let levels = self.bw.as_ref().expect("limited").levels(g);
        for level in levels {
            let n = &mut self.bw_nr[level * nr + cpu];
            *n -= 1;
            if *n == 0 {
                self.bw.as_mut().expect("limited").dequeue_last(level, cpu, self.now, &mut timers);
            }
        }
        self.bw_arm(timers);
    }

    /// check_cfs_rq_runtime() at put_prev; returns true if `p`'s hierarchy is throttled.
    pub(crate) fn bw_put_prev(&mut self, cpu: usize, p: TaskId) -> bool {
        if !self.bw_limited(p) {
            return false;
        }
        let g = self.tasks[p].group;
        let mut timers = Vec::new();
        let (nr, bw_nr) = (self.m.nr_cpus(), &self.bw_nr);
        let top = self.bw.as_mut().expect("limited").check_throttle(g, cpu, self.now, &mut timers, |level| bw_nr[level * nr + cpu] > 0);
        self.bw_arm(timers);
        if let Some(top) = top {
            self.throttle_subtree(top, cpu, Some(p));
        }
        self.bw.as_ref().expect("limited").is_throttled(g, cpu)
    }

    fn in_subtree(&self, mut g: GroupId, top: GroupId) -> bool {
        loop {
            if g == top {
                return true;
            }
            match self.groups[g].parent {
                Some(p) => g = p,
                None => return false,
            }
        }
    }

    /// throttle_cfs_rq(): the subtree's queued tasks on `cpu` leave the runqueue; a
    /// running one is rescheduled (and throttled at its put_prev). `skip` is handled by
    /// the caller.
    fn throttle_subtree(&mut self, top: GroupId, cpu: usize, skip: Option<TaskId>) {
        self.trace_event(cpu, crate::trace::TraceEvent::CfsThrottle { group: top, throttled: true });
        let victims: Vec<TaskId> =
            self.rqs[cpu].queue.iter().copied().filter(|&t| Some(t) != skip && self.in_subtree(self.tasks[t].group, top)).collect();
        for t in victims {
            self.queue_del(cpu, t);
            self.wc_waiting(cpu, t, -1);
            self.throttle_task(cpu, t);
        }
        if let Some(c) = self.rqs[cpu].curr {
            if Some(c) != skip && self.tasks[c].state == TaskState::Running && self.in_subtree(self.tasks[c].group, top) {
                self.resched_curr(cpu, cpu);
            }
        }
    }

    /// Takes a runnable task (already off the queue) out of the runqueue's sums.
    pub(crate) fn throttle_task(&mut self, cpu: usize, p: TaskId) {
        if self.policy() == FairPolicy::Eevdf {
            self.update_entity_lag(cpu, p);
        }
        self.account_entity_dequeue(cpu, p);
        self.add_nr_running(cpu, -1);
        self.tasks[p].state = TaskState::Throttled;
        self.rqs[cpu].throttled.push(p);
    }

    /// A bandwidth hrtimer fired: refill/distribute, then unthrottle what got runtime.
    pub(crate) fn bw_timer(&mut self, group: GroupId, slack: bool) {
        if !slack && self.bw.as_ref().is_some_and(|b| b.period_timer(group) == Some(self.now)) {
            self.bw_check_window(group);
        }
        let Some(bw) = &mut self.bw else { return };
        let req = BwTimerRequest { group, kind: if slack { BwTimerKind::Slack } else { BwTimerKind::Period }, at: self.now };
        let mut timers = Vec::new();
        let unthrottled = bw.timer_fired(req, self.now, &mut timers);
        self.bw_arm(timers);
        for (level, cpu) in unthrottled {
            self.trace_event(cpu, crate::trace::TraceEvent::CfsThrottle { group: level, throttled: false });
            self.unthrottle_subtree(level, cpu);
        }
    }

    /// The quota invariant, at each refill of a group's pool: since the last refill the
    /// group (with its subtree) ran at most what the pool held (quota + burst at most)
    /// plus what each CPU's cfs_rq could hold over (a slice) and overrun before its
    /// next check (two ticks, an estimate covering resched latency).
    fn bw_check_window(&mut self, g: GroupId) {
        let Some(bw) = &self.bw else { return };
        let spec = bw.spec(g);
        let Some(quota) = spec.quota_ns else { return };
        let used = self.groups[g].usage_ns - self.bw_window_start[g];
        let n = self.m.nr_cpus() as Ns;
        let bound = quota + spec.burst_ns + n * (bw.slice_ns() + 2 * self.tick_ns);
        if used > bound && self.bw_violation.is_none() {
            self.bw_violation = Some(format!(
                "group {} used {used} ns between pool refills (ending at {} ns): more than quota {quota} + burst {} + {n} CPUs x (slice {} + 2 ticks)",
                self.groups[g].name, self.now, spec.burst_ns, bw.slice_ns()
            ));
        }
        self.bw_window_start[g] = self.groups[g].usage_ns;
    }

    /// unthrottle_cfs_rq(): the subtree's tasks no longer throttled return to the queue.
    fn unthrottle_subtree(&mut self, level: GroupId, cpu: usize) {
        let back: Vec<TaskId> = self.rqs[cpu]
            .throttled
            .iter()
            .copied()
            .filter(|&t| self.in_subtree(self.tasks[t].group, level))
            .filter(|&t| !self.bw.as_ref().is_some_and(|b| b.is_throttled(self.tasks[t].group, cpu)))
            .collect();
        for p in back {
            self.rqs[cpu].throttled.retain(|&t| t != p);
            self.update_curr(cpu);
            if self.policy() == FairPolicy::Eevdf {
                self.place_entity_eevdf(cpu, p, false);
            }
            self.tasks[p].state = TaskState::Runnable;
            self.account_entity_enqueue(cpu, p);
            self.queue_add(cpu, p);
            self.wc_waiting(cpu, p, 1);
            self.add_nr_running(cpu, 1);
            self.wakeup_preempt(cpu, p, cpu);
        }
    }
}
