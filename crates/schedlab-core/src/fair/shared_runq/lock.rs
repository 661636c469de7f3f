//! A spinlock as the cache line it is: acquisitions are serialised in time, and each
//! hand-off to another CPU moves the line.
//!
//! Mirrors: the `raw_spinlock_t` of `struct shared_runq_shard` (list head and lock share
//! one ____cacheline_aligned line) and what lock_stat reports for it (acquisitions,
//! contentions, wait and hold time).
//! Model: a queued spinlock hands the line to the next waiter in arrival order. An
//! acquisition at time `at` waits until the lock is free, then holds it for the line's
//! transfer from the last holder (none if it was the same CPU) plus the critical
//! section (the list operation, whose neighbour node is another line of the last
//! writer's). The acquirer's CPU spends wait + hold.

use serde::Serialize;

use crate::cpumask::CpuId;
use crate::time::Ns;

/// Estimate: a list_add_tail/list_del_init on lines already held, a few ns.
pub(crate) const CRITICAL_SECTION_NS: Ns = 5;

/// What lock_stat would show for one lock.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LockStats {
    /// Which lock ("llc3.shard1").
    pub name: String,
    /// Acquisitions.
    pub acquisitions: u64,
    /// Acquisitions that found it held (lock_stat "contentions").
    pub contended: u64,
    /// Total time spent waiting for it.
    pub wait_ns: Ns,
    /// Total time it was held.
    pub hold_ns: Ns,
}

/// One modeled spinlock.
#[derive(Clone, Debug, Default)]
pub struct LineLock {
    free_at: Ns,
    last_cpu: Option<CpuId>,
    /// Its statistics.
    pub stats: LockStats,
}

impl LineLock {
    /// A lock named for reports.
    pub fn new(name: String) -> Self {
        Self { stats: LockStats { name, ..Default::default() }, ..Default::default() }
    }

    /// The CPU that last held the lock (its line is there).
    pub fn last_cpu(&self) -> Option<CpuId> {
        self.last_cpu
    }

    /// `cpu` takes and releases the lock at `at`; `transfer_ns` moves the line from the
    /// last holder (0 when it is `cpu` itself). Returns the time the CPU spends.
    pub fn acquire(&mut self, at: Ns, cpu: CpuId, transfer_ns: Ns) -> Ns {
        let start = at.max(self.free_at);
        let wait = start - at;
        // The line, and the neighbouring list node the last holder wrote.
        let hold = 2 * transfer_ns + CRITICAL_SECTION_NS;
        self.free_at = start + hold;
        self.last_cpu = Some(cpu);
        let s = &mut self.stats;
        s.acquisitions += 1;
        s.contended += (wait > 0) as u64;
        s.wait_ns += wait;
        s.hold_ns += hold;
        wait + hold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simultaneous_acquisitions_queue_behind_each_other() {
        let mut l = LineLock::new("x".into());
        assert_eq!(l.acquire(1000, 0, 0), CRITICAL_SECTION_NS);
        // Another CPU at the same instant waits for the first hold, then pulls the line.
        let spent = l.acquire(1000, 1, 40);
        assert_eq!(spent, CRITICAL_SECTION_NS + 80 + CRITICAL_SECTION_NS);
        assert_eq!(l.stats.contended, 1);
        assert_eq!(l.stats.wait_ns, CRITICAL_SECTION_NS);
        // Much later: free, no wait.
        assert_eq!(l.acquire(1_000_000, 1, 0), CRITICAL_SECTION_NS);
        assert_eq!(l.stats.acquisitions, 3);
    }
}
