//! cpuidle state tables of the preset machines, every figure with its source.
//!
//! Mirrors: what /sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,latency,residency}
//! shows on each machine: intel_idle's tables, acpi_idle's _CST states on AMD, and the
//! device-tree idle states (arm,idle-state) that cpuidle-psci registers on Arm, where
//! dt_idle_states.c makes exit_latency = entry-latency-us + exit-latency-us and
//! target_residency = min-residency-us.
//! Model: one table per core type (big.LITTLE clusters differ). State 0 is the
//! shallowest (WFI, or C1 via MWAIT on x86). Flags say what a state does to the core:
//! whether it polls its flags (MWAIT), loses L1/L2, leaves the coherency domain.

use crate::cpuidle::{IdleDriver, IdleState};
use crate::topology::Arch;

const US: u64 = 1000;

fn state(name: &str, exit_us: u64, residency_us: u64) -> IdleState {
    IdleState {
        name: name.to_string(),
        exit_latency_ns: exit_us * US,
        wake_ns: None,
        target_residency_ns: residency_us * US,
        polling: false,
        watches_flags: false,
        loses_private_caches: false,
        leaves_coherency: false,
        power_mw: 0.0,
    }
}

/// The x86 POLL state every cpuidle driver registers first (drivers/cpuidle/poll_state.c:
/// exit latency 0, target residency 0, CPUIDLE_FLAG_POLLING).
fn poll() -> IdleState {
    let mut s = state("POLL", 0, 0);
    s.polling = true;
    s.watches_flags = true;
    s
}

/// Returns the idle driver of core type `core_type` on machine `machine`.
pub fn idle_driver(machine: &str, core_type: &str, arch: Arch) -> IdleDriver {
    if machine == "pixel6" {
        return gs101(core_type);
    }
    if core_type == "skylake-sp" {
        // drivers/idle/intel_idle.c skx_cstates (Skylake-SP / Cascade Lake): C1
        // MWAIT 0x00 exit 2 / residency 2 us, C1E MWAIT 0x01 10 / 20 us, C6 MWAIT 0x20
        // 133 / 600 us with CPUIDLE_FLAG_TLB_FLUSHED; MWAIT states poll their flags.
        let mut c1 = state("C1", 2, 2);
        c1.watches_flags = true;
        let mut c1e = state("C1E", 10, 20);
        c1e.watches_flags = true;
        let mut c6 = state("C6", 133, 600);
        c6.watches_flags = true;
        c6.loses_private_caches = true;
        return IdleDriver { name: "intel_idle".into(), states: vec![poll(), c1, c1e, c6], source: "intel_idle.c skx_cstates".into() };
    }
    if matches!(machine, "milan-72" | "zen3-2s" | "bergamo" | "epyc-9654-2s") {
        return amd_epyc_acpi_idle();
    }
    if machine == "snapdragon-888" {
        return sm8350(core_type);
    }
    match arch {
        // Provisional (no source found): Ryzen desktops, Kunpeng's firmware LPI states,
        // synthetic machines.
        Arch::X86_64 => {
            let mut c1 = state("C1", 1, 2);
            c1.watches_flags = true;
            let mut c6 = state("C6", 100, 400);
            c6.loses_private_caches = true;
            IdleDriver { name: "provisional".into(), states: vec![poll(), c1, c6], source: format!("provisional table for {core_type}") }
        }
        Arch::Arm64 => {
            let wfi = state("WFI", 1, 1);
            let mut off = state("cpu-sleep", 200, 2000);
            off.loses_private_caches = true;
            off.leaves_coherency = true;
            IdleDriver { name: "provisional".into(), states: vec![wfi, off], source: format!("provisional table for {core_type}") }
        }
    }
}

/// Google Tensor GS101 (Pixel 6): WFI plus one CPU power-down state per cluster,
/// mainline arch/arm64/boot/dts/exynos/google/gs101.dtsi idle-states: "c2" with
/// (entry, exit, min-residency) us = ANANKE (A55) 70/160/2000, ENYO (A76)
/// 150/190/2500, HERA (X1) 235/220/3500; exit_latency = entry + exit
/// (dt_idle_states.c). psci-suspend-param 0x0010000: a power-down state (the core's
/// caches are lost and it leaves coherency).
fn gs101(core_type: &str) -> IdleDriver {
    let (entry, exit, res) = match core_type {
        "cortex-a55" => (70, 160, 2000),
        "cortex-a76" => (150, 190, 2500),
        _ => (235, 220, 3500),
    };
    let mut c2 = state("c2", entry + exit, res);
    c2.loses_private_caches = true;
    c2.leaves_coherency = true;
    IdleDriver {
        name: "psci_idle".into(),
        // [psci_wfi] WFI: exit latency 1 us, target residency 1 us (cpuidle-psci.c).
        states: vec![state("WFI", 1, 1), c2],
        source: "gs101.dtsi idle-states".into(),
    }
}

/// AMD EPYC servers (Zen 2 to Zen 4): acpi_idle from the firmware's _CST, as
/// drivers/acpi/processor_idle.c registers it: POLL, then C1 (FFH: MWAIT, so it watches
/// its flags) and C2 (I/O-port entry, the core's CC6: L1/L2 written back), with
/// target_residency = latency x latency_factor (2). C2's latency: 400 us, the wake-up
/// latency FreeBSD review D47444 reports for the halt and I/O-port idle entries on an
/// EPYC 7502P ("roughly 400us"); the one figure found, used both as the advertised
/// latency and as the wake time (`cpuidle.C2.wake_us` overrides the latter). C1's 1 us
/// is the usual _CST figure for an MWAIT C1; no vendor table was found for it
/// (assumption).
fn amd_epyc_acpi_idle() -> IdleDriver {
    let mut c1 = state("C1", 1, 2);
    c1.watches_flags = true;
    let mut c2 = state("C2", 400, 800);
    c2.loses_private_caches = true;
    IdleDriver { name: "acpi_idle".into(), states: vec![poll(), c1, c2], source: "_CST via processor_idle.c (C2 latency: EPYC 7502P)".into() }
}

/// Snapdragon 888 (SM8350): mainline arch/arm64/boot/dts/qcom/sm8350.dtsi idle-states,
/// (entry, exit, min-residency) us = LITTLE_CPU_SLEEP_0 (A55) 360/531/3934 and
/// BIG_CPU_SLEEP_0 (A78, X1) 702/1061/4488, both rail power collapse; exit_latency =
/// entry + exit (dt_idle_states.c). The cluster's domain idle states (PSCI OS-initiated,
/// entered when the whole cluster is idle) are not modeled.
fn sm8350(core_type: &str) -> IdleDriver {
    let (entry, exit, res) = if core_type == "cortex-a55" { (360, 531, 3934) } else { (702, 1061, 4488) };
    let mut off = state("rail-power-collapse", entry + exit, res);
    off.loses_private_caches = true;
    off.leaves_coherency = true;
    IdleDriver { name: "psci_idle".into(), states: vec![state("WFI", 1, 1), off], source: "sm8350.dtsi idle-states".into() }
}
