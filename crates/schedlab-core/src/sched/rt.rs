//! The RT class on the engine: enqueue and dequeue on the per-CPU rt_rq, the pick,
//! SCHED_FIFO / SCHED_RR at the tick, wakeup placement by cpupri, push and pull, and RT
//! throttling with its period timer.
//!
//! Mirrors: kernel/sched/rt.c (read: the mounted torvalds/linux index, rt.c of 6.x with
//! sched_rt_runtime_exceeded() as above; 6.11 for the throttling that 6.12 removed):
//! enqueue_task_rt(), dequeue_task_rt(), pick_next_task_rt(), put_prev_task_rt(),
//! task_tick_rt() (RR's slice: the task goes to the tail of its queue when others wait),
//! wakeup_preempt_rt(), select_task_rq_rt() with find_lowest_rq(), push_rt_task() /
//! push_rt_tasks() (after an RT pick: rt_queue_push_tasks(), and task_woken_rt()),
//! pull_rt_task() (balance_rt(): the previous RT task left and this CPU's priority
//! dropped), requeue_task_rt() (sched_yield()), update_curr_rt(),
//! sched_rt_runtime_exceeded() and do_sched_rt_period_timer().
//! Model: the running task stays on its queue as in rt.c, so one preempted by a higher
//! priority keeps its place at the head of its level. rq->nr_running counts fair tasks
//! only (the balance sums and masks are the fair class's); the RT class keeps
//! rt_nr_running. No RT group scheduling, no RT_RUNTIME_SHARE (off since 5.10:
//! 2586af1ac187). RT_PUSH_IPI (read at 6.18.35): pull_rt_task() hands the work to the
//! overloaded CPUs, one irq_work IPI at a time along the rto_mask (tell_cpu_to_push(),
//! rto_next_cpu(), rto_push_irq_work_func()), priced as any IPI (kick_remote_cpu());
//! with it off a pull takes the task itself under the remote runqueue lock.

use super::class::{DequeueFlags, EnqueueFlags, SchedClassOps};
use crate::features::Feature;
use crate::state::task::{SchedClass, SchedPolicy, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    /// `p` is scheduled by the RT class.
    #[inline]
    pub(crate) fn is_rt(&self, p: TaskId) -> bool {
        self.tasks[p].sched.class() == SchedClass::Rt
    }

    /// rt_rq->highest_prio.curr of `cpu` (MAX_RT_PRIO - 1 with no RT task).
    pub(crate) fn rt_highest_prio(&self, cpu: usize) -> usize {
        self.rqs[cpu].rt.active.highest_prio().unwrap_or(crate::rt::MAX_RT_PRIO - 1)
    }

    /// The prio `cpu` runs at for the push/pull comparisons: its current task's (an RT
    /// task's prio, MAX_RT_PRIO - 1 for fair or idle, below 0 for deadline).
    fn curr_prio(&self, cpu: usize) -> i32 {
        match self.rqs[cpu].curr {
            Some(c) if self.tasks[c].sched.class() == SchedClass::Dl => -1,
            Some(c) if self.is_rt(c) => self.tasks[c].sched.rt_prio() as i32,
            _ => crate::rt::MAX_RT_PRIO as i32 - 1,
        }
    }

    /// cpupri_set() and the rto_mask after `cpu`'s rt_rq changed.
    fn rt_rq_changed(&mut self, cpu: usize) {
        self.class_nr_sync(cpu);
        let prio = self.rt_highest_prio(cpu) as i32;
        if let Some(cp) = &mut self.rd.cpupri {
            cp.set(cpu, prio);
        }
        // rt_set_overload(): more than one RT task, so one waits that another CPU may take.
        if self.rqs[cpu].rt.rt_nr_running > 1 {
            self.rd.rto_mask.set(cpu);
        } else {
            self.rd.rto_mask.clear(cpu);
        }
    }

    /// enqueue_task_rt(): `p` joins `cpu`'s queue of its priority, at the head for a
    /// task put back in place.
    pub(crate) fn enqueue_task_rt(&mut self, cpu: usize, p: TaskId, head: bool) {
        let prio = self.tasks[p].sched.rt_prio();
        let rq = &mut self.rqs[cpu].rt;
        rq.active.enqueue(p, prio, head);
        rq.rt_nr_running += 1;
        self.tasks[p].sched.on_rq = true;
        if self.tasks[p].sched.rr_slice_left == 0 {
            self.tasks[p].sched.rr_slice_left = self.k.tunables.sched_rr_timeslice_ms * 1_000_000;
        }
        self.rt_rq_changed(cpu);
        self.start_rt_bandwidth(cpu);
    }

    /// dequeue_task_rt().
    pub(crate) fn dequeue_task_rt(&mut self, cpu: usize, p: TaskId) {
        if !self.tasks[p].sched.on_rq {
            return;
        }
        let prio = self.tasks[p].sched.rt_prio();
        let rq = &mut self.rqs[cpu].rt;
        let found = rq.active.dequeue(p, prio);
        debug_assert!(found, "RT task {p} not queued at prio {prio} on CPU {cpu}");
        rq.rt_nr_running -= 1;
        self.tasks[p].sched.on_rq = false;
        self.rt_rq_changed(cpu);
    }

    /// pick_next_task_rt(): the first task of the highest queue, unless the rt_rq is
    /// throttled.
    pub(crate) fn pick_next_task_rt(&mut self, cpu: usize) -> Option<TaskId> {
        let rq = &self.rqs[cpu].rt;
        if rq.rt_throttled {
            return None;
        }
        rq.active.pick()
    }

    /// The rt_rq has a task the pick would take (sched_rt_runnable(), not throttled).
    pub(crate) fn rt_runnable(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu].rt;
        rq.rt_nr_running > 0 && !rq.rt_throttled
    }

    /// put_prev_task_rt(): the task stays queued where it is.
    pub(crate) fn put_prev_task_rt(&mut self, _cpu: usize, p: TaskId) {
        let t = &mut self.tasks[p];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
    }

    /// update_curr_rt(): RT throttling's accounting of the running task's time.
    pub(crate) fn update_curr_rt(&mut self, cpu: usize, delta: Ns) {
        if !self.feat.has(Feature::RT_THROTTLING) || self.k.tunables.sched_rt_runtime_us < 0 {
            return;
        }
        let runtime = self.k.tunables.sched_rt_runtime_us as u64 * 1000;
        let period = self.k.tunables.sched_rt_period_us * 1000;
        let rq = &mut self.rqs[cpu].rt;
        rq.rt_time += delta;
        // sched_rt_runtime_exceeded(): a runtime of the whole period is no limit.
        if rq.rt_throttled || runtime >= period || rq.rt_time <= runtime {
            return;
        }
        rq.rt_throttled = true;
        self.rtc.rt_throttles += 1;
        self.class_nr_sync(cpu);
        self.resched_curr(cpu, cpu);
        self.start_rt_bandwidth(cpu);
    }

    /// start_rt_bandwidth(): arms the rt period timer (pinned to the CPU that starts
    /// it) on the period grid from time 0, if throttling is in force.
    fn start_rt_bandwidth(&mut self, cpu: usize) {
        if self.rtc.rt_period_active || !self.feat.has(Feature::RT_THROTTLING) || self.k.tunables.sched_rt_runtime_us < 0 {
            return;
        }
        self.rtc.rt_period_active = true;
        let period = self.k.tunables.sched_rt_period_us * 1000;
        // hrtimer_forward_now() from the timer's initial expiry of 0.
        let at = (self.now / period + 1) * period;
        let key = self.timers.hr.start(cpu, at, 0, crate::timers::HrtimerFn::RtPeriod);
        self.push_hrtimer_event(key);
    }

    /// do_sched_rt_period_timer(): every rt_rq gives back a period's runtime; a throttled
    /// one with time left runs again. The timer stops once no CPU has RT time or tasks.
    pub(crate) fn rt_period_timer(&mut self, cpu: usize) {
        let runtime = self.k.tunables.sched_rt_runtime_us.max(0) as u64 * 1000;
        let period = self.k.tunables.sched_rt_period_us * 1000;
        let mut idle = true;
        for c in 0..self.m.nr_cpus() {
            let rq = &mut self.rqs[c].rt;
            let mut enqueue = false;
            if rq.rt_time > 0 {
                rq.rt_time -= rq.rt_time.min(runtime);
                if rq.rt_throttled && rq.rt_time < runtime {
                    rq.rt_throttled = false;
                    enqueue = true;
                }
                if rq.rt_time > 0 || rq.rt_nr_running > 0 {
                    idle = false;
                }
            } else if rq.rt_nr_running > 0 {
                idle = false;
            }
            if enqueue {
                self.class_nr_sync(c);
            }
            let rq = &self.rqs[c].rt;
            if enqueue && rq.rt_nr_running > 0 {
                // sched_rt_rq_enqueue(): the RT tasks compete again at once.
                self.resched_curr(c, cpu);
            }
        }
        if idle {
            self.rtc.rt_period_active = false;
        } else {
            let key = self.timers.hr.start(cpu, self.now + period, 0, crate::timers::HrtimerFn::RtPeriod);
            self.push_hrtimer_event(key);
        }
    }

    /// task_tick_rt(): SCHED_RR's slice runs down; at its end the slice is refilled and
    /// the task goes to the tail of its queue if another waits there.
    pub(crate) fn task_tick_rt(&mut self, cpu: usize, p: TaskId) {
        if self.tasks[p].sched.policy != SchedPolicy::Rr {
            return;
        }
        let tick = self.tick.period_ns;
        let s = &mut self.tasks[p].sched;
        s.rr_slice_left = s.rr_slice_left.saturating_sub(tick);
        if s.rr_slice_left > 0 {
            return;
        }
        s.rr_slice_left = self.k.tunables.sched_rr_timeslice_ms * 1_000_000;
        let prio = s.rt_prio();
        let rq = &mut self.rqs[cpu].rt;
        if rq.active.queue_len(prio) > 1 {
            rq.active.requeue(p, prio);
            self.resched_curr(cpu, cpu);
        }
    }

    /// sched_yield() of an RT task (yield_task_rt(): requeue_task_rt at the tail).
    pub(crate) fn yield_task_rt(&mut self, cpu: usize, p: TaskId) {
        let prio = self.tasks[p].sched.rt_prio();
        self.rqs[cpu].rt.active.requeue(p, prio);
    }

    /// wakeup_preempt_rt(): a higher priority preempts (a lower number).
    pub(crate) fn wakeup_preempt_rt(&self, cpu: usize, p: TaskId) -> bool {
        let Some(c) = self.rqs[cpu].curr else { return true };
        self.tasks[p].sched.rt_prio() < self.tasks[c].sched.rt_prio()
    }

    /// find_lowest_rq(): among the CPUs cpupri finds running the lowest-priority work,
    /// the task's own CPU, else the nearest to it (the sched-domain walk from the
    /// closest level out).
    fn find_lowest_rq(&self, p: TaskId) -> Option<usize> {
        let t = &self.tasks[p];
        if t.nr_cpus_allowed == 1 {
            return None;
        }
        let cp = self.rd.cpupri.as_ref()?;
        let lowest = cp.find(t.sched.rt_prio() as i32, &t.cpus_allowed, None)?;
        if lowest.test(t.cpu) {
            return Some(t.cpu);
        }
        lowest.iter().min_by_key(|&c| (self.m.distance(t.cpu, c), c))
    }

    /// select_task_rq_rt(): stay, unless the CPU runs an RT task at least as high that
    /// cannot move (or any RT task at the same or higher prio): then the CPU running the
    /// lowest-priority work, if that is lower than the task.
    pub(crate) fn select_task_rq_rt(&self, p: TaskId, cpu: usize) -> usize {
        let Some(curr) = self.rqs[cpu].curr else { return cpu };
        let cls = self.tasks[curr].sched.class();
        let test = (cls == SchedClass::Rt
            && (self.tasks[curr].nr_cpus_allowed < 2 || self.tasks[curr].sched.rt_prio() <= self.tasks[p].sched.rt_prio()))
            || cls == SchedClass::Dl;
        if !test {
            return cpu;
        }
        match self.find_lowest_rq(p) {
            Some(target)
                if (self.tasks[p].sched.rt_prio() as i32) < self.rt_highest_prio(target).min(self.curr_prio(target).max(0) as usize) as i32 =>
            {
                target
            }
            _ => cpu,
        }
    }

    /// The highest-priority queued RT task of `cpu` that is not running and may move
    /// (pick_next_pushable_task()).
    fn pushable_task(&self, cpu: usize) -> Option<TaskId> {
        let curr = self.rqs[cpu].curr;
        self.rqs[cpu].rt.active.iter().find(|&t| Some(t) != curr && self.tasks[t].nr_cpus_allowed > 1 && self.tasks[t].state == TaskState::Runnable)
    }

    /// push_rt_task(): moves `cpu`'s highest waiting RT task to the CPU running the
    /// lowest-priority work, if that is lower than the task; true if it moved one.
    fn push_rt_task(&mut self, cpu: usize) -> bool {
        if !self.rd.rto_mask.test(cpu) {
            return false;
        }
        let Some(p) = self.pushable_task(cpu) else { return false };
        if (self.tasks[p].sched.rt_prio() as i32) < self.curr_prio(cpu) && self.rqs[cpu].curr.is_some_and(|c| self.is_rt(c)) {
            // It should preempt here rather than move.
            self.resched_curr(cpu, cpu);
            return false;
        }
        let Some(dst) = self.find_lowest_rq(p) else { return false };
        if dst == cpu || (self.tasks[p].sched.rt_prio() as i32) >= self.curr_prio(dst).min(self.rt_highest_prio(dst) as i32) {
            return false;
        }
        self.move_queued_rt(p, cpu, dst, cpu);
        self.rtc.rt_pushes += 1;
        true
    }

    /// push_rt_tasks().
    pub(crate) fn push_rt_tasks(&mut self, cpu: usize) {
        while self.push_rt_task(cpu) {}
    }

    /// pull_rt_task(): this CPU's priority dropped; take the highest waiting RT task of
    /// an overloaded CPU that is higher than what this CPU would run and is not about to
    /// run where it is.
    pub(crate) fn pull_rt_task(&mut self, this: usize) {
        if self.rd.rto_mask.is_empty() {
            return;
        }
        let overloaded: Vec<usize> = self.rd.rto_mask.iter().filter(|&c| c != this).collect();
        // Only this CPU is overloaded: nothing to pull.
        if overloaded.is_empty() {
            return;
        }
        if self.feat.has(Feature::RT_PUSH_IPI) {
            self.tell_cpu_to_push(this);
            return;
        }
        for src in overloaded {
            let Some(p) = self.pushable_task(src) else { continue };
            if !self.tasks[p].cpus_allowed.test(this) {
                continue;
            }
            let prio = self.tasks[p].sched.rt_prio();
            // Higher than this CPU's best, and not higher than its own CPU's current
            // task (that CPU would run it next itself).
            if prio >= self.rt_highest_prio(this) || (prio as i32) < self.curr_prio(src) {
                continue;
            }
            self.move_queued_rt(p, src, this, this);
            self.rtc.rt_pulls += 1;
        }
    }

    /// rto_next_cpu() run on `this`: the next CPU of the rto_mask after rd->rto_cpu (not
    /// `this`), or, at the mask's end, a new pass if some CPU asked for a push since the
    /// last one began (rto_loop_next moved); None ends the IPI chain.
    fn rto_next_cpu(&mut self, this: usize) -> Option<usize> {
        loop {
            let from = self.rd.rto_cpu.map_or(0, |c| c + 1);
            let next = self.rd.rto_mask.iter().find(|&c| c >= from && c != this);
            self.rd.rto_cpu = next;
            if next.is_some() {
                return next;
            }
            if self.rd.rto_loop == self.rd.rto_loop_next {
                return None;
            }
            self.rd.rto_loop = self.rd.rto_loop_next;
        }
    }

    /// tell_cpu_to_push(): asks for another pass of the push IPI; if none is in flight,
    /// sends it to the first overloaded CPU.
    fn tell_cpu_to_push(&mut self, this: usize) {
        self.rd.rto_loop_next += 1;
        // A valid rto_cpu: the IPI is on its way and will see the new rto_loop_next.
        if self.rd.rto_cpu.is_some() {
            return;
        }
        if let Some(cpu) = self.rto_next_cpu(this) {
            self.send_rto_push_ipi(this, cpu);
        }
    }

    /// irq_work_queue_on(&rd->rto_push_work, cpu): an IPI from `from`.
    fn send_rto_push_ipi(&mut self, from: usize, cpu: usize) {
        self.rtc.rt_push_ipis += 1;
        let at = self.kick_remote_cpu(from, cpu);
        self.q.push(at, crate::state::events::EventClass::Segment, crate::state::events::EventKind::RtPushIpi { cpu: cpu as u32 });
    }

    /// rto_push_irq_work_func(): the push IPI reached `cpu`; it pushes its own waiting RT
    /// tasks and passes the IPI on to the next overloaded CPU.
    pub(crate) fn rto_push_irq_work_func(&mut self, cpu: usize) {
        if self.pushable_task(cpu).is_some() {
            self.push_rt_tasks(cpu);
        }
        if let Some(next) = self.rto_next_cpu(cpu) {
            self.send_rto_push_ipi(cpu, next);
        }
    }

    /// Moves waiting RT task `p` from `src` to `dst` (deactivate, set_task_cpu, activate)
    /// and lets `dst` reschedule; `actor` is the CPU doing it.
    fn move_queued_rt(&mut self, p: TaskId, src: usize, dst: usize, actor: usize) {
        // The other runqueue's lock (double_lock_balance()).
        let other = if actor == src { dst } else { src };
        let spin = self.rq_lock(other, actor, 0);
        self.charge_kernel(actor, spin);
        self.dequeue_task_rt(src, p);
        self.set_task_cpu(p, dst);
        self.enqueue_task_rt(dst, p, false);
        if self.wakeup_preempt_rt(dst, p) || self.rqs[dst].curr.is_some_and(|c| !self.tasks[c].sched.is_rt_or_dl()) {
            self.resched_curr(dst, actor);
        }
    }

    /// task_woken_rt(): a woken RT task that will not run here at once is pushed.
    pub(crate) fn task_woken_rt(&mut self, cpu: usize, p: TaskId) {
        let Some(c) = self.rqs[cpu].curr else { return };
        if c == p || self.rqs[cpu].resched_pending || self.tasks[p].nr_cpus_allowed < 2 {
            return;
        }
        let curr_blocks = self.tasks[c].sched.class() == SchedClass::Dl
            || (self.is_rt(c) && (self.tasks[c].nr_cpus_allowed < 2 || self.tasks[c].sched.rt_prio() <= self.tasks[p].sched.rt_prio()));
        if curr_blocks {
            self.push_rt_tasks(cpu);
        }
    }
}

/// `rt_sched_class`: SCHED_FIFO and SCHED_RR (and fair tasks boosted by priority
/// inheritance).
pub(crate) struct RtSchedClass;

impl SchedClassOps for RtSchedClass {
    const TIMER_SLACK: bool = false;

    fn enqueue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: EnqueueFlags) {
        if flags.wakeup {
            sim.update_curr(cpu);
        }
        sim.enqueue_task_rt(cpu, p, false);
    }

    fn dequeue_task(sim: &mut Simulator, cpu: usize, p: TaskId, _flags: DequeueFlags) {
        sim.update_curr(cpu);
        // A boosted task keeps its boost while it blocks (rtmutex.c).
        sim.dequeue_task_rt(cpu, p);
        sim.tasks[p].state = TaskState::Blocked;
    }

    fn yield_task(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.yield_task_rt(cpu, p);
    }

    fn wakeup_preempt(sim: &mut Simulator, cpu: usize, p: TaskId, _curr: TaskId, from_cpu: usize) {
        if sim.wakeup_preempt_rt(cpu, p) && sim.feat.has(Feature::WAKEUP_PREEMPTION) {
            sim.resched_curr(cpu, from_cpu);
        }
    }

    fn pick_task(sim: &mut Simulator, cpu: usize) -> Option<TaskId> {
        sim.pick_next_task_rt(cpu)
    }

    fn put_prev_task(sim: &mut Simulator, cpu: usize, p: TaskId) {
        if sim.tasks[p].state == TaskState::Running {
            sim.put_prev_task_rt(cpu, p);
        }
    }

    /// set_next_task_rt()'s rt_queue_push_tasks().
    fn set_next_task(sim: &mut Simulator, cpu: usize, _p: TaskId) {
        sim.push_rt_tasks(cpu);
    }

    /// balance_rt(): the previous RT task is gone or lower than what waits elsewhere.
    fn balance(sim: &mut Simulator, cpu: usize, prev: TaskId) {
        if !sim.tasks[prev].sched.on_rq && sim.rt_highest_prio(cpu) > sim.tasks[prev].sched.rt_prio() {
            sim.pull_rt_task(cpu);
        }
    }

    fn select_task_rq(sim: &mut Simulator, p: TaskId, prev: usize, _this_cpu: usize, _waker: Option<TaskId>, _sync: bool, _fork: bool) -> usize {
        sim.select_task_rq_rt(p, prev)
    }

    fn task_woken(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.task_woken_rt(cpu, p);
    }

    fn task_tick(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.task_tick_rt(cpu, p);
    }

    /// __setscheduler_params(): an RT task sleeps with no timer slack, and the run has
    /// RT work (the RT and deadline paths are live).
    fn switched_to(sim: &mut Simulator, p: TaskId) {
        sim.rtc.in_use = true;
        sim.tasks[p].timer_slack_ns = 0;
    }

    fn update_curr(sim: &mut Simulator, cpu: usize, _p: TaskId, delta: Ns) {
        sim.update_curr_rt(cpu, delta);
    }

    /// enqueue_top_rt_rq() / dequeue_top_rt_rq(): a throttled rt_rq's tasks leave
    /// rq->nr_running (sched_rt_runtime_exceeded()).
    fn nr_running(sim: &Simulator, cpu: usize) -> usize {
        let rt = &sim.rqs[cpu].rt;
        if rt.rt_throttled {
            0
        } else {
            rt.rt_nr_running
        }
    }

    /// The RT and deadline runqueues' invariants, checked together.
    fn check_invariants(sim: &Simulator) -> Result<(), String> {
        sim.check_class_invariants()
    }
}
