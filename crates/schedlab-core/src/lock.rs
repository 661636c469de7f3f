//! Spinlocks as the cache lines they are: the runqueue locks, the shared runqueue's
//! shard locks and the CFS bandwidth pool locks, with what lock_stat reports for them.
//!
//! Mirrors: kernel/locking/qspinlock.c (queued_spin_lock_slowpath(): the first waiter
//! spins on the lock word, later ones queue on per-CPU MCS nodes, and each unlock hands
//! the lock to the queue's head) and kernel/locking/lockdep.c's lock_stat
//! (/proc/lock_stat: contentions, con-bounces, waittime-min/max/total/avg,
//! acq-bounces, acquisitions, holdtime-total/avg, per lock class).
//! Model: a lock is its cache line. An uncontended acquisition moves the line from the
//! CPU that last held it (nothing when that is the acquirer itself): the atomic on the
//! lock word waits for the line. A contended one queues in arrival order (the MCS
//! queue) and gets the lock when the holder before it releases, plus one transfer of the
//! line from that holder (the hand-over): waiters are served one after the other, so
//! the wait grows with the number of waiters and with their distance. The hold is the
//! critical section the caller models (its code and the lines it touches, priced by the
//! caller). Acquisitions are made at event time in the order events run; a CPU's own
//! lock operations within one event follow each other (`cpu_free`). lock_stat's wait is
//! counted for contended acquisitions only (lock_contended() to lock_acquired()),
//! hand-over included; an uncontended acquisition's line transfer is CPU time but no
//! wait, as lock_stat shows it.

use serde::Serialize;

use crate::cpumask::CpuId;
use crate::time::Ns;

/// A lock class as lock_stat names it (every rq->__lock is one class, and so on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockClass {
    /// `&rq->__lock`: each CPU's runqueue lock.
    RqLock,
    /// `&shard->lock` (swqueue `&swqueue->lock`): a shared runqueue shard.
    SharedRunqShard,
    /// `&cfs_b->lock`: a task group's CFS bandwidth pool.
    CfsBandwidth,
}

impl LockClass {
    /// Every class, in the order results list them.
    pub const ALL: [LockClass; 3] = [LockClass::RqLock, LockClass::SharedRunqShard, LockClass::CfsBandwidth];

    /// The class name lock_stat prints.
    pub fn name(self) -> &'static str {
        match self {
            LockClass::RqLock => "&rq->__lock",
            LockClass::SharedRunqShard => "&shard->lock",
            LockClass::CfsBandwidth => "&cfs_b->lock",
        }
    }
}

/// What lock_stat shows for one lock instance.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LockStats {
    /// Which lock ("llc3.shard1", "cpu5", "group2").
    pub name: String,
    /// Acquisitions.
    pub acquisitions: u64,
    /// Acquisitions that found it held (lock_stat "contentions").
    pub contended: u64,
    /// Total time spent waiting for it, contended acquisitions only (waittime-total).
    pub wait_ns: Ns,
    /// Longest single wait (waittime-max), since the measured window began.
    pub wait_max_ns: Ns,
    /// Total time it was held (holdtime-total).
    pub hold_ns: Ns,
    /// Acquisitions whose line came from another CPU (acq-bounces).
    pub acq_bounces: u64,
    /// Contended acquisitions whose line came from another CPU (con-bounces).
    pub con_bounces: u64,
}

impl LockStats {
    /// Adds another instance's figures (a class's sum); the name is kept.
    pub fn add(&mut self, o: &LockStats) {
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.wait_ns += o.wait_ns;
        self.wait_max_ns = self.wait_max_ns.max(o.wait_max_ns);
        self.hold_ns += o.hold_ns;
        self.acq_bounces += o.acq_bounces;
        self.con_bounces += o.con_bounces;
    }

    /// Subtracts the figures of an earlier moment (the warm-up's share); the maximum
    /// was restarted at that moment and stays.
    pub fn subtract(&mut self, base: &LockStats) {
        self.acquisitions -= base.acquisitions.min(self.acquisitions);
        self.contended -= base.contended.min(self.contended);
        self.wait_ns -= base.wait_ns.min(self.wait_ns);
        self.hold_ns -= base.hold_ns.min(self.hold_ns);
        self.acq_bounces -= base.acq_bounces.min(self.acq_bounces);
        self.con_bounces -= base.con_bounces.min(self.con_bounces);
    }
}

/// One lock class's figures as lock_stat prints them (the `lock_stat` result field).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LockClassStats {
    /// The class ("&rq->__lock", "&shard->lock", "&cfs_b->lock").
    pub class: String,
    /// Lock instances of the class.
    pub instances: usize,
    /// Contended acquisitions (contentions).
    pub contentions: u64,
    /// Contended acquisitions of a line last held by another CPU (con-bounces).
    pub con_bounces: u64,
    /// Acquisitions.
    pub acquisitions: u64,
    /// Acquisitions of a line last held by another CPU (acq-bounces).
    pub acq_bounces: u64,
    /// waittime-total, ns.
    pub wait_total_ns: Ns,
    /// waittime-max, ns.
    pub wait_max_ns: Ns,
    /// waittime-avg: wait_total_ns / contentions, ns.
    pub wait_avg_ns: f64,
    /// holdtime-total, ns.
    pub hold_total_ns: Ns,
    /// holdtime-avg: hold_total_ns / acquisitions, ns.
    pub hold_avg_ns: f64,
}

impl LockClassStats {
    /// The class line of `instances`' figures.
    pub fn of<'a>(class: LockClass, instances: impl Iterator<Item = &'a LockStats>) -> LockClassStats {
        let mut sum = LockStats::default();
        let mut n = 0;
        for s in instances {
            sum.add(s);
            n += 1;
        }
        LockClassStats {
            class: class.name().to_string(),
            instances: n,
            contentions: sum.contended,
            con_bounces: sum.con_bounces,
            acquisitions: sum.acquisitions,
            acq_bounces: sum.acq_bounces,
            wait_total_ns: sum.wait_ns,
            wait_max_ns: sum.wait_max_ns,
            wait_avg_ns: if sum.contended > 0 { sum.wait_ns as f64 / sum.contended as f64 } else { 0.0 },
            hold_total_ns: sum.hold_ns,
            hold_avg_ns: if sum.acquisitions > 0 { sum.hold_ns as f64 / sum.acquisitions as f64 } else { 0.0 },
        }
    }
}

/// How one acquisition went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acquired {
    /// When the acquirer holds the lock.
    pub start: Ns,
    /// Time from the attempt to holding it: the queue wait and the hand-over when
    /// contended, the line's transfer when not.
    pub spin: Ns,
    /// Whether it found the lock held.
    pub contended: bool,
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
    #[inline]
    pub fn last_cpu(&self) -> Option<CpuId> {
        self.last_cpu
    }

    /// When the lock is next free (its last hold's end).
    #[inline]
    pub fn free_at(&self) -> Ns {
        self.free_at
    }

    /// `cpu` tries to take the lock at `at` and holds it for `hold`; `transfer(last)`
    /// prices the line's move from the CPU that held it last (called only when that is
    /// another CPU). The acquirer's CPU spends `spin + hold`.
    #[inline]
    pub fn acquire(&mut self, at: Ns, cpu: CpuId, hold: Ns, transfer: impl FnOnce(CpuId) -> Ns) -> Acquired {
        // A CPU never contends with itself: its own earlier hold just ends first.
        let contended = at < self.free_at && self.last_cpu != Some(cpu);
        let bounce = self.last_cpu.is_some_and(|l| l != cpu);
        let handover = match self.last_cpu {
            Some(last) if last != cpu => transfer(last),
            _ => 0,
        };
        let start = at.max(self.free_at) + handover;
        let spin = start - at;
        self.free_at = start + hold;
        self.last_cpu = Some(cpu);
        let s = &mut self.stats;
        s.acquisitions += 1;
        s.hold_ns += hold;
        s.acq_bounces += bounce as u64;
        if contended {
            s.contended += 1;
            s.con_bounces += bounce as u64;
            s.wait_ns += spin;
            s.wait_max_ns = s.wait_max_ns.max(spin);
        }
        Acquired { start, spin, contended }
    }

    /// An early release by `cpu` at `at` (raw_spin_rq_unlock() in the middle of what the
    /// acquisition reserved, as newidle balance does before it balances).
    #[inline]
    pub fn release_at(&mut self, cpu: CpuId, at: Ns) {
        if self.last_cpu == Some(cpu) && at < self.free_at {
            self.stats.hold_ns -= (self.free_at - at).min(self.stats.hold_ns);
            self.free_at = at;
        }
    }

    /// Counts a contended acquisition whose wait the caller worked out from a holder
    /// the lock has not seen yet (a critical section that starts at a later event): the
    /// figures only, the lock's timeline is left as it is.
    pub fn record_wait(&mut self, cpu: CpuId, spin: Ns, hold: Ns) {
        let s = &mut self.stats;
        let bounce = self.last_cpu.is_some_and(|l| l != cpu);
        s.acquisitions += 1;
        s.contended += 1;
        s.hold_ns += hold;
        s.acq_bounces += bounce as u64;
        s.con_bounces += bounce as u64;
        s.wait_ns += spin;
        s.wait_max_ns = s.wait_max_ns.max(spin);
    }

    /// Starts the maximum again (the measured window's start).
    pub fn restart_max(&mut self) {
        self.stats.wait_max_ns = 0;
    }
}

/// Every modeled spinlock of a run but the shard locks (which live with their shards),
/// and each CPU's lock clock.
#[derive(Clone, Debug, Default)]
pub struct Locks {
    /// rq->__lock of each CPU.
    pub rq: Vec<LineLock>,
    /// cfs_b->lock of each task group (index = group; the root's is never taken).
    pub cfs_b: Vec<LineLock>,
    /// Per CPU: when its last lock operation (with the hold and any work between its
    /// operations of one event) ends: the next one starts there.
    pub cpu_free: Vec<Ns>,
}

impl Locks {
    /// The locks of `nr_cpus` runqueues and `nr_groups` task groups.
    pub fn new(nr_cpus: usize, nr_groups: usize) -> Locks {
        Locks {
            rq: (0..nr_cpus).map(|c| LineLock::new(format!("cpu{c}"))).collect(),
            cfs_b: (0..nr_groups).map(|g| LineLock::new(format!("group{g}"))).collect(),
            cpu_free: vec![0; nr_cpus],
        }
    }

    /// Starts every maximum again.
    pub fn restart_max(&mut self) {
        self.rq.iter_mut().chain(self.cfs_b.iter_mut()).for_each(LineLock::restart_max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line costs of a two-LLC machine: CPUs 0-1 are SMT siblings, 0-3 one LLC.
    fn line(from: CpuId, to: CpuId) -> Ns {
        match (from, to) {
            (a, b) if a == b => 0,
            (a, b) if a / 2 == b / 2 => 7,
            (a, b) if a / 4 == b / 4 => 23,
            _ => 107,
        }
    }

    #[test]
    fn an_uncontended_acquire_pays_the_lines_distance_from_its_last_holder() {
        let spin_from = |last: CpuId, cpu: CpuId| {
            let mut l = LineLock::new("x".into());
            l.acquire(0, last, 10, |_| unreachable!("first acquisition"));
            let a = l.acquire(1_000, cpu, 10, |last| line(last, cpu));
            assert!(!a.contended);
            assert_eq!(l.stats.contended, 0, "an uncontended acquisition waits for nothing");
            a.spin
        };
        let (own, sibling, llc, other_llc) = (spin_from(0, 0), spin_from(1, 0), spin_from(2, 0), spin_from(4, 0));
        assert_eq!(own, 0);
        assert!(own < sibling && sibling < llc && llc < other_llc, "{own} {sibling} {llc} {other_llc}");
        assert_eq!(other_llc, 107);
    }

    /// `n` CPUs of one LLC try at the same instant, after CPU 0 took it: lock_stat's
    /// mean wait.
    fn mean_wait(n: usize, hold: Ns) -> f64 {
        let mut l = LineLock::new("x".into());
        l.acquire(0, 0, hold, |_| 0);
        for cpu in 1..=n {
            l.acquire(0, cpu % 4, hold, |last| line(last, cpu % 4));
        }
        l.stats.wait_ns as f64 / l.stats.contended as f64
    }

    #[test]
    fn mean_wait_grows_with_the_cpus_contending() {
        let waits: Vec<f64> = [1, 2, 4, 8, 16].iter().map(|&n| mean_wait(n, 20)).collect();
        assert!(waits.windows(2).all(|w| w[1] > w[0]), "{waits:?}");
        // Each waiter waits for everyone before it: the k-th about k hand-overs and holds.
        assert!(waits[4] > 6.0 * waits[0], "{waits:?}");
    }

    #[test]
    fn a_queue_is_served_in_order_one_hand_over_each() {
        let mut l = LineLock::new("x".into());
        let a = l.acquire(100, 0, 50, |_| 0);
        assert_eq!((a.start, a.spin, a.contended), (100, 0, false));
        // CPU 4 (another LLC) comes while 0 holds it: waits for the hold, then the line.
        let b = l.acquire(120, 4, 50, |last| line(last, 4));
        assert_eq!((b.start, b.spin, b.contended), (150 + 107, 150 + 107 - 120, true));
        // CPU 6 queued behind it: 4's hold, then the line from 4 (same LLC: 23).
        let c = l.acquire(130, 6, 50, |last| line(last, 6));
        assert_eq!(c.start, b.start + 50 + 23);
        assert_eq!(l.stats.contended, 2);
        assert_eq!(l.stats.con_bounces, 2);
        assert_eq!(l.stats.wait_max_ns, c.spin);
        assert_eq!(l.stats.hold_ns, 150);
        // Much later: free, and 6 held it last (no bounce, no transfer).
        let d = l.acquire(1_000_000, 6, 5, |_| unreachable!());
        assert_eq!((d.spin, d.contended), (0, false));
        assert_eq!((l.stats.acquisitions, l.stats.acq_bounces), (4, 2));
    }

    #[test]
    fn an_early_release_frees_the_lock_for_others() {
        let mut l = LineLock::new("x".into());
        l.acquire(0, 0, 1_000, |_| 0);
        l.release_at(0, 100);
        let b = l.acquire(200, 1, 10, |last| line(last, 1));
        assert!(!b.contended);
        assert_eq!(l.stats.hold_ns, 110);
        // Another CPU's release does nothing to a lock it does not hold.
        l.release_at(0, 0);
        assert_eq!(l.free_at(), b.start + 10);
    }

    #[test]
    fn class_figures_are_lock_stats_averages() {
        let mut a = LineLock::new("a".into());
        a.acquire(0, 0, 10, |_| 0);
        a.acquire(5, 1, 10, |_| 7);
        let mut b = LineLock::new("b".into());
        b.acquire(0, 2, 30, |_| 0);
        let c = LockClassStats::of(LockClass::RqLock, [&a.stats, &b.stats].into_iter());
        assert_eq!((c.instances, c.acquisitions, c.contentions), (2, 3, 1));
        assert_eq!(c.wait_total_ns, 12);
        assert_eq!(c.wait_avg_ns, 12.0);
        assert!((c.hold_avg_ns - 50.0 / 3.0).abs() < 1e-9);
        assert_eq!(c.class, "&rq->__lock");
    }
}
