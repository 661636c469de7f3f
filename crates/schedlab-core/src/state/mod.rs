//! The state of one run: what every scheduling path reads and writes (the kernel's
//! `sched.h`: `struct rq`, `struct task_struct`, `struct cfs_rq`, ...).
//!
//! Model: plain data and the rules that keep it consistent. The behaviour that changes it
//! lives above, as `impl Simulator` blocks in `sched` (core.c) and `fair` (fair.c); the
//! event loop that drives it in `engine`.

pub mod busiest_tree;
pub mod cfs_rq;
pub mod conservation;
pub mod cpufreq;
pub mod events;
pub mod idle;
pub mod ipc;
pub mod liveness;
pub mod load_sums;
pub mod measure;
pub mod mm;
pub mod named_timers;
pub mod pelt;
pub mod root_domain;
pub mod rq;
pub mod rt_rq;
pub mod rtapp_log;
pub mod scx;
pub mod shared_runq;
pub mod task;
pub mod timeline;

use crate::error::SimError;
use crate::features::Features;
use crate::kernel::KernelConfig;
use crate::metrics::LatencyHistogram;
use crate::rng::Stream;
use crate::time::Ns;
use crate::topology::Machine;
use crate::trace::Tracer;
use crate::workload::Reporter;
use conservation::WorkConservation;
use events::EventQueue;
use rq::Rq;
use task::{Program, Task};

pub use crate::state::ipc::{Barrier, Channel, Mutex};

/// A latency histogram of `record` steps with its completions per 100 ms.
#[derive(Default)]
pub struct UserHistogram {
    /// The recorded intervals.
    pub hist: LatencyHistogram,
    /// Recordings per 100 ms of simulated time.
    pub per_100ms: Vec<u64>,
    /// Report 1-us bins too (a task's `timer_histogram`, shown as cyclictest's -h).
    pub us_bins: bool,
}

impl UserHistogram {
    /// Records an interval completed at `now`.
    pub fn record_at(&mut self, ns: crate::time::Ns, now: crate::time::Ns) {
        self.hist.record(ns);
        let bin = (now / 100_000_000) as usize;
        if self.per_100ms.len() <= bin {
            self.per_100ms.resize(bin + 1, 0);
        }
        self.per_100ms[bin] += 1;
    }
}

/// A task template that `fork` instantiates.
#[derive(Clone, Debug)]
pub struct Template {
    /// comm.
    pub name: String,
    /// Program index.
    pub program: usize,
    /// Nice.
    pub nice: i32,
    /// Allowed CPUs (None = all).
    pub affinity: Option<crate::cpumask::CpuMask>,
    /// Group index.
    pub group: usize,
    /// Shared process name, or None for a new process per child.
    pub process: Option<String>,
    /// Footprint, bytes.
    pub footprint: u64,
    /// Timer slack of the children (None = the kernel default).
    pub timer_slack_ns: Option<crate::time::Ns>,
}

/// A cgroup as the engine tracks it.
#[derive(Clone, Debug, Default)]
pub struct Group {
    /// Name ("root" for index 0).
    pub name: String,
    /// Parent index.
    pub parent: Option<usize>,
    /// CPU time used.
    pub usage_ns: Ns,
}

/// Machine-wide counters.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Migrations by distance (index = Distance as usize).
    pub migrations: [u64; 5],
    /// IPIs sent.
    pub ipis: u64,
    /// Idle-CPU scan steps of select_idle_sibling.
    pub sis_scanned: u64,
    /// Wakeups.
    pub wakeups: u64,
    /// Context switches.
    pub switches: u64,
    /// Tasks moved by periodic/idle load balance.
    pub lb_moved: u64,
    /// Active balances (running task pushed by the stopper).
    pub active_balances: u64,
    /// Overhead charged for cache refill after migration, ns.
    pub refill_ns: u128,
    /// Nohz idle balance kicks.
    pub nohz_kicks: u64,
    /// Wheel timers armed (mod_timer that queued).
    pub timers_armed: u64,
    /// Of those, placed on another CPU by the push heuristic.
    pub timers_pushed: u64,
    /// mod_timer calls served by the same-bucket shortcut.
    pub timer_same_bucket: u64,
    /// Wheel timers expired.
    pub timer_expiries: u64,
    /// Of those, expired on another CPU than their own (pull model migrator).
    pub timer_remote_expiries: u64,
    /// hrtimers expired.
    pub hrtimer_expiries: u64,
    /// IPIs sent because a new first timer landed on an idle-marked base.
    pub timer_ipis: u64,
    /// Idle CPUs told to reschedule through their polled flags instead of an IPI.
    pub wake_idle_without_ipi: u64,
    /// Idle CPUs whose timer handlers ran for remote CPUs (tmigr_handle_remote_cpu).
    pub tmigr_remote_cpus: u64,
    /// Levels walked in the timer migration hierarchy.
    pub tmigr_walk_levels: u64,
    /// Ticks that woke an idle CPU for nothing.
    pub idle_ticks_empty: u64,
    /// Timed sleeps whose task ran again before the sleep was due (always 0).
    pub early_timed_wakeups: u64,
    /// Waits with a timeout that timed out.
    pub wait_timeouts: u64,
    /// Newidle balance domains skipped by NI_RANDOM's die.
    pub newidle_random_skips: u64,
    /// Newidle balance domains skipped because shared_runq v4 covers them (<= LLC).
    pub newidle_domain_skips: u64,
    /// Newidle load_balance() passes over domains within the LLC.
    pub newidle_lb_llc: u64,
    /// Newidle load_balance() passes over domains above the LLC.
    pub newidle_lb_above_llc: u64,
}

/// One run in progress.
pub struct Simulator {
    pub(crate) scenario_name: String,
    pub(crate) seed: u64,
    pub(crate) m: Machine,
    pub(crate) k: KernelConfig,
    pub(crate) feat: Features,
    pub(crate) tick: TickState,
    pub(crate) bw: BandwidthState,
    /// Stall tracking of a checked run (the liveness property).
    pub(crate) liveness: Option<crate::state::liveness::Liveness>,
    /// The warm-up and the stationarity blocks (`[run] warmup_s`).
    pub(crate) measure: crate::state::measure::Measurement,
    pub(crate) has_smt: bool,
    pub(crate) now: Ns,
    pub(crate) end: Option<Ns>,
    pub(crate) until_done: bool,
    pub(crate) max_events: u64,
    pub(crate) q: EventQueue,
    pub(crate) events: u64,
    pub(crate) tasks: Vec<Task>,
    pub(crate) rngs: Vec<Stream>,
    pub(crate) programs: Vec<Program>,
    pub(crate) templates: Vec<Template>,
    pub(crate) mm_names: std::collections::BTreeMap<String, usize>,
    pub(crate) rqs: Vec<Rq>,
    /// CPUs with a running task (rq->curr not idle); with the queues' `nonempty` mask
    /// it gives the idle CPUs without a walk (the kernel's nohz.idle_cpus_mask role).
    pub(crate) running: crate::cpumask::CpuMask,
    /// The distinct affinity masks tasks hold (shared, see Task::cpus_allowed).
    pub(crate) affinity_masks: std::collections::HashMap<crate::cpumask::CpuMask, std::sync::Arc<crate::cpumask::CpuMask>>,
    pub(crate) ipc: IpcState,
    /// Masks of set_affinity steps.
    pub(crate) masks: Vec<crate::cpumask::CpuMask>,
    /// Group index of each set_group step.
    pub(crate) group_steps: Vec<usize>,
    pub(crate) groups: Vec<Group>,
    /// Tasks alive, the machine's background apart (they never end).
    pub(crate) live_tasks: usize,
    /// Set when background timers found every live task blocked for good (see
    /// `Simulator::deadlocked`): the run stops as "deadlock".
    pub(crate) deadlock: bool,
    /// Earliest time of the next deadlock check (at most one per simulated second).
    pub(crate) next_deadlock_check: Ns,
    pub(crate) balance: BalanceState,
    pub(crate) load_sums: crate::state::load_sums::LoadSums,
    pub(crate) stats: RunStats,
    pub(crate) trace: Option<Tracer>,
    pub(crate) pids: PidTable,
    pub(crate) mm: crate::state::mm::MmState,
    /// Timer wheels, hrtimers and the timer migration hierarchy.
    pub(crate) timers: crate::timers::Timers,
    /// Which cores and packages are really powered down (the hardware behind `cpuidle`).
    pub(crate) idle_hw: crate::state::idle::IdleHardware,
    /// Per CPU: the CPU that last wrote its timer base lock line.
    pub(crate) timer_base_writer: Vec<usize>,
    /// Named timers of tasks: (task, name index) -> timer.
    pub(crate) task_timers: crate::state::named_timers::NamedTimers,
    pub(crate) scratch_hr: Vec<crate::timers::HrtimerFn>,
    pub(crate) scratch_timers: Vec<crate::timers::TimerId>,
    pub(crate) swq: crate::state::shared_runq::SharedRunq,
    /// The runqueue and bandwidth spinlocks as cache lines, and each CPU's lock clock.
    pub(crate) spinlocks: crate::lock::Locks,
    /// Every cfs_rq (root and groups, per CPU) and group entity (state/cfs_rq.rs; the behaviour is fair/group.rs).
    pub(crate) fg: crate::state::cfs_rq::FairGroups,
    /// Positions and timeline nodes of queued tasks (state/cfs_rq.rs).
    pub(crate) queue_index: crate::state::cfs_rq::QueueIndex,
    pub(crate) reporter: Option<Reporter>,
    pub(crate) error: Option<SimError>,
    /// util_est, uclamp, EAS's overutilized flag and the cpufreq policies (state/cpufreq.rs).
    pub(crate) eas: crate::state::cpufreq::EasState,
    /// rt-app's per-activation log, where the run asked for it (RunOptions::rtapp_logs).
    pub(crate) rtapp_log: Option<Box<crate::state::rtapp_log::RtAppLog>>,
    /// The RT and deadline classes (state/rt_rq.rs; the behaviour is sched/rt.rs and
    /// sched/deadline.rs).
    pub(crate) rtc: crate::state::rt_rq::ClassState,
    /// The root domain (state/root_domain.rs).
    pub(crate) rd: crate::state::root_domain::RootDomain,
    /// The sched_ext class and its loaded scheduler (state/scx.rs; the behaviour is
    /// sched/ext/, the policies ext/).
    pub(crate) scx: crate::state::scx::ExtState,
}

/// CFS bandwidth control as the run holds it: the pools and runtimes, the per-CPU throttle
/// bookkeeping, and the quota invariant's window.
pub(crate) struct BandwidthState {
    /// The pools and per-CPU runtimes (None: no group is limited).
    pub(crate) control: Option<crate::bandwidth::CfsBandwidthControl>,
    /// Per (level, CPU): runnable tasks of the limited group at that level (its cfs_rq
    /// has tasks: `level * nr_cpus + cpu`).
    pub(crate) nr: Vec<u32>,
    /// Per group: its usage at the last refill of its pool (the quota invariant's window).
    pub(crate) window_start: Vec<Ns>,
    /// The first window in which a group used more than its quota allows, if any.
    pub(crate) violation: Option<String>,
    /// Reused buffer of the bandwidth pool's lock acquisitions (sched/locks.rs).
    pub(crate) lock_scratch: Vec<(usize, usize)>,
}

/// The synchronization objects of task programs (pipes, futexes, mutexes, barriers) and
/// their names.
pub(crate) struct IpcState {
    /// Channels by index (pipes, futex words, work queues).
    pub(crate) chans: Vec<Channel>,
    /// Whether each channel name is family-scoped ('@' prefix).
    pub(crate) chan_scoped: Vec<bool>,
    /// Family-scoped channels: (family, channel name) -> channel.
    pub(crate) family_chans: std::collections::BTreeMap<(usize, usize), usize>,
    /// Bounded channels as compiled (channel -> capacity, wake_at), for the
    /// family-scoped copies created at run time.
    pub(crate) chan_capacity: std::collections::BTreeMap<usize, (u64, u64)>,
    /// Channel and mutex names by index (to name what deadlocked tasks wait on).
    pub(crate) chan_names: Vec<String>,
    /// Sleeping mutexes by index.
    pub(crate) locks: Vec<Mutex>,
    /// Mutex names by index.
    pub(crate) lock_names: Vec<String>,
    /// Barriers by index.
    pub(crate) barriers: Vec<Barrier>,
}

/// What the run counts and measures beyond the per-task and per-CPU figures.
pub(crate) struct RunStats {
    /// Machine-wide counters.
    pub(crate) counters: Counters,
    /// Work conservation: time a CPU idled while another had a waiting task.
    pub(crate) wc: WorkConservation,
    /// Wakeup latency: from a wakeup to the task running.
    pub(crate) wakeup_latency: LatencyHistogram,
    /// Histogram of timed-sleep overshoot: when the task runs again minus when its
    /// sleep was due (cyclictest's latency).
    pub(crate) timer_latency: LatencyHistogram,
    /// Per-pair times of the timer enqueue micro-benchmark.
    pub(crate) timer_bench_ns: LatencyHistogram,
    /// Histograms of `record` steps, by histogram index: (name, data).
    pub(crate) user_hists: Vec<(String, UserHistogram)>,
    /// Events by kind, stale ones apart: what a run spends events on.
    pub(crate) events_by_kind: crate::state::events::EventCounts,
    /// The cost-table leaves the run read (`cost!`, `sched/pricing.rs`).
    pub(crate) cost_reads: crate::cost::CostReads,
    /// The idle states whose wake the run paid, per idle driver (bit = state index).
    pub(crate) idle_wake_reads: Vec<std::cell::Cell<u64>>,
}

/// The periodic tick and NOHZ: its period and phase, the do_timer duty, stopped ticks,
/// housekeeping and the watchdog.
#[derive(Default)]
pub(crate) struct TickState {
    /// The tick period (TICK_NSEC = 1 s / HZ).
    pub(crate) period_ns: Ns,
    /// The ticks' phase: every CPU ticks at offset + k x period (tick_sched_timer's
    /// common grid).
    pub(crate) offset: Ns,
    /// The CPU with the do_timer duty (tick_do_timer_cpu); None = TICK_DO_TIMER_NONE.
    pub(crate) do_timer_cpu: Option<usize>,
    /// CPUs whose tick is stopped (nohz.idle_cpus_mask weight).
    pub(crate) nohz_idle_cpus: usize,
    /// CPUs outside timer housekeeping (nohz_full=).
    pub(crate) nohz_full: crate::cpumask::CpuMask,
    /// The soft-lockup watchdog's hrtimer period (0: disabled).
    pub(crate) watchdog_period: crate::time::Ns,
    /// Each CPU's stopper task, which the watchdog wakes (with the kernel's background).
    pub(crate) stoppers: Vec<Option<usize>>,
}

/// What load balancing reads across CPUs (the root domain's overload and capacity facts,
/// nohz balancing's next time, SIS_UTIL's scan depth per LLC).
#[derive(Default)]
pub(crate) struct BalanceState {
    /// CPUs with nr_running >= 1 (what find_busiest_queue's migrate_task looks for; the
    /// CPUs with two or more are the root domain's `overloaded_cpus`).
    pub(crate) has_tasks: crate::cpumask::CpuMask,
    /// When the next nohz idle balance is due (nohz.next_balance).
    pub(crate) nohz_next_balance: Ns,
    /// Per LLC: how many CPUs select_idle_cpu() may scan (SIS_UTIL's sd_llc_shared->nr_idle_scan).
    pub(crate) llc_nr_idle_scan: Vec<usize>,
    /// CPUs whose misfit_task_load is set.
    pub(crate) nr_misfit: usize,
    /// CPU capacities differ (sched_asym_cpucap_active()).
    pub(crate) asym_capacity: bool,
}

/// pids of tasks as results and traces show them.
#[derive(Default)]
pub(crate) struct PidTable {
    /// pid of each task in results and traces, where a scenario gives pids (empty: a
    /// task's pid is its index + 1).
    pub(crate) of_task: Vec<usize>,
    /// Next pid to hand out once `of_task` is in use (0: not in use).
    pub(crate) next: usize,
    /// The pid the scenario gives the next task created.
    pub(crate) wanted: Option<usize>,
}
