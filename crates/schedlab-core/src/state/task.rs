//! Tasks: the simulator's task_struct, and the small programs tasks run.
//!
//! Mirrors: include/linux/sched.h: struct task_struct, struct sched_entity
//! (vruntime, deadline, vlag, slice, sum_exec_runtime), wakee_flips, recent_used_cpu.
//! Model: a task's behaviour is a compiled program of steps (run, sleep, wait/signal,
//! lock/unlock, fork, loops); `Run` work is in ns at capacity 1024 and takes longer
//! on smaller CPUs. Overheads the machine charges (context switch, migration refill,
//! idle-CPU scans) are added as `overhead_ns`, consumed before the task's own work.

use std::collections::BTreeMap;

use crate::cpumask::{CpuId, CpuMask};
use crate::error::ScenarioError;
use crate::scenario::OpSpec;
use crate::time::Ns;

/// Task index in the run (pid = index + 1; pid 0 is the idle task).
pub type TaskId = usize;

/// One compiled program step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insn {
    /// Compute this much work (ns at capacity 1024).
    Run(Ns),
    /// Compute an exponentially distributed amount with this mean.
    RunExp(Ns),
    /// Spin for this much wall-clock time.
    RunFor(Ns),
    /// Sleep this long.
    Sleep(Ns),
    /// poll() with no descriptors and this timeout.
    Poll(Ns),
    /// Sleep an exponentially distributed time with this mean.
    SleepExp(Ns),
    /// schedule_timeout() for this long.
    SleepTimeout(Ns),
    /// Arm the task's timer `slot` to expire after `delay`, signalling channel `signal`
    /// if it has one.
    ModTimer {
        /// The task's timer (index in `Names::timers`).
        slot: usize,
        /// Expiry from now.
        delay: Ns,
        /// TIMER_PINNED.
        pinned: bool,
        /// TIMER_DEFERRABLE.
        deferrable: bool,
        /// Channel signalled at expiry, if any.
        signal: Option<usize>,
    },
    /// Cancel the task's timer `slot`.
    DelTimer(usize),
    /// Wait on a channel with a timeout.
    WaitTimeout {
        /// Channel.
        ch: usize,
        /// Timeout.
        timeout: Ns,
    },
    /// Sleep to the next period boundary.
    Periodic {
        /// Period.
        period: Ns,
        /// Restart the grid when late.
        relative: bool,
        /// rt-app's timer: grid from the task's start; a late period does not sleep.
        rt_app: bool,
    },
    /// Release mutex `lock` (if any) and wait on condition variable `ch`.
    CondWait {
        /// Channel of the condition variable.
        ch: usize,
        /// Mutex released while waiting.
        lock: Option<usize>,
    },
    /// Wake one waiter of a condition variable.
    CondSignal(usize),
    /// Wake every waiter of a condition variable.
    CondBroadcast(usize),
    /// Rendezvous at a barrier.
    Barrier(usize),
    /// sched_yield().
    Yield,
    /// Set the task's own affinity (index into `Names::masks`).
    SetAffinity(usize),
    /// Move the task into a group (index into `Names::groups`).
    SetGroup(usize),
    /// The enqueue micro-benchmark.
    TimerBench {
        /// Enqueue/dequeue pairs.
        reps: u64,
        /// Expiry of each enqueue.
        delay: Ns,
    },
    /// Block on a channel until signalled.
    Wait(usize),
    /// Signal a channel.
    Signal(usize),
    /// Write one message to a bounded channel.
    Send(usize),
    /// futex post on a channel (wake one, or set its flag).
    Post(usize),
    /// Wake every waiter of a channel.
    WakeAll(usize),
    /// Take the time.
    Mark,
    /// A pass of an rt-app phase begins (its per-activation log line).
    RtAppPhase,
    /// Record the time since the mark (or the last message's send time) in histogram `hist`.
    Record {
        /// Histogram index (`Names::histograms`).
        hist: usize,
        /// Measure from the last received message's send time.
        since_message: bool,
    },
    /// Take a mutex.
    Lock(usize),
    /// Release a mutex.
    Unlock(usize),
    /// Create `count` tasks from template `template`.
    Fork {
        /// Template index.
        template: usize,
        /// Children to create.
        count: usize,
    },
    /// Block until every child has exited.
    WaitChildren,
    /// Loop head: `count` iterations (None = forever); `end` is the matching LoopEnd.
    LoopStart {
        /// Iterations.
        count: Option<u64>,
        /// Index of the matching LoopEnd.
        end: usize,
    },
    /// Loop tail, jumping back to `start`.
    LoopEnd {
        /// Index of the matching LoopStart.
        start: usize,
    },
    /// Touch a per-CPU (`by_cid` false) or per-cid area.
    TouchArea {
        /// Bytes.
        bytes: u64,
        /// Index by mm_cid.
        by_cid: bool,
        /// Record the pass time.
        record: bool,
    },
    /// Touch pages of a region.
    TouchPages {
        /// Region index.
        region: usize,
        /// Pages.
        pages: u64,
        /// Dirty the PTEs.
        write: bool,
    },
    /// Page a region out.
    PageOut {
        /// Region index.
        region: usize,
        /// Extra mapping processes.
        extra_mappers: u32,
        /// kswapd path.
        kswapd: bool,
    },
    /// End the task.
    Exit,
}

/// A compiled program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// Steps; execution starts at 0 and ends past the last step.
    pub insns: Vec<Insn>,
}

/// Names of channels, locks and templates, resolved to indices at compile time.
#[derive(Debug, Default)]
pub struct Names {
    /// Channels by name.
    pub channels: BTreeMap<String, usize>,
    /// Mutexes by name.
    pub locks: BTreeMap<String, usize>,
    /// Templates by name.
    pub templates: BTreeMap<String, usize>,
    /// Memory regions by name.
    pub regions: BTreeMap<String, usize>,
    /// Task-private timers by name.
    pub timers: BTreeMap<String, usize>,
    /// Barriers by name.
    pub barriers: BTreeMap<String, usize>,
    /// Affinity masks of `set_affinity` steps, in order.
    pub masks: Vec<String>,
    /// Groups named by `set_group` steps, in order ("" = root).
    pub groups: Vec<String>,
    /// Latency histograms of `record` steps by name.
    pub histograms: BTreeMap<String, usize>,
    /// Bounded channels: channel -> (capacity, wake_at), from their `send` steps.
    pub capacities: BTreeMap<usize, (u64, u64)>,
}

pub(crate) fn intern(map: &mut BTreeMap<String, usize>, name: &str) -> usize {
    let n = map.len();
    *map.entry(name.to_string()).or_insert(n)
}

impl Program {
    /// Compiles program steps; `field` names the program in errors.
    pub fn compile(ops: &[OpSpec], names: &mut Names, field: &str) -> Result<Program, ScenarioError> {
        let mut p = Program::default();
        p.emit(ops, names, field)?;
        Ok(p)
    }

    fn emit(&mut self, ops: &[OpSpec], names: &mut Names, field: &str) -> Result<(), ScenarioError> {
        for (i, op) in ops.iter().enumerate() {
            let insn = match op {
                OpSpec::Run(d) => Insn::Run(d.0),
                OpSpec::RunExp(d) => Insn::RunExp(d.0),
                OpSpec::RunFor(d) => Insn::RunFor(d.0),
                OpSpec::CondWait(w) => {
                    let ch = intern(&mut names.channels, &format!("cond:{}", w.cond));
                    let lock = w.mutex.as_ref().map(|m| intern(&mut names.locks, m));
                    self.insns.push(Insn::CondWait { ch, lock });
                    if let Some(l) = lock {
                        self.insns.push(Insn::Lock(l)); // taken again on the way out
                    }
                    continue;
                }
                OpSpec::CondSignal(c) => Insn::CondSignal(intern(&mut names.channels, &format!("cond:{c}"))),
                OpSpec::CondBroadcast(c) => Insn::CondBroadcast(intern(&mut names.channels, &format!("cond:{c}"))),
                OpSpec::Barrier(b) => Insn::Barrier(intern(&mut names.barriers, b)),
                OpSpec::Yield => Insn::Yield,
                OpSpec::SetAffinity(m) => {
                    crate::cpumask::CpuMask::parse_list(m).map_err(|e| ScenarioError::new(format!("{field}[{i}].set_affinity"), e))?;
                    names.masks.push(m.clone());
                    Insn::SetAffinity(names.masks.len() - 1)
                }
                OpSpec::SetGroup(g) => {
                    names.groups.push(if g == "root" { String::new() } else { g.clone() });
                    Insn::SetGroup(names.groups.len() - 1)
                }
                OpSpec::Sleep(d) => Insn::Sleep(d.0),
                OpSpec::Poll(d) => Insn::Poll(d.0),
                OpSpec::SleepExp(d) => Insn::SleepExp(d.0),
                OpSpec::SleepTimeout(d) => Insn::SleepTimeout(d.0),
                OpSpec::ModTimer(m) => Insn::ModTimer {
                    slot: intern(&mut names.timers, &m.timer),
                    delay: m.delay.0,
                    pinned: m.pinned,
                    deferrable: m.deferrable,
                    signal: m.signal.as_ref().map(|s| intern(&mut names.channels, s)),
                },
                OpSpec::DelTimer(t) => Insn::DelTimer(intern(&mut names.timers, t)),
                OpSpec::WaitTimeout(w) => Insn::WaitTimeout { ch: intern(&mut names.channels, &w.channel), timeout: w.timeout.0 },
                OpSpec::Periodic(p) => {
                    if p.period.0 == 0 {
                        return Err(ScenarioError::new(format!("{field}[{i}].periodic.period"), "expected a positive duration"));
                    }
                    Insn::Periodic { period: p.period.0, relative: p.mode == crate::scenario::PeriodicMode::Relative, rt_app: p.rt_app }
                }
                OpSpec::TimerBench(b) => {
                    if b.reps == 0 {
                        return Err(ScenarioError::new(format!("{field}[{i}].timer_bench.reps"), "expected at least 1"));
                    }
                    Insn::TimerBench { reps: b.reps, delay: b.delay.0 }
                }
                OpSpec::Wait(c) => Insn::Wait(intern(&mut names.channels, c)),
                OpSpec::Signal(c) => Insn::Signal(intern(&mut names.channels, c)),
                OpSpec::Send(w) => {
                    let ch = intern(&mut names.channels, &w.channel);
                    let wake_at = w.wake_at.unwrap_or(w.capacity.saturating_sub(1));
                    if w.capacity == 0 || wake_at >= w.capacity {
                        return Err(ScenarioError::new(format!("{field}[{i}].send"), "expected capacity >= 1 and wake_at < capacity"));
                    }
                    if let Some(&had) = names.capacities.get(&ch) {
                        if had != (w.capacity, wake_at) {
                            return Err(ScenarioError::new(
                                format!("{field}[{i}].send.capacity"),
                                format!("channel '{}' was given capacity {} (wake_at {}) by another send step", w.channel, had.0, had.1),
                            ));
                        }
                    }
                    names.capacities.insert(ch, (w.capacity, wake_at));
                    Insn::Send(ch)
                }
                OpSpec::Post(c) => Insn::Post(intern(&mut names.channels, c)),
                OpSpec::WakeAll(c) => Insn::WakeAll(intern(&mut names.channels, c)),
                OpSpec::Mark => Insn::Mark,
                OpSpec::RtAppPhase => Insn::RtAppPhase,
                OpSpec::Record(r) => Insn::Record {
                    hist: intern(&mut names.histograms, &r.histogram),
                    since_message: r.since == crate::scenario::RecordSince::Message,
                },
                OpSpec::Lock(l) => Insn::Lock(intern(&mut names.locks, l)),
                OpSpec::Unlock(l) => Insn::Unlock(intern(&mut names.locks, l)),
                OpSpec::Mem(m) => Insn::Run(m.mem_work_ns()),
                OpSpec::Iorun(m) => Insn::Run(m.iorun_work_ns()),
                OpSpec::SetSchedAttr(_) => continue, // kept for export only
                OpSpec::WaitChildren => Insn::WaitChildren,
                OpSpec::Exit => Insn::Exit,
                OpSpec::TouchArea(a) => Insn::TouchArea { bytes: a.bytes, by_cid: a.index == crate::scenario::AreaIndex::MmCid, record: a.record },
                OpSpec::TouchPages(t) => Insn::TouchPages { region: intern(&mut names.regions, &t.region), pages: t.pages, write: t.write },
                OpSpec::PageOut(o) => {
                    Insn::PageOut { region: intern(&mut names.regions, &o.region), extra_mappers: o.extra_mappers, kswapd: o.kswapd }
                }
                OpSpec::Fork(f) => {
                    let template = *names
                        .templates
                        .get(&f.template)
                        .ok_or_else(|| ScenarioError::new(format!("{field}[{i}].fork.template"), format!("unknown template '{}'", f.template)))?;
                    Insn::Fork { template, count: f.count }
                }
                OpSpec::Loop(l) => {
                    if l.body.is_empty() {
                        return Err(ScenarioError::new(format!("{field}[{i}].loop.body"), "expected at least one step"));
                    }
                    let start = self.insns.len();
                    self.insns.push(Insn::LoopStart { count: l.count, end: 0 });
                    self.emit(&l.body, names, &format!("{field}[{i}].loop.body"))?;
                    let end = self.insns.len();
                    if end == start + 1 {
                        return Err(ScenarioError::new(
                            format!("{field}[{i}].loop.body"),
                            "expected a step that does something (set_sched_attr alone is kept for export only)",
                        ));
                    }
                    self.insns.push(Insn::LoopEnd { start });
                    self.insns[start] = Insn::LoopStart { count: l.count, end };
                    continue;
                }
            };
            self.insns.push(insn);
        }
        Ok(())
    }
}

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Not started yet (waiting for its start time).
    New,
    /// On a CPU.
    Running,
    /// Queued on a runqueue, waiting for a CPU.
    Runnable,
    /// Sleeping on a timer.
    Sleeping,
    /// Blocked on a channel, mutex or children.
    Blocked,
    /// Runnable but its group is throttled on its CPU (off the runqueue).
    Throttled,
    /// Exited.
    Exited,
}

/// The fair-class scheduling entity of a task.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedEntity {
    /// Load weight from nice (NICE_0 = 1024).
    pub weight: u64,
    /// Virtual runtime.
    pub vruntime: u64,
    /// EEVDF virtual deadline.
    pub deadline: u64,
    /// EEVDF lag kept across sleep (V - vruntime at dequeue).
    pub vlag: i64,
    /// EEVDF requested slice, ns.
    pub slice: Ns,
    /// The slice was asked for (sched_attr.sched_runtime, 6.12+; a group entity's is its
    /// queue's shortest) and is kept instead of the base slice (se->custom_slice).
    pub custom_slice: bool,
    /// Total time run.
    pub sum_exec_runtime: Ns,
    /// sum_exec_runtime when last picked (CFS slice accounting).
    pub prev_sum_exec_runtime: Ns,
    /// Start of the current accounting interval.
    pub exec_start: Ns,
    /// EEVDF RUN_TO_PARITY: protected from preemption until its deadline moves.
    pub protected: bool,
    /// 6.17+: the vruntime up to which the protection lasts (se->vprot, set_protect_slice());
    /// u64::MAX before 6.17, where it lasts until the deadline moves.
    pub vprot: u64,
    /// PLACE_REL_DEADLINE: `deadline` holds deadline - vruntime while a migrated task is
    /// off its runqueues (se->rel_deadline).
    pub rel_deadline: bool,
    /// PELT averages (fair/pelt.rs).
    pub avg: crate::state::pelt::SchedAvg,
    /// On its cfs_rq (se->on_rq): set by enqueue_entity, cleared by dequeue_entity.
    pub on_rq: bool,
}

/// A task.
#[derive(Clone, Debug)]
pub struct Task {
    /// Program index.
    pub program: usize,
    /// Next step.
    pub pc: usize,
    /// Active loops: (LoopStart index, iterations left; None = forever).
    pub loops: Vec<(usize, Option<u64>)>,
    /// Life state.
    pub state: TaskState,
    /// CPU the task is on or last ran on (task_cpu).
    pub cpu: CpuId,
    /// Allowed CPUs: one shared copy per distinct mask (a 2048-CPU mask is 256 bytes,
    /// a quarter of the task if held inline).
    pub cpus_allowed: std::sync::Arc<CpuMask>,
    /// Weight of `cpus_allowed`.
    pub nr_cpus_allowed: usize,
    /// Nice value.
    pub nice: i32,
    /// Fair-class entity.
    pub se: SchedEntity,
    /// Work left in the current Run step (ns at capacity 1024).
    pub work_left: Ns,
    /// Machine overhead to execute before more work (ns of wall time).
    pub overhead_ns: Ns,
    /// Time up to which overhead and work have been consumed.
    pub progress_stamp: Ns,
    /// Group index (0 = root).
    pub group: usize,
    /// Process (mm) index.
    pub mm: usize,
    /// Working set refilled after migration, bytes.
    pub footprint: u64,
    /// CPU where the task's data was last cached.
    pub data_cpu: CpuId,
    /// wake_wide() bookkeeping.
    pub wakee_flips: u32,
    /// When wakee_flips was last decayed.
    pub wakee_flip_decay_ts: Ns,
    /// Last task this one woke.
    pub last_wakee: Option<TaskId>,
    /// select_idle_sibling's recent_used_cpu.
    pub recent_used_cpu: CpuId,
    /// Parent task.
    pub parent: Option<TaskId>,
    /// The task whose '@' channels this one uses: its fork parent, or itself.
    pub family: TaskId,
    /// Children alive.
    pub live_children: usize,
    /// When the task last became runnable (for wait time and wakeup latency).
    pub runnable_since: Ns,
    /// Whether the pending run is a wakeup (latency is recorded at first run).
    pub woken: bool,
    /// One of the machine's own background tasks (`[kernel] background`, or a source of
    /// `[kernel.background_profile]`): it never ends, so it is not counted among the tasks
    /// a run `until = "workload_done"` waits for, nor among those whose blocking makes a
    /// deadlock, and its wakeups stay out of the run's latency histograms.
    pub daemon: bool,
    /// Start on `cpu` as given, bypassing fork placement (scenario `cpu = N`).
    pub start_on: bool,
    /// Registered with the mm_cid allocator (a thread of a named process).
    pub rseq: bool,
    /// Timer slack of this task's hrtimer sleeps (current->timer_slack_ns).
    pub timer_slack_ns: Ns,
    /// Run work between two reads of its own CPU-time clock (0: it never reads it).
    pub cputime_poll_ns: Ns,
    /// The hrtimer of the task's current nanosleep.
    pub hrtimer: Option<crate::timers::HrtimerKey>,
    /// When the current timed sleep was due to end (cyclictest-style latency).
    pub timer_due: Option<Ns>,
    /// The user histogram its timer wakeup latencies also go to (`timer_histogram`).
    pub timer_hist: Option<usize>,
    /// The task's schedule_timeout() timer.
    pub wheel_timer: Option<crate::timers::TimerId>,
    /// The schedule_timeout() timer fired (rather than an early wakeup).
    pub wheel_timer_fired: bool,
    /// Channel the task is blocked on in a wait with timeout.
    pub waiting_on: Option<usize>,
    /// Next period boundary of its periodic step (None until the first).
    pub period_next: Option<Ns>,
    /// End of the current `run_for` step (wall clock).
    pub run_until: Option<Ns>,
    /// Periods that started late (the work of the previous one overran).
    pub periods_late: u64,
    /// Kernel time owed when the task next runs: the exit half of the system call it
    /// blocked in.
    pub pending_exit_ns: Ns,
    /// set_current_state(): the state the task sleeps in once the rest of its blocking
    /// system call reaches schedule(). Until then it still runs its kernel path (its
    /// overhead) and stays on its runqueue (p->__state set, p->on_rq still 1); a wakeup
    /// in that window only sets it running again (ttwu_runnable).
    pub blocking: Option<TaskState>,
    /// Asleep but still queued until eligible (se->sched_delayed, DELAY_DEQUEUE 6.12+).
    pub sched_delayed: bool,
    /// 6.18 task-based throttle: the throttle task_work is queued (sched_throttle_work);
    /// the task is held when it next returns to user space.
    pub throttle_work: bool,
    /// When the task was last woken (its wakeup latency runs to its return to user space).
    pub woken_at: Ns,
    /// CPU of the task that last woke this one through shared data (a pipe or futex):
    /// the data's lines come from there when it runs.
    pub woken_from: Option<CpuId>,
    /// Time of the task's last `mark` step.
    pub mark: Ns,
    /// Send time of the message the task last took from a channel.
    pub msg_stamp: Ns,
    /// Scheduling policy and its class parameters (sched_setattr()).
    pub sched: SchedParams,
    /// Statistics.
    pub stats: crate::metrics::TaskStats,
}

/// A task's policy (include/uapi/linux/sched.h SCHED_*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchedPolicy {
    /// SCHED_NORMAL (SCHED_OTHER): the fair class.
    #[default]
    Normal,
    /// SCHED_BATCH: fair, never preempts on wakeup.
    Batch,
    /// SCHED_IDLE: fair at the lowest weight (WEIGHT_IDLEPRIO).
    Idle,
    /// SCHED_FIFO: RT, runs until it blocks or a higher priority preempts it.
    Fifo,
    /// SCHED_RR: RT with a time slice (sched_rr_timeslice_ms).
    Rr,
    /// SCHED_DEADLINE: the deadline class (CBS + EDF).
    Deadline,
    /// SCHED_EXT: the ext class when a sched_ext scheduler is loaded, else fair.
    Ext,
}

/// The class a task is scheduled by, highest first (core.c's sched_class order:
/// stop > dl > rt > fair > ext > idle; stop and idle have no task of a scenario's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedClass {
    /// dl_sched_class.
    Dl,
    /// rt_sched_class.
    Rt,
    /// fair_sched_class.
    Fair,
    /// ext_sched_class (sched_ext).
    Ext,
}

/// sched_setattr() state of a task: its policy, RT priority and deadline entity.
#[derive(Clone, Copy, Debug, Default)]
pub struct SchedParams {
    /// The policy.
    pub policy: SchedPolicy,
    /// sched_priority, 1..99 for SCHED_FIFO / SCHED_RR (0 otherwise).
    pub rt_priority: u32,
    /// The priority a PI boost lends it (kernel prio, lower is higher), if any.
    pub boost_prio: Option<usize>,
    /// SCHED_RR: what is left of its slice (p->rt.time_slice), ns.
    pub rr_slice_left: Ns,
    /// On its CPU's rt_rq (rt_se->on_rq) or dl_rq.
    pub on_rq: bool,
    /// SCHED_DEADLINE: the CBS state.
    pub dl: Option<crate::rt::deadline::DlEntity>,
    /// SCHED_FLAG_RECLAIM (GRUB).
    pub dl_reclaim: bool,
    /// In the ext class (p->sched_class == &ext_sched_class: a sched_ext scheduler is
    /// loaded and took this task).
    pub scx: bool,
    /// dl_non_contending: asleep with its bandwidth still in the running_bw of this CPU
    /// until the inactive timer (armed, this key) fires at its 0-lag time.
    pub dl_non_contending: Option<(usize, crate::timers::HrtimerKey)>,
    /// Deadline misses seen (a job that finished after its absolute deadline).
    pub dl_misses: u64,
    /// Reservations exhausted (throttled by the CBS: the kernel's dl overrun).
    pub dl_overruns: u64,
    /// SCHED_FLAG_RESET_ON_FORK (sched_reset_on_fork): children start SCHED_NORMAL.
    pub reset_on_fork: bool,
}

impl SchedParams {
    /// The class of the task's policy (a PI boost lifts a fair task to RT).
    pub fn class(&self) -> SchedClass {
        match self.policy {
            SchedPolicy::Deadline => SchedClass::Dl,
            SchedPolicy::Fifo | SchedPolicy::Rr => SchedClass::Rt,
            _ if self.boost_prio.is_some() => SchedClass::Rt,
            _ if self.scx => SchedClass::Ext,
            _ => SchedClass::Fair,
        }
    }

    /// The kernel prio an RT task is queued at (0 highest), the boost's if higher.
    pub fn rt_prio(&self) -> usize {
        let own = if matches!(self.policy, SchedPolicy::Fifo | SchedPolicy::Rr) {
            crate::rt::rt_prio(self.rt_priority)
        } else {
            crate::rt::MAX_RT_PRIO - 1
        };
        self.boost_prio.map_or(own, |b| b.min(own))
    }

    /// The policy itself is RT or deadline (rt_policy() || dl_policy(), no PI boost).
    pub fn is_rt_or_dl_policy(&self) -> bool {
        matches!(self.policy, SchedPolicy::Fifo | SchedPolicy::Rr | SchedPolicy::Deadline)
    }

    /// In a class above fair (rt_or_dl_task()).
    pub fn is_rt_or_dl(&self) -> bool {
        self.class() < SchedClass::Fair
    }
}

/// The CFS nice-to-weight table (sched_prio_to_weight, kernel/sched/core.c), nice -20..19.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277, 1024, 820, 655,
    526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// Returns the load weight of a nice value.
pub fn nice_to_weight(nice: i32) -> u64 {
    PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}
