//! The engine's side of timers: arming them where the kernel would, the interrupts
//! that expire them, and their callbacks.
//!
//! Mirrors: kernel/time/hrtimer.c hrtimer_start_range_ns() → switch_hrtimer_base()
//! (get_nohz_timer_target(), hrtimer_check_target()), hrtimer_interrupt();
//! kernel/time/timer.c __mod_timer() → get_target_base() → get_nohz_timer_target()
//! (the push model, before 6.9), trigger_dyntick_cpu() → wake_up_nohz_cpu(),
//! run_local_timers()/run_timer_softirq() with tmigr_handle_remote() (6.9+),
//! timer_expire_remote(); kernel/sched/core.c get_nohz_timer_target();
//! kernel/time/tick-sched.c tick_sched_do_timer(), tick_sched_handle().
//! Model: the tick of a busy CPU and every hrtimer expiry is an interrupt: its entry
//! and exit are kernel time of the running task; on an idle CPU the interrupt first
//! waits out the idle state's exit latency, then the handler runs (a TimerIrq event)
//! unless it has nothing to do, in which case the CPU simply picks an idle state
//! again. Callbacks run on the CPU that expires the timer: the CPU it was queued on,
//! or in the pull model the migrator that pulled it.

use crate::state::events::{EventClass, EventKind};
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;
use crate::timers::{BaseKind, HrtimerFn, HrtimerKey, TimerFlags, TimerFn, TimerId, TmigrCost, KTIME_MAX};
use crate::trace::TraceEvent;

impl Simulator {
    /// Tells whether `cpu` keeps the kernel's timer housekeeping (not nohz_full).
    #[inline]
    fn housekeeping_timer(&self, cpu: usize) -> bool {
        !self.tick.nohz_full.test(cpu)
    }

    /// get_nohz_timer_target(): this CPU if it is a busy housekeeping CPU, else the
    /// first busy housekeeping CPU found walking this CPU's sched domains bottom-up
    /// (each level's span in CPU order), else this CPU (or the nearest housekeeping
    /// one). Returns the target and the CPUs examined.
    pub(crate) fn get_nohz_timer_target(&self, cpu: usize) -> (usize, u32) {
        self.get_nohz_timer_target_from(cpu, false)
    }

    /// get_nohz_timer_target() with `in_idle`: the caller runs in an interrupt on an
    /// idle CPU (its rq->curr is the idle task, so idle_cpu() says idle).
    fn get_nohz_timer_target_from(&self, cpu: usize, in_idle: bool) -> (usize, u32) {
        let mut default = None;
        if self.housekeeping_timer(cpu) {
            if !in_idle && !self.rqs[cpu].is_idle() {
                return (cpu, 0);
            }
            default = Some(cpu);
        }
        let mut examined = 0;
        for sd in &self.m.domains[cpu] {
            for i in sd.span.iter() {
                if i == cpu || !self.housekeeping_timer(i) {
                    continue;
                }
                examined += 1;
                if !self.rqs[i].is_idle() {
                    return (i, examined);
                }
            }
        }
        let fallback = default.unwrap_or_else(|| {
            // housekeeping_any_cpu(): the closest housekeeping CPU.
            (0..self.m.nr_cpus()).filter(|&i| self.housekeeping_timer(i)).min_by_key(|&i| (self.m.distance(cpu, i), i)).unwrap_or(cpu)
        });
        (fallback, examined)
    }

    /// Cost of touching `cpu`'s timer base lock from `from`: a line transfer if another
    /// CPU wrote it last. Records `from` as its writer.
    fn base_lock_ns(&mut self, from: usize, cpu: usize) -> f64 {
        let last = std::mem::replace(&mut self.timer_base_writer[cpu], from);
        if last == from {
            0.0
        } else {
            self.line_latency(from, last)
        }
    }

    /// Arms a task's sleep as an hrtimer (nanosleep): soft expiry `soft`, hard expiry
    /// `soft + timer_slack`, on the CPU switch_hrtimer_base() picks.
    pub(crate) fn hrtimer_sleep(&mut self, c: TaskId, cpu: usize, soft: Ns, slack: Ns) {
        let mut target = cpu;
        if self.timers.migration {
            // HRTIMER_MODE_REL is not pinned: the push heuristic applies in every era,
            // but never moves a timer to a remote CPU where it would expire first
            // (hrtimer_check_target(): a remote clock event cannot be reprogrammed).
            let (t, examined) = self.get_nohz_timer_target(cpu);
            self.tasks[c].overhead_ns += self.path_ns(cpu, examined as f64 * cost!(self, kernel.nohz_target_per_cpu_ns));
            if t != cpu && soft.saturating_add(slack) >= self.timers.next_hrtimer(t) {
                target = t;
            }
        }
        let key = self.timers.hr.start(target, soft, slack, HrtimerFn::WakeTask(c));
        self.tasks[c].hrtimer = Some(key);
        self.tasks[c].timer_due = Some(soft);
        self.push_hrtimer_event(key);
    }

    pub(crate) fn push_hrtimer_event(&mut self, key: HrtimerKey) {
        self.q.push(key.hard, EventClass::Timer, EventKind::Hrtimer { cpu: key.cpu as u32, seq: key.seq });
    }

    /// A sleeping task woken early (a signal, not modeled) or exiting drops its timer.
    pub(crate) fn hrtimer_cancel_task(&mut self, c: TaskId) {
        if let Some(key) = self.tasks[c].hrtimer.take() {
            self.timers.hr.cancel(key);
        }
    }

    /// The Hrtimer event: the hard expiry of a queued hrtimer interrupts its CPU.
    pub(crate) fn hrtimer_event(&mut self, cpu: usize, seq: u64) {
        let hard = self.now;
        if !self.timers.hr.is_queued(HrtimerKey { cpu, hard, seq }) {
            // Expired early by another interrupt (slack), or cancelled.
            self.count_stale(crate::state::events::EventKind::Hrtimer { cpu: cpu as u32, seq }, crate::state::events::EventCount::HrtimerStale);
            return;
        }
        self.timer_interrupt(cpu, false);
    }

    /// A timer interrupt (the tick, or an hrtimer's hard expiry) reaches `cpu` now.
    pub(crate) fn timer_interrupt(&mut self, cpu: usize, by_tick: bool) {
        let (entry, exit) = (cost!(self, kernel.irq_entry_ns), cost!(self, kernel.irq_exit_ns));
        if self.rqs[cpu].curr.is_some() {
            let ns = self.path_ns(cpu, entry + exit);
            self.charge_kernel(cpu, ns);
            self.run_timer_work(cpu, by_tick);
            return;
        }
        let start = self.idle_irq_arrive(cpu, self.now, by_tick) + self.path_ns(cpu, entry);
        if start > self.now && self.timer_work_due(cpu, start, by_tick) {
            self.q.push(start, EventClass::Timer, EventKind::TimerIrq { cpu: cpu as u32, tick: by_tick });
            return;
        }
        if start == self.now {
            self.rqs[cpu].irq_until = self.now;
            self.run_timer_work(cpu, by_tick);
        } else if by_tick {
            self.stats.counters.idle_ticks_empty += 1;
        }
        self.irq_return_to_idle(cpu, start);
    }

    /// The TimerIrq event: the handler of an interrupt that woke an idle CPU runs.
    pub(crate) fn timer_irq_handler(&mut self, cpu: usize, by_tick: bool) {
        self.rqs[cpu].irq_until = self.rqs[cpu].irq_until.max(self.now);
        self.run_timer_work(cpu, by_tick);
        if self.rqs[cpu].curr.is_none() {
            self.irq_return_to_idle(cpu, self.now);
        }
    }

    /// Interrupt exit on an idle CPU: unless the handler woke a task for this CPU, the
    /// idle loop picks a state again.
    fn irq_return_to_idle(&mut self, cpu: usize, handler_start: Ns) {
        let done = self.rqs[cpu].irq_until.max(handler_start) + self.path_ns(cpu, cost!(self, kernel.irq_exit_ns));
        self.rqs[cpu].irq_until = done;
        if !self.rqs[cpu].resched_pending && self.rqs[cpu].curr.is_none() {
            self.do_idle(cpu, done);
        }
    }

    /// Whether an interrupt at `at` would have anything to do on idle `cpu`.
    fn timer_work_due(&self, cpu: usize, at: Ns, by_tick: bool) -> bool {
        let j = self.jiffies_at(at);
        let tm = &self.timers;
        let hr_due = self.timers.hr.first_soft_due(cpu, at);
        let wheel_due = [BaseKind::Local, BaseKind::Global, BaseKind::Def].iter().any(|&b| tm.next_expiry(cpu, b) <= j);
        let remote = tm.tmigr.as_ref().is_some_and(|t| t.requires_handle_remote(cpu, self.jiffy_time(j)));
        let balance = by_tick && at >= self.rqs[cpu].next_balance;
        hr_due || wheel_due || remote || balance
    }

    /// What a timer interrupt does on `cpu` (tick_sched_handle / hrtimer_interrupt):
    /// the do_timer duty, due hrtimers, the timer softirq with remote expiry, and on an
    /// idle CPU whose tick runs, its periodic balance.
    fn run_timer_work(&mut self, cpu: usize, by_tick: bool) {
        if by_tick && self.tick.do_timer_cpu.is_none() {
            self.tick.do_timer_cpu = Some(cpu); // tick_sched_do_timer(): take the duty
        }
        let mut due = std::mem::take(&mut self.scratch_hr);
        self.timers.hr.run(cpu, self.now, &mut due);
        for f in due.drain(..) {
            let ns = self.path_ns(cpu, cost!(self, kernel.hrtimer_cancel_ns));
            self.charge_kernel(cpu, ns);
            match f {
                HrtimerFn::WakeTask(p) => {
                    self.tasks[p].hrtimer = None;
                    self.stats.counters.hrtimer_expiries += 1;
                    self.try_to_wake_up(p, cpu, None, false);
                }
                HrtimerFn::Watchdog => {
                    self.check_deadlock();
                    self.stats.counters.hrtimer_expiries += 1;
                    // stop_one_cpu_nowait(softlockup_fn): the CPU's stopper runs it, where
                    // the kernel's background is modeled; otherwise its work is folded
                    // into the expiry's cost.
                    if let Some(&Some(stopper)) = self.tick.stoppers.get(cpu) {
                        self.try_to_wake_up(stopper, cpu, None, false);
                    }
                    self.arm_watchdog(cpu, self.now + self.tick.watchdog_period);
                }
                HrtimerFn::RtPeriod => {
                    self.stats.counters.hrtimer_expiries += 1;
                    self.rt_period_timer(cpu);
                }
                HrtimerFn::DlTask(p) => {
                    self.stats.counters.hrtimer_expiries += 1;
                    self.dl_task_timer(p);
                }
                HrtimerFn::DlInactive(p) => {
                    self.stats.counters.hrtimer_expiries += 1;
                    self.inactive_task_timer(p);
                }
                HrtimerFn::DlServer => {
                    self.stats.counters.hrtimer_expiries += 1;
                    self.dl_server_timer(cpu);
                }
                HrtimerFn::ScxTimer => {
                    self.stats.counters.hrtimer_expiries += 1;
                    self.scx_timer_fire(cpu);
                }
                HrtimerFn::ScxWatchdog => {
                    self.stats.counters.hrtimer_expiries += 1;
                    self.scx_watchdog(cpu);
                }
            }
        }
        self.scratch_hr = due;
        self.run_local_timers(cpu);
        if by_tick && self.rqs[cpu].curr.is_none() && self.now >= self.rqs[cpu].next_balance {
            self.idle_tick_balance(cpu);
        }
    }

    /// run_local_timers() and the TIMER_SOFTIRQ it raises: expire this CPU's due
    /// wheel timers (every base), then, in the pull model, the due global timers of
    /// idle CPUs this CPU is migrator for.
    fn run_local_timers(&mut self, cpu: usize) {
        let j = self.jiffies_at(self.now);
        let tm = &self.timers;
        let due = [BaseKind::Local, BaseKind::Global, BaseKind::Def].iter().any(|&b| tm.next_expiry(cpu, b) <= j);
        let remote = tm.tmigr.as_ref().is_some_and(|t| t.requires_handle_remote(cpu, self.jiffy_time(j)));
        if !due && !remote {
            return;
        }
        if due {
            self.expire_timers(cpu, cpu, j, &[BaseKind::Local, BaseKind::Global, BaseKind::Def]);
        }
        if remote {
            self.tmigr_handle_remote(cpu);
        }
    }

    /// Runs on `cpu` the due timers of `owner`'s bases (`owner != cpu`: a remote expiry).
    fn expire_timers(&mut self, cpu: usize, owner: usize, jiffies: u64, bases: &[BaseKind]) {
        let mut expired = std::mem::take(&mut self.scratch_timers);
        for &b in bases {
            let lock = self.base_lock_ns(cpu, owner);
            self.charge_kernel(cpu, lock as Ns);
            self.timers.run_base(owner, b, jiffies, &mut expired);
        }
        for t in expired.drain(..) {
            let mut ns = self.path_ns(cpu, cost!(self, kernel.timer_expire_ns));
            if owner != cpu {
                // The callback's data was last written on the timer's own CPU.
                ns += self.line_latency(cpu, owner) as Ns;
                self.stats.counters.timer_remote_expiries += 1;
            }
            self.stats.counters.timer_expiries += 1;
            self.charge_kernel(cpu, ns);
            self.trace_event(cpu, TraceEvent::TimerExpire { timer: t, owner_cpu: owner });
            self.timer_callback(cpu, t);
        }
        self.scratch_timers = expired;
    }

    /// tmigr_handle_remote() on `cpu`: the hierarchy walk pulls each due idle CPU's
    /// global timers here (their callbacks run right after the walk, on this CPU).
    fn tmigr_handle_remote(&mut self, cpu: usize) {
        let j = self.jiffies_at(self.now);
        let (tick, off) = (self.tick.period_ns, self.tick.offset);
        let to_time = |jj: u64| {
            if jj == u64::MAX {
                KTIME_MAX
            } else if jj == 0 {
                0
            } else {
                off + (jj - 1) * tick
            }
        };
        let now = to_time(j);
        let mut tm = self.timers.tmigr.take().expect("pull model with migration");
        let mut cost = TmigrCost::default();
        let mut pulled: Vec<(usize, TimerId)> = Vec::new();
        let timers = &mut self.timers;
        let mut buf = Vec::new();
        tm.handle_remote(cpu, now, &mut cost, |remote| {
            // timer_expire_remote(): the remote CPU's due global timers, then its next one.
            timers.run_base(remote, BaseKind::Global, j, &mut buf);
            pulled.extend(buf.drain(..).map(|t| (remote, t)));
            to_time(timers.next_expiry(remote, BaseKind::Global))
        });
        self.timers.tmigr = Some(tm);
        self.charge_tmigr(cpu, &cost);
        for (owner, t) in pulled {
            let lock = self.base_lock_ns(cpu, owner);
            let ns = self.path_ns(cpu, cost!(self, kernel.timer_expire_ns)) + lock as Ns + self.line_latency(cpu, owner) as Ns;
            self.charge_kernel(cpu, ns);
            self.stats.counters.timer_expiries += 1;
            self.stats.counters.timer_remote_expiries += 1;
            self.trace_event(cpu, TraceEvent::TimerExpire { timer: t, owner_cpu: owner });
            self.timer_callback(cpu, t);
        }
    }

    /// What an expired wheel timer does, on the CPU that expires it.
    fn timer_callback(&mut self, cpu: usize, t: TimerId) {
        match self.timers.list[t].func {
            TimerFn::ProcessTimeout(p) => {
                self.tasks[p].wheel_timer_fired = true;
                if let Some(ch) = self.tasks[p].waiting_on.take() {
                    // wait_event_timeout() timed out: off the wait queue, and the task's
                    // loop waits again.
                    self.ipc.chans[ch].waiters.retain(|&w| w != p);
                    self.tasks[p].pc -= 1;
                    self.stats.counters.wait_timeouts += 1;
                }
                self.try_to_wake_up(p, cpu, None, false);
            }
            TimerFn::Signal(ch) => self.signal_channel(ch, cpu, None),
            TimerFn::Bench | TimerFn::Callback => {}
            TimerFn::Rearm { period, work_ns } => {
                self.check_deadlock();
                let ns = self.path_ns(cpu, work_ns as f64);
                self.charge_kernel(cpu, ns);
                // The callback re-arms from here: the push model moves it off an idle CPU.
                let ns = if self.timers.list[t].flags.pinned && self.timers.list[t].cpu != cpu {
                    let home = self.timers.list[t].cpu;
                    self.add_timer_on(cpu, t, home, period)
                } else {
                    self.mod_timer_from(cpu, t, period, self.rqs[cpu].curr.is_none())
                };
                self.charge_kernel(cpu, ns);
            }
        }
    }

    /// __mod_timer() from task context on `cpu` (the CPU is busy running the caller).
    pub(crate) fn mod_timer(&mut self, cpu: usize, t: TimerId, delay_jiffies: u64) -> Ns {
        self.mod_timer_from(cpu, t, delay_jiffies, false)
    }

    /// __mod_timer() from `cpu`: re-arms timer `t` to expire in `delay` jiffies. The
    /// push model moves a non-pinned timer to get_nohz_timer_target()'s CPU (`in_idle`:
    /// called from an interrupt on an idle CPU, which idle_cpu() sees as idle); the pull
    /// model keeps it here. Returns the kernel time it took on `cpu`.
    pub(crate) fn mod_timer_from(&mut self, cpu: usize, t: TimerId, delay_jiffies: u64, in_idle: bool) -> Ns {
        let j = self.jiffies_at(self.now);
        let expires = j + delay_jiffies;
        let (path, per_cpu, switch) =
            (cost!(self, kernel.mod_timer_ns), cost!(self, kernel.nohz_target_per_cpu_ns), cost!(self, kernel.timer_base_switch_ns));
        let home = self.timers.list[t].cpu;
        let mut ns = self.path_ns(cpu, path) as f64 + self.base_lock_ns(cpu, home);
        if self.timers.try_same_bucket(t, expires, j).is_some() {
            self.stats.counters.timer_same_bucket += 1;
            return ns as Ns;
        }
        let flags = self.timers.list[t].flags;
        let target = if flags.pinned || self.timers.pull || !self.timers.migration {
            cpu
        } else {
            let (target, examined) = self.get_nohz_timer_target_from(cpu, in_idle);
            ns += self.path_ns(cpu, examined as f64 * per_cpu) as f64;
            target
        };
        if target != home {
            ns += self.path_ns(cpu, switch) as f64 + self.base_lock_ns(cpu, target);
        }
        let e = self.timers.enqueue_on(t, expires, j, target);
        self.stats.counters.timers_armed += 1;
        if target != cpu {
            self.stats.counters.timers_pushed += 1;
        }
        // trigger_dyntick_cpu(): a new first timer on an idle base must wake its CPU
        // (deferrable ones never do).
        if e.new_first && e.base_idle && !flags.deferrable && target != cpu {
            self.wake_up_nohz_cpu(cpu, target);
        }
        ns as Ns
    }

    /// Every live task is blocked on a channel, lock or children with no timer left that
    /// could wake it: only background timers keep the event queue going, so the run has
    /// ended (with no background timers the queue simply empties). Checked from those
    /// timers' callbacks, at most once per simulated second.
    fn check_deadlock(&mut self) {
        if self.now >= self.next_deadlock_check {
            self.next_deadlock_check = self.now + crate::time::NSEC_PER_SEC;
            self.deadlock = self.deadlocked();
        }
    }

    fn deadlocked(&self) -> bool {
        // Newest first: a run that forks many short-lived tasks (make) keeps its live
        // ones at the end, behind thousands that have exited.
        // The machine's background tasks wait on timers of their own forever: neither
        // they nor their timers can end a workload's deadlock.
        let wakes_workload = |f: &TimerFn| match *f {
            TimerFn::ProcessTimeout(p) => !self.tasks[p].daemon,
            // delayed work that only a background kworker waits for
            TimerFn::Signal(ch) => {
                let waiters = &self.ipc.chans[ch].waiters;
                waiters.is_empty() || waiters.iter().any(|&w| !self.tasks[w].daemon)
            }
            _ => false,
        };
        self.live_tasks > 0
            && self.tasks.iter().rev().all(|t| t.daemon || matches!(t.state, TaskState::Blocked | TaskState::Exited))
            && !self.timers.list.iter().any(|t| t.slot.is_some() && wakes_workload(&t.func))
    }

    /// Starts the soft-lockup watchdog's hrtimer on every housekeeping CPU
    /// (watchdog_enable(): one sample period after the CPU came up; the CPUs' phases
    /// are drawn, as boot spreads them).
    pub(crate) fn start_watchdogs(&mut self) {
        if self.tick.watchdog_period == 0 {
            return;
        }
        let mut rng = crate::rng::Stream::new(self.seed, "watchdog");
        for cpu in 0..self.m.nr_cpus() {
            if self.tick.nohz_full.test(cpu) {
                continue; // watchdog_cpumask defaults to the housekeeping CPUs
            }
            let first = self.now + 1 + rng.below(self.tick.watchdog_period);
            self.arm_watchdog(cpu, first);
        }
    }

    /// The last `n` tasks are the machine's background: marked as daemons (not counted
    /// among the live tasks), and each CPU's stopper found among them.
    pub(crate) fn background_created(&mut self, n: usize) {
        let first = self.tasks.len() - n;
        for t in &mut self.tasks[first..] {
            t.daemon = true;
        }
        self.live_tasks -= n;
        let mut stoppers = vec![None; self.m.nr_cpus()];
        for (cpu, slot) in stoppers.iter_mut().enumerate() {
            let name = crate::workload::background::stopper_name(cpu);
            *slot = (first..self.tasks.len()).find(|&t| self.tasks[t].stats.name == name);
        }
        self.tick.stoppers = stoppers;
    }

    /// The watchdog's hrtimer: pinned to `cpu`, no slack (HRTIMER_MODE_REL_PINNED_HARD).
    fn arm_watchdog(&mut self, cpu: usize, at: Ns) {
        let key = self.timers.hr.start(cpu, at, 0, HrtimerFn::Watchdog);
        self.push_hrtimer_event(key);
    }

    /// Arms the scenario's background kernel timers, each at a random phase within its
    /// first period.
    pub(crate) fn arm_kernel_timers(&mut self, specs: &[crate::scenario::KernelTimerSpec]) {
        let mut rng = crate::rng::Stream::new(self.seed, "kernel_timers");
        for spec in specs {
            let period = spec.period.0.div_ceil(self.tick.period_ns).max(1);
            let func = TimerFn::Rearm { period, work_ns: spec.work.0 };
            let cpus: Vec<usize> = if spec.per_cpu { (0..self.m.nr_cpus()).collect() } else { vec![0] };
            for cpu in cpus {
                let flags = TimerFlags { pinned: spec.pinned, deferrable: spec.deferrable };
                let t = self.timer_setup(func, flags, cpu);
                let first = 1 + rng.below(period);
                self.add_timer_on(cpu, t, cpu, first);
            }
        }
    }

    /// add_timer_on(): arms pinned timer `t` on `target` from `cpu`.
    pub(crate) fn add_timer_on(&mut self, cpu: usize, t: TimerId, target: usize, delay_jiffies: u64) -> Ns {
        let j = self.jiffies_at(self.now);
        let home = self.timers.list[t].cpu;
        let mut ns = self.path_ns(cpu, cost!(self, kernel.mod_timer_ns)) as f64 + self.base_lock_ns(cpu, home);
        if target != home {
            ns += self.base_lock_ns(cpu, target);
        }
        let e = self.timers.enqueue_on(t, j + delay_jiffies, j, target);
        self.stats.counters.timers_armed += 1;
        if e.new_first && e.base_idle && !self.timers.list[t].flags.deferrable && target != cpu {
            self.wake_up_nohz_cpu(cpu, target);
        }
        ns as Ns
    }

    /// timer_delete() from `cpu`. Returns the kernel time it took.
    pub(crate) fn del_timer(&mut self, cpu: usize, t: TimerId) -> Ns {
        let home = self.timers.list[t].cpu;
        let ns = self.path_ns(cpu, cost!(self, kernel.del_timer_ns)) as f64 + self.base_lock_ns(cpu, home);
        self.timers.del_timer(t);
        ns as Ns
    }

    /// Creates a timer owned by code running on `cpu`.
    pub(crate) fn timer_setup(&mut self, func: TimerFn, flags: TimerFlags, cpu: usize) -> TimerId {
        self.timers.setup(func, flags, cpu)
    }

    /// wake_up_nohz_cpu() → wake_up_idle_cpu(): make a CPU whose base is marked idle
    /// re-evaluate its next event. An MWAIT-polling idle CPU notices its flag without
    /// an IPI; any other gets one, even a CPU busy with a task (before 6.9 a base stays
    /// marked idle when the tick was not stopped after all: a spurious IPI).
    fn wake_up_nohz_cpu(&mut self, from: usize, target: usize) {
        if self.rqs[target].resched_pending {
            return;
        }
        let d = self.m.distance(from, target);
        let (entry, exit) = (cost!(self, kernel.irq_entry_ns), cost!(self, kernel.irq_exit_ns));
        if self.rqs[target].curr.is_some() {
            self.send_ipi(from, target);
            self.stats.counters.timer_ipis += 1;
            let ns = self.path_ns(target, entry + exit);
            self.charge_kernel(target, ns);
            return;
        }
        let polling = self.polling_idle(target, self.now);
        let arrive = if polling {
            self.stats.counters.wake_idle_without_ipi += 1;
            self.now + self.line_at(d) as Ns
        } else {
            self.send_ipi(from, target);
            self.stats.counters.timer_ipis += 1;
            self.now + self.ipi_latency_ns(d) as Ns
        };
        let start = self.idle_irq_arrive(target, arrive, false) + if polling { 0 } else { self.path_ns(target, entry) };
        self.rqs[target].irq_until = self.rqs[target].irq_until.max(start);
        self.irq_return_to_idle(target, start);
    }

    /// Whether idle `cpu` sits in a state that watches its flags (x86 POLL/MWAIT) at `at`.
    pub(crate) fn polling_idle(&self, cpu: usize, at: Ns) -> bool {
        let dev = &self.rqs[cpu].idle;
        dev.state_at(at).is_some_and(|s| self.m.idle_drivers[dev.driver].states[s].watches_flags)
    }

    /// A task blocks in schedule_timeout(`delay`): a non-pinned wheel timer whose
    /// process_timeout() wakes it.
    pub(crate) fn schedule_timeout(&mut self, c: TaskId, cpu: usize, delay: Ns) -> Ns {
        let t = match self.tasks[c].wheel_timer {
            Some(t) => t,
            None => {
                let t = self.timer_setup(TimerFn::ProcessTimeout(c), TimerFlags::default(), cpu);
                self.tasks[c].wheel_timer = Some(t);
                t
            }
        };
        // msecs_to_jiffies() rounds up.
        let jiffies = delay.div_ceil(self.tick.period_ns).max(1);
        self.tasks[c].wheel_timer_fired = false;
        self.tasks[c].timer_due = Some(self.now + delay);
        self.mod_timer(cpu, t, jiffies)
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::state::Simulator;
    use crate::timers::{TimerFlags, TimerFn};

    /// Two arm64 CPUs (no MWAIT: waking an idle CPU takes an IPI): a hog on CPU 0,
    /// CPU 1 idle from boot with its tick stopped.
    fn two_cpus(profile: &str) -> Simulator {
        let text = format!(
            "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 2, smt = 1, arch = \"arm64\" }}\n\
             [kernel]\nprofile = \"{profile}\"\n\
             [[tasks]]\nname = \"hog\"\naffinity = \"0\"\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
        );
        Simulator::new(&Scenario::from_toml_str(&text, "<test>").unwrap(), 1, false).unwrap()
    }

    /// Push model: a new first timer queued on an idle-marked base from another CPU
    /// wakes it with exactly one IPI; a later timer behind it sends none.
    #[test]
    fn push_model_new_first_timer_on_an_idle_base_sends_one_ipi() {
        let mut s = two_cpus("6.6");
        assert!(s.rqs[1].tick_stopped && s.timers.is_idle(1));
        let pinned = TimerFlags { pinned: true, ..Default::default() };
        let (a, b) = (s.timer_setup(TimerFn::Bench, pinned, 1), s.timer_setup(TimerFn::Bench, pinned, 1));
        let ipis = s.stats.counters.ipis;
        s.add_timer_on(0, a, 1, 10);
        assert_eq!(s.stats.counters.ipis - ipis, 1);
        assert!(s.timers.is_idle(1), "CPU 1 re-evaluated and went back to idle");
        s.add_timer_on(0, b, 1, 50);
        assert_eq!(s.stats.counters.ipis - ipis, 1, "not a new first timer: no IPI");
    }

    /// Push model: a global timer re-armed from an interrupt on an idle CPU goes to the
    /// busy CPU get_nohz_timer_target() finds; the pull model keeps it local.
    #[test]
    fn an_idle_cpu_pushes_its_timer_to_a_busy_one_before_6_9_only() {
        for (profile, expect) in [("6.6", 0), ("6.9", 1)] {
            let mut s = two_cpus(profile);
            let t = s.timer_setup(TimerFn::Bench, TimerFlags::default(), 1);
            s.mod_timer_from(1, t, 10, true);
            assert_eq!(s.timers.list[t].cpu, expect, "{profile}");
            assert_eq!(s.stats.counters.timer_ipis, 0, "{profile}: the busy target's base is not idle");
        }
    }
}
