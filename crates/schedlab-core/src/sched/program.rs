//! Executes tasks' programs: the system calls a workload makes.
//!
//! Mirrors: the kernel entry points the steps stand for: nanosleep/hrtimer sleep,
//! pipe read/write and futex wait/wake (wake_up_interruptible_sync: WF_SYNC), mutex
//! lock/unlock with hand-off, fork (kernel_clone → wake_up_new_task), wait4, exit.
//! Model: instantaneous steps run back to back; a step that takes time (run) or
//! blocks ends the walk. A program that loops without ever taking time is an error.
//! System calls cost kernel time (entry, the call's own path, exit): each step's
//! effect happens at once and its cost becomes kernel time the task runs next, so
//! anything the call sends to another CPU (a wakeup IPI) leaves after the cost that
//! precedes it (`send_delay`). A task that blocks runs the rest of its system call
//! entry as itself, then schedules (the switch comes at the end of that path), and
//! pays the call's exit when it runs again.

use super::class::{for_class, DequeueFlags, EnqueueFlags, SchedClassOps};
use crate::error::SimError;
use crate::state::named_timers::select_estimate_accuracy;
use crate::state::task::{Insn, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;
use crate::timers::{TimerFlags, TimerFn};
/// Instantaneous steps allowed in a row before a program is declared a busy loop.
const MAX_INSTANT_STEPS: u32 = 1_000_000;

/// Work of a `run_for` step: more than any deadline needs (it ends at the deadline).
const RUN_FOR_WORK: Ns = 1 << 50;

/// What a step leaves the task doing.
pub(super) enum Flow {
    /// The step took no time: the next one runs at once.
    Next,
    /// The task has work to run (or kernel time to pay) before its next step.
    Runs,
    /// The task blocked, slept, moved or exited: its CPU schedules.
    Stops,
}

impl Simulator {
    /// Advances task `c` running on `cpu`; returns true if it keeps running. Steps that
    /// take no time run back to back; each step is one system call or user action.
    pub(crate) fn advance_program(&mut self, c: TaskId, cpu: usize) -> bool {
        if let Some(log) = &mut self.rtapp_log {
            log.resume(c, self.now);
        }
        for _ in 0..MAX_INSTANT_STEPS {
            let t = &self.tasks[c];
            let Some(&insn) = self.programs[t.program].insns.get(t.pc) else {
                self.exit_after_path(c, cpu);
                return false;
            };
            self.tasks[c].pc += 1;
            let flow = match insn {
                Insn::Run(w) => {
                    self.rtapp_log_run(c, w, w);
                    self.give_work(c, w)
                }
                Insn::RunExp(mean) => {
                    let w = self.rngs[c].exp(mean);
                    self.rtapp_log_run(c, w, w);
                    self.give_work(c, w)
                }
                Insn::RunFor(d) => {
                    self.rtapp_log_run(c, d, 0);
                    self.step_run_for(c, d)
                }
                Insn::Sleep(d) => {
                    self.sleep_for(c, cpu, d);
                    Flow::Stops
                }
                Insn::SleepExp(mean) => {
                    let d = self.rngs[c].exp(mean);
                    self.sleep_for(c, cpu, d);
                    Flow::Stops
                }
                Insn::Poll(d) => {
                    // select_estimate_accuracy(): an RT or deadline task polls with no slack.
                    let t = &self.tasks[c];
                    let slack = if self.task_has_timer_slack(c) { select_estimate_accuracy(d, t.nice, t.timer_slack_ns) } else { 0 };
                    self.sleep_slack(c, cpu, d, slack);
                    Flow::Stops
                }
                Insn::SleepTimeout(d) => self.step_sleep_timeout(c, cpu, d),
                Insn::Periodic { period, relative, rt_app: true } => self.step_rt_app_timer(c, cpu, period, relative),
                Insn::Periodic { period, relative, rt_app: false } => self.step_periodic(c, cpu, period, relative),
                Insn::CondWait { ch, lock } => self.step_cond_wait(c, cpu, ch, lock),
                Insn::CondSignal(ch) => self.step_cond_signal(c, cpu, ch, false),
                Insn::CondBroadcast(ch) => self.step_cond_signal(c, cpu, ch, true),
                Insn::Barrier(b) => self.step_barrier(c, cpu, b),
                Insn::Wait(ch) => self.step_wait(c, cpu, ch, None),
                Insn::WaitTimeout { ch, timeout } => self.step_wait(c, cpu, ch, Some(timeout)),
                Insn::Signal(ch) => self.step_signal(c, cpu, ch),
                Insn::Send(ch) => self.step_send(c, cpu, ch),
                Insn::Post(ch) => self.step_post(c, cpu, ch),
                Insn::WakeAll(ch) => self.step_wake_all(c, cpu, ch),
                Insn::Lock(l) => self.step_lock(c, cpu, l),
                Insn::Unlock(l) => {
                    self.release_lock(c, cpu, l);
                    if self.pi_unboost(c, cpu) {
                        Flow::Stops // back in the fair class: schedule() picks
                    } else {
                        Flow::Next
                    }
                }
                Insn::Yield => {
                    self.syscall_entry(c, cpu);
                    for_class!(self.class_of(c), |C| C::yield_task(self, cpu, c));
                    self.syscall_exit(c, cpu);
                    Flow::Stops // schedule() puts it back and picks
                }
                Insn::SetAffinity(m) => self.step_set_affinity(c, cpu, m),
                Insn::SetGroup(g) => {
                    let to = self.group_steps[g];
                    if to == self.tasks[c].group {
                        Flow::Next
                    } else {
                        self.move_running_task(c, cpu, cpu, Some(to));
                        Flow::Stops
                    }
                }
                Insn::ModTimer { slot, delay, pinned, deferrable, signal } => {
                    self.step_mod_timer(c, cpu, slot, delay, TimerFlags { pinned, deferrable }, signal)
                }
                Insn::DelTimer(slot) => {
                    if let Some(t) = self.task_timers.get(c, slot) {
                        let ns = self.del_timer(cpu, t);
                        self.tasks[c].overhead_ns += ns;
                    }
                    Flow::Next
                }
                Insn::TimerBench { reps, delay } => {
                    self.timer_bench(c, cpu, reps, delay);
                    Flow::Runs
                }
                Insn::Mark => {
                    self.tasks[c].mark = self.task_clock(c);
                    Flow::Next
                }
                Insn::RtAppPhase => {
                    if let Some(log) = &mut self.rtapp_log {
                        log.phase(c, self.now + self.tasks[c].overhead_ns);
                    }
                    Flow::Next
                }
                Insn::Record { hist, since_message } => self.step_record(c, hist, since_message),
                Insn::Fork { template, count } => {
                    for _ in 0..count {
                        self.do_fork(c, cpu, template);
                    }
                    Flow::Runs // the fork cost is charged as overhead before the next step
                }
                Insn::WaitChildren => self.step_wait_children(c, cpu),
                Insn::LoopStart { .. } | Insn::LoopEnd { .. } => {
                    self.step_loop(c, insn);
                    Flow::Next
                }
                Insn::TouchArea { bytes, by_cid, record } => {
                    self.touch_area(c, cpu, bytes, by_cid, record);
                    Flow::Runs
                }
                Insn::TouchPages { region, pages, write } => {
                    self.touch_pages(c, cpu, region, pages, write);
                    Flow::Runs
                }
                Insn::PageOut { region, extra_mappers, kswapd } => {
                    self.page_out(c, cpu, region, extra_mappers, kswapd);
                    Flow::Runs
                }
                Insn::Exit => {
                    self.exit_after_path(c, cpu);
                    Flow::Stops
                }
            };
            match flow {
                Flow::Next => continue,
                Flow::Runs => return true,
                Flow::Stops => return false,
            }
        }
        self.error = Some(SimError::Limit(format!(
            "task '{}' loops without taking time (a loop whose body has no run or sleep step?)",
            self.tasks[c].stats.name
        )));
        true
    }

    /// rt-app's log of a run event of `configured` ns (`work` of it at capacity 1024),
    /// beginning once the task's pending kernel time is paid.
    fn rtapp_log_run(&mut self, c: TaskId, configured: Ns, work: Ns) {
        if let Some(log) = &mut self.rtapp_log {
            log.run(c, self.now + self.tasks[c].overhead_ns, configured, work);
        }
    }

    /// A `run` step of `w` ns of work (none: the next step follows at once).
    fn give_work(&mut self, c: TaskId, w: Ns) -> Flow {
        if w == 0 {
            return Flow::Next;
        }
        self.tasks[c].work_left = w;
        Flow::Runs
    }

    /// `run_for`: work until a wall-clock deadline `d` from now, whatever it takes.
    fn step_run_for(&mut self, c: TaskId, d: Ns) -> Flow {
        if d == 0 {
            return Flow::Next;
        }
        let t = &mut self.tasks[c];
        t.run_until = Some(self.now + t.overhead_ns + d);
        t.work_left = RUN_FOR_WORK;
        Flow::Runs
    }

    /// schedule_timeout(d) in a system call: a timer_list sleep.
    fn step_sleep_timeout(&mut self, c: TaskId, cpu: usize, d: Ns) -> Flow {
        self.syscall_entry(c, cpu);
        let ns = self.schedule_timeout(c, cpu, d);
        self.tasks[c].overhead_ns += ns;
        let exit = self.path_ns(cpu, cost!(self, kernel.del_timer_ns));
        self.block(c, cpu, TaskState::Sleeping, exit);
        Flow::Stops
    }

    /// rt-app's timer event (src/rt-app.c rtapp_timer): t_next starts at the thread's
    /// start; a late period counts and, if relative, restarts from now.
    fn step_rt_app_timer(&mut self, c: TaskId, cpu: usize, period: Ns, relative: bool) -> Flow {
        let t = &mut self.tasks[c];
        let next = t.period_next.unwrap_or(t.stats.start_ns) + period;
        if let Some(log) = &mut self.rtapp_log {
            log.timer(c, self.now + t.overhead_ns, period, next);
        }
        if self.now + t.overhead_ns < next {
            t.period_next = Some(next);
            self.sleep_until(c, cpu, next);
            return Flow::Stops;
        }
        t.periods_late += 1;
        t.period_next = Some(if relative { self.now } else { next });
        Flow::Next
    }

    /// A periodic sleep to the next multiple of `period` (relative: from now when late).
    fn step_periodic(&mut self, c: TaskId, cpu: usize, period: Ns, relative: bool) -> Flow {
        let t = &mut self.tasks[c];
        let next = match t.period_next {
            None => self.now + period,
            Some(n) if n + period <= self.now && relative => self.now + period,
            Some(n) => n + period,
        };
        t.period_next = Some(next);
        if next <= self.now {
            t.periods_late += 1;
            return Flow::Next; // already due: the next period's work starts at once
        }
        self.sleep_until(c, cpu, next);
        Flow::Stops
    }

    /// sched_setaffinity(): outside its new mask, the stopper moves the task to an
    /// allowed CPU (migration_cpu_stop()).
    fn step_set_affinity(&mut self, c: TaskId, cpu: usize, m: usize) -> Flow {
        self.syscall_entry(c, cpu);
        self.syscall_exit(c, cpu);
        let mask = self.masks[m];
        let shared = self.shared_mask(mask);
        let t = &mut self.tasks[c];
        t.cpus_allowed = shared;
        t.nr_cpus_allowed = mask.weight();
        if mask.test(cpu) {
            return Flow::Next;
        }
        let dst = mask.iter().find(|&d| self.rqs[d].curr.is_none()).or_else(|| mask.first()).unwrap_or(cpu);
        self.move_running_task(c, cpu, dst, None);
        Flow::Stops
    }

    /// mod_timer() of the task's named timer_list (set up at first use), `delay` ahead
    /// in whole jiffies; a timer with `signal` posts that channel when it fires.
    fn step_mod_timer(&mut self, c: TaskId, cpu: usize, slot: usize, delay: Ns, flags: TimerFlags, signal: Option<usize>) -> Flow {
        let func = match signal {
            Some(ch) => TimerFn::Signal(self.resolve_channel(c, ch)),
            None => TimerFn::Callback,
        };
        let timers = &mut self.timers;
        let t = self.task_timers.get_or_insert_with(c, slot, || timers.setup(func, flags, cpu));
        let jiffies = delay.div_ceil(self.tick.period_ns).max(1);
        let ns = self.mod_timer(cpu, t, jiffies);
        self.tasks[c].overhead_ns += ns;
        Flow::Next
    }

    /// `record`: the time since the task's mark (or since the message it last got was
    /// sent) into a user histogram, with completions counted per 100 ms.
    fn step_record(&mut self, c: TaskId, hist: usize, since_message: bool) -> Flow {
        let now = self.task_clock(c);
        let t = &self.tasks[c];
        let from = if since_message { t.msg_stamp } else { t.mark };
        self.stats.user_hists[hist].1.record_at(now.saturating_sub(from), now);
        Flow::Next
    }

    /// wait4(): blocks while children live (the last one's exit wakes it).
    fn step_wait_children(&mut self, c: TaskId, cpu: usize) -> Flow {
        self.syscall_entry(c, cpu);
        if self.tasks[c].live_children > 0 {
            let exit = self.path_ns(cpu, cost!(self, kernel.syscall_exit_ns));
            self.block(c, cpu, TaskState::Blocked, exit);
            return Flow::Stops;
        }
        self.syscall_exit(c, cpu);
        Flow::Next
    }

    /// Moves the running task `c` off `cpu` and queues it again on `dst`, in group
    /// `group` if given (sched_setaffinity's migration_cpu_stop, sched_move_task); the
    /// caller then schedules `cpu`.
    fn move_running_task(&mut self, c: TaskId, cpu: usize, dst: usize, group: Option<usize>) {
        // dequeue_task(DEQUEUE_SAVE | DEQUEUE_MOVE) and put_prev_task(), the change,
        // then enqueue_task(ENQUEUE_RESTORE | ENQUEUE_MOVE) (sched_move_task(),
        // __set_cpus_allowed_ptr()).
        self.dequeue_task(cpu, c, DequeueFlags::MOVE);
        if let Some(g) = group {
            self.tasks[c].group = g;
            self.tasks[c].stats.group = self.groups[g].name.clone();
        }
        self.set_task_cpu(c, dst);
        let t = &mut self.tasks[c];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
        self.activate_task(dst, c, EnqueueFlags { moved_from: Some(cpu), ..EnqueueFlags::NONE });
        if dst != cpu && self.tasks[c].state == TaskState::Runnable {
            self.wakeup_preempt(dst, c, cpu);
        }
    }

    /// Executes a loop head or tail (`pc` already past it).
    fn step_loop(&mut self, c: TaskId, insn: Insn) {
        let t = &mut self.tasks[c];
        match insn {
            Insn::LoopStart { count: Some(0), end } => t.pc = end + 1,
            Insn::LoopStart { count, .. } => {
                let head = t.pc - 1;
                t.loops.push((head, count));
            }
            Insn::LoopEnd { start } => {
                let top = t.loops.last_mut().expect("LoopEnd without LoopStart");
                debug_assert_eq!(top.0, start);
                let again = match &mut top.1 {
                    None => true,
                    Some(n) => {
                        *n -= 1;
                        *n > 0
                    }
                };
                if again {
                    t.pc = start + 1;
                } else {
                    t.loops.pop();
                }
            }
            _ => unreachable!("not a loop step"),
        }
    }

    /// Takes the task's next steps now if they are loop control followed by pure
    /// computation, so the switch-in cost and the computation form one segment (one
    /// event instead of two; the timeline is the same).
    pub(crate) fn fold_next_run(&mut self, c: TaskId) {
        if self.tasks[c].work_left != 0 {
            return;
        }
        for _ in 0..8 {
            let t = &self.tasks[c];
            let Some(&insn) = self.programs[t.program].insns.get(t.pc) else { return };
            let w = match insn {
                Insn::LoopStart { .. } | Insn::LoopEnd { .. } => {
                    self.tasks[c].pc += 1;
                    self.step_loop(c, insn);
                    continue;
                }
                Insn::Run(w) => w,
                Insn::RunExp(mean) => self.rngs[c].exp(mean),
                _ => return,
            };
            let t = &mut self.tasks[c];
            t.pc += 1;
            t.work_left = w;
            return;
        }
    }

    /// nanosleep(d): the system call arms an hrtimer `d` after it starts (with the
    /// task's timer slack) and blocks.
    fn sleep_for(&mut self, c: TaskId, cpu: usize, d: u64) {
        self.sleep_slack(c, cpu, d, self.tasks[c].timer_slack_ns);
    }

    /// A relative hrtimer sleep of `d` with `slack`.
    fn sleep_slack(&mut self, c: TaskId, cpu: usize, d: u64, slack: Ns) {
        self.syscall_entry(c, cpu);
        let start = self.path_ns(cpu, cost!(self, kernel.hrtimer_start_ns));
        self.tasks[c].overhead_ns += start;
        let soft = self.now + self.tasks[c].overhead_ns + d;
        self.hrtimer_sleep(c, cpu, soft, slack);
        let exit = self.path_ns(cpu, cost!(self, kernel.syscall_exit_ns));
        self.block(c, cpu, TaskState::Sleeping, exit);
    }

    /// clock_nanosleep(TIMER_ABSTIME, `deadline`): like nanosleep, to an absolute time.
    fn sleep_until(&mut self, c: TaskId, cpu: usize, deadline: Ns) {
        self.syscall_entry(c, cpu);
        let start = self.path_ns(cpu, cost!(self, kernel.hrtimer_start_ns));
        self.tasks[c].overhead_ns += start;
        let soft = deadline.max(self.now + self.tasks[c].overhead_ns);
        self.hrtimer_sleep(c, cpu, soft, self.tasks[c].timer_slack_ns);
        let exit = self.path_ns(cpu, cost!(self, kernel.syscall_exit_ns));
        self.block(c, cpu, TaskState::Sleeping, exit);
    }

    /// The running task sleeps or blocks (set_current_state()): it runs the rest of its
    /// system call entry (its pending kernel time) and then schedule(), which takes it
    /// off its runqueue (`Simulator::schedule`); `exit_ns` is what it pays on its way
    /// back to user space when it runs again. Whatever it woke meanwhile waits for that
    /// path: no wakeup is shorter than the code between try_to_wake_up() and the switch.
    pub(super) fn block(&mut self, c: TaskId, cpu: usize, state: TaskState, exit_ns: Ns) {
        // The call's wait and __schedule() up to the switch run as part of this path.
        let pick = self.path_ns(cpu, cost!(self, kernel.schedule_ns));
        let t = &mut self.tasks[c];
        t.overhead_ns += pick;
        t.blocking = Some(state);
        t.pending_exit_ns += exit_ns;
        t.stats.sys_ns += t.overhead_ns;
    }

    /// System call entry: kernel time of the running task.
    pub(super) fn syscall_entry(&mut self, c: TaskId, cpu: usize) {
        let ns = self.path_ns(cpu, cost!(self, kernel.syscall_entry_ns));
        self.tasks[c].overhead_ns += ns;
        self.tasks[c].stats.sys_ns += ns;
    }

    /// System call exit of a call that did not block.
    pub(super) fn syscall_exit(&mut self, c: TaskId, cpu: usize) {
        let ns = self.path_ns(cpu, cost!(self, kernel.syscall_exit_ns));
        self.tasks[c].overhead_ns += ns;
        self.tasks[c].stats.sys_ns += ns;
    }

    /// The task's view of the clock: now plus the kernel time it still has to run
    /// before its next user instruction.
    #[inline]
    pub(super) fn task_clock(&self, c: TaskId) -> Ns {
        self.now + self.tasks[c].overhead_ns
    }

    /// The timer enqueue micro-benchmark: `reps` times mod_timer() of one non-pinned
    /// timer `delay` ahead, then timer_delete(), in kernel context on `cpu`. The time
    /// each pair takes is recorded.
    fn timer_bench(&mut self, c: TaskId, cpu: usize, reps: u64, delay: Ns) {
        let timers = &mut self.timers;
        let t = self.task_timers.get_or_insert_with(c, usize::MAX, || timers.setup(TimerFn::Bench, TimerFlags::default(), cpu));
        let jiffies = delay.div_ceil(self.tick.period_ns).max(1);
        let mut total = 0;
        for _ in 0..reps {
            let ns = self.mod_timer(cpu, t, jiffies) + self.del_timer(cpu, t);
            self.stats.timer_bench_ns.record(ns);
            total += ns;
        }
        self.tasks[c].overhead_ns += total;
        self.tasks[c].stats.sys_ns += total;
    }

    fn do_fork(&mut self, parent: TaskId, cpu: usize, template: usize) {
        if !self.sched_fork_allowed(parent) {
            // sched_fork() fails with EAGAIN: a deadline task cannot fork.
            self.rtc.fork_eagain += 1;
            self.tasks[parent].overhead_ns += cost!(self, fork_ns) as u64;
            return;
        }
        let tpl = self.templates[template].clone();
        let n = self.tasks[parent].live_children;
        let mask = tpl.affinity.map_or(self.m.all_cpus(), |a| a.and(&self.m.all_cpus()));
        let mask = if mask.is_empty() { self.m.all_cpus() } else { mask };
        let child = self.create_task(
            format!("{}-{n}", tpl.name),
            tpl.program,
            tpl.nice,
            mask,
            tpl.group,
            tpl.process.as_deref(),
            tpl.footprint,
            Some(parent),
        );
        if let Some(slack) = tpl.timer_slack_ns {
            self.tasks[child].timer_slack_ns = slack;
        }
        self.tasks[child].cpu = if mask.test(cpu) { cpu } else { mask.first().unwrap_or(cpu) };
        self.sched_fork(parent, child);
        self.tasks[parent].live_children += 1;
        self.tasks[parent].overhead_ns += cost!(self, fork_ns) as u64;
        self.trace_event(cpu, crate::trace::TraceEvent::Fork { parent: parent + 1, child: child + 1 });
        self.wake_up_new_task(child, cpu, Some(parent));
    }

    /// exit(): the task runs the kernel time it still owes, then do_exit() and the
    /// final schedule() (`Simulator::schedule`), so whatever it woke waits for that path.
    fn exit_after_path(&mut self, c: TaskId, cpu: usize) {
        if self.tasks[c].overhead_ns > 0 {
            self.tasks[c].blocking = Some(TaskState::Exited);
        } else {
            self.do_exit(c, cpu);
        }
    }

    /// do_exit(): the task leaves its runqueue for good and wakes a parent waiting for
    /// its children.
    pub(crate) fn do_exit(&mut self, c: TaskId, cpu: usize) {
        if let Some(log) = &mut self.rtapp_log {
            log.close(c, self.now);
        }
        self.trace_event(cpu, crate::trace::TraceEvent::Exit { pid: c + 1 });
        self.mm_exit(c, cpu);
        self.hrtimer_cancel_task(c);
        if let Some(t) = self.tasks[c].wheel_timer {
            self.timers.del_timer(t);
        }
        self.dequeue_task(cpu, c, DequeueFlags::NONE);
        for_class!(self.class_of(c), |C| C::task_dead(self, c));
        let t = &mut self.tasks[c];
        t.state = TaskState::Exited;
        t.stats.exit_ns = Some(self.now);
        if !t.daemon {
            self.live_tasks -= 1;
        }
        if let Some(p) = self.tasks[c].parent {
            self.tasks[p].live_children -= 1;
            let parent_waits = self.tasks[p].state == TaskState::Blocked
                && matches!(self.programs[self.tasks[p].program].insns.get(self.tasks[p].pc.wrapping_sub(1)), Some(Insn::WaitChildren));
            if self.tasks[p].live_children == 0 && parent_waits {
                self.try_to_wake_up(p, cpu, Some(c), false);
            }
        }
        // The exit path's kernel time is the CPU's to finish.
        let owed = std::mem::take(&mut self.tasks[c].overhead_ns);
        self.rqs[cpu].irq_until = self.rqs[cpu].irq_until.max(self.now) + owed;
    }
}
