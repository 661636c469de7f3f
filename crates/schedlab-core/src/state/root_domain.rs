//! The root domain: what every CPU of one balance span shares, read and written across
//! CPUs (the kernel's `struct root_domain`).
//!
//! Mirrors: kernel/sched/sched.h `struct root_domain`: overloaded (RD_OVERLOADED's
//! sticky flag, set in add_nr_running() when a runqueue reaches two tasks), overutilized
//! (EAS), max_cpu_capacity, rto_mask with the RT_PUSH_IPI iterator (rto_cpu,
//! rto_loop, rto_loop_next), cpupri, cpudl, dl_bw and the performance domains (rd->pd).
//! Model: one root domain, the whole machine (no cpusets partitions).

use crate::cpumask::CpuMask;
use crate::eas::energy::{PerfDomainCosts, RootDomainOverutilized};
use crate::rt::cpudl::CpuDl;
use crate::rt::cpupri::CpuPri;
use crate::rt::deadline::DlBw;

/// `struct root_domain`.
#[derive(Clone, Debug, Default)]
pub(crate) struct RootDomain {
    /// rd->overloaded as the kernel keeps it (RD_OVERLOADED): set when a runqueue reaches
    /// two tasks, rewritten only by a balance pass at the root domain.
    pub(crate) overloaded: bool,
    /// CPUs with two or more runnable tasks now (rd->overloaded's live form).
    pub(crate) nr_overloaded: usize,
    /// Those CPUs (what find_busiest_queue's migrate_task looks for).
    pub(crate) overloaded_cpus: CpuMask,
    /// rd->overutilized (EAS).
    pub(crate) overutilized: RootDomainOverutilized,
    /// The largest CPU capacity (rd->max_cpu_capacity).
    pub(crate) max_cpu_capacity: u64,
    /// rd->rto_mask: CPUs with more than one runnable RT task (pushable work).
    pub(crate) rto_mask: CpuMask,
    /// RT_PUSH_IPI's iterator: rd->rto_cpu, the overloaded CPU the push IPI is at (None:
    /// no IPI in flight, the kernel's -1).
    pub(crate) rto_cpu: Option<usize>,
    /// rd->rto_loop: the rto_loop_next the iterator last started a pass for.
    pub(crate) rto_loop: u64,
    /// rd->rto_loop_next: bumped by every CPU that asks for a push (tell_cpu_to_push()).
    pub(crate) rto_loop_next: u64,
    /// rd->cpupri: the CPUs by the priority they run at.
    pub(crate) cpupri: Option<CpuPri>,
    /// rd->cpudl: each CPU's earliest deadline (global EDF's push and pull).
    pub(crate) cpudl: CpuDl,
    /// rd->dl_bw: the admitted deadline bandwidth.
    pub(crate) dl_bw: DlBw,
    /// rd->pd: the performance domains.
    pub(crate) pd: PerfDomains,
}

/// rd->pd, the list build_perf_domains() makes: one domain per core type with an Energy
/// Model, built when schedutil drives every policy (empty otherwise, as the kernel
/// builds none without EAS's governor).
#[derive(Clone, Debug, Default)]
pub(crate) struct PerfDomains {
    /// Each domain's costs (pd->em_pd's table, scaled to the CPUs' capacity).
    pub(crate) costs: Vec<PerfDomainCosts>,
    /// Each domain's EM name (core type).
    pub(crate) names: Vec<String>,
    /// Each CPU's domain.
    pub(crate) of_cpu: Vec<usize>,
    /// Each domain's CPUs (perf_domain_span()).
    pub(crate) cpus: Vec<Vec<usize>>,
}

impl RootDomain {
    /// The root domain of `nr` CPUs whose largest capacity is `max_cpu_capacity`.
    pub(crate) fn new(nr: usize, max_cpu_capacity: u64) -> RootDomain {
        let mut cp = CpuPri::new(nr);
        for cpu in 0..nr {
            cp.set(cpu, crate::rt::MAX_RT_PRIO as i32 - 1);
        }
        RootDomain { max_cpu_capacity, cpupri: Some(cp), cpudl: CpuDl::new(nr), ..Default::default() }
    }
}
