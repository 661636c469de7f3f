//! Per-entity load tracking (PELT): load, runnable and utilization averages of every
//! scheduling entity and cfs_rq.
//!
//! Mirrors: kernel/sched/pelt.c (___update_load_sum(), ___update_load_avg(),
//! accumulate_sum(), decay_load(), __accumulate_pelt_segments()) and the fair.c users
//! (update_load_avg(), attach/detach_entity_load_avg(), propagation to group entities).

use crate::engine::Simulator;
use crate::time::Ns;

/// struct sched_avg.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// When the sums were last brought up to date.
    pub last_update_time: Ns,
    /// Σ decayed runnable time x weight (load_sum).
    pub load_sum: u64,
    /// Σ decayed runnable time x SCHED_CAPACITY (runnable_sum).
    pub runnable_sum: u64,
    /// Σ decayed running time x SCHED_CAPACITY (util_sum).
    pub util_sum: u64,
    /// Time into the current 1024 us period already accounted, us.
    pub period_contrib: u32,
    /// load_avg.
    pub load_avg: u64,
    /// runnable_avg.
    pub runnable_avg: u64,
    /// util_avg.
    pub util_avg: u64,
}

impl Simulator {
    /// Whether PELT averages drive load balance and group shares.
    #[inline]
    pub(crate) fn pelt_on(&self) -> bool {
        false
    }
}
