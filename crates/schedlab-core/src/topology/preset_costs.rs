//! Cost tables of the preset machines, one per microarchitecture family. Each figure's
//! source, kind and band is its `Provenance` in `preset_sources.rs` (filed under the
//! family the machine's record names), not repeated here; comments below keep only the
//! reasoning a `Provenance` does not carry.
//!
//! Mirrors: nothing in the kernel; these are the hardware figures the kernel's mechanisms
//! pay (see `cost.rs`).
//! Model: cache-line transfer latencies by sharing distance are published core-to-core
//! "bounce" latencies (two threads pinned to two CPUs exchanging one cache line with
//! compare-and-swap; the figure is round trip / 2, i.e. one transfer). Private-cache
//! hits are the vendor's load-to-use cycles at the preset's nominal clock. Figures
//! nobody has published for that exact part are marked "estimate" with their reasoning.
//! Nothing here is fitted to a seed's benchmark results.
//!
//! Sources, cited by key below:
//! - \[c2c\]   nviennot/core-to-core-latency (GitHub), README tables and results/*.csv;
//!   the same test as Anandtech's core-to-core chart.
//! - \[c2c#132\] same project, issue #132 "AMD EPYC 9274F 24-Core Processor Dual Socket"
//!   (a Genoa part: same Zen 4 CCDs, IO die and socket link as the EPYC 9654).
//! - \[at7950\] Anandtech, "AMD Zen 4 Ryzen 9 7950X and Ryzen 5 7600X Review", page
//!   "Core-to-Core Latency": 15-19 ns inside a CCX, up to 79.5 ns across CCDs.
//! - \[atrome\] Anandtech, "AMD Rome EPYC 2nd gen" review, "Memory Subsystem: Latency":
//!   L2 12 cycles (Zen 2), Xeon 8280 L2 14 cycles, DRAM full random ~122 ns (NPS1).
//! - \[amd\]   AMD product pages / Software Optimization Guides (cache sizes, L2 cycles).
//! - \[gs101\] Linux arch/arm64/boot/dts/exynos/google/gs101.dtsi (mainline).
//! - \[lahaina\] Qualcomm downstream arch/arm64/boot/dts/vendor/qcom/lahaina.dtsi (as in
//!   OnePlusOSS/android_kernel_oneplus_sm8350).
//! - \[intel_idle\] Linux drivers/idle/intel_idle.c, skx_cstates: C1 exit_latency 2 us.
//! - \[psci_wfi\] Linux drivers/cpuidle/cpuidle-psci.c and arch/arm cpuidle.h: the WFI
//!   state has exit_latency = 1 us.
//! - \[ctxsw\] "Context switch overhead" experiment (ddumbying.vercel.app): pipe
//!   ping-pong, Linux 6.6, Intel 11th-gen Core: 1,070 ns per thread switch, ~2,410 ns per
//!   process switch (includes the wake-up path).
//! - \[ingo15\] Ingo Molnar on linux-mm, 2015 (the x86 batched-flush thread): INVLPG
//!   ~200-250 cycles; a TLB miss refilled from cached page tables ~10-20 cycles.
//! - \[agner\] Agner Fog, "Instruction tables" (2022): XCHG with a memory operand
//!   (implicitly locked) about 20 cycles of latency on Skylake and Zen 2-4.
//! - \[chi\] Arm AMBA 5 CHI Architecture Specification (IHI 0050): a DVMOp request is
//!   sent to each snooped node as two SnpDVMOp snoop requests (part 1 and part 2).
//! - \[intel-om\] Intel 64 and IA-32 Architectures Optimization Reference Manual:
//!   Skylake has two page-miss handlers (page walks in flight) and a 64-entry L1 DTLB
//!   for 4 KiB pages (AMD's Zen guides: 64-72 L1 DTLB entries).
//!
//! TLB maintenance on arm64 (the `tlb` table): no published latency of a TLBI + DSB ISH
//! was found for the DynamIQ (DSU) clusters of the phone presets or for Kunpeng 920's
//! mesh. The terms are estimates from the DVM protocol's structure, each marked so; the
//! `swap` experiment sweeps the synchronous wait (`tlb.dsb_sync_override_ns`) so a
//! user sees how the published effect depends on it.

use crate::cost::{CacheSizes, CachelineCosts, CostTable, KernelPathCosts, TlbPathCosts};

/// No source says a preset's LLC drops its contents while its package is up (AMD's and
/// Intel's documents describe core C6 writing the core's caches back, not the L3 being
/// lost): LLCs are kept (`cache.llc_flush_after_idle_us` = 0; a knob for what-ifs).
const LLC_KEPT: f64 = 0.0;

/// Returns the duration of `cycles` core cycles at `mhz`, in ns.
fn cycles_ns(cycles: f64, mhz: f64) -> f64 {
    cycles * 1000.0 / mhz
}

/// Estimate of a task migration between runqueues: the dequeue/enqueue code path. The
/// lines it pulls from the other CPU (its rq lock, rq/cfs_rq counters and the task's
/// scheduling entity) are priced at their real distance where the move happens
/// (`sched/locks.rs`), no longer here at a fixed same-LLC figure.
fn migration_estimate(code_ns: f64, _line_ns: f64) -> f64 {
    code_ns
}

/// Cycles of one thread switch in a pipe ping-pong ([ctxsw]: 1,070 ns per switch at
/// ~4.5 GHz): the write's and the read's system calls, the wakeup, the pick and the
/// switch itself. The shares below are estimates; the switch is the remainder.
const PINGPONG_SWITCH_CYCLES: f64 = 1070.0 * 4.5;
/// [ctxsw]: a process switch costs 2,410 ns against 1,070 for a thread (address-space
/// switch and the TLB/cache refill it brings), at ~4.5 GHz.
const MM_SWITCH_CYCLES: f64 = (2410.0 - 1070.0) * 4.5;
/// estimate: syscall entry and exit with today's mitigations, each ~200 cycles
/// (getpid round trips of 70-100 ns at 4-5 GHz).
const SYSCALL_EDGE_CYCLES: f64 = 200.0;
/// estimate: pipe_write's wake-up: the wait queue, try_to_wake_up() (select_task_rq,
/// enqueue, wakeup_preempt).
const TTWU_CYCLES: f64 = 1500.0;
/// estimate: the part of TTWU_CYCLES that ttwu_do_activate() runs under the target's
/// rq lock: enqueue_task_fair() (update_curr, PELT, the tree insert) and
/// wakeup_preempt(); the rest is select_task_rq_fair() and the wake-queue walk. Band
/// 400-900 cycles.
const TTWU_ACTIVATE_CYCLES: f64 = 600.0;
/// estimate: pipe_read's wait and __schedule() up to the switch (deactivate_task,
/// pick_next_task).
const SCHEDULE_CYCLES: f64 = 1000.0;
/// derived: what [ctxsw]'s thread switch leaves for switch_to() and finish_task_switch()
/// once the two system calls, the wakeup and the pick are counted (~1,515 cycles).
pub(crate) const SWITCH_CYCLES: f64 = PINGPONG_SWITCH_CYCLES - 4.0 * SYSCALL_EDGE_CYCLES - TTWU_CYCLES - SCHEDULE_CYCLES;

/// Kernel path costs of an x86-64 server or desktop core at `mhz`: cycle budgets
/// (estimates, see the constants above) at the preset's clock.
fn kernel_paths_x86(mhz: f64) -> KernelPathCosts {
    let c = |cycles: f64| cycles_ns(cycles, mhz);
    KernelPathCosts {
        syscall_entry_ns: c(SYSCALL_EDGE_CYCLES),
        syscall_exit_ns: c(SYSCALL_EDGE_CYCLES),
        irq_entry_ns: c(900.0),
        irq_exit_ns: c(900.0),
        hrtimer_start_ns: c(250.0),
        hrtimer_cancel_ns: c(180.0),
        mod_timer_ns: c(120.0),
        del_timer_ns: c(75.0),
        nohz_target_per_cpu_ns: c(12.0),
        timer_base_switch_ns: c(45.0),
        timer_expire_ns: c(300.0),
        tmigr_level_ns: c(60.0),
        ttwu_ns: c(TTWU_CYCLES),
        schedule_ns: c(SCHEDULE_CYCLES),
        mm_switch_ns: c(MM_SWITCH_CYCLES),
        // derived: p->pi_lock, p->__state/on_cpu and the sched_entity (three lines of
        // task_struct); the rq lock is modeled, the rq's lines are ttwu_rq_lines.
        ttwu_lines: 3.0,
        ttwu_activate_ns: c(TTWU_ACTIVATE_CYCLES),
        ttwu_rq_lines: crate::cost::default_ttwu_rq_lines(),
        wake_data_lines: 2.0,
        idle_entry_ns: c(1500.0),
        ipi_delivery_ns: 500.0,
        pm_timer_read_ns: crate::cost::default_pm_timer_read_ns(),
        tick_irq_jitter_ns: crate::cost::default_tick_irq_jitter_ns(),
    }
}

/// Kernel path costs of an arm64 core at `mhz` (PROVISIONAL).
fn kernel_paths_arm(mhz: f64) -> KernelPathCosts {
    let mut k = kernel_paths_x86(mhz);
    k.ipi_delivery_ns = 700.0;
    k
}

/// TLB maintenance on an x86 core. The arm64 fields are unused on x86 and hold the
/// generic Arm estimates.
fn tlb_x86() -> TlbPathCosts {
    TlbPathCosts {
        // [ingo15]: ~200-250 cycles.
        invlpg_cycles: 225.0,
        // estimate: a CR3 reload / INVPCID costs the same order as INVLPG; what costs is
        // the refill below.
        full_flush_cycles: 250.0,
        // estimate: cpumask OR over a few words and one atomic increment of tlb_gen.
        batch_add_cycles: 30.0,
        // [intel-om]: the L1 DTLB's 64 entries are the hot set a full flush loses.
        refill_entries: 64.0,
        // 4-level paging (the walk caches are flushed too).
        walk_levels: 4.0,
        // [intel-om]: two page walks in flight.
        walkers: 2.0,
        ..tlb_arm(0.5, 0.0, 0.0)
    }
}

/// TLB maintenance on an arm64 core: `node_ns` is the DVM node's time per snoop message,
/// `external` the DVM participants outside the CPU clusters and `external_rt_ns` their
/// round trip.
fn tlb_arm(node_ns: f64, external: f64, external_rt_ns: f64) -> TlbPathCosts {
    TlbPathCosts {
        // estimate: a store-buffer drain after the PTE exchange, ~20 cycles.
        dsb_ishst_cycles: 20.0,
        // estimate: posting a TLBI costs a few cycles (Barry Song in seed 004: the TLBI
        // without its DSB is "much much cheaper"); ~10.
        tlbi_issue_cycles: 10.0,
        // estimate: the DSB's own drain of this PE's accesses and its TLB, ~30 cycles.
        dsb_local_cycles: 30.0,
        dvm_node_ns_per_target: node_ns,
        // [chi]: two snoop messages per DVM operation per participant.
        dvm_msgs_per_op: 2.0,
        // estimate: a requester's DVM operations in flight at the interconnect before a
        // further TLBI waits (request-tracker entries reserved for DVM); 4.
        dvm_max_outstanding: 4.0,
        // estimate: a TLB lookup-and-invalidate by VA and ASID in the L1 and L2 TLBs plus
        // the response, ~10 ns.
        dvm_ack_ns: 10.0,
        // estimate: a PE in WFI has its clock gated; ungating it for the snoop, ~20 ns.
        dvm_wfi_wake_ns: 20.0,
        dvm_external: external,
        dvm_external_rt_ns: external_rt_ns,
        dsb_sync_override_ns: 0.0,
        // [agner]-class locked exchange on an L1-resident line; estimate for Arm LSE
        // SWP/LDADD-class atomics: ~20 cycles.
        pte_xchg_cycles: 20.0,
        // Unused on arm64 (x86 fields): see tlb_x86().
        invlpg_cycles: 225.0,
        full_flush_cycles: 250.0,
        batch_add_cycles: 30.0,
        refill_entries: 64.0,
        walk_levels: 4.0,
        walkers: 2.0,
    }
}

/// Returns a generic x86 server cost table, used by synthetic `topo()` machines and the
/// host reader on x86-64: an AMD EPYC Zen 3 (Milan) class server at 3 GHz, whose
/// several-LLCs-per-socket shape is what `topo(sockets, llcs, cores, smt)` describes.
pub fn generic_x86_costs() -> CostTable {
    let mut c = zen3_server_costs(3000.0);
    // estimate: the generic table keeps a round DRAM figure between the desktop (~64 ns)
    // and server (~122 ns) measurements below.
    c.cacheline.dram_ns = 100.0;
    c
}

/// Returns a generic arm64 server cost table (host reader on aarch64): the Kunpeng 920
/// figures, the only arm64 server with published per-distance measurements here.
pub fn generic_arm64_costs() -> CostTable {
    kunpeng920_costs()
}

/// AMD Ryzen 9 7950X (Zen 4 desktop, 2 CCDs of one 8-core CCX each) at 4.5 GHz base.
pub fn zen4_desktop_costs() -> CostTable {
    let mhz = 4500.0;
    let same_llc = 15.7;
    CostTable {
        cacheline: CachelineCosts {
            same_core_ns: cycles_ns(14.0, mhz),
            smt_sibling_ns: 5.3,
            same_llc_ns: same_llc,
            same_package_ns: 70.0,
            // Single socket: never used; kept equal to the farthest real distance.
            other_package_ns: 70.0,
            // AIDA64 latency at DDR5-6000, FCLK 2000 MHz: 63.6 ns (harukaze5719 /
            // Chiphell chart, reported by silverflick.com "2000MHz FCLK DDR5-6000 seems
            // optimal for Ryzen 7000"). JEDEC DDR5-5200 setups are a few ns slower.
            dram_ns: 63.6,
        },
        cache: CacheSizes { l1d_kib: 32, l2_kib: 1024, llc_kib: 32 * 1024, llc_flush_after_idle_us: LLC_KEPT },
        // estimate: demand misses a Zen core overlaps; AMD documents 22-24 outstanding
        // L1D misses for Zen 2/3 (Software Optimization Guides), prefetch-free streams
        // of dependent work overlap fewer.
        miss_parallelism: 16.0,
        rfo_parallelism: 1.0,
        smt_slowdown: 1.0,
        context_switch_ns: cycles_ns(SWITCH_CYCLES, mhz),
        // estimate: one x2APIC ICR write (WRMSR) plus the smp_call_function queueing.
        ipi_send_ns: 300.0,
        // estimate: interrupt entry, handler and exit on the target (~1 us; IPI round
        // trips of 1-3 us are the range usually quoted for x86).
        ipi_receive_ns: 1000.0,
        migration_ns: migration_estimate(500.0, same_llc),
        // estimate: fork+exit of a small process (lmbench lat_proc fork class), tens of us.
        fork_ns: 40_000.0,
        kernel: kernel_paths_x86(mhz),
        tlb: tlb_x86(),
    }
}

/// AMD EPYC Zen 3 (Milan) server, single or dual socket, at `mhz`.
pub fn zen3_server_costs(mhz: f64) -> CostTable {
    let same_llc = 23.0;
    CostTable {
        cacheline: CachelineCosts {
            same_core_ns: cycles_ns(12.0, mhz),
            smt_sibling_ns: 9.8,
            same_llc_ns: same_llc,
            same_package_ns: 107.0,
            other_package_ns: 197.0,
            dram_ns: 122.0,
        },
        cache: CacheSizes { l1d_kib: 32, l2_kib: 512, llc_kib: 32 * 1024, llc_flush_after_idle_us: LLC_KEPT },
        miss_parallelism: 16.0,
        rfo_parallelism: 1.0,
        smt_slowdown: 1.0,
        context_switch_ns: cycles_ns(SWITCH_CYCLES, mhz),
        ipi_send_ns: 300.0,
        ipi_receive_ns: 1000.0,
        migration_ns: migration_estimate(700.0, same_llc),
        // estimate: fork+exit of a small process on a server core.
        fork_ns: 50_000.0,
        kernel: kernel_paths_x86(mhz),
        tlb: tlb_x86(),
    }
}

/// AMD EPYC Zen 4 / Zen 4c server (Genoa 9654, Bergamo) at `mhz`, with `llc_kib` of L3
/// per CCX (32 MiB Genoa, 16 MiB Bergamo).
pub fn zen4_server_costs(mhz: f64, llc_kib: u32) -> CostTable {
    let same_llc = 23.0;
    CostTable {
        cacheline: CachelineCosts {
            same_core_ns: cycles_ns(14.0, mhz),
            smt_sibling_ns: 9.0,
            same_llc_ns: same_llc,
            // [c2c#132] EPYC 9274F: 97-104 ns to another CCD of the same socket.
            // Bergamo: the two CCXs of one CCD share one link to the IO die, so
            // same-CCD/other-CCX behaves like another CCD (Chips and Cheese, "Testing
            // AMD's Bergamo: Zen 4c Spam"); one figure serves both.
            same_package_ns: 100.0,
            other_package_ns: 196.0,
            // estimate: Chips and Cheese ("Genoa-X: Server V-Cache Round 2") measures
            // Genoa(-X) DRAM latency slightly above Milan-X's; [atrome]-class 122 ns +
            // DDR5's few extra ns.
            dram_ns: 125.0,
        },
        cache: CacheSizes { l1d_kib: 32, l2_kib: 1024, llc_kib, llc_flush_after_idle_us: LLC_KEPT },
        miss_parallelism: 16.0,
        rfo_parallelism: 1.0,
        smt_slowdown: 1.0,
        context_switch_ns: cycles_ns(SWITCH_CYCLES, mhz),
        ipi_send_ns: 300.0,
        ipi_receive_ns: 1000.0,
        migration_ns: migration_estimate(700.0, same_llc),
        fork_ns: 50_000.0,
        kernel: kernel_paths_x86(mhz),
        tlb: tlb_x86(),
    }
}

/// Intel Xeon Scalable 20-core (Skylake-SP / Cascade Lake mesh, one LLC per socket)
/// at `mhz`.
pub fn skylake_sp_costs(mhz: f64) -> CostTable {
    let same_llc = 47.0;
    CostTable {
        cacheline: CachelineCosts {
            same_core_ns: cycles_ns(14.0, mhz),
            smt_sibling_ns: 7.5,
            same_llc_ns: same_llc,
            // One LLC per socket: never used; kept equal to same_llc.
            same_package_ns: same_llc,
            other_package_ns: 135.0,
            // estimate: local DRAM on a 6-channel DDR4 Skylake-SP/Cascade Lake socket,
            // ~90 ns (below Rome's 122 ns [atrome], which pays for the IO die).
            dram_ns: 90.0,
        },
        cache: CacheSizes { l1d_kib: 32, l2_kib: 1024, llc_kib: 20 * 1408, llc_flush_after_idle_us: LLC_KEPT },
        // estimate: bounded by the 12 L1D fill buffers of Skylake (Intel Optimization
        // Reference Manual).
        miss_parallelism: 10.0,
        rfo_parallelism: 1.0,
        smt_slowdown: 1.0,
        context_switch_ns: cycles_ns(SWITCH_CYCLES, mhz),
        ipi_send_ns: 300.0,
        ipi_receive_ns: 1000.0,
        migration_ns: migration_estimate(700.0, same_llc),
        fork_ns: 50_000.0,
        kernel: kernel_paths_x86(mhz),
        tlb: tlb_x86(),
    }
}

/// HiSilicon Kunpeng 920 (TaiShan v110 cores, no SMT, 32-core dies sharing their L3)
/// at 2.6 GHz.
pub fn kunpeng920_costs() -> CostTable {
    let same_llc = 35.0;
    CostTable {
        cacheline: CachelineCosts {
            // estimate: private L2 hit, ~10 cycles at 2.6 GHz (no published figure).
            same_core_ns: cycles_ns(10.0, 2600.0),
            // No SMT: never used; kept equal to same_core.
            smt_sibling_ns: cycles_ns(10.0, 2600.0),
            same_llc_ns: same_llc,
            same_package_ns: 80.0,
            // estimate: no published cross-socket measurement; the other die's 80 ns
            // plus one Hydra link hop, in line with the ~2x socket penalty [c2c] shows
            // on other 2-socket parts.
            other_package_ns: 150.0,
            // estimate: DDR4-2933, 8 channels per socket; ~100 ns local.
            dram_ns: 100.0,
        },
        cache: CacheSizes { l1d_kib: 64, l2_kib: 512, llc_kib: 32 * 1024, llc_flush_after_idle_us: LLC_KEPT },
        // estimate: a 4-wide out-of-order Armv8.2 core; fewer outstanding misses than
        // the x86 parts.
        miss_parallelism: 8.0,
        rfo_parallelism: 1.0,
        smt_slowdown: 1.0,
        // derived as on x86 (the same cycle budget: estimate).
        context_switch_ns: cycles_ns(SWITCH_CYCLES, 2600.0),
        // estimate: one ICC_SGI1R_EL1 write (GICv3 SGI).
        ipi_send_ns: 200.0,
        // estimate: exception entry, handler and exit on the target.
        ipi_receive_ns: 1000.0,
        migration_ns: migration_estimate(900.0, same_llc),
        // estimate: fork+exit on a 2.6 GHz Arm server core.
        fork_ns: 80_000.0,
        kernel: kernel_paths_arm(2600.0),
        // estimate: the CCL/SCCL DVM handling at ~2 GHz (0.5 ns per snoop message); one
        // external responder, the SMMUv3 of the IO die, reached like the other die
        // (same_package_ns above, 80 ns).
        tlb: tlb_arm(0.5, 1.0, 80.0),
    }
}

/// A phone SoC whose CPUs all share one DynamIQ (DSU) L3: `l2_kib` is the biggest
/// core's private L2, `big_mhz` its clock.
fn dsu_phone_costs(big_mhz: f64, l2_kib: u32) -> CostTable {
    let same_llc = 40.0;
    CostTable {
        cacheline: CachelineCosts {
            // estimate: big-core (X1) private L2 hit, ~11 cycles (Arm's Cortex-X1
            // material gives 10-11 cycles); little cores are slower.
            same_core_ns: cycles_ns(11.0, big_mhz),
            // No SMT: never used; kept equal to same_core.
            smt_sibling_ns: cycles_ns(11.0, big_mhz),
            // estimate: snoop through the DSU's L3; no phone core-to-core measurement
            // was found. Between [c2c]'s Kunpeng in-die 35 ns and Apple M1 Pro 40 ns.
            same_llc_ns: same_llc,
            // One LLC, one package: never used; kept equal to same_llc.
            same_package_ns: same_llc,
            // One package: never used; kept equal to same_llc.
            other_package_ns: same_llc,
            // estimate: LPDDR5 behind a system-level cache, ~120 ns on phone SoCs.
            dram_ns: 120.0,
        },
        cache: CacheSizes { l1d_kib: 64, l2_kib, llc_kib: 4 * 1024, llc_flush_after_idle_us: LLC_KEPT },
        // estimate: a mix of in-order A55s (few misses in flight) and out-of-order
        // A7x/X1 cores.
        miss_parallelism: 6.0,
        rfo_parallelism: 1.0,
        smt_slowdown: 1.0,
        // derived as on x86 (the same cycle budget at the big core's clock: estimate).
        context_switch_ns: cycles_ns(SWITCH_CYCLES, big_mhz),
        // estimate: one ICC_SGI1R_EL1 write (GICv3 SGI).
        ipi_send_ns: 200.0,
        // estimate: exception entry, handler and exit on the target.
        ipi_receive_ns: 1500.0,
        migration_ns: migration_estimate(1200.0, same_llc),
        // estimate: fork+exit on a phone.
        fork_ns: 150_000.0,
        kernel: kernel_paths_arm(big_mhz),
        // estimate: the DSU's snoop control unit sends one DVM snoop message per cycle at
        // ~2 GHz (0.5 ns). Beyond the cluster, the DVM broadcast leaves the DSU's master
        // port for the SoC interconnect, whose SMMU TBUs take part in broadcast TLB
        // maintenance; their answers come back as one (an aggregated response) after a
        // trip across the SoC's NoC: estimate 80 ns, the memory path of this table (120 ns)
        // without a DRAM access. The synchronous DSB ISH wait itself is not built from these
        // estimates here: it is measured on a client arm64 SoC, ~0.35 us per TLBI + DSB
        // (Dev Jain, commit c320dbb7c80d, mprotect 3.2 -> 2.85 us per elided flush; band
        // 0.2-0.5 us, platform not named).
        tlb: TlbPathCosts { dsb_sync_override_ns: 350.0, ..tlb_arm(0.5, 1.0, 80.0) },
    }
}

/// Google Tensor GS101 (Pixel 6): X1 at 2.802 GHz \[gs101\] with 1 MiB L2 (Google Tensor
/// specifications as reported at launch; A76 256 KiB, A55 128 KiB).
pub fn gs101_costs() -> CostTable {
    dsu_phone_costs(2802.0, 1024)
}

/// Qualcomm Snapdragon 888 (SM8350): X1 at 2.84 GHz with 1 MiB L2 (Qualcomm product
/// brief; A78 512 KiB, A55 128 KiB).
pub fn sd888_costs() -> CostTable {
    dsu_phone_costs(2841.6, 1024)
}
