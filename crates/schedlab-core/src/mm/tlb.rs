//! TLB invalidation primitives and their costs: arm64 broadcast TLBI + DSB, x86 INVLPG + IPIs.
//!
//! Mirrors: arch/arm64/include/asm/tlbflush.h (__flush_tlb_page_nosync, flush_tlb_page,
//! arch_tlbbatch_add_pending, arch_tlbbatch_flush); arch/x86/mm/tlb.c (flush_tlb_mm_range,
//! native_flush_tlb_multi, flush_tlb_func, arch_tlbbatch_flush).
//!
//! Model, arm64. `TLBI VALE1IS` is a DVM operation: the issuing PE posts it to the
//! interconnect's DVM node (the DSU's snoop control unit in a phone cluster, the MN/DN of a
//! CCN/CMN mesh in a server), which forwards it as a snoop to every PE of the
//! inner-shareable domain. `DSB ISH` then sends a DVM Sync the same way and completes only
//! when every PE has answered that all earlier DVM operations are done, including the
//! memory accesses that used the old translation. The wait is therefore
//!
//! ```text
//!  t_sync = t_local                                   the DSB's own drain
//!         + t_rt(farthest acknowledging PE)           one snoop round trip (cost table)
//!         + (1 + pending TLBIs) · flits · n_ack · t_flit   serial fan-out at the DVM node
//!         + max(t_wfi_ack, E[max drain of busy PEs])  the slowest answer
//! ```
//!
//! Who answers: running PEs; PEs idle in WFI (clock-gated but still coherent: they must
//! answer, fast, with nothing in flight); not powered-down PEs, which left the coherency
//! and DVM domain before power-off (the interconnect stops snooping them; they invalidate
//! their TLBs when they come back). Remote PEs handle DVM snoops in their memory system
//! without an interrupt: no time is charged to them.
//!
//! Model, x86. A shootdown is an IPI round: the initiator queues a call-function entry on
//! each target (one remote cache-line write) and sends an IPI, one target after the other;
//! each target takes the interrupt, flushes (INVLPG for a page, a full non-global flush for
//! a batch) and releases the entry; the initiator spins until the last one is released,
//! flushing its own TLB meanwhile (flushes run concurrently since 5.3). Targets are
//! mm_cpumask minus self; CPUs in lazy-TLB mode (idle, any depth) are skipped, since reclaim
//! frees no page tables (`tlb_is_not_lazy`); they catch up through tlb_gen when they next
//! switch to the mm. A full flush costs each target its hot TLB entries (refill walks).

use crate::cost::CachelineCosts;
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

/// Costs of TLB maintenance on one machine. Core-local steps are in cycles of the CPU that
/// runs them; interconnect steps are in ns. No field is fitted to a seed's results.
#[derive(Clone, Debug, PartialEq)]
pub struct TlbCosts {
    /// Instruction set: decides which half of the table applies.
    pub arch: Arch,
    places: Vec<Place>,
    /// Cache-line transfer latencies (the machine's cost table): a DVM snoop, an IPI
    /// message and a call-function entry travel the same fabric as a coherence transfer.
    pub cacheline: CachelineCosts,
    /// arm64 `DSB ISHST` before the TLBI: drains the store buffer, the PTE store being to a
    /// line this PE just owned (atomic xchg). Estimate: a pipeline drain, ~20 cycles.
    pub dsb_ishst_cycles: f64,
    /// Posting one `TLBI VALE1IS` to the interconnect. Estimate: ~10 cycles (posted, not
    /// waited for; Barry Song in the seed thread: "much much cheaper").
    pub tlbi_issue_cycles: f64,
    /// TLBIs per page: 1, or 2 with KPTI (`__tlbi_user`). Cortex-A55/A78/X1 and TaiShan
    /// v110 are not Meltdown-affected (CSV3 or kpti safe list): KPTI off.
    pub tlbis_per_page: f64,
    /// `DSB ISH` local part: this PE's own outstanding accesses and TLB completion.
    /// Estimate: ~30 cycles.
    pub dsb_local_cycles: f64,
    /// Time for the DVM node to put one snoop flit on the fabric. Estimate: one flit per
    /// interconnect cycle at ~2 GHz (DSU L3 / CMN-class mesh clocks).
    pub dvm_flit_ns: f64,
    /// Snoop flits per DVM message per target: AMBA CHI sends a DVMOp snoop in two parts.
    pub dvm_flits_per_msg: f64,
    /// Extra answer time of a PE in WFI: ungating its memory-system clock. Estimate ~20 ns.
    pub dvm_wfi_ack_ns: f64,
    /// Longest drain a running PE may need before answering a DVM Sync: its oldest access
    /// in flight, at worst a DRAM miss (the cost table's `dram_ns`).
    pub dvm_busy_drain_ns: f64,
    /// Chance that a running PE has such a miss in flight. Estimate: 0.5.
    pub dvm_busy_miss_prob: f64,
    /// Round trip to DVM participants outside the CPU clusters (SMMU TBUs with broadcast
    /// TLB maintenance). Platform-specific and unknown: 0 (not modeled) by default.
    pub dvm_external_rt_ns: f64,
    /// x86 local `INVLPG`: ~200–250 cycles (Ingo Molnar, 2015); 225.
    pub invlpg_cycles: f64,
    /// x86 local full non-global flush (CR3 reload / INVPCID). Estimate: ~250 cycles,
    /// the same order as INVLPG; the real cost is the refill below.
    pub full_flush_cycles: f64,
    /// x86 bookkeeping of a deferred flush (`arch_tlbbatch_add_pending`: cpumask OR and
    /// inc_mm_tlb_gen atomic). Estimate: ~30 cycles.
    pub batch_add_cycles: f64,
    /// Hot TLB entries a CPU must refill after a full flush: about an L1 dTLB
    /// (64 entries on Skylake-class and Zen cores). Estimate.
    pub refill_entries: f64,
    /// Page-table levels walked per refill (4-level paging; the walk caches are flushed too).
    pub walk_levels: f64,
    /// Page walks in flight at once (2 walkers on recent x86 cores).
    pub walkers: f64,
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
    /// Derives the costs of `m` from its cost table, architecture and clocks.
    pub fn for_machine(m: &Machine) -> TlbCosts {
        let places = m
            .cpus
            .iter()
            .map(|c| Place { core: c.core, llc: c.llc, socket: c.socket, freq_mhz: c.freq_mhz.max(1) })
            .collect();
        TlbCosts {
            arch: m.arch,
            places,
            cacheline: m.cost.cacheline.clone(),
            dsb_ishst_cycles: 20.0,
            tlbi_issue_cycles: 10.0,
            tlbis_per_page: 1.0,
            dsb_local_cycles: 30.0,
            dvm_flit_ns: 0.5,
            dvm_flits_per_msg: 2.0,
            dvm_wfi_ack_ns: 20.0,
            dvm_busy_drain_ns: m.cost.cacheline.dram_ns,
            dvm_busy_miss_prob: 0.5,
            dvm_external_rt_ns: 0.0,
            invlpg_cycles: 225.0,
            full_flush_cycles: 250.0,
            batch_add_cycles: 30.0,
            refill_entries: 64.0,
            walk_levels: 4.0,
            walkers: 2.0,
            ipi_send_ns: m.cost.ipi_send_ns,
            ipi_receive_ns: m.cost.ipi_receive_ns,
        }
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

    /// arm64 `__flush_tlb_page_nosync`: DSB ISHST + TLBI(s), posted. Also the cost of
    /// `arch_tlbbatch_add_pending`, which is the same sequence.
    pub fn tlbi_post_ns(&self, cpu: CpuId) -> Ns {
        let c = self.dsb_ishst_cycles + self.tlbi_issue_cycles * self.tlbis_per_page;
        self.cycles_ns(cpu, c).round() as Ns
    }

    /// Time the DVM node needs to fan one TLBI out to every acknowledging PE. A deferred
    /// TLBI stalls the next one only if this exceeds the work between them.
    pub fn dvm_op_fanout_ns(&self, cpu: CpuId, idle: &IdleCpus) -> Ns {
        let n = self.dvm_ackers(cpu, idle).weight() as f64;
        (self.tlbis_per_page * self.dvm_flits_per_msg * n * self.dvm_flit_ns).round() as Ns
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

    /// `DSB ISH` wait: the DVM Sync plus `pending_ops` TLBIs not yet fanned out (one page's
    /// TLBIs on the synchronous path; 0 when closing a batch whose TLBIs went out earlier).
    pub fn dsb_ish_ns(&self, cpu: CpuId, idle: &IdleCpus, pending_ops: f64) -> Ns {
        let ack = self.dvm_ackers(cpu, idle);
        let mut t = self.cycles_ns(cpu, self.dsb_local_cycles);
        if ack.is_empty() {
            return (t + self.dvm_external_rt_ns).round() as Ns;
        }
        let far = ack.iter().map(|c| self.distance(cpu, c)).max().unwrap_or(Distance::SameLlc);
        t += self.cacheline.at(far).max(self.dvm_external_rt_ns);
        let n = ack.weight();
        t += (1.0 + pending_ops) * self.dvm_flits_per_msg * n as f64 * self.dvm_flit_ns;
        let n_wfi = ack.and(&idle.shallow).weight();
        let n_busy = n - n_wfi;
        let wfi = if n_wfi > 0 { self.dvm_wfi_ack_ns } else { 0.0 };
        let busy = self.dvm_busy_drain_ns * expected_max_fraction(n_busy, self.dvm_busy_miss_prob);
        t += wfi.max(busy);
        t.round() as Ns
    }

    /// arm64 `flush_tlb_page` (the synchronous `ptep_clear_flush` path): post, then wait.
    pub fn arm64_flush_page_ns(&self, cpu: CpuId, idle: &IdleCpus) -> Ns {
        self.tlbi_post_ns(cpu) + self.dsb_ish_ns(cpu, idle, self.tlbis_per_page)
    }

    /// arm64 `arch_tlbbatch_flush`: one DSB ISH covering every posted TLBI.
    pub fn arm64_batch_flush_ns(&self, cpu: CpuId, idle: &IdleCpus) -> Ns {
        self.dsb_ish_ns(cpu, idle, 0.0)
    }

    // ---- x86 ----

    /// Local `INVLPG` of one page.
    pub fn invlpg_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.invlpg_cycles).round() as Ns
    }

    /// Refill of the hot entries a full flush threw away (walks hitting L1/L2).
    pub fn refill_ns(&self, cpu: CpuId) -> Ns {
        let _ = cpu;
        let walk = self.walk_levels * self.cacheline.same_core_ns;
        (self.refill_entries * walk / self.walkers.max(1.0)).round() as Ns
    }

    /// Local full non-global flush plus its refill.
    pub fn full_flush_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.full_flush_cycles).round() as Ns + self.refill_ns(cpu)
    }

    /// x86 `arch_tlbbatch_add_pending` bookkeeping.
    pub fn batch_add_ns(&self, cpu: CpuId) -> Ns {
        self.cycles_ns(cpu, self.batch_add_cycles).round() as Ns
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
        assert!(t.arm64_batch_flush_ns(0, &IdleCpus::none()) < t.arm64_flush_page_ns(0, &IdleCpus::none()));
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
