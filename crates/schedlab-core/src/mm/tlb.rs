//! TLB invalidation primitives and their costs: arm64 broadcast TLBI + DSB, x86 INVLPG + IPIs.
//!
//! Mirrors: arch/arm64/include/asm/tlbflush.h (__flush_tlb_page_nosync, flush_tlb_page,
//! arch_tlbbatch_add_pending, arch_tlbbatch_flush); arch/x86/mm/tlb.c (flush_tlb_mm_range,
//! native_flush_tlb_multi, flush_tlb_func, arch_tlbbatch_flush).
//!
//! Model, arm64. `TLBI VALE1IS` is a DVM operation: the issuing PE posts it to the
//! interconnect's DVM node (the DSU's snoop control unit in a phone cluster, the DVM node
//! of a server mesh), which sends it as snoops to every participant of the inner-shareable
//! domain, whatever the mm's cpumask: every PE not powered down, and the DVM participants
//! outside the clusters (SMMU TBUs with broadcast TLB maintenance, the GIC ITS). `DSB ISH`
//! then sends a DVM Sync the same way and completes only when every participant has
//! answered that all earlier DVM operations are done, including the memory accesses that
//! used the old translation. The wait is
//!
//! ```text
//!  t_sync = t_local                                    the DSB's own drain
//!         + t_rt(farthest participant)                 cluster, die, socket (cost table)
//!                                                      or the external ones' round trip
//!         + (1 + pending TLBIs) · msgs · N · t_node     serial fan-out at the DVM node
//!         + t_ack + max(t_wfi, E[max drain of busy PEs])   the slowest answer
//! ```
//!
//! Who answers: running PEs; PEs idle in WFI (clock-gated but still coherent: they must
//! answer, fast, with nothing in flight); not powered-down PEs, which left the coherency
//! and DVM domain before power-off (the interconnect stops snooping them; they invalidate
//! their TLBs when they come back). Remote PEs handle DVM snoops in their memory system
//! without an interrupt: no time is charged to them.
//!
//! The kernel's sequence (arch/arm64/include/asm/tlbflush.h): `flush_tlb_page` = DSB
//! ISHST, TLBI (a second one for the user ASID with KPTI), DSB ISH. With
//! ARM64_WORKAROUND_REPEAT_TLBI every TLBI is TLBI; DSB ISH; TLBI, and 6.5's
//! `arch_tlbbatch_should_defer` refuses to batch. A deferred flush posts its TLBIs at once
//! and stalls only when the requester already has the interconnect's maximum of DVM
//! operations in flight; the batch's closing DSB waits for what is still being fanned out.
//! No latency of a TLBI + DSB was found published for the presets' interconnects: the
//! `tlb` cost-table terms are estimates (see `topology/preset_costs.rs`), and
//! `tlb.dsb_sync_override_ns` replaces the modeled synchronous wait for sweeps.
//!
//! Model, x86. A shootdown is an IPI round: the initiator queues a call-function entry on
//! each target (one remote cache-line write) and sends an IPI, one target after the other;
//! each target takes the interrupt, flushes (INVLPG for a page, a full non-global flush for
//! a batch) and releases the entry; the initiator spins until the last one is released,
//! flushing its own TLB meanwhile (flushes run concurrently since 5.3). Targets are
//! mm_cpumask minus self; CPUs in lazy-TLB mode (idle, any depth) are skipped, since reclaim
//! frees no page tables (`tlb_is_not_lazy`); they catch up through tlb_gen when they next
//! switch to the mm. A full flush costs each target its hot TLB entries (refill walks).

use crate::cost::{CachelineCosts, TlbPathCosts};
use crate::cpumask::{CpuId, CpuMask};
use crate::time::Ns;
use crate::topology::{Arch, Distance, Machine};

/// Which CPUs are idle when a flush goes out, and how deeply (self is always running).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdleCpus {
    /// Idle in a clock-gated state that keeps the core coherent (WFI, C1-like).
    pub shallow: CpuMask,
    /// Idle and powered down (core off): outside the coherency/DVM domain.
    pub off: CpuMask,
}

impl IdleCpus {
    /// Every CPU runs something.
    pub fn none() -> Self {
        Self::default()
    }

    /// Every CPU of `all` but `busy` idles in WFI.
    pub fn shallow_except(all: &CpuMask, busy: CpuId) -> Self {
        let mut m = *all;
        m.clear(busy);
        Self { shallow: m, off: CpuMask::new() }
    }

    /// Every CPU of `all` but `busy` is powered down.
    pub fn off_except(all: &CpuMask, busy: CpuId) -> Self {
        let mut m = *all;
        m.clear(busy);
        Self { shallow: CpuMask::new(), off: m }
    }

    /// Returns every idle CPU (lazy-TLB on x86, whatever the depth).
    pub fn any(&self) -> CpuMask {
        self.shallow.or(&self.off)
    }
}

/// Where a CPU sits, as far as flush costs care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    core: usize,
    llc: usize,
    socket: usize,
    freq_mhz: u32,
}

/// Costs of TLB maintenance on one machine: the cost table's `tlb` section (each figure's
/// source is in `topology/preset_costs.rs`), its cache-line latencies for the distance a
/// DVM message or an IPI travels, and the kernel configuration's TLBI sequence.
#[derive(Clone, Debug, PartialEq)]
pub struct TlbCosts {
    /// Instruction set: decides which half of the table applies.
    pub arch: Arch,
    places: Vec<Place>,
    /// Cache-line transfer latencies (the machine's cost table): a DVM snoop, an IPI
    /// message and a call-function entry travel the same fabric as a coherence transfer.
    pub cacheline: CachelineCosts,
    /// The machine's TLB maintenance figures.
    pub p: TlbPathCosts,
    /// TLBIs per page: 1, or 2 with KPTI (`__tlbi_user` after `__tlbi`).
    pub tlbis_per_page: f64,
    /// ARM64_WORKAROUND_REPEAT_TLBI: every `__tlbi()` is TLBI; DSB ISH; TLBI.
    pub repeat_tlbi: bool,
    /// Longest drain a running PE may need before answering a DVM Sync: its oldest access
    /// in flight, at worst a DRAM miss (the cost table's `dram_ns`).
    pub dvm_busy_drain_ns: f64,
    /// Chance that a running PE has such a miss in flight. Estimate: 0.5.
    pub dvm_busy_miss_prob: f64,
    /// Sending one IPI (APIC ICR write), ns: the cost table's `ipi_send_ns`.
    pub ipi_send_ns: f64,
    /// Taking one IPI (entry, handler dispatch, exit), ns: the cost table's `ipi_receive_ns`.
    pub ipi_receive_ns: f64,
}

/// Result of one x86 IPI round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpiRound {
    /// Time the initiator spends from the first send to the last release seen.
    pub initiator_ns: Ns,
    /// Time each target loses (interrupt, flush, refill after a full flush).
    pub stolen: Vec<(CpuId, Ns)>,
}

impl TlbCosts {
    /// Derives the costs of `m` from its cost table, architecture and clocks, with one
    /// TLBI per page and no erratum workaround (see [`TlbCosts::with_kernel`]).
    pub fn for_machine(m: &Machine) -> TlbCosts {
        let places = m.cpus.iter().map(|c| Place { core: c.core, llc: c.llc, socket: c.socket, freq_mhz: c.freq_mhz.max(1) }).collect();
        TlbCosts {
            arch: m.arch,
            places,
            cacheline: m.cost.cacheline.clone(),
            p: m.cost.tlb.clone(),
            tlbis_per_page: 1.0,
            repeat_tlbi: false,
            dvm_busy_drain_ns: m.cost.cacheline.dram_ns,
            dvm_busy_miss_prob: 0.5,
            ipi_send_ns: m.cost.ipi_send_ns,
            ipi_receive_ns: m.cost.ipi_receive_ns,
        }
    }

    /// Sets the kernel's TLBI sequence: KPTI (a second TLBI for the user ASID) and the
    /// REPEAT_TLBI erratum workaround.
    pub fn with_kernel(mut self, kpti: bool, repeat_tlbi: bool) -> TlbCosts {
        self.tlbis_per_page = if kpti { 2.0 } else { 1.0 };
        self.repeat_tlbi = repeat_tlbi;
        self
    }

    /// Returns the number of CPUs (the inner-shareable domain on arm64).
    pub fn nr_cpus(&self) -> usize {
        self.places.len()
    }

    /// Converts `cycles` on `cpu` to ns.
    pub fn cycles_ns(&self, cpu: CpuId, cycles: f64) -> f64 {
        cycles * 1000.0 / self.places[cpu].freq_mhz as f64
    }

    fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        let (x, y) = (&self.places[a], &self.places[b]);
        Distance::classify(a == b, x.core == y.core, x.llc == y.llc, x.socket == y.socket)
    }

    // ---- arm64 ----

    /// Participants a DVM broadcast from `cpu` reaches: every other PE not powered down
    /// (running or in WFI, whatever the mm's cpumask), plus the external ones.
    fn dvm_targets(&self, cpu: CpuId, idle: &IdleCpus) -> f64 {
        self.dvm_ackers(cpu, idle).weight() as f64 + self.p.dvm_external
    }

    /// Time for the DVM node to send one operation to every participant.
    pub fn dvm_op_fanout_ns(&self, cpu: CpuId, idle: &IdleCpus) -> f64 {
        self.p.dvm_msgs_per_op * self.dvm_targets(cpu, idle) * self.p.dvm_node_ns_per_target
    }

    /// Round trip to the farthest participant (cluster, die, socket or the external ones).
    fn dvm_round_trip_ns(&self, cpu: CpuId, idle: &IdleCpus) -> f64 {
        let ack = self.dvm_ackers(cpu, idle);
        let far = ack.iter().map(|c| self.distance(cpu, c)).max().map_or(0.0, |d| self.cacheline.at(d));
        let ext = if self.p.dvm_external > 0.0 { self.p.dvm_external_rt_ns } else { 0.0 };
        far.max(ext)
    }

    /// PEs that must answer a DVM Sync from `cpu`: every other PE not powered down.
    pub fn dvm_ackers(&self, cpu: CpuId, idle: &IdleCpus) -> CpuMask {
        let mut m = CpuMask::first_n(self.nr_cpus());
        m.clear(cpu);
        for c in idle.off.iter() {
            m.clear(c);
        }
        m
    }

    /// `DSB ISH` wait with `pending_ops` TLBIs not yet fanned out: the DSB's own drain,
    /// then the DVM Sync's round trip to the farthest participant, the node's serial
    /// fan-out of the pending operations and the Sync, and the slowest answer (a PE in
    /// WFI ungating its clock, or a running PE draining an access in flight).
    ///
    /// ```text
    ///  t = t_local + t_rt(farthest) + (pending + 1) · msgs · N · t_node + t_ack
    ///      + max(t_wfi, E[max drain of the busy PEs])
    /// ```
    pub fn dsb_ish_ns(&self, cpu: CpuId, idle: &IdleCpus, pending_ops: f64) -> Ns {
        if self.p.dsb_sync_override_ns > 0.0 {
            return self.p.dsb_sync_override_ns.round() as Ns;
        }
        let ack = self.dvm_ackers(cpu, idle);
        let mut t = self.cycles_ns(cpu, self.p.dsb_local_cycles);
        if ack.is_empty() && self.p.dvm_external <= 0.0 {
            return t.round() as Ns;
        }
        t += self.dvm_round_trip_ns(cpu, idle);
        t += (1.0 + pending_ops) * self.dvm_op_fanout_ns(cpu, idle);
        t += self.p.dvm_ack_ns;
        let n_wfi = ack.and(&idle.shallow).weight();
        let n_busy = ack.weight() - n_wfi;
        let wfi = if n_wfi > 0 { self.p.dvm_wfi_wake_ns } else { 0.0 };
        let busy = self.dvm_busy_drain_ns * expected_max_fraction(n_busy, self.dvm_busy_miss_prob);
        t += wfi.max(busy);
        t.round() as Ns
    }

    /// One `__tlbi()`: TLBI posted; with REPEAT_TLBI, TLBI; DSB ISH; TLBI.
    fn tlbi_ns(&self, cpu: CpuId, idle: &IdleCpus) -> Ns {
        let issue = self.cycles_ns(cpu, self.p.tlbi_issue_cycles).round() as Ns;
        if self.repeat_tlbi {
            2 * issue + self.dsb_ish_ns(cpu, idle, 1.0)
        } else {
            issue
        }
    }

    /// arm64 `__flush_tlb_page_nosync` (also `arch_tlbbatch_add_pending`): DSB ISHST, then
    /// the page's TLBI(s), posted.
    pub fn tlbi_post_ns(&self, cpu: CpuId, idle: &IdleCpus) -> Ns {
        let ishst = self.cycles_ns(cpu, self.p.dsb_ishst_cycles).round() as Ns;
        ishst + self.tlbis_per_page as Ns * self.tlbi_ns(cpu, idle)
    }

    /// Posting a deferred flush when the previous one was posted `gap_ns` earlier: the post
    /// itself, plus a stall when the requester already has the interconnect's maximum of
    /// DVM operations in flight (each occupies a slot for its fan-out and round trip).
    pub fn tlbi_post_batched_ns(&self, cpu: CpuId, idle: &IdleCpus, gap_ns: Ns) -> Ns {
        let post = self.tlbi_post_ns(cpu, idle);
        let occupancy = self.dvm_op_fanout_ns(cpu, idle) + self.dvm_round_trip_ns(cpu, idle);
        let per_slot = occupancy / self.p.dvm_max_outstanding.max(1.0);
        let stall = (self.tlbis_per_page * per_slot - gap_ns as f64).max(0.0);
        post + stall.round() as Ns
    }

    /// TLBIs still being fanned out when a DSB comes `gap_ns` after the last post.
    pub fn pending_after(&self, cpu: CpuId, idle: &IdleCpus, gap_ns: Ns) -> f64 {
        let occupancy = self.dvm_op_fanout_ns(cpu, idle) + self.dvm_round_trip_ns(cpu, idle);
        if (gap_ns as f64) < occupancy {
            self.tlbis_per_page
        } else {
            0.0
        }
    }

    /// arm64 `ptep_clear_flush` → `flush_tlb_page`: the PTE exchange, DSB ISHST, the
    /// TLBI(s), DSB ISH waiting for all of them.
    pub fn arm64_flush_page_ns(&self, cpu: CpuId, idle: &IdleCpus) -> Ns {
        self.pte_xchg_ns(cpu) + self.tlbi_post_ns(cpu, idle) + self.dsb_ish_ns(cpu, idle, self.tlbis_per_page)
    }

    /// `ptep_get_and_clear`: the atomic exchange on the PTE.
    pub fn pte_xchg_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.p.pte_xchg_cycles).round() as Ns
    }

    /// arm64 `arch_tlbbatch_flush`: one DSB ISH covering every posted TLBI, the last one
    /// posted `gap_ns` earlier.
    pub fn arm64_batch_flush_ns(&self, cpu: CpuId, idle: &IdleCpus, gap_ns: Ns) -> Ns {
        self.dsb_ish_ns(cpu, idle, self.pending_after(cpu, idle, gap_ns))
    }

    // ---- x86 ----

    /// Local `INVLPG` of one page.
    pub fn invlpg_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.p.invlpg_cycles).round() as Ns
    }

    /// Refill of the hot entries a full flush threw away (walks hitting L1/L2).
    pub fn refill_ns(&self, cpu: CpuId) -> Ns {
        let _ = cpu;
        let walk = self.p.walk_levels * self.cacheline.same_core_ns;
        (self.p.refill_entries * walk / self.p.walkers.max(1.0)).round() as Ns
    }

    /// Local full non-global flush plus its refill.
    pub fn full_flush_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.p.full_flush_cycles).round() as Ns + self.refill_ns(cpu)
    }

    /// x86 `arch_tlbbatch_add_pending` bookkeeping.
    pub fn batch_add_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.p.batch_add_cycles).round() as Ns
    }

    /// CPUs an x86 shootdown from `cpu` interrupts for `mask`: mask minus self minus lazy.
    pub fn ipi_targets(&self, cpu: CpuId, mask: &CpuMask, idle: &IdleCpus) -> CpuMask {
        let mut t = *mask;
        t.clear(cpu);
        for c in idle.any().iter() {
            t.clear(c);
        }
        t
    }

    /// One IPI round from `cpu` to `targets` (ascending order), each flushing one page
    /// (`full == false`) or its whole non-global TLB (`full == true`); `local_ns` is the
    /// initiator's own flush, overlapped with the wait.
    pub fn ipi_round(&self, cpu: CpuId, targets: &CpuMask, full: bool, local_ns: Ns) -> IpiRound {
        let mut sent = 0.0f64;
        let mut done = 0.0f64;
        let mut stolen = Vec::with_capacity(targets.weight());
        for t in targets.iter() {
            let hop = self.cacheline.at(self.distance(cpu, t));
            // Queue the call-function entry on the target (one remote line), then the ICR write.
            sent += hop + self.ipi_send_ns;
            let work = if full { self.full_flush_ns(t) } else { self.invlpg_ns(t) } as f64;
            let busy = self.ipi_receive_ns + work;
            // Delivery, handling, then the release travels back to the spinning initiator.
            done = done.max(sent + hop + busy + hop);
            stolen.push((t, busy.round() as Ns));
        }
        let initiator = done.max(sent + local_ns as f64);
        IpiRound { initiator_ns: initiator.round() as Ns, stolen }
    }
}

/// Tells whether a kernel of version `v` enables ARM64_WORKAROUND_REPEAT_TLBI on `m`
/// (arch/arm64/kernel/cpu_errata.c, arm64_repeat_tlbi_list; the capability is
/// system-wide, so one affected CPU type turns it on for all):
/// - Cortex-A76 erratum #1286807 (r0p0-r3p0; taken here as every A76): since 5.0;
/// - Cortex-A55 erratum #2441007 (all versions) and Cortex-A510 #2441009 (r0p0-r1p1,
///   taken as every A510): since 6.1 (Kconfig default y).
///
/// The versions are recalled from the errata's merge windows, not re-read.
pub fn repeat_tlbi_needed(m: &Machine, v: crate::kernel::KernelVersion) -> bool {
    use crate::kernel::KernelVersion as V;
    m.arch == Arch::Arm64
        && m.cpus.iter().any(|c| match c.core_type.to_ascii_lowercase().as_str() {
            "cortex-a76" => v >= V::new(5, 0),
            "cortex-a55" | "cortex-a510" => v >= V::new(6, 1),
            _ => false,
        })
}

/// E[max of k draws] / R for draws that are 0 with probability 1-p and uniform on [0, R]
/// otherwise: 1 - (1 - (1-p)^(k+1)) / (p (k+1)); 0 for k = 0, k/(k+1) for p = 1.
pub fn expected_max_fraction(k: usize, p: f64) -> f64 {
    if k == 0 || p <= 0.0 {
        return 0.0;
    }
    let p = p.min(1.0);
    let k1 = (k + 1) as f64;
    1.0 - (1.0 - (1.0 - p).powf(k1)) / (p * k1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets::{generic_x86_costs, homogeneous_cpus, Shape};

    fn arm(n: usize) -> TlbCosts {
        let shape = Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: 1, cores_per_llc: n, smt: 1 };
        let m = Machine::from_cpus("t", "t", Arch::Arm64, homogeneous_cpus(shape, 2000, "a"), generic_x86_costs());
        TlbCosts::for_machine(&m)
    }

    #[test]
    fn expected_max_is_bounded_and_grows() {
        assert_eq!(expected_max_fraction(0, 0.5), 0.0);
        assert!((expected_max_fraction(3, 1.0) - 0.75).abs() < 1e-12);
        let mut last = 0.0;
        for k in 1..200 {
            let f = expected_max_fraction(k, 0.5);
            assert!(f > last && f < 1.0);
            last = f;
        }
    }

    #[test]
    fn dsb_wait_grows_with_the_domain_and_ignores_powered_down_cpus() {
        let mut last = 0;
        for n in [1, 2, 4, 8, 16, 64, 128] {
            let t = arm(n);
            let w = t.dsb_ish_ns(0, &IdleCpus::shallow_except(&CpuMask::first_n(n), 0), 1.0);
            assert!(w >= last, "n={n}: {w} < {last}");
            last = w;
            let off = t.dsb_ish_ns(0, &IdleCpus::off_except(&CpuMask::first_n(n), 0), 1.0);
            assert_eq!(off, arm(1).dsb_ish_ns(0, &IdleCpus::none(), 1.0));
        }
        let t = arm(8);
        let all = CpuMask::first_n(8);
        assert!(t.dsb_ish_ns(0, &IdleCpus::none(), 1.0) > t.dsb_ish_ns(0, &IdleCpus::shallow_except(&all, 0), 1.0));
        // A batch's DSB after its TLBIs went out waits for less than a page's flush.
        assert!(t.arm64_batch_flush_ns(0, &IdleCpus::none(), 1_000_000) < t.arm64_flush_page_ns(0, &IdleCpus::none()));
    }

    #[test]
    fn synchronous_dsb_grows_with_every_dvm_participant() {
        // Same cluster, same idle states: each extra participant (a PE in WFI or an
        // external one such as an SMMU TBU) adds its serialised DVM messages at the node.
        let t = arm(16);
        let all = CpuMask::first_n(16);
        let mut last = 0;
        for awake in 1..16 {
            let mut off = all;
            for c in 0..=awake {
                off.clear(c);
            }
            let mut shallow = CpuMask::first_n(awake + 1);
            shallow.clear(0);
            let idle = IdleCpus { shallow, off };
            let w = t.dsb_ish_ns(0, &idle, 1.0);
            let step = (2.0 * t.p.dvm_msgs_per_op * t.p.dvm_node_ns_per_target).round() as Ns;
            if awake > 1 {
                assert!(w >= last + step - 1, "{awake} participants: {w} vs {last}");
            }
            last = w;
        }
        let mut ext = arm(16);
        ext.p.dvm_external += 2.0;
        let idle = IdleCpus::shallow_except(&all, 0);
        assert!(ext.dsb_ish_ns(0, &idle, 1.0) > t.dsb_ish_ns(0, &idle, 1.0));
        // The farther the farthest participant, the longer the round trip.
        let two_llc = {
            let shape = Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: 2, cores_per_llc: 8, smt: 1 };
            let m = Machine::from_cpus("t", "t", Arch::Arm64, homogeneous_cpus(shape, 2000, "a"), generic_x86_costs());
            TlbCosts::for_machine(&m)
        };
        assert!(two_llc.dsb_ish_ns(0, &idle, 1.0) > t.dsb_ish_ns(0, &idle, 1.0));
        // An override replaces the modeled wait (sweeps).
        let mut o = arm(16);
        o.p.dsb_sync_override_ns = 345.0;
        assert_eq!(o.dsb_ish_ns(0, &idle, 1.0), 345);
    }

    #[test]
    fn kpti_and_repeat_tlbi_change_the_sequence() {
        let idle = IdleCpus::shallow_except(&CpuMask::first_n(8), 0);
        let base = arm(8);
        let kpti = arm(8).with_kernel(true, false);
        let repeat = arm(8).with_kernel(false, true);
        // KPTI: a second TLBI posted, and one more operation for the DSB to fan out.
        assert!(kpti.tlbi_post_ns(0, &idle) > base.tlbi_post_ns(0, &idle));
        assert!(kpti.arm64_flush_page_ns(0, &idle) > base.arm64_flush_page_ns(0, &idle));
        // REPEAT_TLBI: TLBI; DSB ISH; TLBI, so a page's flush waits for two DSBs.
        let dsb = base.dsb_ish_ns(0, &idle, 1.0);
        assert!(repeat.arm64_flush_page_ns(0, &idle) >= base.arm64_flush_page_ns(0, &idle) + dsb);
        // Deferred TLBIs closer together than the interconnect drains them stall the issuer.
        assert!(base.tlbi_post_batched_ns(0, &idle, 0) > base.tlbi_post_batched_ns(0, &idle, 1_000_000));
        assert_eq!(base.tlbi_post_batched_ns(0, &idle, 1_000_000), base.tlbi_post_ns(0, &idle));
        let sd888 = crate::topology::presets::preset("snapdragon-888").unwrap();
        let pixel = crate::topology::presets::preset("pixel6").unwrap();
        let v = crate::kernel::KernelVersion::new;
        assert!(repeat_tlbi_needed(&sd888, v(6, 5)) && !repeat_tlbi_needed(&sd888, v(6, 0)));
        assert!(repeat_tlbi_needed(&pixel, v(5, 10))); // Cortex-A76 #1286807
        assert!(!repeat_tlbi_needed(&crate::topology::presets::preset("kunpeng-920-2s").unwrap(), v(6, 5)));
    }

    #[test]
    fn ipi_round_grows_with_targets_and_skips_lazy_cpus() {
        let t = TlbCosts::for_machine(&crate::topology::presets::topo(1, 1, 16, 1));
        let mut last = 0;
        for k in 1..16 {
            let mut m = CpuMask::first_n(k + 1);
            m.clear(0);
            let r = t.ipi_round(0, &m, false, 0);
            assert!(r.initiator_ns > last);
            assert_eq!(r.stolen.len(), k);
            last = r.initiator_ns;
        }
        let idle = IdleCpus { shallow: CpuMask::single(1), off: CpuMask::single(2) };
        let tg = t.ipi_targets(0, &CpuMask::first_n(4), &idle);
        assert_eq!(tg.to_list(), "3");
        let full = t.ipi_round(0, &tg, true, 0).stolen[0].1;
        let page = t.ipi_round(0, &tg, false, 0).stolen[0].1;
        assert!(full > page + t.refill_ns(3) / 2);
    }
}
