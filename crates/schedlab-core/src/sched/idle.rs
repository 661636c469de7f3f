//! The idle loop: NOHZ tick stop or retain, the idle state the governor picks, leaving
//! it on an interrupt, and the do_timer duty.
//!
//! Mirrors: kernel/sched/idle.c do_idle()/cpuidle_idle_call(); kernel/time/tick-sched.c
//! tick_nohz_idle_enter(), tick_nohz_get_sleep_length(), tick_nohz_next_event(),
//! tick_nohz_idle_stop_tick()/tick_nohz_stop_tick(), tick_nohz_idle_retain_tick(),
//! tick_nohz_idle_exit()/tick_nohz_restart_sched_tick(), tick_sched_do_timer();
//! kernel/time/timer.c get_next_timer_interrupt() (before 6.9: it marks the base idle
//! whenever the next timer is more than a tick away, even if the tick then keeps
//! running) and timer_base_try_to_set_idle() (6.9+: only when the tick is stopped,
//! together with tmigr_cpu_deactivate()).
//! Model: one pass of the idle loop runs whenever a CPU is left without a task or
//! returns from an interrupt with nothing to run. The governor sees the sleep length
//! the kernel would compute; the tick is stopped only if the next event is more than a
//! tick away and the governor agrees, otherwise it keeps firing in idle. An idle CPU
//! with a stopped tick has exactly one pending Tick event: its next timer event.
//! A wakeup pays the measured wake time of the state the CPU's *core* is really in
//! (`cpuidle::core_state`), never a declared bound; cores and packages power down (and
//! lose caches) only once every thread, and every core, sleeps deep.

use crate::cpuidle::core_state::{core_state, effective_state, power_down_at};
use crate::cpuidle::{IdlePhase, SelectInput};
use crate::state::events::{EventClass, EventKind};
use crate::state::idle::NextEvent;
use crate::state::Simulator;
use crate::time::Ns;
use crate::timers::{BaseKind, TmigrCost, KTIME_MAX};
use crate::trace::TraceEvent;
impl Simulator {
    /// Returns jiffies at time `t`: the number of ticks of the run's tick grid that
    /// have passed.
    #[inline]
    pub(crate) fn jiffies_at(&self, t: Ns) -> u64 {
        (t + self.tick.period_ns - self.tick.offset) / self.tick.period_ns
    }

    /// Returns the time at which jiffies becomes `j`.
    #[inline]
    pub(crate) fn jiffy_time(&self, j: u64) -> Ns {
        if j == 0 {
            0
        } else {
            self.tick.offset + (j - 1) * self.tick.period_ns
        }
    }

    /// The next tick of the grid strictly after `t`.
    #[inline]
    pub(crate) fn next_tick_after(&self, t: Ns) -> Ns {
        self.jiffy_time(self.jiffies_at(t) + 1)
    }

    /// get_next_timer_interrupt(): the first wheel event this CPU must wake for, as a
    /// time (KTIME_MAX if none).
    ///
    /// Before 6.9 (one STD base) it marks the base idle whenever that event is more
    /// than a tick away, on every call, so the mark stays even if the tick then keeps
    /// running. From 6.9 LOCAL timers count; a global timer is handed to the hierarchy
    /// (forecast by tmigr_quick_check(), or for real on the stop-tick path `stop_path`,
    /// which alone marks the bases idle), and the CPU wakes for it only as the last
    /// active CPU; with timer migration off the CPU handles its global timers itself.
    fn next_timer_interrupt(&mut self, cpu: usize, basej: u64, basem: Ns, stop_path: bool) -> Ns {
        let tick = self.tick.period_ns;
        let to_time = |j: u64| if j == u64::MAX { KTIME_MAX } else { basem + j.saturating_sub(basej) * tick };
        let tm = &self.timers;
        if !tm.pull {
            let nextevt = tm.next_expiry(cpu, BaseKind::Local);
            let expires = to_time(nextevt);
            self.timers.set_idle(cpu, expires.saturating_sub(basem) > tick);
            return expires;
        }
        let nl = tm.next_expiry(cpu, BaseKind::Local);
        let ng = tm.next_expiry(cpu, BaseKind::Global);
        let next = nl.min(ng);
        if next <= basej + 1 {
            return to_time(next); // due within a tick: no idle handling at all
        }
        let global = if ng < nl { to_time(ng) } else { KTIME_MAX };
        let mut local = to_time(nl);
        let already_idle = self.timers.is_idle(cpu);
        let next_tmigr = match &mut self.timers.tmigr {
            Some(tm) => {
                let mut cost = TmigrCost::default();
                let t = if already_idle {
                    tm.new_timer(cpu, global, &mut cost)
                } else if stop_path {
                    tm.deactivate(cpu, global, &mut cost)
                } else {
                    tm.quick_check(cpu, global)
                };
                self.charge_tmigr(cpu, &cost);
                t
            }
            None => global, // migration off: this CPU's global timers are its own
        };
        if next_tmigr < local {
            local = next_tmigr.max(basem);
        }
        if stop_path {
            self.timers.set_idle(cpu, true);
        }
        local
    }

    /// tick_nohz_next_event(): when the tick could stop until, if at all.
    pub(crate) fn tick_nohz_next_event(&mut self, cpu: usize, at: Ns) -> NextEvent {
        let basej = self.jiffies_at(at);
        let basem = self.jiffy_time(basej);
        let next_tmr = self.next_timer_interrupt(cpu, basej, basem, false);
        if next_tmr.saturating_sub(basem) <= self.tick.period_ns {
            if !self.timers.pull {
                self.timers.set_idle(cpu, false); // timer_clear_idle(): undo the mark
            }
            if !self.rqs[cpu].tick_stopped {
                return NextEvent { expires: None, basemono: basem };
            }
        }
        NextEvent { expires: Some(next_tmr), basemono: basem }
    }

    /// One pass of the idle loop on `cpu`, starting at `at` (>= now: the end of the
    /// interrupt handler or switch that led here): pick a state, stop or keep the tick,
    /// enter the state.
    pub(crate) fn do_idle(&mut self, cpu: usize, at: Ns) {
        debug_assert!(self.rqs[cpu].curr.is_none());
        let at = at.max(self.now);
        // tick_nohz_get_sleep_length(): the next timer event, hrtimers included.
        let next = self.tick_nohz_next_event(cpu, at);
        let tick_stopped = self.rqs[cpu].tick_stopped;
        let next_tick = if tick_stopped { self.rqs[cpu].next_tick } else { self.next_tick_after(at) };
        let delta_tick = next_tick.saturating_sub(at);
        let hr = self.timers.next_hrtimer(cpu);
        let sleep_length = match next.expires {
            Some(e) => e.min(hr).saturating_sub(at),
            None => delta_tick,
        };
        let drv_index = self.rqs[cpu].idle.driver;
        let input = SelectInput {
            sleep_length_ns: sleep_length,
            delta_tick_ns: delta_tick,
            tick_stopped,
            tick_nsec: self.tick.period_ns,
            latency_req_ns: self.k.tunables.cpuidle_latency_req_ns.unwrap_or(Ns::MAX),
            max_state: self.k.tunables.cpuidle_max_state.unwrap_or(usize::MAX),
            now: at,
            utilized: self.cpu_util(cpu) > self.capacity(cpu) >> 6,
        };
        let sel = self.rqs[cpu].idle.select(&self.m.idle_drivers[drv_index], &input);
        if sel.stop_tick || tick_stopped {
            self.tick_nohz_idle_stop_tick(cpu, at, next);
        }
        let entered = at + self.path_ns(cpu, cost!(self, kernel.idle_entry_ns));
        self.rqs[cpu].idle.enter(sel.state, entered);
        self.trace_event(cpu, TraceEvent::CpuIdle { state: Some(sel.state as u32) });
        self.core_idle_entered(cpu);
        if !self.rqs[cpu].tick_stopped && !self.rqs[cpu].tick_armed {
            self.arm_tick(cpu); // the tick keeps running in idle
        }
    }

    /// tick_nohz_idle_stop_tick(): stop the tick until the next event (the tick keeps
    /// running if one is due within a tick).
    fn tick_nohz_idle_stop_tick(&mut self, cpu: usize, at: Ns, next: NextEvent) {
        let Some(forecast) = next.expires else { return };
        let basej = self.jiffies_at(at);
        let mut expires = forecast;
        if self.timers.pull {
            // timer_base_try_to_set_idle(): the mark and the hierarchy update happen only now.
            let e = self.next_timer_interrupt(cpu, basej, next.basemono, true);
            if !self.timers.is_idle(cpu) {
                return; // the base did not go idle: keep the tick
            }
            expires = e.min(forecast);
        }
        // The do_timer duty goes to whoever ticks next.
        if self.tick.do_timer_cpu == Some(cpu) {
            self.tick.do_timer_cpu = None;
            self.rqs[cpu].do_timer_last = true;
        } else if self.tick.do_timer_cpu.is_some() {
            self.rqs[cpu].do_timer_last = false;
        }
        let rq = &mut self.rqs[cpu];
        if rq.tick_stopped && rq.next_tick == expires {
            return;
        }
        if !rq.tick_stopped {
            rq.tick_stopped = true;
            self.tick.nohz_idle_cpus += 1;
        }
        rq.next_tick = expires;
        // Program the tick hrtimer for the next event, or cancel it.
        let rq = &mut self.rqs[cpu];
        rq.tick_gen = rq.tick_gen.wrapping_add(1);
        rq.tick_armed = expires != KTIME_MAX;
        if expires != KTIME_MAX {
            let gen = rq.tick_gen;
            let due = expires.max(at) + self.tick_delivery_delay(cpu, expires);
            self.q.push(due, EventClass::Tick, EventKind::Tick { cpu: cpu as u32, gen });
        }
    }

    /// tick_nohz_idle_exit(): the CPU leaves the idle loop to run a task; a stopped
    /// tick restarts on the grid and the timer bases and hierarchy see it active.
    pub(crate) fn tick_nohz_idle_exit(&mut self, cpu: usize) {
        if let IdlePhase::In { .. } = self.rqs[cpu].idle.phase {
            // Picked without an interrupt (e.g. a task queued while polling): leave now.
            self.cpuidle_exit(cpu, self.now, false);
        }
        if !self.rqs[cpu].tick_stopped {
            return;
        }
        let rq = &mut self.rqs[cpu];
        rq.tick_stopped = false;
        self.tick.nohz_idle_cpus -= 1;
        // timer_clear_idle(), and in the pull model tmigr_cpu_activate().
        self.timers.set_idle(cpu, false);
        if let Some(tm) = &mut self.timers.tmigr {
            let mut cost = TmigrCost::default();
            tm.activate(cpu, &mut cost);
            self.charge_tmigr(cpu, &cost);
        }
        let rq = &mut self.rqs[cpu];
        rq.tick_gen = rq.tick_gen.wrapping_add(1);
        rq.tick_armed = false; // arm_segment() rearms it on the grid
        if self.tick.do_timer_cpu.is_none() {
            self.tick.do_timer_cpu = Some(cpu);
        }
    }

    /// An interrupt reaches idle `cpu` at `arrive` (>= now): it leaves its idle state.
    /// Returns when the CPU starts running the handler (after the state's wake time,
    /// or once the handler it is still in ends).
    pub(crate) fn idle_irq_arrive(&mut self, cpu: usize, arrive: Ns, by_tick: bool) -> Ns {
        let was_in = self.rqs[cpu].idle.requested_at(arrive).is_some();
        let wait = self.cpuidle_exit(cpu, arrive, by_tick);
        if was_in {
            self.trace_event(cpu, TraceEvent::CpuIdle { state: None });
        }
        arrive + wait
    }

    /// Leaves `cpu`'s idle state at `wake`: pays the hardware's wake time and tells the
    /// core (and package) rules that a thread is awake. Returns the time to wait.
    fn cpuidle_exit(&mut self, cpu: usize, wake: Ns, by_tick: bool) -> Ns {
        let Some((state, entered)) = self.rqs[cpu].idle.requested_at(wake) else {
            let drv = self.rqs[cpu].idle.driver;
            return self.rqs[cpu].idle.exit(&self.m.idle_drivers[drv], wake, 0, by_tick);
        };
        let wake_ns = self.hw_wake_ns(cpu, state, wake) + self.guest_halt_extra_ns(cpu, state, entered, wake);
        let drv = self.rqs[cpu].idle.driver;
        let wait = self.rqs[cpu].idle.exit(&self.m.idle_drivers[drv], wake, wake_ns, by_tick);
        self.core_woken(cpu, wake);
        wait
    }

    /// The time the hardware takes to resume `cpu`, idle in requested state `own`, woken
    /// at `at`: the measured wake of the state its core is really in, and, on kernels
    /// before 6.0, the dummy read of the ACPI PM timer after an I/O-port entry (queued
    /// behind other CPUs' reads of the same port; the governor sees it as residency).
    fn hw_wake_ns(&mut self, cpu: usize, own: usize, at: Ns) -> Ns {
        let drv = &self.m.idle_drivers[self.rqs[cpu].idle.driver];
        let core = core_state(self.m.smt_siblings(cpu).iter().map(|&s| self.rqs[s].idle.phase), at);
        let state = effective_state(drv, own, core, at);
        let reads = &self.stats.idle_wake_reads[self.rqs[cpu].idle.driver];
        reads.set(reads.get() | 1 << state);
        let mut ns = drv.states[state].wake_ns;
        if drv.states[own].io_port_entry && self.feat.has(crate::features::Feature::ACPI_IDLE_DUMMY_WAIT) {
            let read = cost!(self, kernel.pm_timer_read_ns) as Ns;
            let start = (at + ns).max(self.idle_hw.pm_timer_free_at);
            self.idle_hw.pm_timer_free_at = start + read;
            ns = start + read - at;
        }
        ns
    }

    /// In a virtual machine, what the hypervisor adds to waking `cpu` at `at` from
    /// requested `state` (entered at `entered`) when it is a halt, not a polling state,
    /// by how long it has been halted; a stage with a spread is drawn from by a key of
    /// this wakeup alone, so no other random stream shifts.
    fn guest_halt_extra_ns(&self, cpu: usize, state: usize, entered: Ns, at: Ns) -> Ns {
        const GUEST_HALT_KEY: u64 = 0x6775_6573_745f_6861; // "guest_ha"
        const RESOLUTION: u64 = 1 << 32;
        let drv = &self.m.idle_drivers[self.rqs[cpu].idle.driver];
        let Some(ladder) = &drv.guest_halt else { return 0 };
        if drv.states[state].polling {
            return 0;
        }
        let u = crate::rng::keyed_below(self.seed, &[GUEST_HALT_KEY, cpu as u64, at], RESOLUTION) as f64 / RESOLUTION as f64;
        ladder.extra_wake_ns(at - entered, u)
    }

    /// `cpu` entered its idle state: if that leaves its whole core idle in a power-down
    /// state, the core powers down once any flush delay has run out (unless a thread
    /// wakes first), and with every core of its socket down, the package state follows.
    fn core_idle_entered(&mut self, cpu: usize) {
        let drv = &self.m.idle_drivers[self.rqs[cpu].idle.driver];
        // Evaluated once every thread is in (an entry may lie after a handler's end).
        let core = core_state(self.m.smt_siblings(cpu).iter().map(|&s| self.rqs[s].idle.phase), Ns::MAX);
        let Some(down) = power_down_at(drv, core) else { return };
        let package = drv.package.as_ref().map(|p| p.flushes_llc);
        let core_id = self.m.cpus[cpu].core;
        let hw = &mut self.idle_hw;
        if hw.core_down_at[core_id].replace(down).is_none() {
            hw.socket_down[hw.core_socket[core_id]] += 1;
        }
        if let Some(cache) = self.mm.cache_mut() {
            cache.core_power_down(cpu, down);
        }
        if cost!(self, cache.llc_flush_after_idle_us) > 0.0 {
            let llc_down = self.m.llc_span[self.m.cpus[cpu].llc].iter().all(|c| self.idle_hw.core_down_at[self.m.cpus[c].core].is_some());
            self.llc_idle_flush_what_if(cpu, down, llc_down);
        }
        let socket = self.idle_hw.core_socket[core_id];
        let Some(flushes_llc) = package else { return };
        if self.idle_hw.socket_down[socket] < self.idle_hw.socket_cores[socket] {
            return;
        }
        let hw = &mut self.idle_hw;
        let at = (0..hw.core_down_at.len()).filter(|&c| hw.core_socket[c] == socket).filter_map(|c| hw.core_down_at[c]).max().unwrap_or(down);
        hw.package_down_at[socket] = Some(at);
        if flushes_llc {
            if let Some(cache) = self.mm.cache_mut() {
                for llc in self.m.llcs_of_socket(socket) {
                    cache.llc_flush(llc, at);
                }
            }
        }
    }

    /// A thread of `cpu`'s core woke at `at`: the core (and its package) is awake; a
    /// power-down due later never happens.
    fn core_woken(&mut self, cpu: usize, at: Ns) {
        let core_id = self.m.cpus[cpu].core;
        let hw = &mut self.idle_hw;
        if hw.core_down_at[core_id].take().is_none() {
            return;
        }
        let socket = hw.core_socket[core_id];
        hw.socket_down[socket] -= 1;
        let package = hw.package_down_at[socket].take();
        if let Some(entered) = package {
            hw.package_left(socket, entered, at, self.measure.from);
        }
        if let Some(cache) = self.mm.cache_mut() {
            cache.core_woken(cpu, at);
            if package.is_some() {
                for llc in self.m.llcs_of_socket(socket) {
                    cache.llc_woken(llc, at);
                }
            }
        }
    }

    /// Whether `cpu`'s core is out of the coherency (DVM) domain at `at`: every thread
    /// idle in a state that leaves it, the flush delay run out.
    pub(crate) fn core_out_of_coherency(&self, cpu: usize, at: Ns) -> bool {
        let Some((own, _)) = self.rqs[cpu].idle.requested_at(at) else { return false };
        let drv = &self.m.idle_drivers[self.rqs[cpu].idle.driver];
        let core = core_state(self.m.smt_siblings(cpu).iter().map(|&s| self.rqs[s].idle.phase), at);
        drv.states[effective_state(drv, own, core, at)].leaves_coherency
    }

    /// The duration of a kernel path of `base_ns` (at capacity 1024) on `cpu`.
    #[inline]
    pub(crate) fn path_ns(&self, cpu: usize, base_ns: f64) -> Ns {
        (base_ns * 1024.0 / self.m.cpus[cpu].capacity as f64) as Ns
    }

    /// Charges a hierarchy walk to `cpu`: each level's path plus every group line last
    /// written by another CPU, at its distance.
    pub(crate) fn charge_tmigr(&mut self, cpu: usize, cost: &TmigrCost) {
        if cost.lines_from.is_empty() {
            return;
        }
        let per_level = cost!(self, kernel.tmigr_level_ns);
        let mut ns = self.path_ns(cpu, per_level * cost.lines_from.len() as f64) as f64;
        for &from in &cost.lines_from {
            if from != cpu {
                ns += self.line_latency(cpu, from);
            }
        }
        self.stats.counters.tmigr_walk_levels += cost.lines_from.len() as u64;
        self.charge_kernel(cpu, ns as Ns);
    }

    /// Charges kernel time spent on `cpu` outside any event of its own: to the running
    /// task (its work waits), or to the handler an idle CPU is in.
    pub(crate) fn charge_kernel(&mut self, cpu: usize, ns: Ns) {
        if ns == 0 {
            return;
        }
        match self.rqs[cpu].curr {
            Some(c) => {
                self.tasks[c].overhead_ns += ns;
                self.tasks[c].stats.sys_ns += ns;
            }
            None => {
                let until = self.rqs[cpu].irq_until.max(self.now);
                self.rqs[cpu].irq_until = until + ns;
            }
        }
    }
}
