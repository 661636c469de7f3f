//! Where every figure of a preset's cost table comes from: its kind (measured, declared,
//! derived, estimate) and the band its source supports.
//!
//! Mirrors: nothing in the kernel (see `provenance.rs`).
//! Model: one entry per leaf of the cost table (its dotted name, as `[machine.cost]`
//! takes it), per microarchitecture family. A measured figure carries the spread its
//! source shows; a derived one the range of its inputs; an estimate a wide band (at
//! least a factor 2 either way unless its reasoning bounds it). The values themselves
//! are built in `preset_costs.rs`; this is the one place their sources are written (keys
//! in brackets are that file's source list and `docs/hardware-sources.md`'s). A machine's
//! record names its family (`presets::MachineRecord::cost_family`). A test fails if a leaf lacks an entry
//! or its value lies outside its band.

use std::collections::BTreeMap;

use crate::provenance::{Kind, Provenance};
use crate::topology::{Arch, Machine};

/// The families of cost tables (`preset_costs.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostFamily {
    /// Ryzen 9 7950X.
    Zen4Desktop,
    /// EPYC Milan, and the generic x86 table of `topo()` and host machines.
    Zen3Server,
    /// EPYC Genoa and Bergamo.
    Zen4Server,
    /// Xeon Skylake-SP / Cascade Lake.
    SkylakeSp,
    /// Kunpeng 920, and the generic arm64 table.
    Kunpeng920,
    /// Phone SoCs with a DynamIQ L3 (Pixel 6, Snapdragon 888).
    DsuPhone,
}

impl CostFamily {
    /// The family of a machine's cost table: its record's (`presets::MachineRecord`), or
    /// the generic table's for a synthetic or host machine.
    pub fn of(m: &Machine) -> CostFamily {
        m.cost_family
    }

    /// The family of the generic tables of synthetic (`topo()`) and host machines: Zen 3
    /// server figures on x86, Kunpeng 920's on arm64.
    pub fn generic(arch: Arch) -> CostFamily {
        match arch {
            Arch::X86_64 => CostFamily::Zen3Server,
            Arch::Arm64 => CostFamily::Kunpeng920,
        }
    }
}

/// Every cost-table leaf of `m` with its provenance (overridden ones as `override`).
pub fn cost_sources(m: &Machine) -> BTreeMap<String, Provenance> {
    let doc = serde_json::to_value(&m.cost).unwrap_or_default();
    let mut out = BTreeMap::new();
    let family = CostFamily::of(m);
    let mut leaves = Vec::new();
    flatten("", &doc, &mut leaves);
    for (key, value) in leaves {
        let p = source(family, &key, value).unwrap_or_else(|| Provenance::new(Kind::Estimate, value, value, "no source recorded"));
        out.insert(key, p);
    }
    out
}

/// The dotted leaves of a JSON object, with their numeric values.
pub fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, f64)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, child, out);
            }
        }
        other => out.push((prefix.to_string(), other.as_f64().unwrap_or(f64::NAN))),
    }
}

fn measured(low: f64, high: f64, source: &'static str) -> Provenance {
    Provenance::new(Kind::Measured, low, high, source)
}

fn declared(value: f64, source: &'static str) -> Provenance {
    Provenance::exact(Kind::Declared, value, source)
}

/// An estimate `value` with band [value x lo, value x hi].
fn estimate(value: f64, lo: f64, hi: f64, source: &'static str) -> Provenance {
    Provenance::new(Kind::Estimate, value * lo, value * hi, source)
}

/// A derived figure `value` with band [value x lo, value x hi] from its inputs' ranges.
fn derived(value: f64, lo: f64, hi: f64, source: &'static str) -> Provenance {
    Provenance::new(Kind::Derived, value * lo, value * hi, source)
}

/// A knob that is off (its value means "not modeled" or "use the model"): exact.
fn knob(value: f64, source: &'static str) -> Provenance {
    Provenance::exact(Kind::Declared, value, source)
}

/// The provenance of one leaf of family `f`'s table, holding `v`.
fn source(f: CostFamily, key: &str, v: f64) -> Option<Provenance> {
    use CostFamily::*;
    let p = match (key, f) {
        // Core-to-core transfers: nviennot/core-to-core-latency, AnandTech (hardware-sources §5).
        ("cacheline.same_core_ns", _) => derived(v, 0.8, 1.25, "[amd]/[atrome] L2 load-to-use cycles at the preset's clock (turbo to base)"),
        ("cacheline.smt_sibling_ns", Zen3Server) => measured(9.0, 11.0, "[c2c] EPYC 7R13 hyper-thread pairs"),
        ("cacheline.smt_sibling_ns", Zen4Server) => measured(8.0, 10.0, "[c2c#132] EPYC 9274F (Genoa, nearest part)"),
        ("cacheline.smt_sibling_ns", Zen4Desktop) => measured(5.0, 10.0, "[c2c] 7950X"),
        ("cacheline.smt_sibling_ns", SkylakeSp) => measured(7.0, 8.0, "[c2c] Xeon 6242 / 8275CL"),
        ("cacheline.smt_sibling_ns", Kunpeng920 | DsuPhone) => derived(v, 1.0, 1.0, "no SMT: never used"),
        ("cacheline.same_llc_ns", Zen3Server) => measured(20.0, 27.0, "[c2c] EPYC 7R13 inside a CCX"),
        ("cacheline.same_llc_ns", Zen4Server) => measured(22.0, 24.0, "[c2c#132] EPYC 9274F inside a CCX (Genoa; Bergamo not measured)"),
        ("cacheline.same_llc_ns", Zen4Desktop) => measured(15.3, 21.0, "[c2c] [at7950] 7950X same CCX"),
        ("cacheline.same_llc_ns", SkylakeSp) => measured(43.0, 56.0, "[c2c] Xeon 6242 across the mesh"),
        ("cacheline.same_llc_ns", Kunpeng920) => measured(30.0, 38.0, "[c2c] Kunpeng 920-6426 in one die"),
        ("cacheline.same_llc_ns", DsuPhone) => estimate(v, 0.6, 2.0, "no phone measurement: between Kunpeng's in-die 35 ns and M1 Pro's 40 ns"),
        ("cacheline.same_package_ns", Zen3Server) => measured(84.0, 116.0, "[c2c] EPYC 7R13 across CCX"),
        ("cacheline.same_package_ns", Zen4Server) => measured(97.0, 104.0, "[c2c#132] EPYC 9274F to another CCD"),
        ("cacheline.same_package_ns", Zen4Desktop) => measured(67.7, 79.5, "[c2c] [at7950] 7950X across CCDs"),
        ("cacheline.same_package_ns", Kunpeng920) => measured(72.0, 88.0, "[c2c] Kunpeng 920-6426 across dies"),
        ("cacheline.same_package_ns", SkylakeSp | DsuPhone) => derived(v, 1.0, 1.0, "one LLC per package: never used"),
        ("cacheline.other_package_ns", Zen3Server) => measured(182.0, 209.0, "[c2c] dual EPYC 7R13"),
        ("cacheline.other_package_ns", Zen4Server) => measured(188.0, 202.0, "[c2c#132] dual EPYC 9274F"),
        ("cacheline.other_package_ns", SkylakeSp) => measured(134.0, 146.0, "[c2c] dual Xeon 6242"),
        ("cacheline.other_package_ns", Kunpeng920) => estimate(v, 0.67, 1.67, "no measurement: the other die plus a Hydra hop"),
        ("cacheline.other_package_ns", Zen4Desktop | DsuPhone) => derived(v, 1.0, 1.0, "one package: never used"),
        ("cacheline.dram_ns", Zen4Desktop) => measured(60.0, 75.0, "AIDA64 at DDR5-6000 63.6 ns; JEDEC setups slower"),
        ("cacheline.dram_ns", Zen3Server) => derived(v, 0.8, 1.2, "[atrome] Rome 122 ns NPS1, carried to Milan's IO die (generic table: 100)"),
        ("cacheline.dram_ns", Zen4Server) => estimate(v, 0.85, 1.2, "Genoa(-X) slightly above Milan-X (Chips and Cheese)"),
        ("cacheline.dram_ns", SkylakeSp) => estimate(v, 0.85, 1.3, "6-channel DDR4 local DRAM"),
        ("cacheline.dram_ns", Kunpeng920) => estimate(v, 0.8, 1.4, "DDR4-2933 local DRAM"),
        ("cacheline.dram_ns", DsuPhone) => estimate(v, 0.75, 1.5, "LPDDR5 behind a system cache"),
        ("cache.l1d_kib" | "cache.l2_kib" | "cache.llc_kib", _) => declared(v, "vendor product documentation"),
        ("cache.llc_flush_after_idle_us", _) => knob(v, "a what-if, off: the LLC is flushed only by the package state"),
        ("miss_parallelism", _) => estimate(v, 0.5, 1.5, "demand misses in flight: Zen 2/3 guides give 22-24 L1D misses, dependent streams fewer; also the overlap of a pass of runqueue reads (wakeup scans, balance statistics: CostTable::read_pass_ns), where the reorder buffer may bound it lower"),
        ("rfo_parallelism", _) => Provenance::new(Kind::Estimate, 1.0, 4.0, "ownership transfers in flight: stores commit in order; no published depth"),
        ("smt_slowdown", _) => Provenance::new(Kind::Estimate, 1.0, 1.6, "SMT contention is workload-dependent: off (1) by default, 1.6 a heavy pair"),
        ("context_switch_ns", _) => derived(v, 0.5, 1.5, "[ctxsw] 1,070 ns thread switch less its system calls, wakeup and pick (estimated shares)"),
        ("ipi_send_ns", _) => estimate(v, 0.33, 2.0, "an ICR write / SGI plus smp_call_function queueing"),
        ("ipi_receive_ns", _) => estimate(v, 0.5, 2.0, "interrupt entry, handler and exit (IPI round trips of 1-3 us are the usual range)"),
        ("migration_ns", _) => estimate(v, 0.5, 2.0, "detach/attach code only: the lines it pulls are priced at their distance (sched/locks.rs)"),
        ("fork_ns", _) => estimate(v, 0.5, 2.0, "fork+exit of a small process (lmbench lat_proc class)"),
        ("kernel.syscall_entry_ns" | "kernel.syscall_exit_ns", _) => estimate(v, 0.5, 3.0, "~200 cycles each with mitigations (getpid round trips 70-100 ns at 4-5 GHz)"),
        ("kernel.ttwu_ns", _) => estimate(v, 0.5, 2.0, "pipe_write's wake-up path: ~1,500 cycles"),
        ("kernel.schedule_ns", _) => estimate(v, 0.5, 2.0, "pipe_read's wait and __schedule() to the switch: ~1,000 cycles"),
        ("kernel.mm_switch_ns", _) => derived(v, 0.5, 1.5, "[ctxsw] process switch 2,410 ns minus thread switch 1,070 ns"),
        ("kernel.irq_entry_ns" | "kernel.irq_exit_ns", _) => estimate(v, 0.5, 2.0, "interrupt entry/exit with mitigations, ~900 cycles"),
        ("kernel.ipi_delivery_ns", _) => estimate(v, 0.4, 3.0, "from the ICR/SGI write to the target taking the interrupt"),
        ("kernel.idle_entry_ns", _) => estimate(v, 0.5, 2.0, "tick_nohz_idle_enter, governor selection, state entry"),
        ("kernel.pm_timer_read_ns", _) => estimate(v, 0.5, 3.0, "legacy port I/O to the chipset, ~1 us"),
        ("kernel.tick_irq_jitter_ns", _) => estimate(v, 0.2, 5.0, "local timer interrupt delivery and entry vary by about the entry itself"),
        ("kernel.ttwu_lines", _) => Provenance::new(Kind::Derived, 2.0, 4.0, "the wakee's task_struct lines: pi_lock, __state/on_cpu, the entity (the rq lock is modeled)"),
        ("kernel.ttwu_activate_ns", _) => estimate(v, 0.67, 1.5, "ttwu_do_activate() under the target's lock: ~600 of ttwu's ~1,500 cycles"),
        ("kernel.ttwu_rq_lines", _) => Provenance::new(Kind::Derived, 2.0, 4.0, "the target cfs_rq's counts/tree line and its cacheline-aligned sched_avg (sched.h)"),
        ("kernel.wake_data_lines", _) => Provenance::new(Kind::Estimate, 1.0, 4.0, "a pipe's or futex's wait queue head and data"),
        (
            "kernel.hrtimer_start_ns" | "kernel.hrtimer_cancel_ns" | "kernel.mod_timer_ns" | "kernel.del_timer_ns"
            | "kernel.nohz_target_per_cpu_ns" | "kernel.timer_base_switch_ns" | "kernel.timer_expire_ns"
            | "kernel.tmigr_level_ns",
            _,
        ) => estimate(v, 0.5, 2.0, "cycle counts of the timer paths (timer.c, hrtimer.c, timer_migration.c): estimates"),
        ("tlb.dsb_sync_override_ns", DsuPhone) => measured(200.0, 500.0, "Dev Jain, c320dbb7c80d: ~0.35 us per elided TLBI + DSB on a client arm64 SoC"),
        ("tlb.dsb_sync_override_ns", Kunpeng920) => Provenance::new(Kind::Estimate, 0.0, 3000.0, "no server measurement: the DSB wait grows with the inner-shareable domain (MAD24-316); 0 = the DVM model's own"),
        ("tlb.dsb_sync_override_ns", _) => knob(v, "x86: unused (the DVM model is arm64's)"),
        ("tlb.invlpg_cycles", _) => Provenance::new(Kind::Measured, 200.0, 250.0, "[ingo15] INVLPG ~200-250 cycles"),
        ("tlb.dvm_msgs_per_op", _) => declared(v, "[chi] AMBA CHI: a DVMOp is two snoop messages"),
        ("tlb.walk_levels", _) => declared(v, "4-level page tables"),
        ("tlb.walkers" | "tlb.refill_entries", _) => Provenance::new(Kind::Declared, v, v, "[intel-om] page-miss handlers and L1 DTLB entries"),
        ("tlb.dvm_external", _) => Provenance::new(Kind::Estimate, 0.0, 2.0, "DVM participants outside the clusters (SMMU TBUs)"),
        (k, _) if k.starts_with("tlb.") => estimate(v, 0.5, 2.0, "the DVM protocol's steps in cycles/ns: estimates (no published TLBI + DSB breakdown)"),
        _ => return None,
    };
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::presets::{preset, PRESET_NAMES};

    /// Every leaf of every preset's cost table has a source, a kind and a band holding
    /// its value.
    #[test]
    fn every_preset_constant_has_source_kind_and_band() {
        for name in PRESET_NAMES {
            let m = preset(name).unwrap();
            let doc = serde_json::to_value(&m.cost).unwrap();
            let mut leaves = Vec::new();
            flatten("", &doc, &mut leaves);
            let family = CostFamily::of(&m);
            for (key, value) in leaves {
                let p = source(family, &key, value).unwrap_or_else(|| panic!("{name}: {key} has no source"));
                assert!(!p.source.is_empty(), "{name}: {key}");
                assert!(p.low <= value + 1e-9 && value <= p.high + 1e-9, "{name}: {key} = {value} outside [{}, {}]", p.low, p.high);
            }
        }
    }
}
