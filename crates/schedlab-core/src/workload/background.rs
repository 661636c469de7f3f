//! The kernel's own periodic work on every CPU (`[kernel] background = "kernel"`): tasks
//! and timers that run through the normal paths, so that they wake on a CPU, queue
//! behind or preempt what runs there, set the root domain's overload flag when a CPU
//! has two tasks, and keep a CPU out of idle while they run.
//!
//! Mirrors: mm/vmstat.c vmstat_update(): per-CPU deferrable delayed work
//! (INIT_DEFERRABLE_WORK, queue_delayed_work_on() on mm_percpu_wq) re-armed every
//! `vm.stat_interval` (HZ: 1 s) by itself, run by the CPU's bound kworker (nice 0);
//! kernel/watchdog.c watchdog_timer_fn(): every sample period (2 x watchdog_thresh / 5,
//! 4 s at the default 10) it queues softlockup_fn() on the CPU's stopper thread
//! (stop_one_cpu_nowait(), kernel/stop_machine.c cpu_stopper_thread()), which preempts
//! whatever runs there; mm/compaction.c kcompactd() (5.9+, proactive compaction): one
//! thread per NUMA node, allowed on the node's CPUs (set_cpus_allowed_ptr(tsk,
//! cpumask_of_node())), waking every HPAGE_FRAG_CHECK_INTERVAL_MSEC (500 ms) from
//! wait_event_freezable_timeout() (schedule_timeout(): a wheel timer) to read the node's
//! fragmentation score (should_proactive_compact_node()); on an idle machine the score
//! is below its mark and it sleeps again.
//! Model: the stopper is SCHED_FIFO 99 pinned to its CPU, as the kernel creates it
//! (sched_set_stop_task()) before moving it to stop_sched_class: here a deadline task
//! makes it wait, where the kernel's stop class runs first. Not modeled yet: RCU's
//! grace-period and callback kthreads, writeback, the NMI watchdog and softirqs as
//! mechanisms; userspace daemons and the rest of a host come from a measured profile
//! (`[kernel.background_profile]`, `profile_tasks`).
//!
//! Costs (no published per-call figure was found; both are estimates with a wide band):
//! - vmstat_update(): refresh_cpu_vm_stats() folds the CPU's vmstat differentials of
//!   each populated zone and node into the global counters (a few dozen counters, each
//!   an xchg and an atomic add): 2 us, band 0.5-10 us.
//! - softlockup_fn(): a timestamp write and a complete(): 1 us with the stopper's own
//!   loop, band 0.3-3 us.
//! - kcompactd's check: fragmentation_score_node() sums each populated zone's
//!   extfrag_for_order() over the free lists' orders: 10 us, band 3-30 us (the
//!   development VM's kcompactd0 ran 22-28 us a wakeup in `validate-host
//!   --record-background`, its switches included).

use super::task;
use crate::scenario::{LoopSpec, ModTimerSpec, OpSpec, SchedAttrSpec, TaskSpec};
use crate::time::Duration;

/// vmstat_update()'s work (estimate, band 0.5-10 us: see the module's notes).
const VMSTAT_UPDATE_NS: u64 = 2_000;
/// sysctl vm.stat_interval (declared: mm/vmstat.c `sysctl_stat_interval = HZ`, 1 s).
const STAT_INTERVAL_NS: u64 = 1_000_000_000;
/// softlockup_fn() on the stopper (estimate, band 0.3-3 us).
const SOFTLOCKUP_FN_NS: u64 = 1_000;
/// HPAGE_FRAG_CHECK_INTERVAL_MSEC (declared: mm/compaction.c, 500 ms).
const FRAG_CHECK_INTERVAL_NS: u64 = 500_000_000;
/// kcompactd's wakeup with nothing to compact (estimate, band 3-30 us: module notes).
const KCOMPACTD_CHECK_NS: u64 = 10_000;
/// Proactive compaction, and with it kcompactd's periodic wakeup (facaa4c1c2a5,
/// "mm: proactive compaction", 5.9).
const PROACTIVE_COMPACTION: crate::kernel::KernelVersion = crate::kernel::KernelVersion::new(5, 9);

/// The stopper's wait between the watchdog's wakeups: longer than any run (the
/// watchdog's hrtimer wakes it every sample period).
const STOPPER_IDLE_NS: u64 = 3_600_000_000_000;

/// The channel each kworker waits on (scoped to it: '@'), signalled by its timer.
const VMSTAT_SIGNAL: &str = "@vmstat";

/// The stopper of `cpu` (the kernel's migration/N): the watchdog wakes it.
pub fn stopper_name(cpu: usize) -> String {
    format!("migration/{cpu}")
}

/// The kernel's background tasks on machine `m` ticking every `tick_ns`, kernel
/// `version`: per CPU a kworker and a stopper, per NUMA node a kcompactd (5.9+). Each
/// CPU's vmstat work starts 3 jiffies after the previous CPU's, as
/// round_jiffies_relative() skews each CPU's whole-second expiry by 3 jiffies per CPU.
pub fn kernel_tasks(m: &crate::topology::Machine, tick_ns: u64, version: crate::kernel::KernelVersion) -> Vec<TaskSpec> {
    let nr_cpus = m.nr_cpus();
    let vmstat_signal = VMSTAT_SIGNAL;
    let mut out = Vec::with_capacity(2 * nr_cpus + m.node_span.len());
    for cpu in 0..nr_cpus {
        let mut kworker = task(
            &format!("kworker/{cpu}:1"),
            vec![OpSpec::Loop(LoopSpec {
                count: None,
                body: vec![
                    OpSpec::ModTimer(ModTimerSpec {
                        timer: "vmstat".into(),
                        delay: Duration(STAT_INTERVAL_NS),
                        pinned: true,
                        deferrable: true,
                        signal: Some(vmstat_signal.into()),
                    }),
                    OpSpec::Wait(vmstat_signal.into()),
                    OpSpec::Run(Duration(VMSTAT_UPDATE_NS)),
                ],
            })],
        );
        kworker.affinity = Some(cpu.to_string());
        kworker.start = Some(Duration((cpu as u64 * 3 * tick_ns) % STAT_INTERVAL_NS));
        let mut stopper = task(
            &stopper_name(cpu),
            vec![OpSpec::Loop(LoopSpec {
                count: None,
                body: vec![OpSpec::Sleep(Duration(STOPPER_IDLE_NS)), OpSpec::Run(Duration(SOFTLOCKUP_FN_NS))],
            })],
        );
        stopper.affinity = Some(cpu.to_string());
        stopper.sched_attr = Some(SchedAttrSpec { policy: Some("SCHED_FIFO".into()), priority: Some(99), ..Default::default() });
        out.push(kworker);
        out.push(stopper);
    }
    if version >= PROACTIVE_COMPACTION {
        for (node, span) in m.node_span.iter().enumerate() {
            let mut kcompactd = task(
                &format!("kcompactd{node}"),
                vec![OpSpec::Loop(LoopSpec {
                    count: None,
                    body: vec![OpSpec::SleepTimeout(Duration(FRAG_CHECK_INTERVAL_NS)), OpSpec::Run(Duration(KCOMPACTD_CHECK_NS))],
                })],
            );
            kcompactd.affinity = Some(span.to_list());
            out.push(kcompactd);
        }
    }
    out
}

/// The threads of a background profile (`[kernel.background_profile]`) on a machine of
/// `nr_cpus`: per source, `tasks` unpinned threads sharing its rate, or one pinned to
/// each CPU at its rate; each sleeps an exponential time (mean: one over its own rate)
/// then runs an exponential time (mean `run_us`), so the wakeups are a Poisson process.
pub fn profile_tasks(profile: &crate::scenario::BackgroundProfileSpec, nr_cpus: usize) -> Vec<TaskSpec> {
    let mut out = Vec::new();
    for src in &profile.sources {
        let threads = if src.per_cpu { nr_cpus } else { src.tasks };
        let rate_each = if src.per_cpu { src.wakeups_per_s } else { src.wakeups_per_s / src.tasks as f64 };
        let gap = Duration((1e9 / rate_each).round().max(1.0) as u64);
        let run = Duration(((src.run_us * 1e3).round() as u64).max(1));
        for i in 0..threads {
            let mut t = task(
                &format!("{}#{i}", src.name),
                vec![OpSpec::Loop(LoopSpec { count: None, body: vec![OpSpec::SleepExp(gap), OpSpec::RunExp(run)] })],
            );
            t.nice = src.nice;
            if src.per_cpu {
                t.affinity = Some(i.to_string());
            }
            if let Some(prio) = src.fifo_priority {
                t.sched_attr = Some(SchedAttrSpec { policy: Some("SCHED_FIFO".into()), priority: Some(prio as i64), ..Default::default() });
            }
            out.push(t);
        }
    }
    out
}
