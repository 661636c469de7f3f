//! The sched_ext class's run state: the scheduler loaded, its DSQs, each task's `p->scx`
//! and each runqueue's `rq->scx` (the behaviour is sched/ext/; the policies ext/).
//!
//! Mirrors: include/linux/sched/ext.h `struct sched_ext_entity` (dsq, dsq_vtime, slice,
//! weight, ops_state, ddsp_dsq_id, runnable_at), kernel/sched/sched.h `struct scx_rq`
//! (local_dsq, nr_running, cpu_released, flags), ext.c's global state (`scx_root`'s
//! ops, the global and user DSQs, the dispatch buffer `scx_dsp_ctx`, the idle masks
//! of ext_idle.c, the `SCX_EV_*` event counters).

use std::collections::BTreeMap;

use crate::cpumask::CpuMask;
use crate::ext::{Dsq, DsqId, EnqFlags, ExtOps};
use crate::time::Ns;

/// Where a task is in the class's custody (`p->scx.ops_state` with the DSQ it is on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ScxWhere {
    /// Not runnable in the class, or running (SCX_OPSS_NONE, on no DSQ).
    #[default]
    None,
    /// Held by the scheduler after `ops.enqueue()` inserted it nowhere (SCX_OPSS_QUEUED).
    Bpf,
    /// On a DSQ.
    Dsq(DsqId),
}

/// `p->scx`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ScxEntity {
    /// Enabled by the scheduler (ops.enable() ran).
    pub(crate) enabled: bool,
    /// Where it is queued.
    pub(crate) at: ScxWhere,
    /// p->scx.slice: what is left of its slice, ns (SCX_SLICE_INF: never runs out).
    pub(crate) slice: Ns,
    /// p->scx.dsq_vtime.
    pub(crate) dsq_vtime: u64,
    /// p->scx.weight (100 at nice 0).
    pub(crate) weight: u64,
    /// A direct dispatch an op asked for (p->scx.ddsp_dsq_id, ddsp_enq_flags).
    pub(crate) ddsp: Option<(DsqId, EnqFlags)>,
    /// The CPU `ops.select_cpu()` chose (p->scx.selected_cpu), for SCX_DSQ_LOCAL.
    pub(crate) selected_cpu: Option<usize>,
    /// SCX_TASK_QUEUED: runnable in the class (enqueue_task_scx() to dequeue).
    pub(crate) queued: bool,
    /// p->scx.runnable_at: when it last became runnable (the watchdog's clock).
    pub(crate) runnable_at: Ns,
}

/// `rq->scx`.
#[derive(Clone, Debug, Default)]
pub struct ScxRq {
    /// rq->scx.local_dsq.
    pub(crate) local: Dsq,
    /// rq->scx.nr_running: the class's runnable tasks on this CPU.
    pub(crate) nr_running: usize,
    /// A higher class took the CPU and `ops.cpu_release()` ran (rq->scx.cpu_released).
    pub(crate) cpu_released: bool,
    /// SCX_RQ_BAL_KEEP: the pick kept the previous task (no put, no set).
    pub(crate) bal_keep: bool,
}

/// The event counters (`SCX_EV_*`) and the class's own figures.
#[derive(Clone, Debug, Default)]
pub(crate) struct ScxCounters {
    /// ops.select_cpu() calls.
    pub(crate) select_cpu: u64,
    /// ops.enqueue() calls.
    pub(crate) enqueue: u64,
    /// ops.dispatch() calls.
    pub(crate) dispatch: u64,
    /// ops.dequeue() calls.
    pub(crate) dequeue: u64,
    /// Direct dispatches (an insert from select_cpu or enqueue).
    pub(crate) direct_dispatch: u64,
    /// Tasks the dispatch buffer flushed.
    pub(crate) dispatched: u64,
    /// Picks that kept the previous task (keep-prev).
    pub(crate) keep_prev: u64,
    /// Dispatch loops that ended at SCX_DSP_MAX_LOOPS (SCX_EV_DISPATCH_KEEP_LAST's
    /// sibling: the CPU kicks itself).
    pub(crate) dispatch_loops_exhausted: u64,
    /// SCX_EV_SELECT_CPU_FALLBACK: select_cpu chose a CPU the task may not run on.
    pub(crate) select_cpu_fallback: u64,
    /// SCX_EV_DISPATCH_LOCAL_DSQ_OFFLINE / a local insert for a CPU the task may not run
    /// on, sent to the global DSQ instead.
    pub(crate) dispatch_bad_cpu: u64,
    /// SCX_EV_DISPATCH_KEEP_LAST: a runnable prev kept when nothing else was found.
    pub(crate) keep_last: u64,
    /// SCX_EV_ENQ_SLICE_DFL: tasks inserted with a slice of 0 that got SCX_SLICE_DFL.
    pub(crate) enq_slice_dfl: u64,
    /// Kicks sent (scx_bpf_kick_cpu()) and those that preempted a task.
    pub(crate) kicks: u64,
    /// Kicks that zeroed a running task's slice.
    pub(crate) kick_preempts: u64,
    /// ops.cpu_release() calls.
    pub(crate) cpu_release: u64,
    /// ops.cpu_acquire() calls.
    pub(crate) cpu_acquire: u64,
    /// Slices that ran out at a tick.
    pub(crate) slice_expired: u64,
}

/// The class's state for the run.
#[derive(Default)]
pub(crate) struct ExtState {
    /// A scheduler is loaded (scx_enabled()).
    pub(crate) enabled: bool,
    /// Every fair task is in the class (scx_switched_all(): not SCX_OPS_SWITCH_PARTIAL).
    pub(crate) switched_all: bool,
    /// The scheduler; taken out while one of its ops runs.
    pub(crate) ops: Option<Box<dyn ExtOps>>,
    /// Its name.
    pub(crate) name: String,
    /// Its flags.
    pub(crate) flags: crate::ext::OpsFlags,
    /// The dispatch buffer's size (dispatch_max_batch or its default).
    pub(crate) max_batch: usize,
    /// SCX_DSQ_GLOBAL.
    pub(crate) global: Dsq,
    /// The scheduler's DSQs by id.
    pub(crate) user: BTreeMap<u64, Dsq>,
    /// Per task (tasks created later grow the table).
    pub(crate) tasks: Vec<ScxEntity>,
    /// The dispatch buffer of the `ops.dispatch()` running (scx_dsp_ctx): the inserts
    /// it made, flushed when it returns.
    pub(crate) dsp_buf: Vec<(usize, DsqId, EnqFlags)>,
    /// The op running, for the kfuncs' checks and SCX_DSQ_LOCAL.
    pub(crate) op: Option<ScxOp>,
    /// Tasks the running dispatch moved or inserted (dspc->nr_tasks).
    pub(crate) dsp_nr_tasks: usize,
    /// The CPU in balance_one() (SCX_RQ_IN_BALANCE): inserts there do not reschedule.
    pub(crate) in_balance: Option<usize>,
    /// Per CPU: a kick it sent itself during its schedule(), sent when that ends.
    pub(crate) self_kick: Vec<Option<crate::ext::KickFlags>>,
    /// The waking CPU of the select_cpu running (WAKE_SYNC's waker).
    pub(crate) waker_cpu: usize,
    /// The built-in idle tracking is on (no update_idle op, or KEEP_BUILTIN_IDLE).
    pub(crate) builtin_idle: bool,
    /// Idle CPUs (idle_masks.cpu).
    pub(crate) idle_cpus: CpuMask,
    /// CPUs whose whole core is idle (idle_masks.smt).
    pub(crate) idle_smt: CpuMask,
    /// Why and when the scheduler was ejected (scx_exit_info), once it was.
    pub(crate) exit: Option<ScxExit>,
    /// An error was raised: the disable work runs next (scx_disable()'s irq_work).
    pub(crate) disable_pending: Option<ScxExit>,
    /// ops.timeout_ms as ns (the watchdog's bound).
    pub(crate) timeout: Ns,
    /// Counters.
    pub(crate) counters: ScxCounters,
    /// ops calls by name.
    pub(crate) op_calls: BTreeMap<&'static str, u64>,
}

/// How the scheduler left (`enum scx_exit_kind` and `scx_exit_info`).
#[derive(Clone, Debug)]
pub(crate) struct ScxExit {
    /// SCX_EXIT_ERROR (1024) or SCX_EXIT_ERROR_STALL (1026).
    pub(crate) kind: u32,
    /// When the error was raised.
    pub(crate) at: Ns,
    /// Its message.
    pub(crate) msg: String,
    /// When the tasks were back in the fair class.
    pub(crate) disabled_at: Ns,
}

/// The op a kfunc is called from (the kernel's SCX_KF_* context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScxOp {
    /// ops.select_cpu(p) run by the waking CPU: (cpu, p).
    SelectCpu(usize, usize),
    /// ops.enqueue(p) on `cpu`: (cpu, p).
    Enqueue(usize, usize),
    /// ops.dispatch() on `cpu`.
    Dispatch(usize),
    /// Any other op, on `cpu`.
    Other(usize),
}

impl ScxOp {
    /// The CPU the op runs on.
    pub(crate) fn cpu(self) -> usize {
        match self {
            ScxOp::Dispatch(c) | ScxOp::Other(c) => c,
            ScxOp::SelectCpu(c, _) | ScxOp::Enqueue(c, _) => c,
        }
    }
}

impl ExtState {
    /// The per-task record.
    #[inline]
    pub(crate) fn task(&mut self, p: usize) -> &mut ScxEntity {
        if p >= self.tasks.len() {
            self.tasks.resize(p + 1, ScxEntity::default());
        }
        &mut self.tasks[p]
    }

    /// The per-task record, read-only (a task never recorded is not in the class).
    #[inline]
    pub(crate) fn get(&self, p: usize) -> ScxEntity {
        self.tasks.get(p).copied().unwrap_or_default()
    }
}
