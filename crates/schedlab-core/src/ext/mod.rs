//! sched_ext: the scheduling class whose policy is a program loaded at run time, and
//! the policies written here against its op table.
//!
//! Mirrors: kernel/sched/ext.c and ext_idle.c (6.12-6.18): `struct sched_ext_ops`, the
//! `SCX_*` constants and flags, the kfuncs a scheduler calls (`scx_bpf_dsq_insert()`,
//! `scx_bpf_dsq_move_to_local()`, `scx_bpf_kick_cpu()`, `scx_bpf_select_cpu_dfl()`,
//! ...); tools/sched_ext/scx_simple.bpf.c and scx_central.bpf.c for the two policies
//! of `simple.rs` and `central.rs`.
//! Model: a policy is a Rust type implementing [`ExtOps`], one method per op of
//! `sched_ext_ops` with the kernel's behaviour for an op a scheduler leaves out; it
//! reaches the class through [`Kfuncs`], the kfuncs it may call, which the class
//! (`sched/ext/kfuncs.rs`) implements on the simulator. The class itself (DSQs, the dispatch
//! loop, keep-prev, slices, kicks, the built-in idle tracking) is `sched/ext/`; its
//! state is `state/scx.rs`. Not modeled yet: BPF programs compiled from C (the
//! schedulers of the scx crates), bypass mode, cgroup ops.

pub mod central;
pub mod dsq;
pub mod simple;

pub use dsq::{Dsq, DsqId, DsqOrder};

use crate::state::task::TaskId;
use crate::time::Ns;

/// SCX_SLICE_DFL: the slice a task gets when a scheduler gives none (20 ms; declared:
/// include/linux/sched/ext.h).
pub const SCX_SLICE_DFL: Ns = 20_000_000;
/// SCX_SLICE_INF: a slice that never runs out (U64_MAX; declared: sched/ext.h).
pub const SCX_SLICE_INF: Ns = u64::MAX;
/// SCX_DSP_MAX_LOOPS: how many times balance_one() calls `ops.dispatch()` while each
/// call dispatched something and the local DSQ stays empty (declared: kernel/sched/ext.c).
pub const SCX_DSP_MAX_LOOPS: u32 = 32;
/// SCX_DSP_DFL_MAX_BATCH: the dispatch buffer's slots when `dispatch_max_batch` is 0
/// (declared: ext.c).
pub const SCX_DSP_DFL_MAX_BATCH: usize = 32;
/// SCX_WATCHDOG_MAX_TIMEOUT: the longest `timeout_ms` (30 s), and its default (declared:
/// ext.c, 30 * HZ).
pub const SCX_WATCHDOG_MAX_TIMEOUT: Ns = 30_000_000_000;
/// The cgroup-style weight of a nice-0 task (`p->scx.weight`, 1..10000; declared:
/// CGROUP_WEIGHT_DFL, sched_weight_to_cgroup()).
pub const SCX_WEIGHT_DFL: u64 = 100;

/// `ops.flags` (`SCX_OPS_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpsFlags {
    /// SCX_OPS_ENQ_LAST: a runnable `prev` the dispatch found nothing to replace goes
    /// through `ops.enqueue()` with SCX_ENQ_LAST instead of running on.
    pub enq_last: bool,
    /// SCX_OPS_KEEP_BUILTIN_IDLE: the built-in idle tracking stays on with an
    /// `update_idle` op.
    pub keep_builtin_idle: bool,
    /// SCX_OPS_SWITCH_PARTIAL: only SCHED_EXT tasks join the class; the others stay fair.
    pub switch_partial: bool,
}

/// `enq_flags` of `ops.enqueue()` and the inserts (`SCX_ENQ_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnqFlags {
    /// SCX_ENQ_WAKEUP: a wakeup's enqueue.
    pub wakeup: bool,
    /// SCX_ENQ_HEAD: at the head of a FIFO DSQ.
    pub head: bool,
    /// SCX_ENQ_PREEMPT: the insert into a local DSQ preempts that CPU's current task.
    pub preempt: bool,
    /// SCX_ENQ_LAST: the CPU's last runnable task, about to leave it idle otherwise.
    pub last: bool,
    /// SCX_ENQ_DSQ_PRIQ (internal, set by `scx_bpf_dsq_insert_vtime()`): ordered by vtime.
    pub vtime: bool,
}

/// `wake_flags` of `ops.select_cpu()` (`SCX_WAKE_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeFlags {
    /// SCX_WAKE_FORK: a new task's first placement.
    pub fork: bool,
    /// SCX_WAKE_TTWU: a wakeup.
    pub ttwu: bool,
    /// SCX_WAKE_SYNC: the waker is about to sleep (WF_SYNC).
    pub sync: bool,
}

/// `scx_bpf_kick_cpu()`'s flags (`SCX_KICK_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KickFlags {
    /// SCX_KICK_IDLE: only if the CPU is idle (wake it to dispatch).
    pub idle: bool,
    /// SCX_KICK_PREEMPT: zero the slice of the CPU's current task and reschedule it.
    pub preempt: bool,
}

/// Why `ops.cpu_release()` ran: a higher class took the CPU (`scx_cpu_release_args`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseReason {
    /// An RT task (SCX_CPU_PREEMPT_RT).
    Rt,
    /// A deadline task (SCX_CPU_PREEMPT_DL).
    Dl,
    /// Another class above ext (SCX_CPU_PREEMPT_UNKNOWN): fair, with SCX_OPS_SWITCH_PARTIAL.
    Unknown,
}

/// The kfuncs a policy calls, as `scx_bpf_*` and the task fields BPF reads and writes.
/// Where the kernel restricts a kfunc to some ops (`SCX_KF_*` masks), the class
/// enforces it as the kernel does (an insert outside enqueue / select_cpu / dispatch is
/// a scheduler error).
pub trait Kfuncs {
    /// scx_bpf_now(): the current time, ns.
    fn now(&self) -> Ns;
    /// nr_cpu_ids.
    fn nr_cpus(&self) -> usize;
    /// bpf_get_smp_processor_id(): the CPU the callback runs on.
    fn this_cpu(&self) -> usize;
    /// scx_bpf_create_dsq(id, node).
    fn create_dsq(&mut self, id: u64) -> Result<(), String>;
    /// scx_bpf_dsq_insert(p, dsq, slice, enq_flags).
    fn dsq_insert(&mut self, p: TaskId, dsq: DsqId, slice: Ns, flags: EnqFlags);
    /// scx_bpf_dsq_insert_vtime(p, dsq, slice, vtime, enq_flags).
    fn dsq_insert_vtime(&mut self, p: TaskId, dsq: DsqId, slice: Ns, vtime: u64, flags: EnqFlags);
    /// scx_bpf_dsq_move_to_local(dsq): the first task of `dsq` that may run here moves
    /// to this CPU's local DSQ (from `ops.dispatch()` only).
    fn dsq_move_to_local(&mut self, dsq: u64) -> bool;
    /// scx_bpf_dsq_nr_queued(dsq).
    fn dsq_nr_queued(&self, dsq: DsqId) -> usize;
    /// scx_bpf_dispatch_nr_slots(): the dispatch buffer's free slots.
    fn dispatch_nr_slots(&self) -> usize;
    /// scx_bpf_kick_cpu(cpu, flags).
    fn kick_cpu(&mut self, cpu: usize, flags: KickFlags);
    /// scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle): (cpu, is_idle).
    fn select_cpu_dfl(&mut self, p: TaskId, prev_cpu: usize, wake_flags: WakeFlags) -> (usize, bool);
    /// scx_bpf_task_running(p).
    fn task_running(&self, p: TaskId) -> bool;
    /// scx_bpf_task_cpu(p).
    fn task_cpu(&self, p: TaskId) -> usize;
    /// bpf_cpumask_test_cpu(cpu, p->cpus_ptr).
    fn task_allowed_on(&self, p: TaskId, cpu: usize) -> bool;
    /// p->nr_cpus_allowed == 1 of a kernel thread (PF_KTHREAD): never, the scenarios'
    /// tasks are user threads.
    fn is_percpu_kthread(&self, _p: TaskId) -> bool {
        false
    }
    /// p->scx.weight (100 at nice 0).
    fn task_weight(&self, p: TaskId) -> u64;
    /// p->scx.dsq_vtime.
    fn task_vtime(&self, p: TaskId) -> u64;
    /// p->scx.dsq_vtime = v.
    fn set_task_vtime(&mut self, p: TaskId, v: u64);
    /// p->scx.slice.
    fn task_slice(&self, p: TaskId) -> Ns;
    /// bpf_timer_start(): `ops.timer()` runs in `delay` ns, on this CPU.
    fn timer_start(&mut self, delay: Ns);
    /// scx_bpf_error(): the scheduler gives up; the class records why.
    fn error(&mut self, msg: String);
}

/// `struct sched_ext_ops`: a policy. Each op's default is the kernel's behaviour when a
/// scheduler leaves it NULL.
pub trait ExtOps {
    /// ops.name.
    fn name(&self) -> &'static str;
    /// ops.flags.
    fn flags(&self) -> OpsFlags {
        OpsFlags::default()
    }
    /// ops.dispatch_max_batch (0: SCX_DSP_DFL_MAX_BATCH).
    fn dispatch_max_batch(&self) -> usize {
        0
    }
    /// ops.timeout_ms: how long a runnable task may wait before the watchdog ejects the
    /// scheduler (0: SCX_WATCHDOG_MAX_TIMEOUT, 30 s; more is refused).
    fn timeout_ms(&self) -> u64 {
        0
    }
    /// ops.init(): before any task joins.
    fn init(&mut self, _k: &mut dyn Kfuncs) -> Result<(), String> {
        Ok(())
    }
    /// ops.select_cpu() of a waking or new task. Absent (the default): the built-in
    /// idle selection, with a direct dispatch to the chosen CPU's local DSQ when it
    /// found an idle one (select_task_rq_scx()).
    fn select_cpu(&mut self, k: &mut dyn Kfuncs, p: TaskId, prev_cpu: usize, wake_flags: WakeFlags) -> usize {
        let (cpu, idle) = k.select_cpu_dfl(p, prev_cpu, wake_flags);
        if idle {
            k.dsq_insert(p, DsqId::Local, SCX_SLICE_DFL, EnqFlags::default());
        }
        cpu
    }
    /// ops.enqueue(). Absent: the global DSQ with the default slice.
    fn enqueue(&mut self, k: &mut dyn Kfuncs, p: TaskId, flags: EnqFlags) {
        k.dsq_insert(p, DsqId::Global, SCX_SLICE_DFL, flags);
    }
    /// ops.dequeue(): a task the scheduler holds (not on a DSQ) leaves the class's
    /// custody (it is dequeued, or picked from elsewhere).
    fn dequeue(&mut self, _k: &mut dyn Kfuncs, _p: TaskId) {}
    /// ops.dispatch(cpu, prev): fill `cpu`'s local DSQ.
    fn dispatch(&mut self, _k: &mut dyn Kfuncs, _cpu: usize, _prev: Option<TaskId>) {}
    /// ops.tick(): the tick, with `p` running.
    fn tick(&mut self, _k: &mut dyn Kfuncs, _p: TaskId) {}
    /// ops.runnable(): `p` became runnable.
    fn runnable(&mut self, _k: &mut dyn Kfuncs, _p: TaskId, _flags: EnqFlags) {}
    /// ops.running(): `p` starts running on its CPU.
    fn running(&mut self, _k: &mut dyn Kfuncs, _p: TaskId) {}
    /// ops.stopping(): `p` stops running (`runnable`: it stays runnable).
    fn stopping(&mut self, _k: &mut dyn Kfuncs, _p: TaskId, _runnable: bool) {}
    /// ops.quiescent(): `p` is no longer runnable.
    fn quiescent(&mut self, _k: &mut dyn Kfuncs, _p: TaskId) {}
    /// ops.enable(): `p` is scheduled by this scheduler from now on.
    fn enable(&mut self, _k: &mut dyn Kfuncs, _p: TaskId) {}
    /// ops.cpu_acquire(): the class has `cpu` back after a higher class held it.
    fn cpu_acquire(&mut self, _k: &mut dyn Kfuncs, _cpu: usize) {}
    /// ops.cpu_release(): a higher class takes `cpu`.
    fn cpu_release(&mut self, _k: &mut dyn Kfuncs, _cpu: usize, _reason: ReleaseReason) {}
    /// ops.update_idle(): `cpu` enters (`idle`) or leaves idle.
    fn update_idle(&mut self, _k: &mut dyn Kfuncs, _cpu: usize, _idle: bool) {}
    /// Whether the scheduler has an update_idle op (it turns the built-in idle
    /// tracking off unless SCX_OPS_KEEP_BUILTIN_IDLE).
    fn has_update_idle(&self) -> bool {
        false
    }
    /// The callback of the scheduler's bpf_timer (`Kfuncs::timer_start()`).
    fn timer(&mut self, _k: &mut dyn Kfuncs) {}
}

/// The policies written here, by the name `[kernel.sched_ext] scheduler` takes.
pub const POLICIES: &[(&str, &str)] = &[
    ("simple", "tools/sched_ext/scx_simple: one global vtime DSQ (weighted fair), select_cpu by the built-in idle selection"),
    ("simple_fifo", "scx_simple with fifo_sched: one global FIFO DSQ"),
    (
        "central",
        "tools/sched_ext/scx_central: CPU 0 dispatches for every CPU from one queue, infinite slices, a 1 ms timer preempting CPUs past their slice",
    ),
];

/// The scheduler a `[kernel.sched_ext]` table loads on a kernel of `version` with
/// `nr_cpus`, or the error naming the field: sched_ext is mainline from 6.12.
pub fn load(
    spec: &crate::scenario::SchedExtSpec,
    version: crate::kernel::KernelVersion,
    nr_cpus: usize,
) -> Result<Box<dyn ExtOps>, crate::error::ScenarioError> {
    use crate::error::ScenarioError;
    if version < crate::kernel::KernelVersion::new(6, 12) {
        return Err(ScenarioError::new(
            "kernel.sched_ext",
            format!("sched_ext is in mainline from 6.12, the profile is {version}: set [kernel] profile = \"6.12\" or later (--profile 6.12)"),
        ));
    }
    policy(&spec.scheduler, nr_cpus).map_err(|e| ScenarioError::new("kernel.sched_ext.scheduler", e))
}

/// The policy named `name`, or an error listing the known ones.
pub fn policy(name: &str, nr_cpus: usize) -> Result<Box<dyn ExtOps>, String> {
    match name {
        "simple" => Ok(Box::new(simple::Simple::new(false))),
        "simple_fifo" => Ok(Box::new(simple::Simple::new(true))),
        "central" => Ok(Box::new(central::Central::new(0, nr_cpus))),
        other => {
            let names: Vec<_> = POLICIES.iter().map(|(n, _)| *n).collect();
            Err(format!("unknown sched_ext scheduler '{other}': expected one of {}", names.join(", ")))
        }
    }
}
