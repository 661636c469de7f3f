//! Per-CPU runqueues.
//!
//! Mirrors: kernel/sched/sched.h: struct rq (curr, nr_running, avg_idle, idle_stamp,
//! max_idle_balance_cost, next_balance, cfs_tasks) together with the per-CPU copies
//! of each sched domain's balance state (balance_interval, last_balance,
//! nr_balance_failed, max_newidle_lb_cost), which the kernel keeps in per-CPU
//! `struct sched_domain`s.
//! Model: the queued tasks are kept in the order they were queued (the list load
//! balance walks, as the kernel walks cfs_tasks); the cfs_rqs themselves (the root's
//! and every group's, with their vruntime-ordered timelines) are in state/cfs_rq.rs.
//! `load` mirrors the root cfs_rq's load.weight. The RT and deadline runqueues are
//! embedded as `struct rq` embeds them; the root cfs_rq stays in the flat table of every
//! cfs_rq (state/cfs_rq.rs, index = CPU), whose paths it shares with the groups'.

use crate::state::task::TaskId;
use crate::time::Ns;

/// The queued (runnable, not running) tasks of one CPU, in every cfs_rq. Changed only
/// through the fair class, which keeps it in step with the cfs_rqs.
#[derive(Clone, Debug, Default)]
pub struct CfsQueue {
    /// In queueing order, except that a removal moves the last task into the hole.
    pub(crate) tasks: Vec<TaskId>,
}

impl CfsQueue {
    /// Tells whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Queued tasks.
    #[inline]
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// The queued tasks in list order.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, TaskId> {
        self.tasks.iter()
    }

    /// The first task of the list.
    #[inline]
    pub fn first(&self) -> Option<&TaskId> {
        self.tasks.first()
    }
}

impl<'a> IntoIterator for &'a CfsQueue {
    type Item = &'a TaskId;
    type IntoIter = std::slice::Iter<'a, TaskId>;
    fn into_iter(self) -> Self::IntoIter {
        self.tasks.iter()
    }
}

/// Per-CPU balance state of one sched-domain level.
#[derive(Clone, Debug, Default)]
pub struct DomainState {
    /// Current interval, ms (doubles while balanced, reset on success).
    pub balance_interval_ms: u64,
    /// Time of the last periodic balance.
    pub last_balance: Ns,
    /// Consecutive failed balance attempts.
    pub nr_balance_failed: u32,
    /// Most expensive newidle balance seen at this level (decays 1%/s).
    pub max_newidle_lb_cost: Ns,
    /// When `max_newidle_lb_cost` last decayed.
    pub last_decay_max_lb_cost: Ns,
    /// NI_RANDOM: newidle balances counted (sd->newidle_call).
    pub newidle_call: u32,
    /// NI_RANDOM: their weighted successes (sd->newidle_success).
    pub newidle_success: u32,
    /// NI_RANDOM: the success ratio out of 1024 (sd->newidle_ratio).
    pub newidle_ratio: u32,
}

/// One CPU's runqueue.
#[derive(Clone, Debug, Default)]
pub struct Rq {
    /// Running task (None = idle).
    pub curr: Option<TaskId>,
    /// Queued tasks, not running (cfs_tasks).
    pub queue: CfsQueue,
    /// Runnable tasks held off the queue because their group is throttled here.
    pub throttled: Vec<TaskId>,
    /// Runnable tasks on this CPU, queued or running (rq->nr_running).
    pub nr_running: usize,
    /// Of `nr_running`, the tasks of the classes other than fair (their `nr_running`
    /// ops, synced by `class_nr_sync()`).
    pub nr_running_other: usize,
    /// Whether this rq counts in the root domain's overload (nr_running > 1).
    pub overloaded: bool,
    /// The root cfs_rq's load.weight: its queued and running entities' weights.
    pub load: u64,
    /// Generation of this CPU's segment-end event.
    pub seg_gen: u32,
    /// Generation of this CPU's tick (bumped when the tick stops).
    pub tick_gen: u32,
    /// Whether a tick is pending.
    pub tick_armed: bool,
    /// The tick is stopped in idle (ts->tick_stopped).
    pub tick_stopped: bool,
    /// What the stopped tick is programmed for (ts->next_tick; KTIME_MAX = nothing).
    pub next_tick: Ns,
    /// This CPU had the do_timer duty when it stopped its tick (ts->do_timer_last).
    pub do_timer_last: bool,
    /// When the CPU went idle (0 = not idle): rq->idle_stamp.
    pub idle_stamp: Ns,
    /// When the CPU last changed between idle and busy.
    pub state_since: Ns,
    /// rq->avg_idle.
    pub avg_idle: Ns,
    /// rq->max_idle_balance_cost.
    pub max_idle_balance_cost: Ns,
    /// Load of the task too big for this CPU that runs here (rq->misfit_task_load).
    pub misfit_task_load: u64,
    /// Utilization (PELT util_avg of the CPU, 0..1024).
    pub util_avg: u64,
    /// When util_avg was last updated.
    pub util_stamp: Ns,
    /// Per-domain balance state, parallel to the machine's domain list for this CPU.
    pub sd: Vec<DomainState>,
    /// Next time the periodic balancer is due at any level (rq->next_balance).
    pub next_balance: Ns,
    /// The address space loaded on the CPU (rq->curr->active_mm; the idle task borrows
    /// the last one, lazy TLB): a switch to a task of another mm pays switch_mm.
    pub active_mm: Option<usize>,
    /// A reschedule is on its way (TIF_NEED_RESCHED of rq->curr, with its Resched event).
    pub resched_pending: bool,
    /// When the pending Resched event runs (valid while `resched_pending`).
    pub resched_at: Ns,
    /// Until when the CPU is busy in an interrupt handler or a blocking task's remaining
    /// kernel path (the next thing it does starts then).
    pub irq_until: Ns,
    /// A bandwidth unthrottle CSD is on its way (rq->cfsb_csd_list non-empty).
    pub csd_inflight: bool,
    /// The CPU's cpuidle device (governor memory, residency counters; rq->idle's
    /// cpuidle_device).
    pub idle: crate::cpuidle::CpuIdleDevice,
    /// sched_rng()'s per-CPU state (NI_RANDOM), a stream keyed by the run's seed and the
    /// CPU, created on its first draw.
    pub sched_rng: Option<crate::rng::Stream>,
    /// The RT class's runqueue (rq->rt).
    pub rt: crate::state::rt_rq::RtRq,
    /// The deadline class's runqueue, with the fair server (rq->dl, rq->fair_server).
    pub dl: crate::state::rt_rq::DlRq,
    /// The ext class's runqueue (rq->scx: its local DSQ).
    pub scx: crate::state::scx::ScxRq,
    /// Σ of the enqueued tasks' util_est estimates (rq->cfs.avg.util_est; summed while
    /// util_est is tracked, see state/cpufreq.rs).
    pub util_est: crate::eas::util_est::RqUtilEst,
    /// The clamps of its runnable tasks, max-aggregated when read (rq->uclamp[]'s
    /// buckets; filled once some task sets a clamp).
    pub uclamp: Vec<crate::eas::Uclamp>,
    /// Statistics.
    pub stats: crate::metrics::CpuStats,
}

impl Rq {
    /// The rq's aggregated clamps, uclamp_rq_get() of both (None: no runnable task with a
    /// record).
    pub fn uclamp_aggregate(&self) -> Option<crate::eas::Uclamp> {
        crate::eas::uclamp_rq_aggregate(self.uclamp.iter().copied())
    }

    /// Tells whether the CPU is idle (available_idle_cpu: nothing running or queued).
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.queue.is_empty()
    }
}
