//! The machine's cost table: what operations take, by sharing distance.
//!
//! Mirrors: nothing in the kernel; these are the hardware latencies that make kernel
//! mechanisms cost what they cost (cache-line transfers, IPIs, context switches).
//! Model: every figure is physical (ns, bytes) and carries its source in the preset
//! that sets it; none is fitted to a seed's results. Mechanisms derive their costs from
//! these (e.g. an idle-CPU scan costs one remote cache-line read per CPU examined).

use serde::{Deserialize, Serialize};

/// Sharing distance between two CPUs, the index of every per-distance cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Distance {
    /// The same hardware thread.
    SameCpu = 0,
    /// Another hardware thread of the same core (shares L1/L2).
    SmtSibling = 1,
    /// Another core sharing the last-level cache.
    SameLlc = 2,
    /// Another LLC in the same package (e.g. another CCX).
    SamePackage = 3,
    /// Another package (socket).
    OtherPackage = 4,
}

impl Distance {
    /// Every distance, nearest first.
    pub const ALL: [Distance; 5] = [Distance::SameCpu, Distance::SmtSibling, Distance::SameLlc, Distance::SamePackage, Distance::OtherPackage];

    /// Returns the distance of two CPUs from what they share, nearest first.
    #[inline]
    pub fn classify(same_cpu: bool, same_core: bool, same_llc: bool, same_socket: bool) -> Distance {
        if same_cpu {
            Distance::SameCpu
        } else if same_core {
            Distance::SmtSibling
        } else if same_llc {
            Distance::SameLlc
        } else if same_socket {
            Distance::SamePackage
        } else {
            Distance::OtherPackage
        }
    }

    /// Returns the snake_case name used in results.
    pub fn name(self) -> &'static str {
        match self {
            Distance::SameCpu => "same_cpu",
            Distance::SmtSibling => "smt_sibling",
            Distance::SameLlc => "same_llc",
            Distance::SamePackage => "same_package",
            Distance::OtherPackage => "other_package",
        }
    }
}

/// Latency of moving one cache line to a CPU, by where the line was, in ns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachelineCosts {
    /// Hit in the CPU's own L1/L2 (same core).
    pub same_core_ns: f64,
    /// Line held by the SMT sibling (shared L1/L2).
    pub smt_sibling_ns: f64,
    /// Line in the shared LLC or another core's private cache behind it.
    pub same_llc_ns: f64,
    /// Line in another LLC of the same package (cross-CCX).
    pub same_package_ns: f64,
    /// Line in another package (cross-socket).
    pub other_package_ns: f64,
    /// Line only in memory (local DRAM).
    pub dram_ns: f64,
}

impl CachelineCosts {
    /// Returns the transfer latency for a line last held at distance `d`.
    #[inline]
    pub fn at(&self, d: Distance) -> f64 {
        match d {
            Distance::SameCpu => self.same_core_ns,
            Distance::SmtSibling => self.smt_sibling_ns,
            Distance::SameLlc => self.same_llc_ns,
            Distance::SamePackage => self.same_package_ns,
            Distance::OtherPackage => self.other_package_ns,
        }
    }
}

/// Cache capacities, used to tell how long data stays resident.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSizes {
    /// L1 data cache per core, KiB.
    pub l1d_kib: u32,
    /// L2 per core (or per cluster on some Arm designs), KiB.
    pub l2_kib: u32,
    /// Last-level cache per LLC domain, KiB.
    pub llc_kib: u32,
    /// Time every core of an LLC must have spent in a power-down idle state before the
    /// LLC itself loses its contents (flushed and power-gated), µs; 0 = never.
    pub llc_flush_after_idle_us: f64,
}

fn no_smt_slowdown() -> f64 {
    1.0
}

/// Every cost the simulator charges on a machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostTable {
    /// Cache-line transfer latency by sharing distance.
    pub cacheline: CachelineCosts,
    /// Cache capacities.
    pub cache: CacheSizes,
    /// Cache misses a core keeps in flight at once (memory-level parallelism):
    /// a refill of N lines costs about N × latency / this.
    pub miss_parallelism: f64,
    /// Ownership transfers (lines another cache holds dirty) a core's store stream keeps
    /// in flight: a read-modify-write pass over N such lines costs N × transfer / this.
    pub rfo_parallelism: f64,
    /// How much slower a thread runs while another hardware thread of its core is busy
    /// (SMT: the two share the core's pipelines and caches): 1 = not at all (each
    /// thread as fast as alone), 1.6 = each at 1/1.6 of its speed alone, a core then
    /// doing 2/1.6 = 1.25x the work of one thread. A sibling in an idle state (even
    /// POLL) does not count. Default 1: what SMT yields depends
    /// on the workload (for some it is a loss), so no one figure is sourced here and
    /// contention is a what-if.
    #[serde(default = "no_smt_slowdown")]
    pub smt_slowdown: f64,
    /// Direct cost of a context switch (switch_to, mm switch, no cache effects), ns.
    pub context_switch_ns: f64,
    /// Sending an IPI (APIC write / GIC SGI), ns, paid by the sender.
    pub ipi_send_ns: f64,
    /// Receiving an IPI (interrupt entry, handler, exit), ns, paid by the target.
    pub ipi_receive_ns: f64,
    /// Moving a queued task between runqueues: the code of detach_task() and
    /// attach_task() (dequeue, set_task_cpu, enqueue), ns. The lines the move pulls (the
    /// source runqueue's lock, its cfs_rq, the task's entity) are priced by their
    /// distance from the CPU doing it (`crate::lock`, `sched/locks.rs`).
    pub migration_ns: f64,
    /// fork()+exec-like creation of a task, charged to the parent, ns.
    pub fork_ns: f64,
    /// The kernel's own code paths around scheduling: entry and exit, interrupts,
    /// timers, wakeups.
    pub kernel: KernelPathCosts,
    /// TLB maintenance: arm64 broadcast TLBI and DSB (the DVM protocol), x86 INVLPG
    /// and shootdown IPIs.
    pub tlb: TlbPathCosts,
}

/// TLB maintenance costs of a machine (the `mm::tlb` module turns them into flush times).
/// Core-local steps are in cycles of the CPU that runs them; interconnect steps in ns.
/// Distances a DVM message travels are priced from [`CachelineCosts`] (a DVM snoop
/// crosses the same fabric as a coherence request).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbPathCosts {
    /// arm64 `DSB ISHST` before a TLBI: drains the store buffer (the PTE store), cycles.
    pub dsb_ishst_cycles: f64,
    /// Issuing one `TLBI ...IS` into the DVM request queue (posted, not waited for), cycles.
    pub tlbi_issue_cycles: f64,
    /// `DSB ISH` local part: the issuing PE's own outstanding accesses and TLB, cycles.
    pub dsb_local_cycles: f64,
    /// Serialisation at the DVM node: time to send one DVM message to one participant
    /// (the node emits snoops one after the other), ns.
    pub dvm_node_ns_per_target: f64,
    /// Snoop messages per DVM operation per participant (AMBA CHI sends a DVMOp snoop in
    /// two parts; a DVM Sync in one message pair, counted alike).
    pub dvm_msgs_per_op: f64,
    /// DVM operations the node accepts from one requester before the next TLBI stalls.
    pub dvm_max_outstanding: f64,
    /// A participant's answer to a DVM Sync once its invalidations are done and nothing
    /// translated by the old entry is in flight (TLB lookup-and-invalidate, response), ns.
    pub dvm_ack_ns: f64,
    /// Extra answer time of a PE idle in WFI (its clock ungated for the snoop), ns.
    pub dvm_wfi_wake_ns: f64,
    /// DVM participants outside the CPU clusters that every broadcast reaches (SMMU TBUs
    /// with broadcast TLB maintenance, GIC ITS), as independent responders.
    pub dvm_external: f64,
    /// Round trip from the DVM node to those participants and back, ns.
    pub dvm_external_rt_ns: f64,
    /// When > 0, the synchronous `DSB ISH` wait after a TLBI is this many ns instead of the
    /// modeled one (for sweeps of an unmeasured cost).
    pub dsb_sync_override_ns: f64,
    /// `ptep_get_and_clear`: the atomic exchange on the PTE, cycles.
    pub pte_xchg_cycles: f64,
    /// x86 local `INVLPG`, cycles.
    pub invlpg_cycles: f64,
    /// x86 local full non-global flush (CR3 reload / INVPCID), cycles.
    pub full_flush_cycles: f64,
    /// x86 `arch_tlbbatch_add_pending` bookkeeping (cpumask OR, tlb_gen atomic), cycles.
    pub batch_add_cycles: f64,
    /// Hot TLB entries a CPU refills after a full flush.
    pub refill_entries: f64,
    /// Page-table levels walked per refill.
    pub walk_levels: f64,
    /// Page walks in flight at once.
    pub walkers: f64,
}

/// Instruction-path costs of kernel code around scheduling, ns on a CPU of capacity
/// 1024 (a smaller CPU takes proportionally longer). Cache lines these paths pull from
/// other CPUs are not included: they are charged by sharing distance from
/// [`CachelineCosts`], so the same path costs more when its partner is farther away.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelPathCosts {
    /// System call entry (user to kernel, mitigations included), ns.
    pub syscall_entry_ns: f64,
    /// System call exit (kernel to user), ns.
    pub syscall_exit_ns: f64,
    /// Interrupt entry up to the handler (irq_enter, vector dispatch), ns.
    pub irq_entry_ns: f64,
    /// Interrupt exit (irq_exit, softirq check, return), ns.
    pub irq_exit_ns: f64,
    /// hrtimer_start_range_ns() with the base lock, ns.
    pub hrtimer_start_ns: f64,
    /// hrtimer_cancel() / the expiry bookkeeping of one hrtimer, ns.
    pub hrtimer_cancel_ns: f64,
    /// __mod_timer() on a local base: lock, forward, index, enqueue, unlock, ns.
    pub mod_timer_ns: f64,
    /// timer_delete() on a local base: lock, detach, unlock, ns.
    pub del_timer_ns: f64,
    /// get_nohz_timer_target(): one CPU examined (cpumask step + idle_cpu() loads), ns.
    pub nohz_target_per_cpu_ns: f64,
    /// Switching a timer to another CPU's base (TIMER_MIGRATING, unlock, lock), ns.
    pub timer_base_switch_ns: f64,
    /// Running one expired timer's callback wrapper (call_timer_fn, softirq loop), ns.
    pub timer_expire_ns: f64,
    /// One level of a tmigr hierarchy walk (cmpxchg of the group state, group lock), ns.
    pub tmigr_level_ns: f64,
    /// try_to_wake_up() path (select_task_rq, enqueue, wakeup_preempt), ns.
    pub ttwu_ns: f64,
    /// __schedule() up to the switch: the blocking call's wait-queue code,
    /// deactivate_task(), pick_next_task() (sched_switch fires at its end), ns.
    #[serde(default)]
    pub schedule_ns: f64,
    /// switch_mm_irqs_off() between two address spaces (CR3 / TTBR0 write, and the TLB
    /// and cache refill a process switch costs over a thread switch), ns.
    #[serde(default)]
    pub mm_switch_ns: f64,
    /// Cache lines of the wakee a wakeup pulls from the CPU it last ran on (p->pi_lock,
    /// p->__state and p->on_cpu, the scheduling entity). The target runqueue's lock is a
    /// modeled lock (`crate::lock`); its other lines are `ttwu_rq_lines`.
    pub ttwu_lines: f64,
    /// ttwu_do_activate(): enqueue_task() and wakeup_preempt() under the target's rq
    /// lock, ns (a part of `ttwu_ns`). With TTWU_QUEUE the target CPU runs it
    /// (sched_ttwu_pending()), the waker only queues the task on its wake list.
    #[serde(default)]
    pub ttwu_activate_ns: f64,
    /// Lines of the target runqueue the activation writes besides its lock (the
    /// cfs_rq's counts and tree root, its PELT averages), pulled from the target CPU by
    /// a remote waker holding the lock.
    #[serde(default = "default_ttwu_rq_lines")]
    pub ttwu_rq_lines: f64,
    /// Cache lines of a pipe or futex a waker writes and its wakee then reads (wait
    /// queue head, the data).
    pub wake_data_lines: f64,
    /// The idle loop's entry: tick_nohz_idle_enter, governor selection, state entry, ns.
    pub idle_entry_ns: f64,
    /// IPI delivery beyond the fabric: from the ICR/SGI write to the target taking the
    /// interrupt, ns (the message's travel is priced as a cache line at the distance).
    pub ipi_delivery_ns: f64,
    /// One read of the ACPI PM timer's I/O port (the chipset, or AMD's FCH), ns; one
    /// port serves the machine, so concurrent reads queue. Paid only by acpi_idle's
    /// pre-6.0 "dummy wait" after an I/O-port C-state.
    #[serde(default = "default_pm_timer_read_ns")]
    pub pm_timer_read_ns: f64,
    /// How late, at most, a CPU's tick handler starts after its jiffy boundary (each
    /// tick late by a uniform draw below it, per CPU and jiffy), ns. Every CPU's tick is
    /// programmed for the same boundary (no skew_tick), but the local timer interrupt is
    /// taken when the instruction in flight retires and the handler's first lines are
    /// fetched: CPUs do not tick in lock step.
    #[serde(default = "default_tick_irq_jitter_ns")]
    pub tick_irq_jitter_ns: f64,
}

/// estimate: interrupt delivery and entry vary by about the entry itself (~1 us with
/// mitigations: `irq_entry_ns`); no measurement of the spread between CPUs' local timer
/// interrupts at one deadline was found. Band 0.2-5 us. (Measured on the 3-on-2 hog
/// case, issue 29: the shares do not depend on it from 0.5 to 20 us; at 0 the CPUs
/// balance in lock step and one thread keeps a CPU to itself.)
pub(crate) fn default_tick_irq_jitter_ns() -> f64 {
    1000.0
}

/// derived: ttwu_do_activate() under the target's lock writes rq->clock and the
/// cfs_rq's nr_running/load/tasks_timeline line and its sched_avg line (struct cfs_rq,
/// kernel/sched/sched.h: `avg` is ____cacheline_aligned); band 2-4.
pub(crate) fn default_ttwu_rq_lines() -> f64 {
    2.0
}

/// estimate: legacy port I/O to the chipset takes on the order of a microsecond (why the
/// acpi_pm clocksource is avoided where a TSC exists); no measurement of an FCH PM timer
/// read was found. Band 0.5-3 us.
pub(crate) fn default_pm_timer_read_ns() -> f64 {
    1000.0
}

/// CostTable::read_pass_ns with the table's miss_parallelism given.
#[inline]
pub fn read_pass_ns(miss_parallelism: f64, longest_ns: f64, total_ns: f64) -> f64 {
    if total_ns <= 0.0 {
        return 0.0;
    }
    let first = longest_ns.clamp(0.0, total_ns);
    first + (total_ns - first) / miss_parallelism.max(1.0)
}

impl CostTable {
    /// Time from an IPI's send to the target taking it, by distance: the fixed delivery
    /// plus one message across the same fabric a cache line crosses.
    pub fn ipi_latency_ns(&self, d: Distance) -> f64 {
        self.kernel.ipi_delivery_ns + self.cacheline.at(d)
    }

    /// The time one pass of independent cache-line reads takes the reading CPU: the
    /// farthest line's latency (`longest_ns`) once, the rest of `total_ns` (every line
    /// at its own latency) overlapped miss_parallelism at a time. Used alike by wakeup
    /// scans (select_idle_cpu()/select_idle_core()/select_idle_capacity(), SIS_NODE) and
    /// balance statistics (update_sg_lb_stats(), find_idlest_group()): in both loops
    /// (kernel/sched/fair.c; idle_cpu() in core.c) the next CPU's address comes from
    /// the cpumask and the per-CPU offset table, never from the previous CPU's lines,
    /// and the exit branch on each result is predicted "busy" (or the sums are only
    /// added), so an out-of-order core issues the next iterations' loads before the
    /// first returns: only the first miss is exposed, the rest come at the rate the
    /// core keeps misses in flight. (The reorder buffer also bounds how many
    /// iterations are in flight; miss_parallelism's band covers that uncertainty.)
    pub fn read_pass_ns(&self, longest_ns: f64, total_ns: f64) -> f64 {
        read_pass_ns(self.miss_parallelism, longest_ns, total_ns)
    }

    /// Returns the cost of refilling `bytes` of data last cached at distance `d`, ns.
    ///
    /// Data still in the CPU's own caches (SameCpu) costs nothing extra.
    pub fn refill_ns(&self, bytes: u64, d: Distance) -> f64 {
        if d == Distance::SameCpu || bytes == 0 {
            return 0.0;
        }
        let lines = bytes.div_ceil(64) as f64;
        let extra = self.cacheline.at(d) - self.cacheline.same_core_ns;
        lines * extra.max(0.0) / self.miss_parallelism.max(1.0)
    }

    /// Returns this table with overrides applied from a `{field: value}` map.
    ///
    /// Nested fields use dotted names ("cacheline.dram_ns"). Unknown names are errors.
    pub fn with_overrides(&self, overrides: &std::collections::BTreeMap<String, f64>) -> Result<CostTable, String> {
        let mut doc = serde_json::to_value(self).map_err(|e| e.to_string())?;
        for (key, value) in overrides {
            let mut slot = &mut doc;
            for part in key.split('.') {
                slot = slot.get_mut(part).ok_or_else(|| format!("unknown cost '{key}': see `schedlab machines NAME` for the fields"))?;
            }
            if !slot.is_number() {
                return Err(format!("cost '{key}' is a table, not a number"));
            }
            if !value.is_finite() || *value < 0.0 {
                return Err(format!("cost '{key}' must be a non-negative number, got {}", shown(*value)));
            }
            if slot.is_u64() || slot.is_i64() {
                // An integer field (a cache size): a whole number f64 holds exactly, never
                // saturated into u64::MAX.
                if value.fract() != 0.0 || *value > MAX_EXACT_INTEGER {
                    return Err(format!("cost '{key}' must be a whole number up to 2^53, got {}", shown(*value)));
                }
                *slot = serde_json::json!(*value as u64);
            } else {
                *slot = serde_json::json!(value);
            }
            serde_json::from_value::<CostTable>(doc.clone()).map_err(|e| format!("cost '{key}' = {}: {e}", shown(*value)))?;
        }
        let table: CostTable = serde_json::from_value(doc).map_err(|e| e.to_string())?;
        table.check()?;
        Ok(table)
    }

    /// Values the simulator would otherwise clamp in silence: every use divides by
    /// `max(1, ...)` of the two parallelism figures, so below 1 they meant nothing.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [("miss_parallelism", self.miss_parallelism), ("rfo_parallelism", self.rfo_parallelism)] {
            if !(v >= 1.0) {
                return Err(format!("cost '{name}' must be at least 1 (transfers a core keeps in flight), got {}", shown(v)));
            }
        }
        Ok(())
    }
}

/// 2^53: the largest whole number below which every integer is an exact f64.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A number as an error message echoes it: `1e30` and `-1e300`, not 300 digits.
pub fn shown(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() >= 1e15 || v.abs() < 1e-6) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Every leaf of the cost table by its dotted name (as `[machine.cost]` takes it), in the
/// order of the bits a run's read set uses (`engine.constants_read`). A test holds it
/// equal to the table's serde leaves.
pub const COST_KEYS: [&str; 59] = [
    "cache.l1d_kib",
    "cache.l2_kib",
    "cache.llc_flush_after_idle_us",
    "cache.llc_kib",
    "cacheline.dram_ns",
    "cacheline.other_package_ns",
    "cacheline.same_core_ns",
    "cacheline.same_llc_ns",
    "cacheline.same_package_ns",
    "cacheline.smt_sibling_ns",
    "context_switch_ns",
    "fork_ns",
    "ipi_receive_ns",
    "ipi_send_ns",
    "kernel.del_timer_ns",
    "kernel.hrtimer_cancel_ns",
    "kernel.hrtimer_start_ns",
    "kernel.idle_entry_ns",
    "kernel.ipi_delivery_ns",
    "kernel.irq_entry_ns",
    "kernel.irq_exit_ns",
    "kernel.mm_switch_ns",
    "kernel.mod_timer_ns",
    "kernel.nohz_target_per_cpu_ns",
    "kernel.pm_timer_read_ns",
    "kernel.schedule_ns",
    "kernel.syscall_entry_ns",
    "kernel.syscall_exit_ns",
    "kernel.tick_irq_jitter_ns",
    "kernel.timer_base_switch_ns",
    "kernel.timer_expire_ns",
    "kernel.tmigr_level_ns",
    "kernel.ttwu_activate_ns",
    "kernel.ttwu_lines",
    "kernel.ttwu_ns",
    "kernel.ttwu_rq_lines",
    "kernel.wake_data_lines",
    "migration_ns",
    "miss_parallelism",
    "rfo_parallelism",
    "smt_slowdown",
    "tlb.batch_add_cycles",
    "tlb.dsb_ishst_cycles",
    "tlb.dsb_local_cycles",
    "tlb.dsb_sync_override_ns",
    "tlb.dvm_ack_ns",
    "tlb.dvm_external",
    "tlb.dvm_external_rt_ns",
    "tlb.dvm_max_outstanding",
    "tlb.dvm_msgs_per_op",
    "tlb.dvm_node_ns_per_target",
    "tlb.dvm_wfi_wake_ns",
    "tlb.full_flush_cycles",
    "tlb.invlpg_cycles",
    "tlb.pte_xchg_cycles",
    "tlb.refill_entries",
    "tlb.tlbi_issue_cycles",
    "tlb.walk_levels",
    "tlb.walkers",
];

/// The index of `key` in [`COST_KEYS`]; a name not there fails to compile where it is
/// used in a const context (the `cost!` reads), so a read cannot name a missing leaf.
pub const fn key_index(key: &str) -> usize {
    let k = key.as_bytes();
    let mut i = 0;
    while i < COST_KEYS.len() {
        let c = COST_KEYS[i].as_bytes();
        if c.len() == k.len() {
            let mut j = 0;
            while j < k.len() && c[j] == k[j] {
                j += 1;
            }
            if j == k.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a cost-table leaf")
}

/// Which cost-table leaves a run read: one bit per [`COST_KEYS`] entry. Interior
/// mutability lets the pricing paths that take `&self` record their reads.
#[derive(Clone, Debug, Default)]
pub struct CostReads(std::cell::Cell<u64>);

impl CostReads {
    /// Records a read of leaf `key` (an index into [`COST_KEYS`]).
    #[inline]
    pub fn note(&self, key: usize) {
        let bits = self.0.get();
        let bit = 1u64 << key;
        if bits & bit == 0 {
            self.0.set(bits | bit);
        }
    }

    /// Records reads of every leaf whose name starts with `prefix` (a mechanism that
    /// takes a whole sub-table, such as `tlb.`).
    pub fn note_prefix(&self, prefix: &str) {
        for (i, k) in COST_KEYS.iter().enumerate() {
            if k.starts_with(prefix) {
                self.note(i);
            }
        }
    }

    /// Records a read of the line latency at `d` (`CachelineCosts::at`).
    #[inline]
    pub fn note_line(&self, d: Distance) {
        self.note(match d {
            Distance::SameCpu => const { key_index("cacheline.same_core_ns") },
            Distance::SmtSibling => const { key_index("cacheline.smt_sibling_ns") },
            Distance::SameLlc => const { key_index("cacheline.same_llc_ns") },
            Distance::SamePackage => const { key_index("cacheline.same_package_ns") },
            Distance::OtherPackage => const { key_index("cacheline.other_package_ns") },
        });
    }

    /// The names read, in [`COST_KEYS`] order.
    pub fn names(&self) -> Vec<String> {
        let bits = self.0.get();
        COST_KEYS.iter().enumerate().filter(|&(i, _)| bits & (1 << i) != 0).map(|(_, k)| k.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::read_pass_ns;

    /// The read set's key list is the cost table's leaves, in order, no more, no fewer.
    #[test]
    fn cost_keys_are_the_tables_leaves() {
        fn leaves(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(map) => {
                    for (k, v) in map {
                        leaves(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, v, out);
                    }
                }
                _ => out.push(prefix.to_string()),
            }
        }
        let mut got = Vec::new();
        leaves("", &serde_json::to_value(crate::topology::presets::generic_x86_costs().table).unwrap(), &mut got);
        got.sort();
        let mut want: Vec<String> = super::COST_KEYS.iter().map(|k| k.to_string()).collect();
        want.sort();
        assert_eq!(got, want);
        assert!(super::COST_KEYS.len() <= 64, "the read set is a u64");
        assert_eq!(super::COST_KEYS[super::key_index("kernel.schedule_ns")], "kernel.schedule_ns");
    }

    /// One pass of reads: the farthest line once, the rest overlapped; serial at a
    /// parallelism of one; nothing read costs nothing.
    #[test]
    fn a_read_pass_exposes_one_miss_and_overlaps_the_rest() {
        assert_eq!(read_pass_ns(16.0, 40.0, 400.0), 40.0 + 360.0 / 16.0);
        assert_eq!(read_pass_ns(1.0, 40.0, 400.0), 400.0);
        assert_eq!(read_pass_ns(16.0, 40.0, 0.0), 0.0);
        // A lone line is its own latency whatever the parallelism.
        assert_eq!(read_pass_ns(16.0, 40.0, 40.0), 40.0);
    }
}
