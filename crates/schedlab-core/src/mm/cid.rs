//! rseq per-memory-map concurrency IDs (mm_cid): the 6.4–6.12 and the 6.13 allocators.
//!
//! Mirrors: kernel/sched/sched.h (switch_mm_cid, mm_cid_get, __mm_cid_try_get,
//! mm_cid_put_lazy, mm_cid_snapshot_time) and kernel/sched/core.c
//! (sched_mm_cid_migrate_from/_to, sched_mm_cid_remote_clear{,_old,_weight},
//! task_mm_cid_work, task_tick_mm_cid, init_sched_mm_cid, sched_mm_cid_exit_signals),
//! include/linux/mm_types.h (struct mm_cid, mm_cidmask, mm_cpus_allowed) as of v6.4
//! (223baf9d17f2) and v6.13 (7e019dcc470f).
//!
//! Model: every mm has a cid bitmap and one slot per CPU holding the cid that CPU
//! lends to the threads of the mm it runs (lazy put: the slot keeps the cid after the
//! thread leaves). A thread gets its cid at switch-in and drops it at switch-out. The
//! slots are reclaimed by migration (the cid follows the thread) and by a scan
//! (`task_mm_cid_work`) queued from the tick at most every 100 ms per mm, which frees
//! slots unused for 100 ms and then any slot whose cid is >= the number of cids in use.
//! [`CidPolicy::CacheLocal`] adds the 6.13 rules: each slot remembers its `recent_cid`
//! and asks for it back first; new cids spread up to min(nr_cpus_allowed, mm_users)
//! (`max_nr_cid`) before falling back to the lowest free one; the ceiling is the
//! weight of the union of the threads' affinity masks.
//!
//! The kernel runs these steps lock-free against each other (cmpxchg on the slot,
//! a Dekker pairing with rq->curr). The simulator runs each step atomically, so each
//! race collapses to its sequential outcome: a steal or remote clear marks the slot
//! LAZY_PUT, re-reads the CPU's current task and either frees the slot or leaves it
//! to that task, which frees it at its next switch.
//!
//! Simplifications, each deliberate:
//! - The remote `rq->clock` the scan compares against is the caller's (the engine passes
//!   each CPU's clock as of its last schedule() or tick: a NOHZ-idle CPU's clock stands
//!   still, so its slot ages only once something updates its clock).
//! - jiffies are `now / TICK_NSEC` (the engine's tick grid).
//! - execve (sched_mm_cid_before/after_execve) and the ~6.15 shrinking of
//!   `max_nr_cid` are not modeled. mm_users counts threads only.
//! - Indexing by cpu_id needs no state: the caller uses the CPU number.

use crate::cpumask::{CpuId, CpuMask};
use crate::features::{Feature, Features};
use crate::time::{tick_nsec, Ns, NSEC_PER_MSEC};

/// Index of an address space (mm_struct) in [`MmCidState`].
pub type MmId = usize;
/// Identifier of a thread (task) as the engine numbers it.
pub type Tid = usize;

/// Age after which the scan may reclaim an unused per-CPU cid (`SCHED_MM_CID_PERIOD_NS`).
pub const SCHED_MM_CID_PERIOD_NS: Ns = 100 * NSEC_PER_MSEC;
/// Minimum interval between two scans of one mm, ms (`MM_CID_SCAN_DELAY`).
pub const MM_CID_SCAN_DELAY_MS: u64 = 100;

/// Which cid allocator a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CidPolicy {
    /// v6.4–v6.12: lowest free cid, per-CPU cid with lazy put, 100 ms reclaim.
    Legacy,
    /// v6.13: Legacy plus recent_cid reuse and spreading up to min(nr_cpus_allowed, mm_users).
    CacheLocal,
}

impl CidPolicy {
    /// Returns the allocator the features select, or `None` when `MM_CID` is off
    /// (user space then indexes by cpu_id).
    pub fn from_features(f: &Features) -> Option<CidPolicy> {
        if !f.has(Feature::MM_CID) {
            None
        } else if f.has(Feature::MM_CID_CACHE_LOCAL) {
            Some(CidPolicy::CacheLocal)
        } else {
            Some(CidPolicy::Legacy)
        }
    }
}

/// The cid a per-mm/per-CPU slot holds (`struct mm_cid::cid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcpuCid {
    /// `MM_CID_UNSET`.
    Unset,
    /// A cid lent to the threads of the mm running on this CPU.
    Valid(u32),
    /// A cid flagged `MM_CID_LAZY_PUT`: freed at the CPU's next switch.
    LazyPut(u32),
}

impl PcpuCid {
    fn held(self) -> Option<u32> {
        match self {
            PcpuCid::Unset => None,
            PcpuCid::Valid(c) | PcpuCid::LazyPut(c) => Some(c),
        }
    }
}

/// What one run of the compaction work did (the engine may charge its cost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// The scan ran (false: another thread scanned within the last 100 ms, or the thread exits).
    pub ran: bool,
    /// Per-CPU slots examined (two passes over every possible CPU).
    pub cpus_scanned: usize,
    /// cids returned to the bitmap by this scan.
    pub cids_released: usize,
}

#[derive(Clone, Copy, Debug)]
struct PcpuSlot {
    cid: PcpuCid,
    recent_cid: Option<u32>,
    time: Ns,
}

#[derive(Clone, Debug)]
struct CidBitmap {
    words: Vec<u64>,
    weight: usize,
}

impl CidBitmap {
    fn new(bits: usize) -> Self {
        CidBitmap { words: vec![0; bits.div_ceil(64).max(1)], weight: 0 }
    }

    /// Sets bit `c`; returns whether it was already set (`cpumask_test_and_set_cpu`).
    fn test_and_set(&mut self, c: u32) -> bool {
        let (w, b) = (c as usize / 64, c % 64);
        let was = self.words[w] & (1 << b) != 0;
        if !was {
            self.words[w] |= 1 << b;
            self.weight += 1;
        }
        was
    }

    fn clear(&mut self, c: u32) {
        let (w, b) = (c as usize / 64, c % 64);
        if self.words[w] & (1 << b) != 0 {
            self.words[w] &= !(1 << b);
            self.weight -= 1;
        }
    }

    fn test(&self, c: u32) -> bool {
        self.words[c as usize / 64] & (1 << (c % 64)) != 0
    }

    fn first_zero(&self) -> u32 {
        for (i, &w) in self.words.iter().enumerate() {
            if w != u64::MAX {
                return (i * 64) as u32 + (!w).trailing_zeros();
            }
        }
        (self.words.len() * 64) as u32
    }
}

#[derive(Clone, Debug)]
struct Mm {
    mm_users: usize,
    cidmask: CidBitmap,
    pcpu: Vec<PcpuSlot>,
    /// `mm_cid_next_scan`, jiffies; 0 = not yet set.
    next_scan: u64,
    cpus_allowed: CpuMask,
    nr_cpus_allowed: usize,
    max_nr_cid: u32,
}

#[derive(Clone, Debug)]
struct Thread {
    mm: MmId,
    /// `mm_cid_active`: false once the thread exits.
    active: bool,
    /// `mm_cid`: the cid while running.
    cid: Option<u32>,
    last_mm_cid: Option<u32>,
    migrate_from_cpu: Option<CpuId>,
    nr_cpus_allowed: usize,
    /// `cid_work` queued and not yet run.
    work_pending: bool,
    on_cpu: Option<CpuId>,
}

/// The mm_cid state of every address space in a run.
#[derive(Clone, Debug)]
pub struct MmCidState {
    nr_cpus: usize,
    policy: CidPolicy,
    tick_ns: Ns,
    scan_delay_jiffies: u64,
    mms: Vec<Mm>,
    threads: Vec<Option<Thread>>,
    /// Thread current on each CPU, as told by [`MmCidState::switch_mm_cid`] (`rq->curr`).
    curr: Vec<Option<Tid>>,
}

impl MmCidState {
    /// Creates the state for a machine of `nr_cpus` possible CPUs at tick rate `hz`.
    pub fn new(nr_cpus: usize, policy: CidPolicy, hz: u32) -> Self {
        let hz = hz.max(1);
        MmCidState {
            nr_cpus,
            policy,
            tick_ns: tick_nsec(hz),
            // msecs_to_jiffies rounds up.
            scan_delay_jiffies: (MM_CID_SCAN_DELAY_MS * hz as u64).div_ceil(1000),
            mms: Vec::new(),
            threads: Vec::new(),
            curr: vec![None; nr_cpus],
        }
    }

    /// Returns the allocator in use.
    pub fn policy(&self) -> CidPolicy {
        self.policy
    }

    fn jiffies(&self, now: Ns) -> u64 {
        now / self.tick_ns
    }

    /// Creates an address space with no threads (mm_init_cid) and returns its id.
    pub fn add_mm(&mut self) -> MmId {
        let slot = PcpuSlot { cid: PcpuCid::Unset, recent_cid: None, time: 0 };
        self.mms.push(Mm {
            mm_users: 0,
            cidmask: CidBitmap::new(self.nr_cpus),
            pcpu: vec![slot; self.nr_cpus],
            next_scan: 0,
            cpus_allowed: CpuMask::new(),
            nr_cpus_allowed: 0,
            max_nr_cid: 0,
        });
        self.mms.len() - 1
    }

    /// Adds a thread to `mm` at fork (mm_users++, mm_cid_active = 1, init_sched_mm_cid,
    /// mm_set_cpus_allowed). The first thread arms the first scan 100 ms later.
    pub fn add_thread(&mut self, mm: MmId, tid: Tid, cpus_allowed: &CpuMask, now: Ns) {
        let delay = self.scan_delay_jiffies;
        let j = self.jiffies(now);
        let m = &mut self.mms[mm];
        m.mm_users += 1;
        if m.mm_users == 1 {
            m.next_scan = j + delay;
        }
        m.cpus_allowed = m.cpus_allowed.or(cpus_allowed);
        m.nr_cpus_allowed = m.cpus_allowed.weight();
        if self.threads.len() <= tid {
            self.threads.resize(tid + 1, None);
        }
        self.threads[tid] = Some(Thread {
            mm,
            active: true,
            cid: None,
            last_mm_cid: None,
            migrate_from_cpu: None,
            nr_cpus_allowed: cpus_allowed.weight(),
            work_pending: false,
            on_cpu: None,
        });
    }

    /// Changes a thread's affinity (__do_set_cpus_allowed → mm_set_cpus_allowed: the
    /// mm's mask only grows).
    pub fn set_cpus_allowed(&mut self, tid: Tid, cpus_allowed: &CpuMask) {
        if let Some(t) = self.threads.get_mut(tid).and_then(Option::as_mut) {
            t.nr_cpus_allowed = cpus_allowed.weight();
            let m = &mut self.mms[t.mm];
            m.cpus_allowed = m.cpus_allowed.or(cpus_allowed);
            m.nr_cpus_allowed = m.cpus_allowed.weight();
        }
    }

    fn thread(&self, tid: Tid) -> Option<&Thread> {
        self.threads.get(tid).and_then(Option::as_ref)
    }

    /// Tells whether the task current on `cpu` is an active thread of `mm`.
    fn curr_uses_mm(&self, cpu: CpuId, mm: MmId) -> bool {
        self.curr[cpu].and_then(|t| self.thread(t)).is_some_and(|t| t.active && t.mm == mm)
    }

    /// A thread exits (sched_mm_cid_exit_signals, on the CPU it runs on): it stops
    /// using cids, this CPU's slot is freed, mm_users drops.
    pub fn exit_thread(&mut self, tid: Tid, cpu: CpuId, now: Ns) {
        let _ = now;
        let Some(t) = self.threads.get_mut(tid).and_then(Option::as_mut) else { return };
        if !t.active {
            return;
        }
        t.active = false;
        t.cid = None;
        t.last_mm_cid = None;
        let mm = t.mm;
        let running_here = t.on_cpu == Some(cpu);
        debug_assert!(running_here, "exit_thread: thread {tid} is not current on CPU {cpu}");
        let m = &mut self.mms[mm];
        m.mm_users = m.mm_users.saturating_sub(1);
        if running_here {
            // mm_cid_put: unset this CPU's slot whatever its state and free the cid.
            if let Some(c) = m.pcpu[cpu].cid.held() {
                m.pcpu[cpu].cid = PcpuCid::Unset;
                m.cidmask.clear(c);
            }
        }
    }

    /// Context switch on `cpu` from `prev` to `next` (switch_mm_cid). `None`, or a tid
    /// never added, is a task without an mm (idle, kernel thread). Returns `next`'s cid.
    /// Call it on every switch where either side is a thread of some mm.
    pub fn switch_mm_cid(&mut self, cpu: CpuId, prev: Option<Tid>, next: Option<Tid>, now: Ns) -> Option<u32> {
        if prev.is_some() && prev == next {
            return next.and_then(|t| self.cid_of(t));
        }
        if let Some(p) = prev.filter(|&p| self.thread(p).is_some()) {
            let t = self.threads[p].as_mut().unwrap();
            let (active, mm) = (t.active, t.mm);
            t.cid = None;
            t.on_cpu = None;
            if active {
                let slot = &mut self.mms[mm].pcpu[cpu];
                slot.time = now;
                // mm_cid_put_lazy: a LAZY_PUT slot is released now.
                if let PcpuCid::LazyPut(c) = slot.cid {
                    slot.cid = PcpuCid::Unset;
                    self.mms[mm].cidmask.clear(c);
                }
            }
        }
        self.curr[cpu] = next;
        let n = next.filter(|&n| self.thread(n).is_some())?;
        let t = self.threads[n].as_mut().unwrap();
        debug_assert!(t.on_cpu.is_none(), "thread {n} switched in on CPU {cpu} while current elsewhere");
        t.on_cpu = Some(cpu);
        if !t.active {
            return None;
        }
        let mm = t.mm;
        let c = self.mm_cid_get(cpu, mm, now);
        let t = self.threads[n].as_mut().unwrap();
        t.cid = Some(c);
        t.last_mm_cid = Some(c);
        Some(c)
    }

    /// mm_cid_get: keep this CPU's cid, else allocate one.
    fn mm_cid_get(&mut self, cpu: CpuId, mm: MmId, now: Ns) -> u32 {
        let policy = self.policy;
        let nr_cpus = self.nr_cpus;
        let m = &mut self.mms[mm];
        match m.pcpu[cpu].cid {
            PcpuCid::Valid(c) => {
                m.pcpu[cpu].time = now;
                return c;
            }
            PcpuCid::LazyPut(c) => {
                m.pcpu[cpu].cid = PcpuCid::Unset;
                m.cidmask.clear(c);
            }
            PcpuCid::Unset => {}
        }
        let c = match policy {
            CidPolicy::Legacy => Self::take_first_zero(m, nr_cpus),
            CidPolicy::CacheLocal => Self::try_get_cache_local(m, cpu, nr_cpus),
        };
        let slot = &mut m.pcpu[cpu];
        slot.time = now;
        slot.cid = PcpuCid::Valid(c);
        if policy == CidPolicy::CacheLocal {
            slot.recent_cid = Some(c);
        }
        c
    }

    /// Lowest free cid below `limit` (never fails sequentially: the caller's slot is
    /// unset, so fewer than `limit` cids are held).
    fn take_first_zero(m: &mut Mm, limit: usize) -> u32 {
        let c = m.cidmask.first_zero();
        debug_assert!((c as usize) < limit.max(1), "cid bitmap full");
        m.cidmask.test_and_set(c);
        c
    }

    /// 6.13 __mm_cid_try_get: recent cid, then expand, then lowest free.
    fn try_get_cache_local(m: &mut Mm, cpu: CpuId, nr_cpus: usize) -> u32 {
        if let Some(c) = m.pcpu[cpu].recent_cid {
            if !m.cidmask.test_and_set(c) {
                return c;
            }
        }
        let lim = m.nr_cpus_allowed.min(m.mm_users) as u32;
        let mut c = m.max_nr_cid;
        while c < lim {
            m.max_nr_cid = c + 1;
            if !m.cidmask.test_and_set(c) {
                return c;
            }
            c += 1;
        }
        let c = m.cidmask.first_zero();
        if (c as usize) < m.nr_cpus_allowed {
            m.cidmask.test_and_set(c);
            return c;
        }
        // Only reachable when a thread runs outside the mm's allowed CPUs (the kernel
        // would spin); take the lowest free cid of the machine instead.
        Self::take_first_zero(m, nr_cpus)
    }

    /// A queued or waking thread moves from `src` to `dst` (set_task_cpu →
    /// sched_mm_cid_migrate_from, then activate_task(ENQUEUE_MIGRATED) →
    /// sched_mm_cid_migrate_to): its old CPU's cid follows it when that helps.
    pub fn migrate(&mut self, tid: Tid, src: CpuId, dst: CpuId, now: Ns) {
        if src == dst {
            return;
        }
        let Some(t) = self.threads.get_mut(tid).and_then(Option::as_mut) else { return };
        debug_assert!(t.on_cpu.is_none(), "migrate: thread {tid} is running");
        t.migrate_from_cpu = Some(src);
        if !t.active {
            return;
        }
        let (mm, last, t_allowed) = (t.mm, t.last_mm_cid, t.nr_cpus_allowed);
        let policy = self.policy;
        let m = &self.mms[mm];
        let dst_slot = m.pcpu[dst];
        let dst_set = dst_slot.cid != PcpuCid::Unset || (policy == CidPolicy::CacheLocal && dst_slot.recent_cid.is_some());
        // 6.13 compares with the mm's allowed CPUs; before, with the thread's own.
        let allowed = match policy {
            CidPolicy::Legacy => t_allowed,
            CidPolicy::CacheLocal => m.nr_cpus_allowed,
        };
        if dst_set && m.mm_users >= allowed {
            return; // many threads: user space may use all cids anyway
        }
        // __sched_mm_cid_migrate_from_fetch_cid
        let Some(last) = last else { return };
        if m.pcpu[src].cid != PcpuCid::Valid(last) {
            return;
        }
        if self.curr_uses_mm(src, mm) {
            self.threads[tid].as_mut().unwrap().last_mm_cid = None;
            return;
        }
        // __sched_mm_cid_migrate_from_try_steal_cid: LAZY_PUT, re-check rq->curr (same
        // answer here), then UNSET.
        let m = &mut self.mms[mm];
        m.pcpu[src].cid = PcpuCid::Unset;
        if policy == CidPolicy::CacheLocal {
            m.pcpu[src].recent_cid = None;
        }
        if dst_set {
            m.cidmask.clear(last);
            return;
        }
        let slot = &mut m.pcpu[dst];
        slot.time = now;
        slot.cid = PcpuCid::Valid(last);
        if policy == CidPolicy::CacheLocal {
            slot.recent_cid = Some(last);
        }
    }

    /// The scheduler tick on `cpu` while `tid` is current (task_tick_mm_cid). Returns
    /// true when the scan work is queued on `tid`: the engine then calls
    /// [`MmCidState::run_scan_work`] when `tid` next returns to user space.
    pub fn tick(&mut self, cpu: CpuId, tid: Tid, now: Ns) -> bool {
        let j = self.jiffies(now);
        let Some(t) = self.threads.get(tid).and_then(Option::as_ref) else { return false };
        debug_assert_eq!(self.curr[cpu], Some(tid), "tick: thread {tid} is not current on CPU {cpu}");
        if !t.active || t.work_pending || j < self.mms[t.mm].next_scan {
            return false;
        }
        self.threads[tid].as_mut().unwrap().work_pending = true;
        true
    }

    /// Runs the queued compaction work of `tid` (task_mm_cid_work, on return to user);
    /// `rq_clock(cpu)` is each CPU's rq->clock as the scan reads it (racy, remote).
    pub fn run_scan_work(&mut self, tid: Tid, now: Ns, rq_clock: &dyn Fn(CpuId) -> Ns) -> ScanReport {
        let j = self.jiffies(now);
        let delay = self.scan_delay_jiffies;
        let Some(t) = self.threads.get_mut(tid).and_then(Option::as_mut) else { return ScanReport::default() };
        t.work_pending = false;
        if !t.active {
            return ScanReport::default();
        }
        let mm = t.mm;
        let m = &mut self.mms[mm];
        let next = j + delay;
        if m.next_scan == 0 {
            m.next_scan = next;
        }
        if j < m.next_scan {
            return ScanReport::default();
        }
        m.next_scan = next;
        let mut released = 0;
        // sched_mm_cid_remote_clear_old: free slots not used for 100 ms.
        for cpu in 0..self.nr_cpus {
            let clock = rq_clock(cpu);
            if self.curr_uses_mm(cpu, mm) {
                self.mms[mm].pcpu[cpu].time = clock;
                continue;
            }
            if clock < self.mms[mm].pcpu[cpu].time + SCHED_MM_CID_PERIOD_NS {
                continue;
            }
            released += self.remote_clear(mm, cpu) as usize;
        }
        // sched_mm_cid_remote_clear_weight: recompact above the number of cids in use.
        let weight = self.mms[mm].cidmask.weight as u32;
        for cpu in 0..self.nr_cpus {
            if matches!(self.mms[mm].pcpu[cpu].cid, PcpuCid::Valid(c) if c >= weight) {
                released += self.remote_clear(mm, cpu) as usize;
            }
        }
        ScanReport { ran: true, cpus_scanned: 2 * self.nr_cpus, cids_released: released }
    }

    /// sched_mm_cid_remote_clear: flag the slot LAZY_PUT; free it unless a thread of
    /// the mm is current there (that thread frees it at its next switch).
    fn remote_clear(&mut self, mm: MmId, cpu: CpuId) -> bool {
        let PcpuCid::Valid(c) = self.mms[mm].pcpu[cpu].cid else { return false };
        if self.curr_uses_mm(cpu, mm) {
            self.mms[mm].pcpu[cpu].cid = PcpuCid::LazyPut(c);
            return false;
        }
        let m = &mut self.mms[mm];
        m.pcpu[cpu].cid = PcpuCid::Unset;
        m.cidmask.clear(c);
        true
    }

    /// Returns the cid `tid` holds while running (`None` when not running or exited).
    pub fn cid_of(&self, tid: Tid) -> Option<u32> {
        self.thread(tid).and_then(|t| t.cid)
    }

    /// The threads the allocator holds as current on a CPU, with that CPU (for the
    /// engine's check that each is what the CPU runs).
    pub fn running_threads(&self) -> impl Iterator<Item = (Tid, CpuId)> + '_ {
        self.threads.iter().enumerate().filter_map(|(tid, t)| Some((tid, t.as_ref()?.on_cpu?)))
    }

    /// Returns the number of cids allocated in `mm` (popcount of its cid bitmap).
    pub fn cids_in_use(&self, mm: MmId) -> usize {
        self.mms[mm].cidmask.weight
    }

    /// Returns the state of `mm`'s slot on `cpu`.
    pub fn pcpu_cid(&self, mm: MmId, cpu: CpuId) -> PcpuCid {
        self.mms[mm].pcpu[cpu].cid
    }

    /// Returns `mm`'s recent cid on `cpu` (always `None` with the legacy allocator).
    pub fn recent_cid(&self, mm: MmId, cpu: CpuId) -> Option<u32> {
        self.mms[mm].pcpu[cpu].recent_cid
    }

    /// Returns `mm_users` (live threads of the mm).
    pub fn mm_users(&self, mm: MmId) -> usize {
        self.mms[mm].mm_users
    }

    /// Returns the weight of the union of the mm's threads' affinity masks.
    pub fn nr_cpus_allowed(&self, mm: MmId) -> usize {
        self.mms[mm].nr_cpus_allowed
    }

    /// Returns the mm's `max_nr_cid` high-water mark (6.13; 0 with the legacy allocator).
    pub fn max_nr_cid(&self, mm: MmId) -> u32 {
        self.mms[mm].max_nr_cid
    }

    /// Checks the allocator's invariants: the bitmap holds exactly the slots' cids,
    /// each cid in at most one slot, and every running thread's cid is its CPU's slot.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (id, m) in self.mms.iter().enumerate() {
            let mut seen = CidBitmap::new(self.nr_cpus);
            for (cpu, s) in m.pcpu.iter().enumerate() {
                if let Some(c) = s.cid.held() {
                    if seen.test_and_set(c) {
                        return Err(format!("mm {id}: cid {c} held by two slots (second on CPU {cpu})"));
                    }
                    if !m.cidmask.test(c) {
                        return Err(format!("mm {id}: CPU {cpu} holds cid {c} not set in the bitmap"));
                    }
                }
            }
            if seen.weight != m.cidmask.weight {
                return Err(format!("mm {id}: bitmap has {} cids, slots hold {}", m.cidmask.weight, seen.weight));
            }
        }
        for (tid, t) in self.threads.iter().enumerate() {
            let Some(t) = t else { continue };
            if let (Some(c), Some(cpu)) = (t.cid, t.on_cpu) {
                if self.mms[t.mm].pcpu[cpu].cid.held() != Some(c) {
                    return Err(format!("thread {tid} runs with cid {c} but CPU {cpu}'s slot is not it"));
                }
            }
        }
        Ok(())
    }
}
