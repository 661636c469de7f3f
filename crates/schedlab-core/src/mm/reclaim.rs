//! Page reclaim to zram with synchronous or batched TLB flushes (MADV_PAGEOUT, kswapd).
//!
//! Mirrors: mm/madvise.c (madvise_cold_or_pageout_pte_range → reclaim_pages once per PMD);
//! mm/vmscan.c (reclaim_pages → one shrink_folio_list per node; shrink_inactive_list,
//! SWAP_CLUSTER_MAX); mm/rmap.c (try_to_unmap → try_to_unmap_one per mapping,
//! should_defer_flush, set_tlb_ubc_flush_pending, try_to_unmap_flush[_dirty]); mm/shmem.c
//! (shmem_writeout, shmem_swapin_folio); drivers/block/zram/zram_drv.c.
//!
//! Model: a pure cost model, no events. One `page_out` call is one madvise(MADV_PAGEOUT)
//! (or `pages` of kswapd reclaim); each page is a 4 KiB swap-backed folio mapped once by
//! each `Mapper`. Batch boundaries are the kernel's:
//!
//! ```text
//!  MADV_PAGEOUT: range ─ per PMD (512 pages) ─ reclaim_pages ─ per node ─ shrink_folio_list
//!  kswapd:       LRU ─ shrink_inactive_list, SWAP_CLUSTER_MAX = 32 ─ shrink_folio_list
//!  shrink_folio_list: per folio { try_to_unmap (flush per mapping, or defer);
//!                                 dirty → try_to_unmap_flush_dirty; pageout → zram;
//!                                 free [6.10+: try_to_unmap_flush every 31 freed] }
//!                     try_to_unmap_flush                   ← the batch's one wait / IPI round
//! ```
//!
//! MADV_PAGEOUT leaves alone folios mapped by more than one process (folio_mapcount !=
//! nr_pages): many-mapper reclaim is kswapd's (`ReclaimPath::Kswapd`).
//!
//! Dirty pages: swap-backed folios are dirty when reclaimed (shmem_swapin_folio and
//! add_to_swap mark them so), so every folio goes through try_to_unmap_flush_dirty before
//! pageout. That flushes only if a deferred PTE was dirty (`tlb_ubc.writable`, set from
//! pte_dirty). A page brought back by a read fault is mapped clean (no write happened;
//! arm64 maps it PTE_RDONLY with DBM), so the seed's read-touch loop keeps one flush per
//! batch; only its first page-out, after the initial memset dirtied every PTE, flushes once
//! per page. A writer (`Mapper::pte_dirty`) degrades batching to one flush per page.

pub mod swap_bench;

use std::collections::BTreeMap;

use crate::cpumask::{CpuId, CpuMask};
use crate::kernel::KernelVersion;
use crate::mm::tlb::{IdleCpus, TlbCosts};
use crate::time::Ns;
use crate::topology::{Arch, Distance, Machine};

/// Pages per PMD (2 MiB / 4 KiB): the unit of madvise's page-table walk.
pub const PTRS_PER_PMD: u64 = 512;
/// Folios isolated per shrink_inactive_list call (SWAP_CLUSTER_MAX).
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// Folios per free batch in shrink_folio_list since 6.10 (PAGEVEC_SIZE).
pub const FREE_BATCH: u64 = 31;

/// Tells whether `v`'s shrink_folio_list also flushes before freeing each batch of 31
/// folios: since 6.10 ("mm: free folios in a batch in shrink_folio_list()", M. Wilcox,
/// recalled, not re-read). Earlier kernels free the whole list after one flush at the end.
pub fn free_batch_flush_in(v: KernelVersion) -> bool {
    v >= KernelVersion::new(6, 10)
}

/// `arch_tlbbatch_should_defer` policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeferPolicy {
    /// Never defer: every unmap flushes synchronously (ptep_clear_flush).
    Never,
    /// arm64 6.5+: always, except with the REPEAT_TLBI workaround (the seed's v3 patch had
    /// no such check; its kernel predates the workaround); x86: iff some CPU other than
    /// this one is in mm_cpumask.
    Always,
    /// The seed review's thresholds: defer iff num_online_cpus() >= n (and the x86 rule on
    /// x86). v6 enabled batching at >= 8 CPUs: `CpuThreshold(8)`; v4 disabled it at <= 4
    /// CPUs, i.e. `CpuThreshold(5)`.
    CpuThreshold(usize),
}

/// Who reclaims, which sets the batch boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimPath {
    /// madvise(MADV_PAGEOUT) by `mappers[0]`, whose mm is loaded on the calling CPU.
    MadvPageout,
    /// kswapd / direct reclaim from the LRU, SWAP_CLUSTER_MAX folios per shrink call; no
    /// user mm is loaded on the reclaiming CPU.
    Kswapd,
    /// A process writing memory.reclaim (cgroup v2, 5.19+: try_to_free_mem_cgroup_pages):
    /// the same LRU batches, every mapping unmapped, with `mappers[0]`'s mm loaded on the
    /// reclaiming CPU.
    MemcgReclaim,
}

/// Compressor zram uses for pages that are not same-filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compressor {
    /// lzo-rle, zram's default since 5.1 (costed as LZO: the RLE gain needs runs).
    LzoRle,
    /// lz4, common on Android.
    Lz4,
}

/// What a swapped page holds, as zram sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZramPayload {
    /// Every word equal (page_same_filled): stored as one word, read back by memset_l.
    SameFilled,
    /// Ordinary data, compressed.
    Compressed(Compressor),
}

/// One process mapping the reclaimed pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapper {
    /// CPUs the process has run on (where its TLB entries may live).
    pub mm_cpumask: CpuMask,
    /// Its PTEs are dirty (it wrote the pages since they were mapped).
    pub pte_dirty: bool,
}

impl Mapper {
    /// A process that ran on `cpus` and only read the pages.
    pub fn reader(cpus: CpuMask) -> Mapper {
        Mapper { mm_cpumask: cpus, pte_dirty: false }
    }
}

/// Per-page kernel work outside TLB maintenance, in cycles of a big out-of-order core
/// (scaled by `ipc` on little cores), plus zram payload costs. These are instruction-path
/// estimates (named kernel functions, ~1 IPC), not measurements and not fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct ReclaimCosts {
    /// madvise syscall entry/exit, lru_add_drain, tlb_gather, walk setup (once per call).
    pub madvise_call_cycles: f64,
    /// PTE walk step over a folio MADV_PAGEOUT leaves alone (mapcount check).
    pub walk_skip_cycles: f64,
    /// PTE walk step and folio_isolate_lru (lru_lock round trip) per folio.
    pub isolate_cycles: f64,
    /// shrink_folio_list per-folio bookkeeping (trylock, checks, stats).
    pub shrink_folio_cycles: f64,
    /// rmap_walk setup (i_mmap lock, interval-tree lookup) per mapped folio.
    pub rmap_walk_cycles: f64,
    /// try_to_unmap_one per mapping, without the PTE exchange and the flush
    /// (page_vma_mapped_walk, PTL, mapcount, counters, mmu notifiers).
    pub unmap_one_cycles: f64,
    /// shmem_writeout: swap slot (per-CPU cache), add_to_swap_cache, shmem xarray update.
    pub swap_alloc_cycles: f64,
    /// swap_writepage → bio → zram_submit_bio → write slot and stats, end of I/O.
    pub swap_write_cycles: f64,
    /// __remove_mapping (xa_lock, delete from swap cache), memcg uncharge, free to pcp.
    pub remove_mapping_cycles: f64,
    /// Exception entry/exit and handle_mm_fault dispatch of one user fault.
    pub fault_cycles: f64,
    /// shmem_fault lookup finding a swap entry, plus fault-around over it.
    pub shmem_lookup_cycles: f64,
    /// Swap-in bookkeeping: folio alloc, memcg charge, swap cache, shmem_add_to_page_cache,
    /// delete_from_swap_cache, swap_free, LRU add.
    pub swapin_cycles: f64,
    /// zram read dispatch (synchronous device) and slot lookup.
    pub swap_read_cycles: f64,
    /// finish_fault: set the PTE, rmap add, counters.
    pub map_cycles: f64,
    /// page_same_filled scan speed, bytes per cycle (one 8-byte compare per cycle).
    pub same_scan_bytes_per_cycle: f64,
    /// memset/memset_l store speed, bytes per cycle (one 16-byte store per cycle).
    pub fill_bytes_per_cycle: f64,
    /// LZ4 compression, cycles per byte: 2.7 GHz / 422 MB/s (lz4 README r101 table, Core
    /// i5-3340M, Silesia corpus, single thread).
    pub lz4_compress_cpb: f64,
    /// LZ4 decompression: 2.7 GHz / 1820 MB/s (same table).
    pub lz4_decompress_cpb: f64,
    /// LZO compression: 2.7 GHz / 414 MB/s (same table, LZO 2.06).
    pub lzo_compress_cpb: f64,
    /// LZO decompression: 2.7 GHz / 600 MB/s (same table).
    pub lzo_decompress_cpb: f64,
    /// Moving one 4 KiB page through the cache from the LLC, ns: the cost table's
    /// refill_ns(4096, SameLlc) (zram scans a page last written ~1 MiB of work earlier).
    pub page_llc_refill_ns: f64,
    /// User touch loop per page (load, add, compare, branch), cycles.
    pub user_touch_cycles: f64,
    /// User TLB miss on a freshly mapped page: 4 walk levels hitting L1/L2, ns.
    pub user_walk_ns: f64,
}

impl ReclaimCosts {
    /// Derives the costs of `m` from its cost table.
    pub fn for_machine(m: &Machine) -> ReclaimCosts {
        let c = &m.cost;
        ReclaimCosts {
            madvise_call_cycles: 1500.0,
            walk_skip_cycles: 60.0,
            isolate_cycles: 250.0,
            shrink_folio_cycles: 300.0,
            rmap_walk_cycles: 250.0,
            unmap_one_cycles: 350.0,
            swap_alloc_cycles: 900.0,
            swap_write_cycles: 600.0,
            remove_mapping_cycles: 500.0,
            fault_cycles: 500.0,
            shmem_lookup_cycles: 600.0,
            swapin_cycles: 1800.0,
            swap_read_cycles: 400.0,
            map_cycles: 300.0,
            same_scan_bytes_per_cycle: 8.0,
            fill_bytes_per_cycle: 16.0,
            lz4_compress_cpb: 2700.0 / 422.0,
            lz4_decompress_cpb: 2700.0 / 1820.0,
            lzo_compress_cpb: 2700.0 / 414.0,
            lzo_decompress_cpb: 2700.0 / 600.0,
            page_llc_refill_ns: c.refill_ns(4096, Distance::SameLlc),
            user_touch_cycles: 6.0,
            user_walk_ns: 4.0 * c.cacheline.same_core_ns,
        }
    }

    /// zram write of one page's payload, cycles (before IPC scaling).
    pub fn zram_write_cycles(&self, p: ZramPayload) -> f64 {
        match p {
            ZramPayload::SameFilled => 4096.0 / self.same_scan_bytes_per_cycle,
            ZramPayload::Compressed(Compressor::Lz4) => 4096.0 * self.lz4_compress_cpb,
            ZramPayload::Compressed(Compressor::LzoRle) => 4096.0 * self.lzo_compress_cpb,
        }
    }

    /// zram read of one page's payload, cycles (before IPC scaling).
    pub fn zram_read_cycles(&self, p: ZramPayload) -> f64 {
        match p {
            ZramPayload::SameFilled => 4096.0 / self.fill_bytes_per_cycle,
            ZramPayload::Compressed(Compressor::Lz4) => 4096.0 * self.lz4_decompress_cpb,
            ZramPayload::Compressed(Compressor::LzoRle) => 4096.0 * self.lzo_decompress_cpb,
        }
    }
}

/// Instructions per cycle on kernel code relative to a big out-of-order core. Estimate:
/// in-order dual-issue little cores (Cortex-A53/A55/A510/A520) reach about half.
pub fn core_ipc(core_type: &str) -> f64 {
    let t = core_type.to_ascii_lowercase();
    if ["a53", "a55", "a510", "a520"].iter().any(|n| t.contains(n)) {
        0.5
    } else {
        1.0
    }
}

/// What one page-out cost and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageOutReport {
    /// System time on the calling CPU, everything included.
    pub cpu_ns: Ns,
    /// Time in the synchronous flush path (ptep_clear_flush).
    pub flush_ns: Ns,
    /// Time posting deferred flushes (set_tlb_ubc_flush_pending → arch_tlbbatch_add_pending).
    pub defer_ns: Ns,
    /// Time in try_to_unmap_flush[_dirty] (arch_tlbbatch_flush).
    pub batch_flush_ns: Ns,
    /// arm64 DSB ISH waits for broadcast TLBI completion.
    pub completion_waits: u64,
    /// x86 IPI rounds (each waits for all its targets).
    pub ipi_rounds: u64,
    /// x86 IPIs sent.
    pub ipis: u64,
    /// try_to_unmap_flush[_dirty] calls that had deferred flushes to complete.
    pub batches: u64,
    /// shrink_folio_list calls.
    pub shrink_calls: u64,
    /// Time stolen on IPI targets, by CPU (ascending).
    pub remote_ns: Vec<(CpuId, Ns)>,
    /// Folios unmapped from every mapping and written to zram.
    pub pages_unmapped: u64,
    /// PTEs cleared (try_to_unmap_one calls that unmapped).
    pub ptes_cleared: u64,
    /// Reclaimed folios left with a mapping (must be 0).
    pub still_mapped: u64,
    /// Folios MADV_PAGEOUT skipped (mapped by more than one process).
    pub skipped: u64,
}

/// Page reclaim on one machine under one flush policy.
#[derive(Clone, Debug, PartialEq)]
pub struct ReclaimModel {
    /// Instruction set.
    pub arch: Arch,
    /// TLB_BATCH (ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH): deferral possible at all.
    pub batch: bool,
    /// arch_tlbbatch_should_defer policy.
    pub policy: DeferPolicy,
    /// Who reclaims.
    pub path: ReclaimPath,
    /// 6.10+: shrink_folio_list also flushes before freeing each batch of 31 folios.
    pub free_batch_flush: bool,
    /// Page content as zram sees it.
    pub payload: ZramPayload,
    /// TLB maintenance costs.
    pub tlb: TlbCosts,
    /// Reclaim and swap costs.
    pub costs: ReclaimCosts,
    /// CPUs in the inner-shareable domain (= online CPUs).
    pub nr_cpus_in_domain: usize,
    speed: Vec<(u32, f64)>,
}

impl ReclaimModel {
    /// Builds the model: MADV_PAGEOUT, lzo-rle payload, pre-6.10 free batching.
    pub fn new(machine: &Machine, batch: bool, policy: DeferPolicy) -> Self {
        ReclaimModel {
            arch: machine.arch,
            batch,
            policy,
            path: ReclaimPath::MadvPageout,
            free_batch_flush: false,
            payload: ZramPayload::Compressed(Compressor::LzoRle),
            tlb: TlbCosts::for_machine(machine),
            costs: ReclaimCosts::for_machine(machine),
            nr_cpus_in_domain: machine.nr_cpus(),
            speed: machine.cpus.iter().map(|c| (c.freq_mhz.max(1), core_ipc(&c.core_type))).collect(),
        }
    }

    /// Sets the kernel's TLBI sequence (KPTI, the REPEAT_TLBI workaround).
    pub fn with_kernel(mut self, kpti: bool, repeat_tlbi: bool) -> Self {
        self.tlb = self.tlb.with_kernel(kpti, repeat_tlbi);
        self
    }

    /// Sets the reclaim path.
    pub fn with_path(mut self, path: ReclaimPath) -> Self {
        self.path = path;
        self
    }

    /// Sets the zram payload.
    pub fn with_payload(mut self, payload: ZramPayload) -> Self {
        self.payload = payload;
        self
    }

    /// Turns the 6.10+ flush-before-free every 31 folios on or off.
    pub fn with_free_batch_flush(mut self, on: bool) -> Self {
        self.free_batch_flush = on;
        self
    }

    /// Kernel code cycles on `cpu`, in ns.
    pub fn work_ns(&self, cpu: CpuId, cycles: f64) -> f64 {
        let (mhz, ipc) = self.speed[cpu];
        cycles / ipc * 1000.0 / mhz as f64
    }

    fn ns(&self, cpu: CpuId, cycles: f64) -> Ns {
        self.work_ns(cpu, cycles).round() as Ns
    }

    /// should_defer_flush with TTU_BATCH_FLUSH set, for a mapping of `m` unmapped on `cpu`.
    pub fn should_defer(&self, cpu: CpuId, m: &Mapper) -> bool {
        if !self.batch {
            return false;
        }
        let arch_rule = match self.arch {
            // 6.5: no deferral where TLBIs must be repeated (each TLBI already pays a DSB).
            Arch::Arm64 => !self.tlb.repeat_tlbi,
            Arch::X86_64 => m.mm_cpumask.iter().any(|c| c != cpu),
        };
        match self.policy {
            DeferPolicy::Never => false,
            DeferPolicy::Always => arch_rule,
            DeferPolicy::CpuThreshold(n) => self.nr_cpus_in_domain >= n && arch_rule,
        }
    }

    /// Batch sizes (folios per shrink_folio_list) for `pages` pages.
    pub fn shrink_batches(&self, pages: u64) -> Vec<u64> {
        let unit = match self.path {
            ReclaimPath::MadvPageout => PTRS_PER_PMD,
            ReclaimPath::Kswapd | ReclaimPath::MemcgReclaim => SWAP_CLUSTER_MAX,
        };
        let mut v = Vec::new();
        let mut left = pages;
        while left > 0 {
            v.push(left.min(unit));
            left -= left.min(unit);
        }
        v
    }

    /// Reclaims `pages` folios mapped by every mapper of `mappers`, from `self_cpu`, with
    /// the other CPUs idle as `idle` says.
    pub fn page_out(&self, self_cpu: CpuId, pages: u64, mappers: &[Mapper], idle: &IdleCpus) -> PageOutReport {
        let mut r = Tally::default();
        let mut cpu_ns: Ns = 0;
        let c = &self.costs;
        if self.path == ReclaimPath::MadvPageout {
            cpu_ns += self.ns(self_cpu, c.madvise_call_cycles);
            if mappers.len() != 1 {
                // folio_mapcount != 1: not this process's alone (or not mapped by it at all).
                r.r.skipped = pages;
                r.r.cpu_ns = cpu_ns + pages * self.ns(self_cpu, c.walk_skip_cycles);
                return r.r;
            }
        }
        let per_folio = self.ns(
            self_cpu,
            c.isolate_cycles
                + c.shrink_folio_cycles
                + c.swap_alloc_cycles
                + c.swap_write_cycles
                + c.remove_mapping_cycles
                + c.zram_write_cycles(self.payload),
        ) + c.page_llc_refill_ns.round() as Ns;
        let rmap = if mappers.is_empty() { 0 } else { self.ns(self_cpu, c.rmap_walk_cycles) };
        let unmap_one = self.ns(self_cpu, c.unmap_one_cycles);
        // Precomputed: the synchronous flush is the same for every page.
        let arm_sync = self.tlb.arm64_flush_page_ns(self_cpu, idle);
        let defer: Vec<bool> = mappers.iter().map(|m| self.should_defer(self_cpu, m)).collect();

        let mut st = Batch::default();
        // Time since the last deferred TLBI was posted (what an arm64 DSB may still wait for).
        let mut since_post: Ns = Ns::MAX / 4;
        for size in self.shrink_batches(pages) {
            r.r.shrink_calls += 1;
            let mut freed = 0;
            for _ in 0..size {
                // Isolation and the rmap walk; the folio's pageout comes after its unmap.
                cpu_ns += rmap;
                since_post += rmap;
                let mut mapcount = mappers.len();
                for (i, m) in mappers.iter().enumerate() {
                    cpu_ns += unmap_one;
                    since_post += unmap_one;
                    mapcount -= 1;
                    r.r.ptes_cleared += 1;
                    let loaded = self.path != ReclaimPath::Kswapd && i == 0;
                    if defer[i] {
                        // ptep_get_and_clear (part of the unmap) + set_tlb_ubc_flush_pending.
                        let t = match self.arch {
                            Arch::Arm64 => self.tlb.pte_xchg_ns(self_cpu) + self.tlb.tlbi_post_batched_ns(self_cpu, idle, since_post),
                            Arch::X86_64 => self.tlb.pte_xchg_ns(self_cpu) + self.tlb.batch_add_ns(self_cpu),
                        };
                        since_post = 0;
                        st.pending = true;
                        st.writable |= m.pte_dirty;
                        st.mask = st.mask.or(&m.mm_cpumask);
                        st.loaded |= loaded;
                        r.r.defer_ns += t;
                        cpu_ns += t;
                    } else {
                        let t = self.flush_page(self_cpu, m, loaded, idle, arm_sync, &mut r);
                        r.r.flush_ns += t;
                        cpu_ns += t;
                        since_post += t;
                    }
                }
                if mapcount > 0 {
                    r.r.still_mapped += 1;
                    cpu_ns += per_folio;
                    since_post += per_folio;
                    continue;
                }
                // The folio is dirty: pageout follows, after try_to_unmap_flush_dirty.
                if st.writable {
                    cpu_ns += self.flush_batch(self_cpu, idle, since_post, &mut st, &mut r);
                }
                cpu_ns += per_folio;
                since_post += per_folio;
                r.r.pages_unmapped += 1;
                freed += 1;
                if self.free_batch_flush && freed == FREE_BATCH {
                    freed = 0;
                    cpu_ns += self.flush_batch(self_cpu, idle, since_post, &mut st, &mut r);
                }
            }
            cpu_ns += self.flush_batch(self_cpu, idle, since_post, &mut st, &mut r);
        }
        r.r.cpu_ns = cpu_ns;
        r.r.remote_ns = r.remote.into_iter().collect();
        r.r
    }

    /// ptep_clear_flush of one mapping: arm64 TLBI + DSB; x86 local INVLPG if the mm is
    /// loaded here, and an IPI round to the other non-lazy CPUs of its mm_cpumask.
    fn flush_page(&self, cpu: CpuId, m: &Mapper, loaded: bool, idle: &IdleCpus, arm_sync: Ns, r: &mut Tally) -> Ns {
        match self.arch {
            Arch::Arm64 => {
                r.r.completion_waits += 1 + if self.tlb.repeat_tlbi { self.tlb.tlbis_per_page as u64 } else { 0 };
                arm_sync
            }
            Arch::X86_64 => {
                let local = self.tlb.pte_xchg_ns(cpu) + if loaded { self.tlb.invlpg_ns(cpu) } else { 0 };
                let targets = self.tlb.ipi_targets(cpu, &m.mm_cpumask, idle);
                if targets.is_empty() {
                    return local;
                }
                let round = self.tlb.ipi_round(cpu, &targets, false, local);
                r.charge(&round.stolen);
                round.initiator_ns
            }
        }
    }

    /// try_to_unmap_flush: complete every deferred flush (nothing if none is pending).
    fn flush_batch(&self, cpu: CpuId, idle: &IdleCpus, since_post: Ns, st: &mut Batch, r: &mut Tally) -> Ns {
        if !st.pending {
            return 0;
        }
        r.r.batches += 1;
        let t = match self.arch {
            Arch::Arm64 => {
                r.r.completion_waits += 1;
                self.tlb.arm64_batch_flush_ns(cpu, idle, since_post)
            }
            Arch::X86_64 => {
                let local = if st.loaded || st.mask.test(cpu) { self.tlb.full_flush_ns(cpu) } else { 0 };
                let targets = self.tlb.ipi_targets(cpu, &st.mask, idle);
                if targets.is_empty() {
                    local
                } else {
                    let round = self.tlb.ipi_round(cpu, &targets, true, local);
                    r.charge(&round.stolen);
                    round.initiator_ns
                }
            }
        };
        *st = Batch::default();
        r.r.batch_flush_ns += t;
        t
    }

    /// System time of `pages` minor faults on `cpu` mapping shmem pages already in the page
    /// cache (fault entry, shmem lookup finding the folio, finish_fault).
    pub fn map_resident(&self, cpu: CpuId, pages: u64) -> Ns {
        let c = &self.costs;
        pages * self.ns(cpu, c.fault_cycles + c.shmem_lookup_cycles + c.map_cycles)
    }

    /// System time of `pages` swap-in faults on `cpu` (touching swapped-out shmem pages).
    pub fn swap_in(&self, cpu: CpuId, pages: u64) -> Ns {
        let c = &self.costs;
        let cycles = c.fault_cycles + c.shmem_lookup_cycles + c.swapin_cycles + c.swap_read_cycles + c.map_cycles + c.zram_read_cycles(self.payload);
        pages * (self.ns(cpu, cycles) + c.page_llc_refill_ns.round() as Ns)
    }
}

/// The pending state of `current->tlb_ubc`.
#[derive(Default)]
struct Batch {
    pending: bool,
    writable: bool,
    loaded: bool,
    mask: CpuMask,
}

/// A report being filled, with the time stolen on each remote CPU.
#[derive(Default)]
struct Tally {
    r: PageOutReport,
    remote: BTreeMap<CpuId, Ns>,
}

impl Tally {
    /// Records one IPI round.
    fn charge(&mut self, stolen: &[(CpuId, Ns)]) {
        self.r.ipi_rounds += 1;
        self.r.ipis += stolen.len() as u64;
        for &(c, t) in stolen {
            *self.remote.entry(c).or_insert(0) += t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets::topo;

    #[test]
    fn batch_boundaries_follow_the_kernel() {
        let m = topo(1, 1, 4, 1);
        let madv = ReclaimModel::new(&m, true, DeferPolicy::Always);
        assert_eq!(madv.shrink_batches(256), vec![256]);
        assert_eq!(madv.shrink_batches(1024), vec![512, 512]);
        let ksw = madv.clone().with_path(ReclaimPath::Kswapd);
        assert_eq!(ksw.shrink_batches(70), vec![32, 32, 6]);
        assert!(!free_batch_flush_in(KernelVersion::new(6, 9)) && free_batch_flush_in(KernelVersion::new(6, 10)));
    }

    #[test]
    fn thresholds_and_x86_rule_decide_deferral() {
        let m = topo(1, 1, 4, 1);
        let one = Mapper::reader(CpuMask::single(0));
        let two = Mapper::reader(CpuMask::first_n(2));
        let x = ReclaimModel::new(&m, true, DeferPolicy::Always);
        assert!(!x.should_defer(0, &one) && x.should_defer(0, &two));
        assert!(!ReclaimModel::new(&m, true, DeferPolicy::CpuThreshold(8)).should_defer(0, &two));
        assert!(ReclaimModel::new(&m, true, DeferPolicy::CpuThreshold(4)).should_defer(0, &two));
        assert!(!ReclaimModel::new(&m, false, DeferPolicy::Always).should_defer(0, &two));
        assert_eq!(core_ipc("cortex-a55"), 0.5);
        assert_eq!(core_ipc("cortex-a78"), 1.0);
    }

    #[test]
    fn dirty_ptes_flush_before_each_pageout() {
        let mut m = topo(1, 1, 8, 1);
        m.arch = Arch::Arm64;
        let model = ReclaimModel::new(&m, true, DeferPolicy::Always);
        let idle = IdleCpus::none();
        let clean = model.page_out(0, 256, &[Mapper::reader(CpuMask::single(0))], &idle);
        let dirty = model.page_out(0, 256, &[Mapper { mm_cpumask: CpuMask::single(0), pte_dirty: true }], &idle);
        assert_eq!((clean.batches, clean.completion_waits), (1, 1));
        assert_eq!((dirty.batches, dirty.completion_waits), (256, 256));
        let reader = [Mapper::reader(CpuMask::single(0))];
        let freeb = model.clone().with_free_batch_flush(true).page_out(0, 256, &reader, &idle);
        assert_eq!(freeb.batches, 256 / FREE_BATCH + 1);
    }
}
