//! The scheduler core, core.c: wakeups, the class-independent half of enqueue and
//! dequeue, wakeup preemption across classes, schedule() with the pick over the classes,
//! the tick, context switches. Every class is reached through its ops (`class.rs`).
//!
//! Mirrors: kernel/sched/core.c: try_to_wake_up(), wake_up_new_task(),
//! activate_task() / deactivate_task() (enqueue_task() / dequeue_task()),
//! wakeup_preempt(), select_task_rq(), set_task_cpu(), __schedule() with
//! put_prev_task_balance() and __pick_next_task(), context_switch(), sched_tick()
//! (scheduler_tick), resched_curr(), add_nr_running() / sub_nr_running().
//! Model: resched_curr() on a remote CPU posts a Resched event after the IPI and, if
//! the CPU was idle, its idle wake time; on the local CPU it takes effect when the
//! running task's kernel path ends (its return to user space). A task's blocking step
//! sets its sleeping state; it runs the rest of its system call, then schedule()
//! dequeues it and switches, so a synchronous wakeup costs the path that makes it.

use super::class::{for_class, DequeueFlags, EnqueueFlags, SchedClassOps, CLASS_ORDER};
use crate::features::Feature;
use crate::state::events::{EventClass, EventKind};
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;
use crate::trace::TraceEvent;

impl Simulator {
    /// Wakes a sleeping or blocked task (try_to_wake_up); `waker` is the task doing it.
    pub(crate) fn try_to_wake_up(&mut self, p: TaskId, this_cpu: usize, waker: Option<TaskId>, sync: bool) {
        let t = &mut self.tasks[p];
        match t.blocking {
            Some(TaskState::Exited) => return, // exiting: nothing to wake
            Some(_) => {
                self.ttwu_runnable(p, this_cpu, waker);
                return;
            }
            None => {}
        }
        if !matches!(t.state, TaskState::Sleeping | TaskState::Blocked) {
            return;
        }
        t.stats.nr_wakeups += 1;
        self.stats.counters.wakeups += 1;
        self.hrtimer_cancel_task(p);
        if self.tasks[p].waiting_on.take().is_some() {
            // Woken before its timeout: schedule_timeout() deletes the timer on return.
            if let Some(t) = self.tasks[p].wheel_timer {
                let ns = self.del_timer(self.tasks[p].cpu, t);
                self.tasks[p].pending_exit_ns += ns;
            }
        }
        if let Some(w) = waker {
            self.record_wakee(w, p);
        }
        let prev = self.tasks[p].cpu;
        // The waker's path: try_to_wake_up() itself plus the wakee's task lines, last
        // written where it last ran, and the target runqueue's lock (ttwu_queue()). IPIs
        // it sends leave after it.
        let lines = cost!(self, kernel.ttwu_lines) * self.line_latency(this_cpu, prev);
        let ttwu = self.path_ns(this_cpu, cost!(self, kernel.ttwu_ns)) + lines as Ns;
        self.tasks[p].woken_from = waker.map(|_| this_cpu);
        if self.tasks[p].sched_delayed {
            // ttwu_runnable(): still queued (delayed dequeue): no CPU selection.
            let spin = self.ttwu_runnable_lock(prev, this_cpu);
            self.charge_kernel(this_cpu, ttwu + spin);
            self.trace_event(this_cpu, TraceEvent::Waking { pid: p + 1, target_cpu: prev, from_irq: waker.is_none() });
            let t = &mut self.tasks[p];
            t.runnable_since = self.now;
            t.woken = true;
            t.woken_at = self.now;
            self.activate_task(prev, p, EnqueueFlags { delayed: true, ..EnqueueFlags::NONE });
            self.wakeup_preempt(prev, p, this_cpu);
            return;
        }
        let cpu = self.select_task_rq(p, prev, this_cpu, waker, sync, false);
        let wakelist = self.ttwu_queue_cond(this_cpu, cpu);
        self.trace_event(this_cpu, TraceEvent::Waking { pid: p + 1, target_cpu: cpu, from_irq: waker.is_none() });
        if cpu != prev {
            self.set_task_cpu(p, cpu);
        }
        let t = &mut self.tasks[p];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
        t.woken = true;
        t.woken_at = self.now;
        // The waker's CPU does the enqueue (and takes any shared runqueue lock).
        self.activate_task(cpu, p, EnqueueFlags { waker_cpu: Some(this_cpu), ..EnqueueFlags::WAKEUP });
        let queue = self.ttwu_queue(p, cpu, this_cpu, wakelist);
        self.charge_kernel(this_cpu, (ttwu as i64 + queue).max(0) as Ns);
        self.trace_event(this_cpu, TraceEvent::Wakeup { pid: p + 1, target_cpu: cpu });
        if self.tasks[p].state != TaskState::Runnable {
            return; // its group is throttled here: it waits for runtime, not for a CPU
        }
        if cpu == prev {
            self.swq_enqueue(p, cpu, this_cpu);
        }
        self.wakeup_preempt(cpu, p, this_cpu);
    }

    /// ttwu_runnable(): `p` is still on its CPU, in the system call it was about to
    /// sleep in (on its runqueue until schedule()). The wakeup only sets it running
    /// again: it returns from the call without a switch (no wakeup latency: it never
    /// left).
    fn ttwu_runnable(&mut self, p: TaskId, this_cpu: usize, waker: Option<TaskId>) {
        let t = &mut self.tasks[p];
        t.blocking = None;
        t.timer_due = None;
        t.stats.nr_wakeups += 1;
        let exit = std::mem::take(&mut t.pending_exit_ns);
        t.overhead_ns += exit;
        self.stats.counters.wakeups += 1;
        self.hrtimer_cancel_task(p);
        let cpu = self.tasks[p].cpu;
        if self.tasks[p].waiting_on.take().is_some() {
            if let Some(timer) = self.tasks[p].wheel_timer {
                let ns = self.del_timer(cpu, timer);
                self.tasks[p].overhead_ns += ns;
            }
        }
        if let Some(w) = waker {
            self.record_wakee(w, p);
        }
        let lines = cost!(self, kernel.ttwu_lines) * self.line_latency(this_cpu, cpu);
        let ttwu = self.path_ns(this_cpu, cost!(self, kernel.ttwu_ns)) + lines as Ns;
        let spin = self.ttwu_runnable_lock(cpu, this_cpu);
        self.charge_kernel(this_cpu, ttwu + spin);
        self.trace_event(this_cpu, TraceEvent::Waking { pid: p + 1, target_cpu: cpu, from_irq: waker.is_none() });
        self.trace_event(this_cpu, TraceEvent::Wakeup { pid: p + 1, target_cpu: cpu });
    }

    /// Places and starts a newly created task (wake_up_new_task with fork balancing).
    pub(crate) fn wake_up_new_task(&mut self, p: TaskId, this_cpu: usize, parent: Option<TaskId>) {
        if self.scx.enabled {
            // sched_fork()'s class: ext for the tasks a loaded scheduler takes.
            self.scx_task_starts(p);
        }
        let cpu = if self.tasks[p].start_on { self.tasks[p].cpu } else { self.select_task_rq(p, self.tasks[p].cpu, this_cpu, parent, false, true) };
        self.tasks[p].cpu = cpu;
        self.tasks[p].data_cpu = cpu;
        self.tasks[p].recent_used_cpu = cpu;
        let t = &mut self.tasks[p];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
        t.stats.start_ns = self.now;
        for_class!(self.class_of(p), |C| C::task_fork(self, cpu, p));
        self.activate_task(cpu, p, EnqueueFlags::NONE);
        self.trace_event(this_cpu, TraceEvent::WakeupNew { pid: p + 1, target_cpu: cpu });
        if self.tasks[p].state == TaskState::Runnable {
            self.fg.wf_fork = true; // WF_FORK: no next buddy for a new task
            self.wakeup_preempt(cpu, p, this_cpu);
            self.fg.wf_fork = false;
        }
    }

    /// Moves a non-running task's CPU (set_task_cpu), counting the migration by distance.
    pub(crate) fn set_task_cpu(&mut self, p: TaskId, dst: usize) {
        let src = self.tasks[p].cpu;
        if src == dst {
            return;
        }
        let d = self.m.distance(src, dst);
        self.stats.counters.migrations[d as usize] += 1;
        self.tasks[p].stats.nr_migrations += 1;
        for_class!(self.class_of(p), |C| C::migrate_task_rq(self, p, src, dst));
        self.mm_migrate(p, src, dst);
        self.tasks[p].cpu = dst;
        self.trace_event(dst, TraceEvent::Migrate { pid: p + 1, orig_cpu: src, dest_cpu: dst });
    }

    /// Asks `cpu` to reschedule (resched_curr). A local request takes effect when the
    /// current kernel path ends (the running task's return to user space, or the
    /// interrupt exit of an idle CPU); a remote one needs an IPI, or on an idle CPU
    /// polling its flags (x86 MWAIT) just the flag write, and then the idle state's wake.
    pub(crate) fn resched_curr(&mut self, cpu: usize, from_cpu: usize) {
        if self.rqs[cpu].resched_pending {
            return;
        }
        self.rqs[cpu].resched_pending = true;
        let at = if cpu == from_cpu {
            match self.rqs[cpu].curr {
                Some(c) => self.now + self.tasks[c].overhead_ns,
                None => self.rqs[cpu].irq_until.max(self.now),
            }
        } else {
            self.kick_remote_cpu(from_cpu, cpu)
        };
        self.rqs[cpu].resched_at = at;
        if at == self.now {
            self.q.push_now(EventKind::Resched { cpu: cpu as u32 });
        } else {
            self.q.push(at, EventClass::Segment, EventKind::Resched { cpu: cpu as u32 });
        }
    }

    /// Time the kernel path running on `cpu` still needs before it can act on the
    /// outside world (send an IPI): the running task's pending kernel time, or the
    /// rest of the handler an idle CPU is in.
    pub(crate) fn send_delay(&self, cpu: usize) -> Ns {
        match self.rqs[cpu].curr {
            Some(c) => self.tasks[c].overhead_ns,
            None => self.rqs[cpu].irq_until.saturating_sub(self.now),
        }
    }

    /// Makes remote `cpu` notice a resched sent from `from`; returns when its
    /// scheduler runs.
    pub(crate) fn kick_remote_cpu(&mut self, from: usize, cpu: usize) -> Ns {
        let d = self.m.distance(from, cpu);
        let send_at = self.now + self.send_delay(from);
        let (entry, send) = (cost!(self, kernel.irq_entry_ns), cost!(self, ipi_send_ns));
        if self.rqs[cpu].curr.is_none() && self.polling_idle(cpu, send_at) {
            // set_nr_and_not_polling(): the write to the monitored line wakes it.
            self.stats.counters.wake_idle_without_ipi += 1;
            let arrive = send_at + self.line_at(d) as Ns;
            return self.idle_irq_arrive(cpu, arrive, false);
        }
        self.send_ipi(from, cpu);
        let ns = self.path_ns(from, send);
        self.charge_kernel(from, ns);
        let arrive = send_at + ns + self.ipi_latency_ns(d) as Ns;
        let start = if self.rqs[cpu].curr.is_none() { self.idle_irq_arrive(cpu, arrive, false) } else { arrive };
        start + self.path_ns(cpu, entry)
    }

    /// Counts an IPI from one CPU to another.
    pub(crate) fn send_ipi(&mut self, _from: usize, to: usize) {
        self.stats.counters.ipis += 1;
        self.rqs[to].stats.ipis_received += 1;
    }

    /// Picks the next task for `cpu` and switches to it (__schedule).
    pub(crate) fn schedule(&mut self, cpu: usize) {
        let prev = self.rqs[cpu].curr;
        // rq_lock() in __schedule(), held to the switch's end (finish_task_switch());
        // what it waits for delays what runs next.
        let hold = self.path_ns(cpu, cost!(self, kernel.schedule_ns) + cost!(self, context_switch_ns));
        let spin = self.rq_lock(cpu, cpu, hold);
        if spin > 0 {
            self.rqs[cpu].irq_until = self.rqs[cpu].irq_until.max(self.now) + spin;
        }
        // A blocking task ran __schedule()'s path itself; otherwise the next task pays it.
        let mut pick_paid = false;
        if let Some(p) = prev {
            self.update_curr(cpu);
            pick_paid = self.tasks[p].blocking.is_some();
            match self.tasks[p].blocking.take() {
                // The end of an exiting task's last path.
                Some(TaskState::Exited) => self.do_exit(p, cpu),
                // deactivate_task() of a task that set itself sleeping.
                Some(state) => {
                    self.dequeue_task(cpu, p, DequeueFlags::SLEEP);
                    self.tasks[p].state = state;
                }
                None => {}
            }
            // put_prev_task() and put_prev_task_balance(): the previous task's class may
            // pull (balance_rt(), balance_dl()). The kernel balances before it puts prev
            // back, and runs every class's balance() from prev's down until one has a
            // task; here prev's class balances after the put (no balance reads what the
            // put changes), and the fair class's balance (newidle balance) runs in its
            // pick, as the fast path's pick_next_task_fair() runs it.
            let cls = self.class_of(p);
            if !for_class!(cls, |C| C::PUT_PREV_AFTER_PICK) {
                for_class!(cls, |C| C::put_prev_task(self, cpu, p));
                for_class!(cls, |C| C::balance(self, cpu, p));
            }
        }
        let next = self.pick_next_task(cpu, prev);
        if let Some(p) = prev.filter(|&p| next != Some(p)) {
            // put_prev_set_next_task() of a class that puts after the pick.
            let cls = self.class_of(p);
            if for_class!(cls, |C| C::PUT_PREV_AFTER_PICK) {
                for_class!(cls, |C| C::put_prev_after_pick(self, cpu, p, next));
            }
        }
        if prev.is_some() {
            // clear_tsk_need_resched(prev) after the pick, as __schedule() has it: this
            // pass serves a resched still on its way, one raised by its own update_curr()
            // or pick included.
            if self.rqs[cpu].resched_pending && self.q.cancel_cpu_event(cpu, EventKind::Resched { cpu: cpu as u32 }) {
                self.rqs[cpu].resched_pending = false;
            }
        }
        self.switch_to(cpu, prev, next, pick_paid);
        match next {
            Some(n) => {
                // put_prev_task_idle()'s scx_update_idle(): the CPU leaves idle.
                self.scx_update_idle(cpu, false);
                for_class!(self.class_of(n), |C| C::set_next_task(self, cpu, n))
            }
            None => self.set_next_task_idle(cpu),
        }
        if next.is_none() && matches!(self.rqs[cpu].idle.phase, crate::cpuidle::IdlePhase::Awake) {
            // Nothing to run: back to the idle loop once the kernel path here ends.
            let at = self.rqs[cpu].irq_until.max(self.now);
            self.do_idle(cpu, at);
        }
        if !self.scx.self_kick.is_empty() {
            // A sched_ext scheduler is, or was, loaded.
            self.scx_schedule_done(cpu);
        }
    }

    fn switch_to(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>, pick_paid: bool) {
        if prev == next {
            if let Some(n) = next {
                // Picked again: set_next_entity restarts its slice accounting; what the
                // pass cost (a lock wait) delays it.
                let debt = std::mem::replace(&mut self.rqs[cpu].irq_until, self.now).saturating_sub(self.now);
                self.tasks[n].overhead_ns += debt;
                let se = &mut self.tasks[n].se;
                se.prev_sum_exec_runtime = se.sum_exec_runtime;
                self.tasks[n].state = TaskState::Running;
                self.arm_segment(cpu);
            }
            return;
        }
        self.rqs[cpu].stats.nr_switches += 1;
        self.stats.counters.switches += 1;
        if self.trace.is_some() {
            use crate::trace::PrevState;
            let prev_state = match prev.map(|p| self.tasks[p].state) {
                None | Some(TaskState::Runnable | TaskState::Throttled | TaskState::Running) => PrevState::Runnable,
                Some(TaskState::Exited) => PrevState::Dead,
                Some(_) => PrevState::Sleeping,
            };
            self.trace_event(cpu, TraceEvent::Switch { prev: prev.map_or(0, |p| p + 1), prev_state, next: next.map_or(0, |n| n + 1) });
        }
        if let Some(n) = next {
            self.start_running(cpu, n, pick_paid);
            self.fold_next_run(n);
        }
        self.mm_switch(cpu, prev, next);
        self.set_curr(cpu, next);
        self.arm_segment(cpu);
    }

    /// Bookkeeping of a task getting the CPU: wait time, wakeup latency, switch and refill costs.
    fn start_running(&mut self, cpu: usize, n: TaskId, pick_paid: bool) {
        let now = self.now;
        // What the CPU still had to finish first (a handler, an exited task's last path),
        // the pick unless the previous task's blocking path ran it, the switch itself
        // (switch_mm too when the address space changes), and the rest of the system
        // call this task blocked in, with the shared data its waker wrote.
        let debt = std::mem::replace(&mut self.rqs[cpu].irq_until, now).saturating_sub(now);
        let data = self.tasks[n].woken_from.take().map_or(0.0, |w| cost!(self, kernel.wake_data_lines) * self.line_latency(w, cpu));
        let mm = self.tasks[n].mm;
        let mm_switch = if self.rqs[cpu].active_mm.replace(mm) == Some(mm) { 0.0 } else { cost!(self, kernel.mm_switch_ns) };
        let pick = if pick_paid { 0.0 } else { cost!(self, kernel.schedule_ns) };
        let path = self.path_ns(cpu, cost!(self, context_switch_ns) + mm_switch + pick);
        let switch_cost = debt + path + data as Ns;
        let t = &mut self.tasks[n];
        let switch_cost = switch_cost + std::mem::take(&mut t.pending_exit_ns);
        t.state = TaskState::Running;
        t.stats.nr_switches += 1;
        t.stats.wait_ns += now - t.runnable_since;
        // A task about to be held by the task-based throttle runs only its kernel exit:
        // its wakeup latency ends when user code runs. The run's latency histograms are
        // the scenario's tasks' (as cyclictest measures its own threads): a background
        // daemon's wakeups are not in them.
        if t.woken && !t.throttle_work {
            t.woken = false;
            if !t.daemon {
                self.stats.wakeup_latency.record(now - t.woken_at);
            }
        }
        t.overhead_ns += switch_cost;
        if let Some(due) = t.timer_due.take().filter(|_| !t.daemon) {
            // cyclictest's measure: user code runs again at now + overhead.
            let back = now + t.overhead_ns;
            self.stats.timer_latency.record(back.saturating_sub(due));
            if let Some(h) = t.timer_hist {
                self.stats.user_hists[h].1.record_at(back.saturating_sub(due), now);
            }
            self.stats.counters.early_timed_wakeups += (back < due) as u64;
        }
        t.se.exec_start = now;
        t.progress_stamp = now;
        t.se.prev_sum_exec_runtime = t.se.sum_exec_runtime;
        t.se.protected = true;
        // Cache locality: data cached far away must be refilled here.
        let (d, footprint) = (self.m.distance(t.data_cpu, cpu), t.footprint);
        let refill = self.refill_ns(footprint, d) as Ns;
        let t = &mut self.tasks[n];
        t.overhead_ns += refill;
        t.data_cpu = cpu;
        self.stats.counters.refill_ns += refill as u128;
    }

    /// Arms the end of the running task's current step, withdrawing the old one.
    pub(crate) fn arm_segment(&mut self, cpu: usize) {
        self.cancel_segment(cpu);
        let rq = &mut self.rqs[cpu];
        rq.seg_gen = rq.seg_gen.wrapping_add(1);
        let gen = rq.seg_gen;
        let Some(c) = rq.curr else { return };
        let t = &self.tasks[c];
        let cap = self.m.cpus[cpu].capacity as u64;
        let run = match (self.smt_slowdown_milli(cpu), self.freq_slowed(cpu)) {
            (None, None) => (t.work_left * 1024).div_ceil(cap),
            // The inverse of advance_progress's slowed rate, rounded up so that the step
            // is done when its end comes.
            (Some(milli), None) => crate::time::mul_div_ceil(t.work_left, 1024 * milli, cap * 1000),
            // Below the top OPP (schedutil): capacity x cur/max.
            (milli, Some((cur, max))) => crate::time::mul_div_ceil(t.work_left, 1024 * milli.unwrap_or(1000) * max, cap * 1000 * cur),
        };
        let end = match t.run_until {
            // A task with the throttle task_work pending stops at its return to user space.
            _ if t.throttle_work => self.now + t.overhead_ns,
            // A run_for step ends at its wall-clock deadline, whatever work that took.
            Some(until) => until.max(self.now + t.overhead_ns),
            // A task that reads its CPU-time clock stops at its next read (segment_end).
            None if t.cputime_poll_ns > 0 => self.now + t.overhead_ns + run.min(t.cputime_poll_ns),
            None => self.now + t.overhead_ns + run,
        };
        self.q.push(end, EventClass::Segment, EventKind::SegmentEnd { cpu: cpu as u32, gen });
        if !self.rqs[cpu].tick_armed {
            self.arm_tick(cpu);
        }
    }

    /// Withdraws the CPU's pending segment end, if any (callers then move seg_gen on).
    pub(crate) fn cancel_segment(&mut self, cpu: usize) {
        let gen = self.rqs[cpu].seg_gen;
        self.q.cancel_cpu_event(cpu, EventKind::SegmentEnd { cpu: cpu as u32, gen });
    }

    pub(crate) fn arm_tick(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.tick_armed = true;
        let gen = rq.tick_gen;
        // Ticks fall on one jiffy grid for every CPU (no sched_skew_tick); the grid's
        // phase against time 0 (where hrtimer periods such as the bandwidth period are
        // aligned) is a per-run accident of boot, drawn from the seed.
        let off = self.tick.offset;
        let next = ((self.now + self.tick.period_ns - off) / self.tick.period_ns) * self.tick.period_ns + off;
        let next = if next <= self.now { next + self.tick.period_ns } else { next };
        let at = next + self.tick_delivery_delay(cpu, next);
        self.q.push(at, EventClass::Tick, EventKind::Tick { cpu: cpu as u32, gen });
    }

    /// How late `cpu` takes its tick programmed for `boundary`: a draw below
    /// `kernel.tick_irq_jitter_ns` keyed by the run's seed, the CPU and the jiffy.
    pub(crate) fn tick_delivery_delay(&self, cpu: usize, boundary: Ns) -> Ns {
        // Below half a jiffy whatever the override: a tick stays in its own jiffy.
        let jitter = (cost!(self, kernel.tick_irq_jitter_ns) as u64).min(self.tick.period_ns / 2);
        crate::rng::keyed_below(self.seed, &[cpu as u64, boundary / self.tick.period_ns.max(1)], jitter)
    }

    /// The running task's step ended: continue its program or block it.
    pub(crate) fn segment_end(&mut self, cpu: usize) {
        let Some(c) = self.rqs[cpu].curr else { return };
        self.advance_progress(cpu);
        if self.tasks[c].blocking.is_some() {
            // The blocking system call's path: schedule() at its end.
            if self.tasks[c].overhead_ns > 0 {
                self.arm_segment(cpu);
            } else {
                self.schedule(cpu);
            }
            return;
        }
        if self.tasks[c].throttle_work && self.tasks[c].overhead_ns == 0 {
            self.throttle_cfs_rq_work(cpu, c);
            return;
        }
        let t = &mut self.tasks[c];
        if t.run_until.is_some_and(|u| u <= self.now && t.overhead_ns == 0) {
            t.run_until = None;
            t.work_left = 0;
        }
        if t.work_left > 0 && t.overhead_ns == 0 && t.cputime_poll_ns > 0 && t.run_until.is_none() {
            // clock_gettime(CLOCK_THREAD_CPUTIME_ID): task_sched_runtime() runs
            // update_curr(), which may end the slice or find the runtime gone.
            let was_pending = self.rqs[cpu].resched_pending;
            self.update_curr(cpu);
            if (was_pending || !self.rqs[cpu].resched_pending) && self.rqs[cpu].curr == Some(c) {
                self.arm_segment(cpu);
            }
            return;
        }
        let t = &self.tasks[c];
        if t.work_left > 0 || t.overhead_ns > 0 {
            self.arm_segment(cpu); // rounding left a few ns
            return;
        }
        if self.advance_program(c, cpu) {
            if self.rqs[cpu].resched_pending {
                return; // a local resched is already queued for now
            }
            self.arm_segment(cpu);
        } else if self.tasks[c].blocking.is_some() && self.tasks[c].overhead_ns > 0 {
            self.arm_segment(cpu); // the rest of the blocking call, then schedule()
        } else {
            self.schedule(cpu);
        }
    }

    /// The tick (tick_sched_timer): on a busy CPU the scheduler tick and the timer
    /// interrupt work; on an idle CPU a retained tick, or the stopped tick's programmed
    /// next event, which wakes it from its idle state.
    pub(crate) fn scheduler_tick(&mut self, cpu: usize) {
        let rq = &mut self.rqs[cpu];
        rq.tick_armed = false;
        rq.stats.ticks += 1;
        if rq.curr.is_none() {
            if rq.tick_stopped {
                rq.next_tick = 0; // fired: the idle loop reprograms whatever is next
            }
            self.mm_rq_clock(cpu); // sched_tick() runs in idle too
            self.timer_interrupt(cpu, true);
            if self.rqs[cpu].curr.is_none() && !self.rqs[cpu].tick_stopped && !self.rqs[cpu].tick_armed {
                self.arm_tick(cpu); // a retained tick keeps firing in idle
            }
            return;
        }
        self.update_curr(cpu);
        self.timer_interrupt(cpu, true);
        if self.rqs[cpu].curr.is_none() {
            return;
        }
        self.mm_rq_clock(cpu);
        if let Some(c) = self.rqs[cpu].curr {
            self.mm_tick(cpu, c);
        }
        if let Some(c) = self.rqs[cpu].curr {
            for_class!(self.class_of(c), |C| C::task_tick(self, cpu, c));
        }
        self.trigger_load_balance(cpu);
        if self.rqs[cpu].curr.is_some() && !self.rqs[cpu].tick_armed {
            self.arm_tick(cpu);
        }
    }

    /// Records a trace event if tracing.
    #[inline]
    pub(crate) fn trace_event(&mut self, cpu: usize, event: TraceEvent) {
        if let Some(t) = &mut self.trace {
            t.record(crate::trace::TraceRecord { ts: self.now, cpu, event });
        }
    }

    /// record_wakee(): the waker's flip count feeds wake_wide().
    fn record_wakee(&mut self, waker: TaskId, p: TaskId) {
        let now = self.now;
        let w = &mut self.tasks[waker];
        if now > w.wakee_flip_decay_ts + crate::time::NSEC_PER_SEC {
            w.wakee_flips >>= 1;
            w.wakee_flip_decay_ts = now;
        }
        if w.last_wakee != Some(p) {
            w.last_wakee = Some(p);
            w.wakee_flips += 1;
        }
    }

    /// activate_task() / enqueue_task(): `p` (its CPU already `cpu`) joins `cpu`'s
    /// queues through its class.
    pub(crate) fn activate_task(&mut self, cpu: usize, p: TaskId, flags: EnqueueFlags) {
        debug_assert_eq!(self.tasks[p].cpu, cpu);
        for_class!(self.class_of(p), |C| C::enqueue_task(self, cpu, p, flags));
    }

    /// deactivate_task() / dequeue_task() of the running task `p`.
    pub(crate) fn dequeue_task(&mut self, cpu: usize, p: TaskId, flags: DequeueFlags) {
        for_class!(self.class_of(p), |C| C::dequeue_task(self, cpu, p, flags));
    }

    /// select_task_rq(): the class's choice of CPU for a waking or new task, then
    /// select_fallback_rq() if the class chose a CPU `p` may not run on.
    pub(crate) fn select_task_rq(&mut self, p: TaskId, prev: usize, this_cpu: usize, waker: Option<TaskId>, sync: bool, fork: bool) -> usize {
        let cpu = for_class!(self.class_of(p), |C| C::select_task_rq(self, p, prev, this_cpu, waker, sync, fork));
        if self.tasks[p].cpus_allowed.test(cpu) {
            cpu
        } else {
            self.tasks[p].cpus_allowed.first().unwrap_or(prev)
        }
    }

    /// wakeup_preempt(): woken or new `p` on `cpu` against its current task. Of one
    /// class, the class decides; a higher class preempts at once, a lower one never. An
    /// idle CPU reschedules. Then the class's task_woken() (ttwu_do_activate()).
    pub(crate) fn wakeup_preempt(&mut self, cpu: usize, p: TaskId, from_cpu: usize) {
        let Some(c) = self.rqs[cpu].curr else {
            self.resched_curr(cpu, from_cpu);
            return;
        };
        let (pc, cc) = (self.class_of(p), self.class_of(c));
        if pc == cc {
            for_class!(pc, |C| C::wakeup_preempt(self, cpu, p, c, from_cpu));
        } else if pc < cc && self.feat.has(Feature::WAKEUP_PREEMPTION) {
            self.resched_curr(cpu, from_cpu);
        }
        if c != p {
            for_class!(pc, |C| C::task_woken(self, cpu, p));
        }
    }

    /// __pick_next_task(): the first class with a task, highest first, else the idle
    /// task (None). The fast path is the kernel's: when `prev` is of the fair class or
    /// below and every runnable task of the CPU is fair (nr_running equals the root
    /// cfs_rq's h_nr_running), the fair class is asked alone. The model adds one
    /// condition: no fair server is active on the CPU, since the model's server marks
    /// the fair task it picks as served (`dl_server_pick()`).
    fn pick_next_task(&mut self, cpu: usize, prev: Option<TaskId>) -> Option<TaskId> {
        let prev_fair_or_below = prev.is_none_or(|p| self.class_of(p) >= crate::state::task::SchedClass::Fair);
        if !self.scx.enabled && prev_fair_or_below && self.rqs[cpu].nr_running == self.root_h_nr_running(cpu) as usize && !self.dl_server_active(cpu)
        {
            return <crate::fair::class::FairSchedClass as SchedClassOps>::pick_task(self, cpu);
        }
        for cls in CLASS_ORDER {
            // next_active_class(): ext only with a scheduler loaded, fair not once every
            // fair task is in ext.
            if (*cls == crate::state::task::SchedClass::Ext && !self.scx.enabled)
                || (*cls == crate::state::task::SchedClass::Fair && self.scx.switched_all)
            {
                continue;
            }
            if let Some(p) = for_class!(cls, |C| C::pick_task(self, cpu)) {
                return Some(p);
            }
        }
        None
    }

    /// set_next_task_idle(): nothing to run. sched_balance_newidle()'s tail
    /// (nohz_newidle_balance()) runs here, once the CPU is idle; then
    /// update_idle_core() marks the core idle for the wakeup scan.
    fn set_next_task_idle(&mut self, cpu: usize) {
        self.nohz_newidle_balance(cpu);
        self.update_idle_core(cpu);
        self.scx_update_idle(cpu, true);
    }

    /// The class part of update_curr() for the running task `c`.
    pub(crate) fn update_curr_class(&mut self, cpu: usize, c: TaskId, delta: Ns) {
        for_class!(self.class_of(c), |C| C::update_curr(self, cpu, c, delta));
    }

    /// add_nr_running() / sub_nr_running(): rq->nr_running and the root domain's
    /// overload state (rd->overloaded: set when a CPU reaches two runnable tasks).
    pub(crate) fn add_nr_running(&mut self, cpu: usize, delta: isize) {
        self.load_sums.nr_running_changed(cpu, delta);
        let rq = &mut self.rqs[cpu];
        rq.nr_running = (rq.nr_running as isize + delta) as usize;
        let over = rq.nr_running > 1;
        if rq.nr_running > 0 {
            self.balance.has_tasks.set(cpu);
        } else {
            self.balance.has_tasks.clear(cpu);
        }
        self.update_sched_idle(cpu);
        let rq = &mut self.rqs[cpu];
        if over != rq.overloaded {
            rq.overloaded = over;
            if over {
                // add_nr_running(): prev_nr < 2 && nr_running >= 2 sets rd->overloaded.
                self.rd.overloaded = true;
                self.rd.nr_overloaded += 1;
                self.rd.overloaded_cpus.set(cpu);
            } else {
                self.rd.nr_overloaded -= 1;
                self.rd.overloaded_cpus.clear(cpu);
            }
        }
    }
}
