//! The deadline class on the engine: SCHED_DEADLINE tasks (CBS accounting, throttling
//! and the replenishment timer, the EDF pick, GRUB reclaiming) and the fair deadline
//! server of 6.12.
//!
//! Mirrors: kernel/sched/deadline.c (read: the mounted torvalds/linux index at 0039189a
//! for enqueue_task_dl(), dequeue_task_dl(), pick_next_task_dl(), select_task_rq_dl(),
//! dl_task_timer(), update_curr_dl(); the fair server as 6.12 merged it, 63ba8422f876
//! "sched/deadline: Introduce deadline servers" and a110a81c52a9 "sched/deadline:
//! Deferrable dl server": dl_server_start() when fair work appears, the deferred start at
//! the zero-laxity time deadline - runtime, dl_server_update() charging fair time to the
//! server, a server whose runtime the fair class used up in the background starting a
//! new period, replenish_dl_entity() keeping a server that ran (dl_defer_running) running).
//! Model: one root domain; the pure rules (CBS, admission, GRUB) are `crate::rt::deadline`.
//! GRUB's active utilization as 6.18.35's deadline.c keeps it: a task that blocks stays in
//! running_bw until its 0-lag time (task_non_contending(), the inactive timer,
//! inactive_task_timer()), or leaves it at once if that time is past; waking before it,
//! it stays (task_contending()), on another CPU its bandwidth moves there
//! (migrate_task_rq_dl()). An exiting task's bandwidth leaves at once (the kernel holds
//! a dead task's too until its 0-lag time: not modeled). Global EDF (cpudl, push and pull,
//! select_task_rq_dl()) is sched/dl_balance.rs. The fair server exists only in runs with
//! an RT or deadline task (elsewhere it never changes a pick; its timer interrupts are
//! then not charged).

use super::class::{DequeueFlags, EnqueueFlags, SchedClassOps};
use crate::features::Feature;
use crate::rt::deadline::{DlEntity, DlParams, GrubRq};
use crate::state::rt_rq::DlServer;
use crate::state::task::{SchedClass, TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;
use crate::timers::HrtimerFn;

impl Simulator {
    /// `p` is a SCHED_DEADLINE task.
    #[inline]
    pub(crate) fn is_dl(&self, p: TaskId) -> bool {
        self.tasks[p].sched.class() == SchedClass::Dl
    }

    fn dl_params(&self, p: TaskId) -> DlParams {
        self.tasks[p].sched.dl.expect("a deadline task has its entity").params
    }

    /// Umax (max_bw): sched_rt_runtime_us / sched_rt_period_us, 1 with RUNTIME_INF.
    fn dl_max_bw(&self) -> u64 {
        let t = &self.k.tunables;
        if t.sched_rt_runtime_us < 0 {
            return crate::rt::deadline::BW_UNIT;
        }
        crate::rt::deadline::to_ratio(t.sched_rt_period_us, t.sched_rt_runtime_us as u64)
    }

    /// enqueue_task_dl(): a wakeup renews the reservation if needed (update_dl_entity());
    /// a throttled task waits for its timer instead of queueing.
    pub(crate) fn enqueue_task_dl(&mut self, cpu: usize, p: TaskId, wakeup: bool) {
        let now = self.now;
        let bw = self.dl_params(p).bw();
        // task_contending(): back before its 0-lag time, its bandwidth never left
        // running_bw (of the CPU it slept on: migrate_task_rq_dl() moves it here).
        match self.tasks[p].sched.dl_non_contending.take() {
            Some((held, key)) => {
                self.timers.hr.cancel(key);
                if held != cpu {
                    let h = &mut self.rqs[held].dl.running_bw;
                    *h = h.saturating_sub(bw);
                    self.rqs[cpu].dl.running_bw += bw;
                }
            }
            None => self.rqs[cpu].dl.running_bw += bw,
        }
        let dl = self.tasks[p].sched.dl.as_mut().expect("deadline entity");
        if wakeup {
            dl.wakeup(now);
        }
        if dl.throttled {
            return;
        }
        self.rqs[cpu].dl.queued.push(p);
        self.tasks[p].sched.on_rq = true;
        self.dl_rq_changed(cpu);
    }

    /// dequeue_task_dl() of a task that blocks (`sleep`) or exits: its bandwidth stops
    /// running (at its 0-lag time for a sleeper), and a job finished after its absolute
    /// deadline counts as a miss.
    pub(crate) fn dequeue_task_dl(&mut self, cpu: usize, p: TaskId, sleep: bool) {
        if !sleep || !self.task_non_contending(cpu, p) {
            let bw = self.dl_params(p).bw();
            let d = &mut self.rqs[cpu].dl;
            d.running_bw = d.running_bw.saturating_sub(bw);
        }
        let d = &mut self.rqs[cpu].dl;
        d.queued.retain(|&t| t != p);
        self.tasks[p].sched.on_rq = false;
        self.dl_rq_changed(cpu);
        let dl = self.tasks[p].sched.dl.expect("deadline entity");
        if self.now > dl.deadline {
            self.tasks[p].sched.dl_misses += 1;
        }
    }

    /// task_non_contending(): a blocking task's 0-lag time, deadline - runtime x
    /// dl_period / dl_runtime (when its remaining runtime, spent at its bandwidth, runs
    /// out at the deadline); if still ahead, the inactive timer is armed for it and the
    /// bandwidth stays in running_bw (true); if past, the caller removes it now.
    fn task_non_contending(&mut self, cpu: usize, p: TaskId) -> bool {
        let dl = self.tasks[p].sched.dl.expect("deadline entity");
        let DlParams { runtime: dl_runtime, period, .. } = dl.params;
        let zerolag = dl.deadline as i128 - (dl.runtime as i128 * period as i128) / dl_runtime as i128;
        if zerolag <= self.now as i128 {
            return false;
        }
        let key = self.timers.hr.start(cpu, zerolag as Ns, 0, HrtimerFn::DlInactive(p));
        self.push_hrtimer_event(key);
        self.tasks[p].sched.dl_non_contending = Some((cpu, key));
        true
    }

    /// inactive_task_timer(): the sleeper reached its 0-lag time; its bandwidth leaves
    /// running_bw.
    pub(crate) fn inactive_task_timer(&mut self, p: TaskId) {
        let Some((cpu, _)) = self.tasks[p].sched.dl_non_contending.take() else { return };
        let bw = self.dl_params(p).bw();
        let d = &mut self.rqs[cpu].dl;
        d.running_bw = d.running_bw.saturating_sub(bw);
    }

    /// The queued task or server with the earliest deadline (pick_next_dl_entity()); the
    /// server's pick is the fair class's.
    pub(crate) fn pick_next_task_dl(&mut self, cpu: usize) -> Option<TaskId> {
        let task = self.rqs[cpu].dl.queued.iter().copied().min_by_key(|&t| (self.tasks[t].sched.dl.map_or(u64::MAX, |d| d.deadline), t));
        let server = self.rqs[cpu].dl.server.as_ref().filter(|s| s.active && !s.defer_armed && !s.dl.throttled).map(|s| s.dl.deadline);
        match (task, server) {
            (Some(t), Some(sd)) if sd < self.tasks[t].sched.dl.map_or(u64::MAX, |d| d.deadline) => self.dl_server_pick(cpu),
            (Some(t), _) => Some(t),
            (None, Some(_)) => self.dl_server_pick(cpu),
            (None, None) => None,
        }
    }

    /// The server runs the fair class's pick; an empty fair class stops it.
    fn dl_server_pick(&mut self, cpu: usize) -> Option<TaskId> {
        let next = self.pick_next_task_fair(cpu);
        let s = self.rqs[cpu].dl.server.as_mut().expect("server");
        match next {
            Some(_) => {
                s.running = true;
                self.rtc.server_picks += 1;
            }
            None => self.dl_server_stop(cpu),
        }
        next
    }

    /// wakeup_preempt_dl(): an earlier deadline preempts.
    pub(crate) fn wakeup_preempt_dl(&self, cpu: usize, p: TaskId) -> bool {
        let Some(c) = self.rqs[cpu].curr else { return true };
        let dp = self.tasks[p].sched.dl.map_or(u64::MAX, |d| d.deadline);
        let dc = self.tasks[c].sched.dl.map_or(u64::MAX, |d| d.deadline);
        dp < dc
    }

    /// update_curr_dl(): charges the running task's reservation (scaled by GRUB with
    /// SCHED_FLAG_RECLAIM); an exhausted one is throttled until its replenishment timer.
    pub(crate) fn update_curr_dl(&mut self, cpu: usize, c: TaskId, delta: Ns) {
        let params = self.dl_params(c);
        let charged = if self.tasks[c].sched.dl_reclaim {
            let nr = self.m.nr_cpus() as u64;
            let max_bw = self.dl_max_bw();
            let d = &self.rqs[cpu].dl;
            // extra_bw: Umax less this CPU's share of the admitted bandwidth (__dl_add()).
            let extra_bw = max_bw.saturating_sub(self.rd.dl_bw.total_bw / nr);
            // this_bw (add_rq_bw()): the deadline tasks whose CPU this is, asleep or not.
            let this_bw = self
                .tasks
                .iter()
                .filter(|t| t.cpu == cpu && t.state != TaskState::Exited && t.state != TaskState::New)
                .filter_map(|t| t.sched.dl.map(|d| d.params.bw()))
                .sum();
            GrubRq { this_bw, running_bw: d.running_bw, extra_bw, max_bw }.reclaim(delta, params.bw())
        } else {
            delta
        };
        // Before 6.12 deadline time counts in the rt_rq's rt_time too (update_curr_dl():
        // "we share the rt bandwidth"), so RT and deadline together keep to the limit.
        self.update_curr_rt(cpu, delta);
        let dl = self.tasks[c].sched.dl.as_mut().expect("deadline entity");
        if !dl.charge(charged) {
            return;
        }
        let deadline = dl.deadline;
        // Throttled: off the queue until the next period starts (start_dl_timer():
        // deadline - dl_deadline + dl_period).
        self.rqs[cpu].dl.queued.retain(|&t| t != c);
        self.tasks[c].sched.on_rq = false;
        self.dl_rq_changed(cpu);
        self.tasks[c].sched.dl_overruns += 1;
        let at = deadline - params.deadline + params.period;
        let key = self.timers.hr.start(cpu, at.max(self.now + 1), 0, HrtimerFn::DlTask(c));
        self.push_hrtimer_event(key);
        self.resched_curr(cpu, cpu);
    }

    /// dl_task_timer(): the reservation is replenished and the task, if runnable,
    /// queues again and may preempt.
    pub(crate) fn dl_task_timer(&mut self, p: TaskId) {
        let now = self.now;
        let Some(dl) = self.tasks[p].sched.dl.as_mut() else { return };
        if !dl.throttled {
            return;
        }
        dl.replenish(now);
        if !matches!(self.tasks[p].state, TaskState::Runnable | TaskState::Running) || self.tasks[p].blocking.is_some() {
            return;
        }
        let cpu = self.tasks[p].cpu;
        self.rqs[cpu].dl.queued.push(p);
        self.tasks[p].sched.on_rq = true;
        self.dl_rq_changed(cpu);
        let preempt = match self.rqs[cpu].curr {
            Some(c) if c == p => true,
            Some(c) if self.is_dl(c) => self.wakeup_preempt_dl(cpu, p),
            _ => true,
        };
        if preempt {
            self.resched_curr(cpu, cpu);
        }
    }

    /// Admission of the run's deadline tasks, each copy in turn (sched_dl_overflow()
    /// over the root domain: the sum of its CPUs' capacities x Umax).
    pub(crate) fn dl_admit(&mut self, p: TaskId) -> Result<(), String> {
        let cap: u64 = self.m.cpus.iter().map(|c| c.capacity as u64).sum();
        let t = &self.k.tunables;
        let runtime = (t.sched_rt_runtime_us >= 0).then_some(t.sched_rt_runtime_us as u64 * 1000);
        let period = t.sched_rt_period_us * 1000;
        let bw = self.dl_params(p).bw();
        self.rd.dl_bw.admit(cap, runtime, period, bw)
    }

    /// A deadline task exits: its bandwidth is released.
    pub(crate) fn dl_exit(&mut self, p: TaskId) {
        let bw = self.dl_params(p).bw();
        self.rd.dl_bw.release(bw);
    }

    /// The fair server's parameters (fair_server_init(), debugfs fair_server).
    fn dl_server_params(&self) -> DlParams {
        let t = &self.k.tunables;
        DlParams { runtime: t.fair_server_runtime_ns, deadline: t.fair_server_period_ns, period: t.fair_server_period_ns }
    }

    /// (Re)arms the server's timer at `at`, withdrawing the one pending.
    fn dl_server_arm(&mut self, cpu: usize, at: Ns) {
        let at = at.max(self.now + 1);
        let s = self.rqs[cpu].dl.server.as_mut().expect("server");
        s.timer_at = Some(at);
        if let Some(k) = s.timer_key.take() {
            self.timers.hr.cancel(k);
        }
        let key = self.timers.hr.start(cpu, at, 0, HrtimerFn::DlServer);
        self.rqs[cpu].dl.server.as_mut().expect("server").timer_key = Some(key);
        self.push_hrtimer_event(key);
    }

    /// A new deferred period from now: throttled until its zero-laxity time
    /// (replenish_dl_new_period() with dl_defer_armed).
    fn dl_server_defer(&mut self, cpu: usize) {
        let params = self.dl_server_params();
        let now = self.now;
        let s = self.rqs[cpu].dl.server.as_mut().expect("server");
        s.dl = DlEntity::new(params, now);
        s.defer_armed = true;
        s.dl.throttled = true;
        let at = s.dl.deadline - params.runtime;
        self.dl_server_arm(cpu, at);
    }

    /// dl_server_start(): fair work appeared on `cpu` (only in runs with RT or deadline
    /// tasks, from 6.12).
    pub(crate) fn dl_server_start(&mut self, cpu: usize) {
        if !self.rtc.in_use || !self.feat.has(Feature::DL_SERVER) || self.k.tunables.fair_server_runtime_ns < 1024 {
            return;
        }
        let params = self.dl_server_params();
        let s = self.rqs[cpu].dl.server.get_or_insert_with(|| DlServer {
            dl: DlEntity::new(params, 0),
            active: false,
            defer_armed: false,
            defer_running: false,
            running: false,
            timer_at: None,
            timer_key: None,
        });
        if s.active {
            return;
        }
        s.active = true;
        s.defer_running = false;
        self.dl_server_defer(cpu);
    }

    /// dl_server_stop(): no fair task is left.
    fn dl_server_stop(&mut self, cpu: usize) {
        let Some(s) = self.rqs[cpu].dl.server.as_mut() else { return };
        s.active = false;
        s.running = false;
        s.defer_armed = false;
        s.defer_running = false;
        s.timer_at = None;
        if let Some(k) = s.timer_key.take() {
            self.timers.hr.cancel(k);
        }
    }

    /// dl_server_update(): fair time charged to the server; when the server itself ran
    /// it, an exhausted server is throttled to its replenishment; when the fair class got
    /// the time on its own, the starvation the server guards against is over: a new
    /// deferred period.
    pub(crate) fn dl_server_update(&mut self, cpu: usize, delta: Ns) {
        let Some(s) = self.rqs[cpu].dl.server.as_mut() else { return };
        if !s.active || (s.dl.throttled && !s.defer_armed) {
            return;
        }
        s.dl.runtime -= delta as i64;
        if s.dl.runtime > 0 {
            return;
        }
        if s.running {
            s.dl.throttled = true;
            s.running = false;
            let at = s.dl.deadline;
            self.dl_server_arm(cpu, at);
            self.resched_curr(cpu, cpu);
        } else {
            s.defer_running = false;
            self.dl_server_defer(cpu);
        }
    }

    /// dl_server_timer(): a deferred server reaches its zero-laxity time and competes
    /// (dl_defer_running), or a throttled one is replenished; either way it may preempt.
    pub(crate) fn dl_server_timer(&mut self, cpu: usize) {
        let now = self.now;
        let Some(s) = self.rqs[cpu].dl.server.as_mut() else { return };
        if !s.active || s.timer_at != Some(now) {
            return;
        }
        s.timer_at = None;
        s.timer_key = None;
        if self.rqs[cpu].queue.is_empty() && self.rqs[cpu].curr.is_none_or(|c| self.tasks[c].sched.class() != SchedClass::Fair) {
            self.dl_server_stop(cpu);
            return;
        }
        let s = self.rqs[cpu].dl.server.as_mut().expect("server");
        if s.defer_armed {
            s.defer_armed = false;
            s.defer_running = true;
            s.dl.throttled = false;
        } else {
            s.dl.replenish(now);
            if !s.defer_running {
                self.dl_server_defer(cpu);
                return;
            }
        }
        self.resched_curr(cpu, cpu);
    }

    /// At a pick: the server stops paying for the fair class unless it picks again.
    pub(crate) fn dl_server_put(&mut self, cpu: usize) {
        if let Some(s) = self.rqs[cpu].dl.server.as_mut() {
            s.running = false;
        }
    }
}

/// `dl_sched_class`: SCHED_DEADLINE, and the fair server (6.12+).
pub(crate) struct DlSchedClass;

impl SchedClassOps for DlSchedClass {
    const TIMER_SLACK: bool = false;

    fn enqueue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: EnqueueFlags) {
        if flags.wakeup {
            sim.update_curr(cpu);
        }
        sim.enqueue_task_dl(cpu, p, true);
    }

    fn dequeue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: DequeueFlags) {
        sim.update_curr(cpu);
        sim.dequeue_task_dl(cpu, p, flags.sleep);
        sim.tasks[p].state = TaskState::Blocked;
    }

    fn wakeup_preempt(sim: &mut Simulator, cpu: usize, p: TaskId, _curr: TaskId, from_cpu: usize) {
        if sim.wakeup_preempt_dl(cpu, p) && sim.feat.has(Feature::WAKEUP_PREEMPTION) {
            sim.resched_curr(cpu, from_cpu);
        }
    }

    /// pick_task_dl(), after the fair server's put (it served the previous pick).
    fn pick_task(sim: &mut Simulator, cpu: usize) -> Option<TaskId> {
        sim.dl_server_put(cpu);
        sim.pick_next_task_dl(cpu)
    }

    fn put_prev_task(sim: &mut Simulator, _cpu: usize, p: TaskId) {
        if sim.tasks[p].state == TaskState::Running {
            // put_prev_task_dl(): the task stays queued where it is.
            let t = &mut sim.tasks[p];
            t.state = TaskState::Runnable;
            t.runnable_since = sim.now;
        }
    }

    /// set_next_task_dl()'s deadline_queue_push_tasks().
    fn set_next_task(sim: &mut Simulator, cpu: usize, _p: TaskId) {
        sim.push_dl_tasks(cpu);
    }

    /// balance_dl(): a deadline task left the dl_rq (blocked, throttled, exited).
    fn balance(sim: &mut Simulator, cpu: usize, prev: TaskId) {
        if !sim.tasks[prev].sched.on_rq {
            sim.pull_dl_task(cpu);
        }
    }

    fn select_task_rq(sim: &mut Simulator, p: TaskId, prev: usize, this_cpu: usize, _waker: Option<TaskId>, _sync: bool, fork: bool) -> usize {
        sim.select_task_rq_dl(p, prev, this_cpu, fork)
    }

    fn task_woken(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.task_woken_dl(cpu, p);
    }

    fn task_dead(sim: &mut Simulator, p: TaskId) {
        sim.dl_exit(p);
    }

    /// __setscheduler_params(): as the RT class's.
    fn switched_to(sim: &mut Simulator, p: TaskId) {
        sim.rtc.in_use = true;
        sim.tasks[p].timer_slack_ns = 0;
    }

    fn update_curr(sim: &mut Simulator, cpu: usize, p: TaskId, delta: Ns) {
        sim.update_curr_dl(cpu, p, delta);
    }

    /// inc_dl_tasks(): the queued deadline tasks (a CBS-throttled one is dequeued).
    fn nr_running(sim: &Simulator, cpu: usize) -> usize {
        sim.rqs[cpu].dl.queued.len()
    }
}

impl Simulator {
    /// dl_server_active(): `cpu`'s fair server is started (6.12+, runs with RT or
    /// deadline work).
    #[inline]
    pub(crate) fn dl_server_active(&self, cpu: usize) -> bool {
        self.rqs[cpu].dl.server.as_ref().is_some_and(|s| s.active)
    }
}
