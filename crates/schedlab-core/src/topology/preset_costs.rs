//! Cost tables of the preset machines, one per microarchitecture family, as sheets:
//! every figure is set together with its source, kind and band (`set_cost!`, a
//! `preset_sources::Cite`), so the two are written once and side by side. Comments keep
//! only the reasoning a citation does not carry.
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

use super::preset_sources::{declared, derived, derived_within, estimate, estimate_within, knob, measured, CostSheet};

/// Sets one leaf of a sheet's table and files its citation beside it:
/// `set_cost!(s, cacheline.same_llc_ns = 23.0, measured(20.0, 27.0, "[c2c] ..."))`.
macro_rules! set_cost {
    ($sheet:expr, $($field:ident).+ = $value:expr, $cite:expr) => {{
        let value = $value;
        $sheet.table.$($field).+ = value;
        $sheet.file(concat!($(".", stringify!($field)),+), f64::from(value), $cite);
    }};
}

/// No source says a preset's LLC drops its contents while its package is up (AMD's and
/// Intel's documents describe core C6 writing the core's caches back, not the L3 being
/// lost): LLCs are kept (`cache.llc_flush_after_idle_us` = 0; a knob for what-ifs).
const LLC_KEPT: f64 = 0.0;

/// Returns the duration of `cycles` core cycles at `mhz`, in ns.
fn cycles_ns(cycles: f64, mhz: f64) -> f64 {
    cycles * 1000.0 / mhz
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

/// The leaves every family shares, for a core at `mhz`: the kernel paths' cycle budgets
/// (x86's; arm64 families change the IPI delivery), the context switch, the TLB
/// maintenance terms of both architectures (each architecture reads its own), and the
/// knobs that are off. Cache sizes and latencies, miss parallelism, IPI, migration and
/// fork costs are each family's.
fn shared(mhz: f64) -> CostSheet {
    let mut s = CostSheet::default();
    let c = |cycles: f64| cycles_ns(cycles, mhz);
    let mitigated = "~200 cycles each with mitigations (getpid round trips 70-100 ns at 4-5 GHz)";
    set_cost!(s, kernel.syscall_entry_ns = c(SYSCALL_EDGE_CYCLES), estimate(0.5, 3.0, mitigated));
    set_cost!(s, kernel.syscall_exit_ns = c(SYSCALL_EDGE_CYCLES), estimate(0.5, 3.0, mitigated));
    let irq = "interrupt entry/exit with mitigations, ~900 cycles";
    set_cost!(s, kernel.irq_entry_ns = c(900.0), estimate(0.5, 2.0, irq));
    set_cost!(s, kernel.irq_exit_ns = c(900.0), estimate(0.5, 2.0, irq));
    let timers = "cycle counts of the timer paths (timer.c, hrtimer.c, timer_migration.c): estimates";
    set_cost!(s, kernel.hrtimer_start_ns = c(250.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.hrtimer_cancel_ns = c(180.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.mod_timer_ns = c(120.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.del_timer_ns = c(75.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.nohz_target_per_cpu_ns = c(12.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.timer_base_switch_ns = c(45.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.timer_expire_ns = c(300.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.tmigr_level_ns = c(60.0), estimate(0.5, 2.0, timers));
    set_cost!(s, kernel.ttwu_ns = c(TTWU_CYCLES), estimate(0.5, 2.0, "pipe_write's wake-up path: ~1,500 cycles"));
    set_cost!(s, kernel.schedule_ns = c(SCHEDULE_CYCLES), estimate(0.5, 2.0, "pipe_read's wait and __schedule() to the switch: ~1,000 cycles"));
    set_cost!(s, kernel.mm_switch_ns = c(MM_SWITCH_CYCLES), derived(0.5, 1.5, "[ctxsw] process switch 2,410 ns minus thread switch 1,070 ns"));
    // The rq lock is modeled on its own, the rq's lines are ttwu_rq_lines.
    set_cost!(
        s,
        kernel.ttwu_lines = 3.0,
        derived_within(2.0, 4.0, "the wakee's task_struct lines: pi_lock, __state/on_cpu, the entity (the rq lock is modeled)")
    );
    set_cost!(
        s,
        kernel.ttwu_activate_ns = c(TTWU_ACTIVATE_CYCLES),
        estimate(0.67, 1.5, "ttwu_do_activate() under the target's lock: ~600 of ttwu's ~1,500 cycles")
    );
    set_cost!(
        s,
        kernel.ttwu_rq_lines = crate::cost::default_ttwu_rq_lines(),
        derived_within(2.0, 4.0, "the target cfs_rq's counts/tree line and its cacheline-aligned sched_avg (sched.h)")
    );
    set_cost!(s, kernel.wake_data_lines = 2.0, estimate_within(1.0, 4.0, "a pipe's or futex's wait queue head and data"));
    set_cost!(s, kernel.idle_entry_ns = c(1500.0), estimate(0.5, 2.0, "tick_nohz_idle_enter, governor selection, state entry"));
    set_cost!(s, kernel.ipi_delivery_ns = 500.0, estimate(0.4, 3.0, "from the ICR/SGI write to the target taking the interrupt"));
    set_cost!(s, kernel.pm_timer_read_ns = crate::cost::default_pm_timer_read_ns(), estimate(0.5, 3.0, "legacy port I/O to the chipset, ~1 us"));
    set_cost!(
        s,
        kernel.tick_irq_jitter_ns = crate::cost::default_tick_irq_jitter_ns(),
        estimate(0.2, 5.0, "local timer interrupt delivery and entry vary by about the entry itself")
    );
    set_cost!(
        s,
        context_switch_ns = c(SWITCH_CYCLES),
        derived(0.5, 1.5, "[ctxsw] 1,070 ns thread switch less its system calls, wakeup and pick (estimated shares)")
    );
    set_cost!(s, rfo_parallelism = 1.0, estimate_within(1.0, 4.0, "ownership transfers in flight: stores commit in order; no published depth"));
    set_cost!(s, smt_slowdown = 1.0, estimate_within(1.0, 1.6, "SMT contention is workload-dependent: off (1) by default, 1.6 a heavy pair"));
    set_cost!(s, cache.llc_flush_after_idle_us = LLC_KEPT, knob("a what-if, off: the LLC is flushed only by the package state"));
    tlb(&mut s, 0.5, 0.0, 0.0);
    s
}

/// The arm64 changes to the shared leaves: a GIC SGI takes longer to land.
fn arm64(s: &mut CostSheet) {
    set_cost!(s, kernel.ipi_delivery_ns = 700.0, estimate(0.4, 3.0, "from the ICR/SGI write to the target taking the interrupt"));
}

/// TLB maintenance: x86's INVLPG path and arm64's TLBI + DSB over DVM (each architecture
/// reads its own fields). `node_ns` is the DVM node's time per snoop message, `external`
/// the DVM participants outside the CPU clusters and `external_rt_ns` their round trip.
fn tlb(s: &mut CostSheet, node_ns: f64, external: f64, external_rt_ns: f64) {
    let dvm = "the DVM protocol's steps in cycles/ns: estimates (no published TLBI + DSB breakdown)";
    // A store-buffer drain after the PTE exchange, ~20 cycles.
    set_cost!(s, tlb.dsb_ishst_cycles = 20.0, estimate(0.5, 2.0, dvm));
    // Barry Song in seed 004: the TLBI without its DSB is "much much cheaper"; ~10.
    set_cost!(s, tlb.tlbi_issue_cycles = 10.0, estimate(0.5, 2.0, dvm));
    // The DSB's own drain of this PE's accesses and its TLB, ~30 cycles.
    set_cost!(s, tlb.dsb_local_cycles = 30.0, estimate(0.5, 2.0, dvm));
    set_cost!(s, tlb.dvm_node_ns_per_target = node_ns, estimate(0.5, 2.0, dvm));
    set_cost!(s, tlb.dvm_msgs_per_op = 2.0, declared("[chi] AMBA CHI: a DVMOp is two snoop messages"));
    // A requester's DVM operations in flight at the interconnect before a further TLBI
    // waits (request-tracker entries reserved for DVM).
    set_cost!(s, tlb.dvm_max_outstanding = 4.0, estimate(0.5, 2.0, dvm));
    // A TLB lookup-and-invalidate by VA and ASID in the L1 and L2 TLBs plus the response.
    set_cost!(s, tlb.dvm_ack_ns = 10.0, estimate(0.5, 2.0, dvm));
    // A PE in WFI has its clock gated; ungating it for the snoop.
    set_cost!(s, tlb.dvm_wfi_wake_ns = 20.0, estimate(0.5, 2.0, dvm));
    set_cost!(s, tlb.dvm_external = external, estimate_within(0.0, 2.0, "DVM participants outside the clusters (SMMU TBUs)"));
    set_cost!(s, tlb.dvm_external_rt_ns = external_rt_ns, estimate(0.5, 2.0, dvm));
    set_cost!(s, tlb.dsb_sync_override_ns = 0.0, knob("x86: unused (the DVM model is arm64's)"));
    // [agner]-class locked exchange on an L1-resident line; Arm LSE SWP/LDADD-class
    // atomics taken as the same.
    set_cost!(s, tlb.pte_xchg_cycles = 20.0, estimate(0.5, 2.0, dvm));
    set_cost!(s, tlb.invlpg_cycles = 225.0, measured(200.0, 250.0, "[ingo15] INVLPG ~200-250 cycles"));
    // A CR3 reload / INVPCID costs the same order as INVLPG; what costs is the refill.
    set_cost!(s, tlb.full_flush_cycles = 250.0, estimate(0.5, 2.0, dvm));
    // A cpumask OR over a few words and one atomic increment of tlb_gen.
    set_cost!(s, tlb.batch_add_cycles = 30.0, estimate(0.5, 2.0, dvm));
    set_cost!(s, tlb.refill_entries = 64.0, declared("[intel-om] page-miss handlers and L1 DTLB entries"));
    set_cost!(s, tlb.walk_levels = 4.0, declared("4-level page tables"));
    set_cost!(s, tlb.walkers = 2.0, declared("[intel-om] page-miss handlers and L1 DTLB entries"));
}

/// The cache sizes of a part (vendor product documentation).
fn cache_sizes(s: &mut CostSheet, l1d_kib: u32, l2_kib: u32, llc_kib: u32) {
    set_cost!(s, cache.l1d_kib = l1d_kib, declared("vendor product documentation"));
    set_cost!(s, cache.l2_kib = l2_kib, declared("vendor product documentation"));
    set_cost!(s, cache.llc_kib = llc_kib, declared("vendor product documentation"));
}

/// A private L2 hit of `cycles` at `mhz`.
fn l2_hit(s: &mut CostSheet, cycles: f64, mhz: f64) {
    set_cost!(
        s,
        cacheline.same_core_ns = cycles_ns(cycles, mhz),
        derived(0.8, 1.25, "[amd]/[atrome] L2 load-to-use cycles at the preset's clock (turbo to base)")
    );
}

/// Demand misses a core overlaps, and `why` it is that many.
fn miss_parallelism(s: &mut CostSheet, value: f64, why: &'static str) {
    set_cost!(s, miss_parallelism = value, estimate(0.5, 1.5, why));
}

/// Demand misses of a Zen core: AMD documents 22-24 outstanding L1D misses for Zen 2/3,
/// dependent streams overlap fewer; the figure is also the overlap of a pass of runqueue
/// reads (`CostTable::read_pass_ns`), which the reorder buffer may bound lower.
const ZEN_MISSES: &str = "demand misses in flight: Zen 2/3 guides give 22-24 L1D misses, dependent streams fewer; also the overlap of a pass of runqueue reads (wakeup scans, balance statistics: CostTable::read_pass_ns), where the reorder buffer may bound it lower";

/// The IPI's two ends: the sender's interrupt-controller write and queueing, the
/// target's interrupt entry, handler and exit.
fn ipi(s: &mut CostSheet, send_ns: f64, receive_ns: f64) {
    set_cost!(s, ipi_send_ns = send_ns, estimate(0.33, 2.0, "an ICR write / SGI plus smp_call_function queueing"));
    set_cost!(
        s,
        ipi_receive_ns = receive_ns,
        estimate(0.5, 2.0, "interrupt entry, handler and exit (IPI round trips of 1-3 us are the usual range)")
    );
}

/// A task migration's detach/attach code path and a small process's fork+exit. The lines
/// a migration pulls from the other CPU (its rq lock, rq/cfs_rq counters and the task's
/// entity) are priced at their real distance where the move happens (`sched/locks.rs`).
fn migration_and_fork(s: &mut CostSheet, migration_ns: f64, fork_ns: f64) {
    set_cost!(
        s,
        migration_ns = migration_ns,
        estimate(0.5, 2.0, "detach/attach code only: the lines it pulls are priced at their distance (sched/locks.rs)")
    );
    set_cost!(s, fork_ns = fork_ns, estimate(0.5, 2.0, "fork+exit of a small process (lmbench lat_proc class)"));
}

/// Returns a generic x86 server cost table, used by synthetic `topo()` machines and the
/// host reader on x86-64: an AMD EPYC Zen 3 (Milan) class server at 3 GHz, whose
/// several-LLCs-per-socket shape is what `topo(sockets, llcs, cores, smt)` describes.
pub fn generic_x86_costs() -> CostSheet {
    let mut s = zen3_server_costs(3000.0);
    set_cost!(
        s,
        cacheline.dram_ns = 100.0,
        estimate(0.8, 1.2, "generic table: a round figure between the desktop (~64 ns) and server (~122 ns, [atrome]) measurements")
    );
    s
}

/// Returns a generic arm64 server cost table (host reader on aarch64): the Kunpeng 920
/// figures, the only arm64 server with published per-distance measurements here.
pub fn generic_arm64_costs() -> CostSheet {
    kunpeng920_costs()
}

/// AMD Ryzen 9 7950X (Zen 4 desktop, 2 CCDs of one 8-core CCX each) at 4.5 GHz base.
pub fn zen4_desktop_costs() -> CostSheet {
    let mhz = 4500.0;
    let mut s = shared(mhz);
    l2_hit(&mut s, 14.0, mhz);
    set_cost!(s, cacheline.smt_sibling_ns = 5.3, measured(5.0, 10.0, "[c2c] 7950X"));
    set_cost!(s, cacheline.same_llc_ns = 15.7, measured(15.3, 21.0, "[c2c] [at7950] 7950X same CCX"));
    set_cost!(s, cacheline.same_package_ns = 70.0, measured(67.7, 79.5, "[c2c] [at7950] 7950X across CCDs"));
    set_cost!(s, cacheline.other_package_ns = 70.0, derived(1.0, 1.0, "one package: never used (kept equal to the farthest real distance)"));
    set_cost!(
        s,
        cacheline.dram_ns = 63.6,
        measured(60.0, 75.0, "AIDA64 at DDR5-6000, FCLK 2000 MHz: 63.6 ns (harukaze5719 / Chiphell chart, via silverflick.com); JEDEC setups slower")
    );
    cache_sizes(&mut s, 32, 1024, 32 * 1024);
    miss_parallelism(&mut s, 16.0, ZEN_MISSES);
    ipi(&mut s, 300.0, 1000.0);
    migration_and_fork(&mut s, 500.0, 40_000.0);
    s
}

/// AMD EPYC Zen 3 (Milan) server, single or dual socket, at `mhz`.
pub fn zen3_server_costs(mhz: f64) -> CostSheet {
    let mut s = shared(mhz);
    l2_hit(&mut s, 12.0, mhz);
    set_cost!(s, cacheline.smt_sibling_ns = 9.8, measured(9.0, 11.0, "[c2c] EPYC 7R13 hyper-thread pairs"));
    set_cost!(s, cacheline.same_llc_ns = 23.0, measured(20.0, 27.0, "[c2c] EPYC 7R13 inside a CCX"));
    set_cost!(s, cacheline.same_package_ns = 107.0, measured(84.0, 116.0, "[c2c] EPYC 7R13 across CCX"));
    set_cost!(s, cacheline.other_package_ns = 197.0, measured(182.0, 209.0, "[c2c] dual EPYC 7R13"));
    set_cost!(s, cacheline.dram_ns = 122.0, derived(0.8, 1.2, "[atrome] Rome 122 ns NPS1, carried to Milan's IO die"));
    cache_sizes(&mut s, 32, 512, 32 * 1024);
    miss_parallelism(&mut s, 16.0, ZEN_MISSES);
    ipi(&mut s, 300.0, 1000.0);
    migration_and_fork(&mut s, 700.0, 50_000.0);
    s
}

/// AMD EPYC Zen 4 / Zen 4c server (Genoa 9654, Bergamo) at `mhz`, with `llc_kib` of L3
/// per CCX (32 MiB Genoa, 16 MiB Bergamo).
pub fn zen4_server_costs(mhz: f64, llc_kib: u32) -> CostSheet {
    let mut s = shared(mhz);
    l2_hit(&mut s, 14.0, mhz);
    set_cost!(s, cacheline.smt_sibling_ns = 9.0, measured(8.0, 10.0, "[c2c#132] EPYC 9274F (Genoa, nearest part)"));
    set_cost!(s, cacheline.same_llc_ns = 23.0, measured(22.0, 24.0, "[c2c#132] EPYC 9274F inside a CCX (Genoa; Bergamo not measured)"));
    // Bergamo: the two CCXs of one CCD share one link to the IO die, so same-CCD/other-CCX
    // behaves like another CCD (Chips and Cheese, "Testing AMD's Bergamo: Zen 4c Spam");
    // one figure serves both.
    set_cost!(s, cacheline.same_package_ns = 100.0, measured(97.0, 104.0, "[c2c#132] EPYC 9274F to another CCD"));
    set_cost!(s, cacheline.other_package_ns = 196.0, measured(188.0, 202.0, "[c2c#132] dual EPYC 9274F"));
    set_cost!(
        s,
        cacheline.dram_ns = 125.0,
        estimate(
            0.85,
            1.2,
            "Genoa(-X) slightly above Milan-X (Chips and Cheese, \"Genoa-X: Server V-Cache Round 2\"): [atrome]-class 122 ns + DDR5's few ns"
        )
    );
    cache_sizes(&mut s, 32, 1024, llc_kib);
    miss_parallelism(&mut s, 16.0, ZEN_MISSES);
    ipi(&mut s, 300.0, 1000.0);
    migration_and_fork(&mut s, 700.0, 50_000.0);
    s
}

/// Intel Xeon Scalable 20-core (Skylake-SP / Cascade Lake mesh, one LLC per socket)
/// at `mhz`.
pub fn skylake_sp_costs(mhz: f64) -> CostSheet {
    let mut s = shared(mhz);
    l2_hit(&mut s, 14.0, mhz);
    set_cost!(s, cacheline.smt_sibling_ns = 7.5, measured(7.0, 8.0, "[c2c] Xeon 6242 / 8275CL"));
    set_cost!(s, cacheline.same_llc_ns = 47.0, measured(43.0, 56.0, "[c2c] Xeon 6242 across the mesh"));
    set_cost!(s, cacheline.same_package_ns = 47.0, derived(1.0, 1.0, "one LLC per package: never used (kept equal to same_llc)"));
    set_cost!(s, cacheline.other_package_ns = 135.0, measured(134.0, 146.0, "[c2c] dual Xeon 6242"));
    set_cost!(s, cacheline.dram_ns = 90.0, estimate(0.85, 1.3, "6-channel DDR4 local DRAM, below Rome's 122 ns [atrome], which pays for the IO die"));
    cache_sizes(&mut s, 32, 1024, 20 * 1408);
    miss_parallelism(&mut s, 10.0, "demand misses in flight: bounded by Skylake's 12 L1D fill buffers (Intel Optimization Reference Manual)");
    ipi(&mut s, 300.0, 1000.0);
    migration_and_fork(&mut s, 700.0, 50_000.0);
    s
}

/// HiSilicon Kunpeng 920 (TaiShan v110 cores, no SMT, 32-core dies sharing their L3)
/// at 2.6 GHz.
pub fn kunpeng920_costs() -> CostSheet {
    let mhz = 2600.0;
    let mut s = shared(mhz);
    arm64(&mut s);
    // A private L2 hit of ~10 cycles (no published figure for this core).
    l2_hit(&mut s, 10.0, mhz);
    set_cost!(s, cacheline.smt_sibling_ns = cycles_ns(10.0, mhz), derived(1.0, 1.0, "no SMT: never used (kept equal to same_core)"));
    set_cost!(s, cacheline.same_llc_ns = 35.0, measured(30.0, 38.0, "[c2c] Kunpeng 920-6426 in one die"));
    set_cost!(s, cacheline.same_package_ns = 80.0, measured(72.0, 88.0, "[c2c] Kunpeng 920-6426 across dies"));
    set_cost!(
        s,
        cacheline.other_package_ns = 150.0,
        estimate(
            0.67,
            1.67,
            "no measurement: the other die's 80 ns plus a Hydra link hop, the ~2x socket penalty [c2c] shows on other 2-socket parts"
        )
    );
    set_cost!(s, cacheline.dram_ns = 100.0, estimate(0.8, 1.4, "DDR4-2933 local DRAM, 8 channels per socket"));
    cache_sizes(&mut s, 64, 512, 32 * 1024);
    miss_parallelism(&mut s, 8.0, "demand misses in flight: a 4-wide out-of-order Armv8.2 core, fewer than the x86 parts");
    // One ICC_SGI1R_EL1 write (GICv3 SGI); exception entry, handler and exit on the target.
    ipi(&mut s, 200.0, 1000.0);
    migration_and_fork(&mut s, 900.0, 80_000.0);
    // The CCL/SCCL DVM handling at ~2 GHz (0.5 ns per snoop message); one external
    // responder, the SMMUv3 of the IO die, reached like the other die (80 ns).
    tlb(&mut s, 0.5, 1.0, 80.0);
    set_cost!(
        s,
        tlb.dsb_sync_override_ns = 0.0,
        estimate_within(
            0.0,
            3000.0,
            "no server measurement: the DSB wait grows with the inner-shareable domain (MAD24-316); 0 = the DVM model's own"
        )
    );
    s
}

/// A phone SoC whose CPUs all share one DynamIQ (DSU) L3: `l2_kib` is the biggest
/// core's private L2, `big_mhz` its clock.
fn dsu_phone_costs(big_mhz: f64, l2_kib: u32) -> CostSheet {
    let mut s = shared(big_mhz);
    arm64(&mut s);
    // Big-core (X1) private L2 hit, ~11 cycles (Arm's Cortex-X1 material gives 10-11
    // cycles); little cores are slower.
    l2_hit(&mut s, 11.0, big_mhz);
    set_cost!(s, cacheline.smt_sibling_ns = cycles_ns(11.0, big_mhz), derived(1.0, 1.0, "no SMT: never used (kept equal to same_core)"));
    let same_llc = 40.0;
    set_cost!(
        s,
        cacheline.same_llc_ns = same_llc,
        estimate(0.6, 2.0, "no phone measurement: a snoop through the DSU's L3, between [c2c]'s Kunpeng in-die 35 ns and M1 Pro's 40 ns")
    );
    set_cost!(s, cacheline.same_package_ns = same_llc, derived(1.0, 1.0, "one LLC per package: never used (kept equal to same_llc)"));
    set_cost!(s, cacheline.other_package_ns = same_llc, derived(1.0, 1.0, "one package: never used (kept equal to same_llc)"));
    set_cost!(s, cacheline.dram_ns = 120.0, estimate(0.75, 1.5, "LPDDR5 behind a system-level cache, ~120 ns on phone SoCs"));
    cache_sizes(&mut s, 64, l2_kib, 4 * 1024);
    miss_parallelism(&mut s, 6.0, "demand misses in flight: a mix of in-order A55s (few in flight) and out-of-order A7x/X1 cores");
    ipi(&mut s, 200.0, 1500.0);
    migration_and_fork(&mut s, 1200.0, 150_000.0);
    // The DSU's snoop control unit sends one DVM snoop message per cycle at ~2 GHz (0.5
    // ns). Beyond the cluster, the broadcast leaves the DSU's master port for the SoC
    // interconnect, whose SMMU TBUs take part in broadcast TLB maintenance; their answers
    // come back as one after a trip across the NoC: 80 ns, the memory path of this table
    // without a DRAM access.
    tlb(&mut s, 0.5, 1.0, 80.0);
    set_cost!(
        s,
        tlb.dsb_sync_override_ns = 350.0,
        measured(
            200.0,
            500.0,
            "Dev Jain, c320dbb7c80d: ~0.35 us per elided TLBI + DSB on a client arm64 SoC (mprotect 3.2 -> 2.85 us; platform not named)"
        )
    );
    s
}

/// Google Tensor GS101 (Pixel 6): X1 at 2.802 GHz \[gs101\] with 1 MiB L2 (Google Tensor
/// specifications as reported at launch; A76 256 KiB, A55 128 KiB).
pub fn gs101_costs() -> CostSheet {
    dsu_phone_costs(2802.0, 1024)
}

/// Qualcomm Snapdragon 888 (SM8350): X1 at 2.84 GHz with 1 MiB L2 (Qualcomm product
/// brief; A78 512 KiB, A55 128 KiB).
pub fn sd888_costs() -> CostSheet {
    dsu_phone_costs(2841.6, 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family's sheet files every leaf, each value inside its own band.
    #[test]
    fn every_sheet_is_complete_and_in_band() {
        let sheets = [
            ("generic_x86", generic_x86_costs()),
            ("generic_arm64", generic_arm64_costs()),
            ("zen4_desktop", zen4_desktop_costs()),
            ("zen3_server", zen3_server_costs(2000.0)),
            ("zen4_server", zen4_server_costs(2400.0, 32 * 1024)),
            ("skylake_sp", skylake_sp_costs(2400.0)),
            ("gs101", gs101_costs()),
            ("sd888", sd888_costs()),
        ];
        for (name, s) in sheets {
            assert_eq!(s.check(name), Ok(()));
            assert_eq!(s.sources.len(), crate::cost::COST_KEYS.len(), "{name}: a filing for a key the table lacks");
        }
    }
}
