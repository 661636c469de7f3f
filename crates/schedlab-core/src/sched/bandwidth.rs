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
//! Before 6.18 a throttle takes the group's queued tasks off at once; with the 6.18
//! task-based throttle (e1fad12dcb66) they stay queued, and each one picked is given the
//! throttle task_work and held when it next returns to user space (throttle_cfs_rq_work):
//! after the kernel part of what it was doing (`overhead_ns`: the rest of a system call,
//! the switch), never inside it. Unthrottling (unthrottle_cfs_rq) reschedules the CPU
//! only if it is idle: a busy CPU's queued tasks compete at its next tick. Timers fire
//! on the CPU that started them; other CPUs learn of an unthrottle by IPI (before 6.2 a
//! resched, from 6.2 a CSD that runs the unthrottle there, 8ad075c2eb1f).

use crate::bandwidth::{BwTimerKind, BwTimerRequest, GroupId};
use crate::state::events::{EventClass, EventKind};
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    #[inline]
    fn bw_limited(&self, p: TaskId) -> bool {
        self.bw.control.as_ref().is_some_and(|b| b.has_limits(self.tasks[p].group))
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
        let resched = self.bw.control.as_mut().expect("limited").account(g, cpu, delta, now, &mut timers);
        self.bw_arm(timers);
        if resched && self.tasks[p].state == TaskState::Running {
            self.resched_curr(cpu, cpu);
        }
    }

    fn bw_task_mode(&self) -> bool {
        self.bw.control.as_ref().is_some_and(|b| b.mode().task_throttle)
    }

    /// A task of a limited group became runnable on `cpu`; returns true if it must wait
    /// throttled (never with the task-based throttle: it is queued, and held later).
    pub(crate) fn bw_enqueue(&mut self, cpu: usize, p: TaskId) -> bool {
        if !self.bw_limited(p) {
            return false;
        }
        let g = self.tasks[p].group;
        let nr = self.m.nr_cpus();
        let mut timers = Vec::new();
        let levels = self.bw.control.as_ref().expect("limited").levels(g);
        let mut newly = None;
        for level in levels {
            let n = &mut self.bw.nr[level * nr + cpu];
            *n += 1;
            if *n == 1 && newly.is_none() {
                newly = self.bw.control.as_mut().expect("limited").enqueue_check(level, cpu, self.now, &mut timers);
            }
        }
        self.bw_arm(timers);
        if let Some(top) = newly {
            self.throttle_subtree(top, cpu, Some(p));
        }
        let task_mode = self.bw_task_mode();
        let bw = self.bw.control.as_mut().expect("limited");
        let throttled = bw.is_throttled(g, cpu);
        if throttled && newly.is_none() {
            bw.queued_while_throttled(g, cpu, self.now);
        }
        throttled && !task_mode
    }

    /// A delayed task of a limited group woke on `cpu` (requeue_delayed_entity(): it
    /// never left its cfs_rq). Returns true if that cfs_rq is throttled and, before
    /// 6.18, the task must wait with the others on the throttled list: the kernel keeps
    /// it in the throttled cfs_rq's tree, where nothing is picked. Left in the model's
    /// tree it was the only runnable entity at each unthrottle and won every pick (a
    /// starvation the liveness property found with DELAY_DEQUEUE, 6.12-6.17).
    pub(crate) fn bw_requeue_throttled(&mut self, cpu: usize, p: TaskId) -> bool {
        if !self.bw_limited(p) {
            return false;
        }
        let g = self.tasks[p].group;
        let task_mode = self.bw_task_mode();
        let bw = self.bw.control.as_mut().expect("limited");
        if !bw.is_throttled(g, cpu) {
            return false;
        }
        bw.queued_while_throttled(g, cpu, self.now);
        !task_mode
    }

    /// A task of a limited group stopped being runnable on `cpu` (sleep, exit, migration).
    pub(crate) fn bw_dequeue(&mut self, cpu: usize, p: TaskId) {
        if !self.bw_limited(p) {
            return;
        }
        let g = self.tasks[p].group;
        let nr = self.m.nr_cpus();
        let mut timers = Vec::new();
        let levels = self.bw.control.as_ref().expect("limited").levels(g);
        for level in levels {
            let n = &mut self.bw.nr[level * nr + cpu];
            *n -= 1;
            if *n == 0 {
                self.bw.control.as_mut().expect("limited").dequeue_last(level, cpu, self.now, &mut timers);
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
        let (nr, bw_nr) = (self.m.nr_cpus(), &self.bw.nr);
        let top = self.bw.control.as_mut().expect("limited").check_throttle(g, cpu, self.now, &mut timers, |level| bw_nr[level * nr + cpu] > 0);
        self.bw_arm(timers);
        if let Some(top) = top {
            self.throttle_subtree(top, cpu, Some(p));
        }
        !self.bw_task_mode() && self.bw.control.as_ref().expect("limited").is_throttled(g, cpu)
    }

    /// can_migrate_task()'s bandwidth test: may load balance move `p` from `src` to
    /// `dst`? Before 6.18, throttled_lb_pair(): neither the task's cfs_rq on `src` nor the
    /// one on `dst` may be in a throttled hierarchy. With the task-based throttle (6.18,
    /// "sched/fair: Do not balance task to a throttled cfs_rq") a task still queued on a
    /// throttled `src` may leave (it has not reached its throttle point), but none is
    /// moved onto a throttled `dst` (lb_throttled_hierarchy()). Without this a throttled
    /// idle CPU pulled the group's last waiting task every period, onto a cfs_rq with no
    /// runtime, where it was held again (issue 29's starvation).
    pub(crate) fn lb_may_migrate_throttled(&self, p: TaskId, src: usize, dst: usize) -> bool {
        let Some(bw) = self.bw.control.as_ref().filter(|b| b.has_limits(self.tasks[p].group)) else { return true };
        let g = self.tasks[p].group;
        if bw.is_throttled(g, dst) {
            return false;
        }
        bw.mode().task_throttle || !bw.is_throttled(g, src)
    }

    /// pick_task_fair() (6.18): a task picked through a throttled cfs_rq gets the throttle
    /// task_work (task_throttle_setup_work).
    pub(crate) fn bw_pick(&mut self, cpu: usize, p: TaskId) {
        if self.bw_task_mode() && self.bw_limited(p) && self.bw.control.as_ref().expect("limited").is_throttled(self.tasks[p].group, cpu) {
            self.tasks[p].throttle_work = true;
        }
    }

    /// throttle_cfs_rq_work(): the running task `p` returns to user space with the
    /// throttle work pending. If its hierarchy is still throttled here it leaves the
    /// runqueue for the limbo list (dequeue_task_fair(DEQUEUE_SLEEP | DEQUEUE_THROTTLE),
    /// throttled_time starts) and the CPU reschedules; else it goes on.
    pub(crate) fn throttle_cfs_rq_work(&mut self, cpu: usize, p: TaskId) {
        self.tasks[p].throttle_work = false;
        let g = self.tasks[p].group;
        if !self.bw.control.as_ref().is_some_and(|b| b.is_throttled(g, cpu)) {
            self.arm_segment(cpu);
            return;
        }
        self.update_curr(cpu);
        self.throttle_task(cpu, p);
        self.tasks[p].runnable_since = self.now;
        self.bw.control.as_mut().expect("throttled").task_throttled(g, cpu, self.now);
        self.schedule(cpu);
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

    /// throttle_cfs_rq(): the subtree's queued tasks on `cpu` leave the runqueue (before
    /// 6.18; from 6.18 they stay); a running one is rescheduled (and throttled at its
    /// put_prev, or at its return to user space). `skip` is handled by the caller.
    fn throttle_subtree(&mut self, top: GroupId, cpu: usize, skip: Option<TaskId>) {
        self.trace_event(cpu, crate::trace::TraceEvent::CfsThrottle { group: top, throttled: true });
        let victims: Vec<TaskId> = if self.bw_task_mode() {
            Vec::new()
        } else {
            self.rqs[cpu].queue.iter().copied().filter(|&t| Some(t) != skip && self.in_subtree(self.tasks[t].group, top)).collect()
        };
        for t in victims {
            self.throttle_task(cpu, t);
        }
        if let Some(c) = self.rqs[cpu].curr {
            if Some(c) != skip && self.tasks[c].state == TaskState::Running && self.in_subtree(self.tasks[c].group, top) {
                self.resched_curr(cpu, cpu);
            }
        }
    }

    /// A bandwidth hrtimer fired on its CPU: refill/distribute, then unthrottle what got
    /// runtime there and, from 6.2, send a CSD to each other CPU that got some.
    pub(crate) fn bw_timer(&mut self, group: GroupId, slack: bool) {
        if !slack && self.bw.control.as_ref().is_some_and(|b| b.period_timer(group) == Some(self.now)) {
            self.bw_check_window(group);
        }
        let Some(bw) = &mut self.bw.control else { return };
        let kind = if slack { BwTimerKind::Slack } else { BwTimerKind::Period };
        let req = BwTimerRequest { group, kind, at: self.now };
        let mut timers = Vec::new();
        let unthrottled = bw.timer_fired(req, self.now, &mut timers);
        let from = bw.timer_cpu(group, kind);
        let remote = bw.take_async_unthrottles();
        self.bw_arm(timers);
        // do_sched_cfs_period_timer() / do_sched_cfs_slack_timer() under cfs_b->lock.
        self.cfs_b_lock(group, from, 0);
        for (level, cpu) in unthrottled {
            self.unthrottle_subtree(level, cpu, from);
        }
        for (_, cpu) in remote {
            // unthrottle_cfs_rq_async(): one CSD per CPU whose list was empty.
            if !std::mem::replace(&mut self.rqs[cpu].csd_inflight, true) {
                let at = self.kick_remote_cpu(from, cpu);
                self.q.push(at, EventClass::Segment, EventKind::BwCsd { cpu: cpu as u32 });
            }
        }
    }

    /// The unthrottle CSD reached `cpu` (__cfsb_csd_unthrottle).
    pub(crate) fn bw_csd(&mut self, cpu: usize) {
        self.rqs[cpu].csd_inflight = false;
        let Some(bw) = &mut self.bw.control else { return };
        for (level, c) in bw.csd_unthrottle(cpu, self.now) {
            self.unthrottle_subtree(level, c, cpu);
        }
    }

    /// The quota invariant, at each refill of a group's pool: since the last refill the
    /// group (with its subtree) ran at most what the pool held (quota + burst at most)
    /// plus what each CPU's cfs_rq could hold over (a slice) and overrun before its
    /// next check (two ticks, an estimate covering resched latency).
    fn bw_check_window(&mut self, g: GroupId) {
        let Some(bw) = &self.bw.control else { return };
        let spec = bw.spec(g);
        let Some(quota) = spec.quota_ns else { return };
        let used = self.groups[g].usage_ns - self.bw.window_start[g];
        let n = self.m.nr_cpus() as Ns;
        let bound = quota + spec.burst_ns + n * (bw.slice_ns() + 2 * self.tick.period_ns);
        if used > bound && self.bw.violation.is_none() {
            self.bw.violation = Some(format!(
                "group {} used {used} ns between pool refills (ending at {} ns): more than quota {quota} + burst {} + {n} CPUs x (slice {} + 2 ticks)",
                self.groups[g].name, self.now, spec.burst_ns, bw.slice_ns()
            ));
        }
        self.bw.window_start[g] = self.groups[g].usage_ns;
    }

    /// unthrottle_cfs_rq(): the subtree's tasks no longer throttled return to the queue;
    /// an idle CPU is told to reschedule (from `from`, where the unthrottle runs).
    fn unthrottle_subtree(&mut self, level: GroupId, cpu: usize, from: usize) {
        self.trace_event(cpu, crate::trace::TraceEvent::CfsThrottle { group: level, throttled: false });
        let mut back: Vec<TaskId> = self.rqs[cpu]
            .throttled
            .iter()
            .copied()
            .filter(|&t| self.in_subtree(self.tasks[t].group, level))
            .filter(|&t| !self.bw.control.as_ref().is_some_and(|b| b.is_throttled(self.tasks[t].group, cpu)))
            .collect();
        if self.bw_task_mode() {
            // throttle_cfs_rq_work() adds each held task at the head of the limbo list
            // (list_add) and tg_unthrottle_up() enqueues from the head: the last held
            // first. It was alone in its cfs_rq when held (lag 0), so the lag that
            // place_entity() drops for the first task into an empty cfs_rq is none; in
            // hold order the longest-waiting task's lag was dropped, every period (a
            // starvation the liveness property found).
            back.reverse();
        }
        for p in back {
            self.unthrottle_task(cpu, p);
        }
        // "Determine whether we need to wake up potentially idle CPU" (no preemption
        // check on a busy one: its tick decides).
        if self.rqs[cpu].curr.is_none() && !self.rqs[cpu].queue.is_empty() {
            self.resched_curr(cpu, from);
        }
    }
}
