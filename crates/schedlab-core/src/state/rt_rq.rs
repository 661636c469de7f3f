//! The RT and deadline classes' runqueue state: each CPU's `rt_rq` (its priority array,
//! RT throttling's rt_time) and `dl_rq` (its deadline tasks, GRUB's bandwidths, the fair
//! deadline server), and what the root domain shares (cpupri, the RT-overloaded CPUs,
//! the admitted deadline bandwidth).
//!
//! Mirrors: kernel/sched/sched.h `struct rt_rq`, `struct dl_rq`, `struct root_domain`
//! (cpupri, rto_mask, dl_bw), `struct rt_bandwidth` (def_rt_bandwidth), and the fair
//! server's `rq->fair_server` (6.12). Read: torvalds/linux rt.c and deadline.c as the
//! mounted index holds them (deadline.c at 0039189a, a 5.x tree; rt.c's
//! sched_rt_runtime_exceeded() in 6.x form), for 6.12's fair server the commits named in
//! sched/deadline.rs.
//! Model: one root domain (the whole machine); no RT group scheduling (the root rt_rq
//! only, as CONFIG_RT_GROUP_SCHED=n kernels have it).

use crate::cpumask::CpuMask;
use crate::rt::deadline::DlEntity;
use crate::rt::prio_array::RtPrioArray;
use crate::state::task::TaskId;
use crate::time::Ns;

/// One CPU's RT runqueue (`struct rt_rq`).
#[derive(Clone, Debug, Default)]
pub struct RtRq {
    /// The queued RT tasks by priority (the running one stays queued, as in rt.c).
    pub active: RtPrioArray,
    /// rt_nr_running.
    pub rt_nr_running: usize,
    /// RT time used in the current rt_period (RT throttling).
    pub rt_time: Ns,
    /// Out of RT runtime until the period timer refreshes it.
    pub rt_throttled: bool,
}

/// The deadline server of one CPU's fair class (`rq->fair_server`, 6.12).
#[derive(Clone, Debug)]
pub struct DlServer {
    /// Its CBS reservation.
    pub dl: DlEntity,
    /// Started (dl_server_start(): fair tasks are runnable here).
    pub active: bool,
    /// dl_defer_armed: it waits for its zero-laxity time before it competes.
    pub defer_armed: bool,
    /// dl_defer_running: it reached its zero-laxity time and competes as a deadline
    /// entity until the fair class gets its time on its own again.
    pub defer_running: bool,
    /// The server is what picked the fair task now running (it pays for its runtime).
    pub running: bool,
    /// When its timer fires (replenishment or the deferred start), if armed.
    pub timer_at: Option<Ns>,
    /// The armed timer.
    pub timer_key: Option<crate::timers::HrtimerKey>,
}

/// One CPU's deadline runqueue (`struct dl_rq`) and fair server.
#[derive(Clone, Debug, Default)]
pub struct DlRq {
    /// Queued (not throttled) deadline tasks; the pick takes the earliest deadline.
    pub queued: Vec<TaskId>,
    /// GRUB's running_bw (2^-20 units): the bandwidth of the active deadline tasks
    /// (this_bw, of every task assigned here, is summed when GRUB reads it).
    pub running_bw: u64,
    /// The fair server (None before 6.12 or with DL_SERVER off).
    pub server: Option<DlServer>,
}

/// The classes' state of a run.
#[derive(Clone, Debug, Default)]
pub struct ClassState {
    /// Any task of the run is (or may become) RT or deadline: the class paths run only then.
    pub in_use: bool,
    /// Deadline tasks pushed and pulled (push_dl_task, pull_dl_task).
    pub dl_pushes: u64,
    /// See `dl_pushes`.
    pub dl_pulls: u64,
    /// The rt_bandwidth period timer is armed (rt_period_active).
    pub rt_period_active: bool,
    /// Pushes and pulls done (push_rt_task, pull_rt_task).
    pub rt_pushes: u64,
    /// See `rt_pushes`.
    pub rt_pulls: u64,
    /// Push IPIs sent (tell_cpu_to_push() and the forwarding in rto_push_irq_work_func()).
    pub rt_push_ipis: u64,
    /// Times RT throttling stopped an rt_rq.
    pub rt_throttles: u64,
    /// Fair-server runs (it picked a fair task over RT).
    pub server_picks: u64,
    /// Mutexes inherit priority (rt-app's global pi_enabled).
    pub pi_enabled: bool,
    /// SCHED_DEADLINE tasks refused with EBUSY that stayed SCHED_OTHER (ebusy_stays_fair).
    pub dl_refused: u64,
    /// Forks refused with EAGAIN (a deadline parent, sched_fork()).
    pub fork_eagain: u64,
    /// Some task of the run is SCHED_IDLE: sched_idle_cpu() is kept (h_nr_idle below).
    pub idle_policy: bool,
    /// Per CPU: the SCHED_IDLE tasks among the fair tasks in rq->nr_running (the root
    /// cfs_rq's h_nr_idle, group SCHED_IDLE (cpu.idle) not modeled).
    pub h_nr_idle: Vec<usize>,
    /// sched_idle_rq(): CPUs whose runnable tasks are all SCHED_IDLE (and at least one).
    pub sched_idle_cpus: CpuMask,
}

impl ClassState {
    /// Empty state for `nr` CPUs.
    pub fn new(nr: usize) -> ClassState {
        ClassState { h_nr_idle: vec![0; nr], ..Default::default() }
    }
}
