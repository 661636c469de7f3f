//! The seed's swap micro-benchmark, computed from the reclaim model (no engine).
//!
//! Mirrors: the program of seed 004, run as `taskset -c 4 ./a.out` with zram swap:
//!
//! ```text
//!  p = mmap(1 MiB, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS)   shmem-backed
//!  memset(p, 0x88, 1 MiB)                    first-touch faults; every PTE dirty
//!  repeat 10000:
//!      for each page: read p[i]              swap-in fault (none on the first pass)
//!      madvise(p, 1 MiB, MADV_PAGEOUT)       reclaim all 256 pages to zram
//! ```
//!
//! Model: a single pinned thread that never waits (zram is synchronous), so elapsed =
//! user + sys. Every page holds 0x88 repeated: zram stores it as a same-filled page (a
//! 4 KiB scan on write, a memset on read), with no compression. The first page-out sees
//! the PTEs the memset dirtied (one flush per page even when batching); later ones see
//! clean PTEs mapped by read faults. User time is the touch loop: a few instructions per
//! page, plus one TLB-miss walk per page when the page was just faulted back in; the
//! initial memset streams 16 bytes per cycle. First-touch faults are costed like a swap-in
//! (allocation and a zero fill instead of a zram read). The engine will later run the same
//! program as task ops; these figures let its integrator check the numbers.

use crate::cpumask::{CpuId, CpuMask};
use crate::mm::reclaim::{Mapper, PageOutReport, ReclaimModel, ReclaimPath, ZramPayload};
use crate::mm::tlb::IdleCpus;
use crate::time::Ns;

/// Parameters of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapBench {
    /// Size of the shared mapping, bytes.
    pub region_bytes: u64,
    /// Swap-in/page-out rounds.
    pub iterations: u64,
    /// CPU the thread is pinned to.
    pub cpu: CpuId,
    /// What the other CPUs do meanwhile.
    pub idle: IdleCpus,
}

impl SwapBench {
    /// The seed's parameters (1 MiB, 10000 iterations) on `cpu`.
    pub fn seed(cpu: CpuId, idle: IdleCpus) -> SwapBench {
        SwapBench { region_bytes: 1 << 20, iterations: 10_000, cpu, idle }
    }
}

/// The benchmark's figures, as `time` and `perf report` would show them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwapBenchReport {
    /// Wall time.
    pub elapsed_ns: Ns,
    /// User time.
    pub user_ns: Ns,
    /// System time.
    pub sys_ns: Ns,
    /// Time in ptep_clear_flush (synchronous flushes).
    pub ptep_clear_flush_ns: Ns,
    /// Time posting deferred flushes and completing batches.
    pub tlb_batch_ns: Ns,
    /// arm64 DSB ISH completion waits.
    pub completion_waits: u64,
    /// x86 IPI rounds.
    pub ipi_rounds: u64,
    /// x86 IPIs.
    pub ipis: u64,
    /// Pages written to zram.
    pub pages_out: u64,
    /// Pages faulted back from zram.
    pub pages_in: u64,
    /// The first page-out (dirty PTEs).
    pub first: PageOutReport,
    /// Every later page-out (clean PTEs).
    pub steady: PageOutReport,
}

impl SwapBenchReport {
    /// Share of elapsed time in ptep_clear_flush, as perf's "Overhead" column (0..1).
    pub fn ptep_clear_flush_share(&self) -> f64 {
        if self.elapsed_ns == 0 {
            0.0
        } else {
            self.ptep_clear_flush_ns as f64 / self.elapsed_ns as f64
        }
    }
}

/// Runs the seed's program on `model`'s machine, under its flush policy.
pub fn swap_bench(model: &ReclaimModel, b: &SwapBench) -> SwapBenchReport {
    let m = model.clone().with_path(ReclaimPath::MadvPageout).with_payload(ZramPayload::SameFilled);
    let c = &m.costs;
    let pages = b.region_bytes.div_ceil(4096);
    let mask = CpuMask::single(b.cpu);
    let user_cycles = |cycles: f64| m.work_ns(b.cpu, cycles).round() as Ns;

    // mmap + memset: first-touch faults and the user-space fill.
    let mut user = user_cycles(b.region_bytes as f64 / c.fill_bytes_per_cycle);
    let mut sys = m.swap_in(b.cpu, pages);
    let mut r = SwapBenchReport::default();
    if b.iterations == 0 {
        r.user_ns = user;
        r.sys_ns = sys;
        r.elapsed_ns = user + sys;
        return r;
    }
    // First round: pages resident and in the TLB; the page-out meets dirty PTEs.
    user += pages * user_cycles(c.user_touch_cycles);
    r.first = m.page_out(b.cpu, pages, &[Mapper { mm_cpumask: mask, pte_dirty: true }], &b.idle);
    // Later rounds: each touch faults the page back, then the load walks the new PTE.
    let rest = b.iterations - 1;
    r.steady = m.page_out(b.cpu, pages, &[Mapper::reader(mask)], &b.idle);
    let touch = pages * (user_cycles(c.user_touch_cycles) + c.user_walk_ns.round() as Ns);
    let swap_in = m.swap_in(b.cpu, pages);
    user += rest * touch;
    sys += r.first.cpu_ns + rest * (swap_in + r.steady.cpu_ns);

    let (f, s) = (&r.first, &r.steady);
    r.ptep_clear_flush_ns = f.flush_ns + rest * s.flush_ns;
    r.tlb_batch_ns = f.defer_ns + f.batch_flush_ns + rest * (s.defer_ns + s.batch_flush_ns);
    r.completion_waits = f.completion_waits + rest * s.completion_waits;
    r.ipi_rounds = f.ipi_rounds + rest * s.ipi_rounds;
    r.ipis = f.ipis + rest * s.ipis;
    r.pages_out = f.pages_unmapped + rest * s.pages_unmapped;
    r.pages_in = rest * pages;
    r.user_ns = user;
    r.sys_ns = sys;
    r.elapsed_ns = user + sys;
    r
}
