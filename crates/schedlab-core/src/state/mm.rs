//! The memory-management state the scheduler touches: mm_cid, TLB and reclaim models
//! per process, and the address regions tasks share.
//!
//! Mirrors: include/linux/mm_types.h (`struct mm_struct`'s mm_cid and TLB parts); the
//! behaviour is `sched::mm`.

use crate::cpumask::CpuMask;
use crate::metrics::LatencyHistogram;
use crate::mm::cid::{MmCidState, MmId};
use crate::mm::cid_cache::CidCache;
use crate::mm::reclaim::ReclaimModel;
use crate::state::task::TaskId;
use crate::time::Ns;
use std::collections::BTreeMap;

/// A shared anonymous region (MAP_SHARED|MAP_ANONYMOUS, shmem-backed), mapped by every
/// process that touches it (one shmem object, one page cache).
#[derive(Clone, Debug, Default)]
pub(crate) struct Region {
    /// Pages resident in the shmem page cache (the rest are in swap or never written).
    pub(crate) resident: u64,
    /// Per process (mm): pages it has mapped, and whether its PTEs are dirty.
    pub(crate) maps: BTreeMap<usize, (u64, bool)>,
}

/// Per-mm state of a run.
#[derive(Default)]
pub(crate) struct MmState {
    pub(crate) cid: Option<MmCidState>,
    pub(crate) cid_mm: BTreeMap<usize, MmId>,
    pub(crate) cache: Option<CidCache>,
    pub(crate) regions: Vec<Region>,
    pub(crate) reclaim: Option<ReclaimModel>,
    pub(crate) mm_cpumask: BTreeMap<usize, CpuMask>,
    /// Time in named kernel paths ("ptep_clear_flush", "try_to_unmap_flush"), ns.
    pub(crate) kernel_ns: BTreeMap<&'static str, Ns>,
    /// Event counts of the mechanisms ("tlb_completion_waits", "cid_scans", ...).
    pub(crate) counts: BTreeMap<&'static str, u64>,
    /// Recorded touch_area pass times.
    pub(crate) touch_area: LatencyHistogram,
    /// Each CPU's rq->clock: when it last went through the scheduler or took a tick, or
    /// (idle) had its blocked load updated by another CPU's NOHZ stats update.
    pub(crate) rq_clock: Vec<Ns>,
    /// Per CPU: when it last became busy, and until when its cfs_rq keeps blocked load
    /// (the PELT sums of the tasks that slept there, decaying to zero).
    pub(crate) busy_since: Vec<Ns>,
    pub(crate) blocked_until: Vec<Ns>,
    /// nohz.next_blocked: the next time an idle entry may update idle CPUs' blocked load.
    pub(crate) next_blocked: Ns,
}

/// LOAD_AVG_PERIOD: PELT sums halve every 32 periods of 1024 us; also the minimum
/// interval between two NOHZ blocked-load updates (nohz.next_blocked).
pub(crate) const PELT_HALF_LIFE_NS: Ns = 32 * 1024 * 1000;

/// How long a CPU keeps blocked load after a busy stretch of `run` ns: the stretch adds
/// about run/1024 ns × 1024 to the cfs_rq's util_sum (integer), which halves every
/// LOAD_AVG_PERIOD and is 0 after log2 of it half-lives (then has_blocked_load clears).
pub(crate) fn blocked_load_lifetime(run: Ns) -> Ns {
    let sum = (run as f64 / 1000.0 * 1024.0).max(1.0);
    (sum.log2().floor() as u64 + 1) * PELT_HALF_LIFE_NS
}

impl MmState {
    /// The cache model of per-cid data, once a run has touched some.
    pub(crate) fn cache_mut(&mut self) -> Option<&mut CidCache> {
        self.cache.as_mut()
    }

    /// The mm_cid allocator's invariants (no two slots of one mm hold one cid, every
    /// running thread's cid is its CPU's), if any process uses it; and, since every
    /// context switch reaches the allocator (switch_mm_cid), a thread it holds as running
    /// is its CPU's current task (`curr`: what each CPU runs).
    pub(crate) fn check(&self, curr: impl Fn(usize) -> Option<TaskId>) -> Result<(), String> {
        let Some(cid) = &self.cid else { return Ok(()) };
        cid.check_invariants()?;
        for (tid, cpu) in cid.running_threads() {
            if curr(cpu) != Some(tid) {
                return Err(format!("mm_cid holds task {tid} as running on CPU {cpu}, which runs {:?}", curr(cpu)));
            }
        }
        Ok(())
    }
}
