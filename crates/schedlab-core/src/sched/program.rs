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

use crate::engine::Simulator;
use crate::error::SimError;
use crate::task::{Insn, TaskId, TaskState};
use crate::time::Ns;
use crate::timers::{TimerFlags, TimerFn, TimerId};

/// The named `timer_list`s of tasks (a task's `mod_timer`/`del_timer` steps by name),
/// set up at first use: per task, its few (name index, timer) pairs. A task has one or
/// two, so a short list per task is found faster than a key in one map of them all.
#[derive(Clone, Debug, Default)]
pub(crate) struct NamedTimers(Vec<Vec<(usize, TimerId)>>);

impl NamedTimers {
    /// The timer task `c` set up under `slot`, if any.
    fn get(&self, c: TaskId, slot: usize) -> Option<TimerId> {
        self.0.get(c)?.iter().find(|&&(s, _)| s == slot).map(|&(_, t)| t)
    }

    /// The timer of task `c` under `slot`, set up by `setup` the first time.
    fn get_or_insert_with(&mut self, c: TaskId, slot: usize, setup: impl FnOnce() -> TimerId) -> TimerId {
        if let Some(t) = self.get(c, slot) {
            return t;
        }
        if self.0.len() <= c {
            self.0.resize_with(c + 1, Vec::new);
        }
        let t = setup();
        self.0[c].push((slot, t));
        t
    }
}

/// select_estimate_accuracy() (fs/select.c): the slack of a poll()/select() timeout of
/// `timeout` ns: 0.1 % of it (0.5 % for nice > 0), at most MAX_SLACK = 100 ms, at least
/// the task's timer slack (real-time tasks get 0: not modeled here).
pub(crate) fn select_estimate_accuracy(timeout: Ns, nice: i32, task_slack: Ns) -> Ns {
    const MAX_SLACK: Ns = 100 * crate::time::NSEC_PER_MSEC;
    let divfactor = if nice > 0 { 200 } else { 1000 };
    (timeout / divfactor).min(MAX_SLACK).max(task_slack)
}

/// Instantaneous steps allowed in a row before a program is declared a busy loop.
const MAX_INSTANT_STEPS: u32 = 1_000_000;

/// Work of a `run_for` step: more than any deadline needs (it ends at the deadline).
const RUN_FOR_WORK: Ns = 1 << 50;

impl Simulator {
    /// Advances task `c` running on `cpu`; returns true if it keeps running.
    pub(crate) fn advance_program(&mut self, c: TaskId, cpu: usize) -> bool {
        let mut steps = 0;
        loop {
            steps += 1;
            if steps > MAX_INSTANT_STEPS {
                self.error = Some(SimError::Limit(format!(
                    "task '{}' loops without taking time (a loop whose body has no run or sleep step?)",
                    self.tasks[c].stats.name
                )));
                return true;
            }
            let t = &self.tasks[c];
            let Some(&insn) = self.programs[t.program].insns.get(t.pc) else {
                self.exit_after_path(c, cpu);
                return false;
            };
            self.tasks[c].pc += 1;
            match insn {
                Insn::Run(w) => {
                    if w > 0 {
                        self.tasks[c].work_left = w;
                        return true;
                    }
                }
                Insn::RunExp(mean) => {
                    let w = self.rngs[c].exp(mean);
                    if w > 0 {
                        self.tasks[c].work_left = w;
                        return true;
                    }
                }
                Insn::RunFor(d) => {
                    if d > 0 {
                        let t = &mut self.tasks[c];
                        t.run_until = Some(self.now + t.overhead_ns + d);
                        t.work_left = RUN_FOR_WORK;
                        return true;
                    }
                }
                Insn::Sleep(d) => {
                    self.sleep_for(c, cpu, d);
                    return false;
                }
                Insn::CondWait { ch, lock } => {
                    self.syscall_entry(c, cpu);
                    if let Some(l) = lock {
                        self.release_lock(c, cpu, l);
                    }
                    self.chans[ch].waiters.push_back(c);
                    let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                    self.block(c, cpu, TaskState::Blocked, exit);
                    return false;
                }
                Insn::CondSignal(ch) | Insn::CondBroadcast(ch) => {
                    // futex_wake(): a system call only when someone waits.
                    let all = matches!(insn, Insn::CondBroadcast(_));
                    if !self.chans[ch].waiters.is_empty() {
                        self.syscall_entry(c, cpu);
                        while let Some(w) = self.chans[ch].waiters.pop_front() {
                            self.try_to_wake_up(w, cpu, Some(c), false);
                            if !all {
                                break;
                            }
                        }
                        self.syscall_exit(c, cpu);
                    }
                }
                Insn::Barrier(b) => {
                    self.syscall_entry(c, cpu);
                    let bar = &mut self.barriers[b];
                    if bar.waiters.len() + 1 >= bar.parties {
                        for w in std::mem::take(&mut bar.waiters) {
                            self.try_to_wake_up(w, cpu, Some(c), false);
                        }
                        self.syscall_exit(c, cpu);
                    } else {
                        bar.waiters.push(c);
                        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                        self.block(c, cpu, TaskState::Blocked, exit);
                        return false;
                    }
                }
                Insn::Yield => {
                    self.syscall_entry(c, cpu);
                    self.yield_task_fair(cpu, c);
                    self.syscall_exit(c, cpu);
                    return false; // schedule() puts it back and picks
                }
                Insn::SetAffinity(m) => {
                    self.syscall_entry(c, cpu);
                    self.syscall_exit(c, cpu);
                    let mask = self.masks[m];
                    let shared = self.shared_mask(mask);
                    let t = &mut self.tasks[c];
                    t.cpus_allowed = shared;
                    t.nr_cpus_allowed = mask.weight();
                    if !mask.test(cpu) {
                        // migration_cpu_stop(): the stopper moves it to an allowed CPU.
                        let dst = mask.iter().find(|&d| self.rqs[d].curr.is_none()).or_else(|| mask.first()).unwrap_or(cpu);
                        self.move_running_task(c, cpu, dst, None);
                        return false;
                    }
                }
                Insn::SetGroup(g) => {
                    let to = self.group_steps[g];
                    if to != self.tasks[c].group {
                        self.move_running_task(c, cpu, cpu, Some(to));
                        return false;
                    }
                }
                Insn::Poll(d) => {
                    let slack = select_estimate_accuracy(d, self.tasks[c].nice, self.tasks[c].timer_slack_ns);
                    self.sleep_slack(c, cpu, d, slack);
                    return false;
                }
                Insn::SleepExp(mean) => {
                    let d = self.rngs[c].exp(mean);
                    self.sleep_for(c, cpu, d);
                    return false;
                }
                Insn::SleepTimeout(d) => {
                    self.syscall_entry(c, cpu);
                    let ns = self.schedule_timeout(c, cpu, d);
                    self.tasks[c].overhead_ns += ns;
                    let exit = self.path_ns(cpu, self.m.cost.kernel.del_timer_ns);
                    self.block(c, cpu, TaskState::Sleeping, exit);
                    return false;
                }
                Insn::ModTimer { slot, delay, pinned, deferrable, signal } => {
                    let func = match signal {
                        Some(ch) => TimerFn::Signal(self.resolve_channel(c, ch)),
                        None => TimerFn::Callback,
                    };
                    let timers = &mut self.timers;
                    let t = self.task_timers.get_or_insert_with(c, slot, || timers.setup(func, TimerFlags { pinned, deferrable }, cpu));
                    let jiffies = delay.div_ceil(self.tick_ns).max(1);
                    let ns = self.mod_timer(cpu, t, jiffies);
                    self.tasks[c].overhead_ns += ns;
                }
                Insn::DelTimer(slot) => {
                    if let Some(t) = self.task_timers.get(c, slot) {
                        let ns = self.del_timer(cpu, t);
                        self.tasks[c].overhead_ns += ns;
                    }
                }
                Insn::TimerBench { reps, delay } => {
                    self.timer_bench(c, cpu, reps, delay);
                    return true;
                }
                Insn::Wait(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    self.syscall_entry(c, cpu);
                    if self.chans[ch].tokens > 0 {
                        self.take_token(c, ch, cpu);
                        self.syscall_exit(c, cpu);
                    } else {
                        self.chans[ch].waiters.push_back(c);
                        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                        self.block(c, cpu, TaskState::Blocked, exit);
                        return false;
                    }
                }
                Insn::Signal(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    self.syscall_entry(c, cpu);
                    self.signal_channel(ch, cpu, Some(c));
                    self.syscall_exit(c, cpu);
                }
                Insn::Send(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    self.syscall_entry(c, cpu);
                    let chan = &self.chans[ch];
                    if chan.waiters.is_empty() && chan.tokens >= chan.capacity {
                        // Full: sleep on the writers' queue and retry the write when woken.
                        self.tasks[c].pc -= 1;
                        self.chans[ch].writers.push_back(c);
                        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                        self.block(c, cpu, TaskState::Blocked, exit);
                        return false;
                    }
                    self.signal_channel(ch, cpu, Some(c));
                    self.syscall_exit(c, cpu);
                }
                Insn::Post(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    self.syscall_entry(c, cpu);
                    if self.chans[ch].waiters.is_empty() {
                        // The flag word is set; a later wait returns at once.
                        let stamp = self.task_clock(c);
                        let chan = &mut self.chans[ch];
                        chan.tokens = 1;
                        chan.stamps.clear();
                        chan.stamps.push_back(stamp);
                    } else {
                        self.signal_channel(ch, cpu, Some(c));
                    }
                    self.syscall_exit(c, cpu);
                }
                Insn::WakeAll(ch) => {
                    let ch = self.resolve_channel(c, ch);
                    // One clock read for the whole walk, then a futex wake per waiter.
                    let stamp = self.task_clock(c);
                    while let Some(w) = self.chans[ch].waiters.pop_front() {
                        self.syscall_entry(c, cpu);
                        self.tasks[w].msg_stamp = stamp;
                        self.try_to_wake_up(w, cpu, Some(c), false);
                        self.syscall_exit(c, cpu);
                    }
                }
                Insn::Mark => self.tasks[c].mark = self.task_clock(c),
                Insn::Record { hist, since_message } => {
                    let now = self.task_clock(c);
                    let t = &self.tasks[c];
                    let from = if since_message { t.msg_stamp } else { t.mark };
                    let h = &mut self.user_hists[hist].1;
                    h.hist.record(now.saturating_sub(from));
                    let bin = (now / 100_000_000) as usize;
                    if h.per_100ms.len() <= bin {
                        h.per_100ms.resize(bin + 1, 0);
                    }
                    h.per_100ms[bin] += 1;
                }
                Insn::Lock(l) => {
                    // An uncontended futex lock is a user-space atomic on the lock word.
                    self.touch_lock_word(c, cpu, l);
                    if self.locks[l].owner.is_none() {
                        self.locks[l].owner = Some(c);
                    } else {
                        self.syscall_entry(c, cpu);
                        self.locks[l].waiters.push_back(c);
                        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                        self.block(c, cpu, TaskState::Blocked, exit);
                        return false;
                    }
                }
                Insn::Unlock(l) => self.release_lock(c, cpu, l),
                Insn::Fork { template, count } => {
                    for _ in 0..count {
                        self.do_fork(c, cpu, template);
                    }
                    return true; // the fork cost is charged as overhead before the next step
                }
                Insn::WaitTimeout { ch, timeout } => {
                    let ch = self.resolve_channel(c, ch);
                    self.syscall_entry(c, cpu);
                    if self.chans[ch].tokens > 0 {
                        self.take_token(c, ch, cpu);
                        self.syscall_exit(c, cpu);
                    } else {
                        self.chans[ch].waiters.push_back(c);
                        self.tasks[c].waiting_on = Some(ch);
                        let ns = self.schedule_timeout(c, cpu, timeout);
                        self.tasks[c].overhead_ns += ns;
                        self.tasks[c].timer_due = None; // a wakeup, not a timed sleep
                        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                        self.block(c, cpu, TaskState::Blocked, exit);
                        return false;
                    }
                }
                Insn::Periodic { period, relative, rt_app: true } => {
                    // src/rt-app.c rtapp_timer: t_next starts at the thread's start.
                    let t = &mut self.tasks[c];
                    let next = t.period_next.unwrap_or(t.stats.start_ns) + period;
                    if self.now + t.overhead_ns < next {
                        t.period_next = Some(next);
                        self.sleep_until(c, cpu, next);
                        return false;
                    }
                    t.periods_late += 1;
                    t.period_next = Some(if relative { self.now } else { next });
                }
                Insn::Periodic { period, relative, rt_app: false } => {
                    let t = &mut self.tasks[c];
                    let next = match t.period_next {
                        None => self.now + period,
                        Some(n) if n + period <= self.now && relative => self.now + period,
                        Some(n) => n + period,
                    };
                    t.period_next = Some(next);
                    if next <= self.now {
                        t.periods_late += 1;
                        continue; // already due: the next period's work starts at once
                    }
                    self.sleep_until(c, cpu, next);
                    return false;
                }
                Insn::WaitChildren => {
                    self.syscall_entry(c, cpu);
                    if self.tasks[c].live_children > 0 {
                        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
                        self.block(c, cpu, TaskState::Blocked, exit);
                        return false;
                    }
                    self.syscall_exit(c, cpu);
                }
                Insn::LoopStart { .. } | Insn::LoopEnd { .. } => self.step_loop(c, insn),
                Insn::TouchArea { bytes, by_cid, record } => {
                    self.touch_area(c, cpu, bytes, by_cid, record);
                    return true;
                }
                Insn::TouchPages { region, pages, write } => {
                    self.touch_pages(c, cpu, region, pages, write);
                    return true;
                }
                Insn::PageOut { region, extra_mappers, kswapd } => {
                    self.page_out(c, cpu, region, extra_mappers, kswapd);
                    return true;
                }
                Insn::Exit => {
                    self.exit_after_path(c, cpu);
                    return false;
                }
            }
        }
    }

    /// Releases mutex `l`, handing it to its first waiter.
    fn release_lock(&mut self, c: TaskId, cpu: usize, l: usize) {
        self.touch_lock_word(c, cpu, l);
        let next = self.locks[l].waiters.pop_front();
        self.locks[l].owner = next;
        if let Some(w) = next {
            // futex_wake(): a system call only when someone waits.
            self.syscall_entry(c, cpu);
            self.try_to_wake_up(w, cpu, Some(c), false);
            self.syscall_exit(c, cpu);
        }
    }

    /// yield_task_fair(): EEVDF (6.6+) pushes the deadline one slice further; CFS
    /// would mark the task the skip buddy, which schedlab does not model (the task is
    /// put back and the pick runs as usual).
    fn yield_task_fair(&mut self, cpu: usize, c: TaskId) {
        if self.rqs[cpu].nr_running <= 1 {
            return;
        }
        self.update_curr(cpu);
        if self.policy() == crate::kernel::FairPolicy::Eevdf {
            let se = &mut self.tasks[c].se;
            se.deadline += crate::fair::calc_delta_fair(se.slice, se.weight);
        }
    }

    /// Moves the running task `c` off `cpu` and queues it again on `dst`, in group
    /// `group` if given (sched_setaffinity's migration_cpu_stop, sched_move_task); the
    /// caller then schedules `cpu`.
    fn move_running_task(&mut self, c: TaskId, cpu: usize, dst: usize, group: Option<usize>) {
        self.dequeue_task_fair(cpu, c, false);
        // put_prev_task() before the change (sched_move_task, __set_cpus_allowed_ptr):
        // the old hierarchy's levels stop holding it as curr.
        self.put_prev_entities(cpu, c);
        if let Some(g) = group {
            self.tasks[c].group = g;
            self.tasks[c].stats.group = self.groups[g].name.clone();
        }
        if dst != cpu {
            self.set_task_cpu(c, dst);
            self.update_curr(dst);
        }
        if self.policy() == crate::kernel::FairPolicy::Eevdf {
            self.place_entity_eevdf(dst, c, false);
        }
        let t = &mut self.tasks[c];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
        self.activate_task(dst, c, false);
        if dst != cpu && self.tasks[c].state == TaskState::Runnable {
            self.wakeup_preempt(dst, c, cpu);
        }
    }

    /// Returns the channel a name means for task `c`: names starting with '@' are private
    /// to the children of one fork parent (a pipe between the processes one command
    /// line starts); other names are shared by every task.
    fn resolve_channel(&mut self, c: TaskId, ch: usize) -> usize {
        if !self.chan_scoped.get(ch).copied().unwrap_or(false) {
            return ch;
        }
        let key = (self.tasks[c].family, ch);
        let next = self.chans.len();
        let id = *self.family_chans.entry(key).or_insert(next);
        if id == next {
            let (capacity, wake_at) = self.chan_capacity.get(&ch).copied().unwrap_or((0, 0));
            self.chans.push(crate::engine::Channel { capacity, wake_at, ..Default::default() });
        }
        id
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
        let start = self.path_ns(cpu, self.m.cost.kernel.hrtimer_start_ns);
        self.tasks[c].overhead_ns += start;
        let soft = self.now + self.tasks[c].overhead_ns + d;
        self.hrtimer_sleep(c, cpu, soft, slack);
        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
        self.block(c, cpu, TaskState::Sleeping, exit);
    }

    /// clock_nanosleep(TIMER_ABSTIME, `deadline`): like nanosleep, to an absolute time.
    fn sleep_until(&mut self, c: TaskId, cpu: usize, deadline: Ns) {
        self.syscall_entry(c, cpu);
        let start = self.path_ns(cpu, self.m.cost.kernel.hrtimer_start_ns);
        self.tasks[c].overhead_ns += start;
        let soft = deadline.max(self.now + self.tasks[c].overhead_ns);
        self.hrtimer_sleep(c, cpu, soft, self.tasks[c].timer_slack_ns);
        let exit = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
        self.block(c, cpu, TaskState::Sleeping, exit);
    }

    /// The running task sleeps or blocks (set_current_state()): it runs the rest of its
    /// system call entry (its pending kernel time) and then schedule(), which takes it
    /// off its runqueue (`Simulator::schedule`); `exit_ns` is what it pays on its way
    /// back to user space when it runs again. Whatever it woke meanwhile waits for that
    /// path: no wakeup is shorter than the code between try_to_wake_up() and the switch.
    fn block(&mut self, c: TaskId, cpu: usize, state: TaskState, exit_ns: Ns) {
        // The call's wait and __schedule() up to the switch run as part of this path.
        let pick = self.path_ns(cpu, self.m.cost.kernel.schedule_ns);
        let t = &mut self.tasks[c];
        t.overhead_ns += pick;
        t.blocking = Some(state);
        t.pending_exit_ns += exit_ns;
        t.stats.sys_ns += t.overhead_ns;
    }

    /// System call entry: kernel time of the running task.
    fn syscall_entry(&mut self, c: TaskId, cpu: usize) {
        let ns = self.path_ns(cpu, self.m.cost.kernel.syscall_entry_ns);
        self.tasks[c].overhead_ns += ns;
        self.tasks[c].stats.sys_ns += ns;
    }

    /// System call exit of a call that did not block.
    fn syscall_exit(&mut self, c: TaskId, cpu: usize) {
        let ns = self.path_ns(cpu, self.m.cost.kernel.syscall_exit_ns);
        self.tasks[c].overhead_ns += ns;
        self.tasks[c].stats.sys_ns += ns;
    }

    /// Signals channel `ch` from `cpu` (a pipe write or futex wake by task `waker`, or
    /// a work item queued from a timer callback): wakes the first waiter or banks a
    /// token.
    pub(crate) fn signal_channel(&mut self, ch: usize, cpu: usize, waker: Option<TaskId>) {
        let stamp = waker.map_or(self.now, |w| self.task_clock(w));
        match self.chans[ch].waiters.pop_front() {
            Some(w) => {
                self.tasks[w].msg_stamp = stamp;
                self.try_to_wake_up(w, cpu, waker, waker.is_some())
            }
            None => {
                let chan = &mut self.chans[ch];
                chan.tokens += 1;
                chan.stamps.push_back(stamp);
            }
        }
    }

    /// A wait on `ch` takes a banked message; on a bounded channel, a read that leaves
    /// it at most `wake_at` full wakes every blocked writer (they retry their write).
    fn take_token(&mut self, c: TaskId, ch: usize, cpu: usize) {
        let chan = &mut self.chans[ch];
        chan.tokens -= 1;
        self.tasks[c].msg_stamp = chan.stamps.pop_front().unwrap_or(self.now);
        if !chan.writers.is_empty() && chan.tokens <= chan.wake_at {
            let writers = std::mem::take(&mut self.chans[ch].writers);
            for w in writers {
                self.try_to_wake_up(w, cpu, Some(c), true);
            }
        }
    }

    /// The task's view of the clock: now plus the kernel time it still has to run
    /// before its next user instruction.
    #[inline]
    fn task_clock(&self, c: TaskId) -> Ns {
        self.now + self.tasks[c].overhead_ns
    }

    /// The lock word of mutex `l` moves to this CPU (the atomic on it).
    fn touch_lock_word(&mut self, c: TaskId, cpu: usize, l: usize) {
        let last = std::mem::replace(&mut self.locks[l].last_cpu, Some(cpu));
        if let Some(from) = last.filter(|&f| f != cpu) {
            let ns = self.m.cost.cacheline.at(self.m.distance(cpu, from)) as Ns;
            self.tasks[c].overhead_ns += ns;
        }
    }

    /// The timer enqueue micro-benchmark: `reps` times mod_timer() of one non-pinned
    /// timer `delay` ahead, then timer_delete(), in kernel context on `cpu`. The time
    /// each pair takes is recorded.
    fn timer_bench(&mut self, c: TaskId, cpu: usize, reps: u64, delay: Ns) {
        let timers = &mut self.timers;
        let t = self.task_timers.get_or_insert_with(c, usize::MAX, || timers.setup(TimerFn::Bench, TimerFlags::default(), cpu));
        let jiffies = delay.div_ceil(self.tick_ns).max(1);
        let mut total = 0;
        for _ in 0..reps {
            let ns = self.mod_timer(cpu, t, jiffies) + self.del_timer(cpu, t);
            self.timer_bench_ns.record(ns);
            total += ns;
        }
        self.tasks[c].overhead_ns += total;
        self.tasks[c].stats.sys_ns += total;
    }

    fn do_fork(&mut self, parent: TaskId, cpu: usize, template: usize) {
        let tpl = self.templates[template].clone();
        let n = self.tasks[parent].live_children;
        let mask = tpl.affinity.map_or(self.m.all_cpus(), |a| a.and(&self.m.all_cpus()));
        let mask = if mask.is_empty() { self.m.all_cpus() } else { mask };
        let child = self.create_task(format!("{}-{n}", tpl.name), tpl.program, tpl.nice, mask, tpl.group, tpl.process.as_deref(), tpl.footprint, Some(parent));
        if let Some(slack) = tpl.timer_slack_ns {
            self.tasks[child].timer_slack_ns = slack;
        }
        self.tasks[child].cpu = if mask.test(cpu) { cpu } else { mask.first().unwrap_or(cpu) };
        self.tasks[parent].live_children += 1;
        self.tasks[parent].overhead_ns += self.m.cost.fork_ns as u64;
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
        self.trace_event(cpu, crate::trace::TraceEvent::Exit { pid: c + 1 });
        self.mm_exit(c, cpu);
        self.hrtimer_cancel_task(c);
        if let Some(t) = self.tasks[c].wheel_timer {
            self.timers.del_timer(t);
        }
        self.dequeue_task_fair(cpu, c, false);
        let t = &mut self.tasks[c];
        t.state = TaskState::Exited;
        t.stats.exit_ns = Some(self.now);
        self.live_tasks -= 1;
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
        self.irq_until[cpu] = self.irq_until[cpu].max(self.now) + owed;
    }
}
