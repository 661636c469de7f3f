//! cpuidle state tables of the preset machines: what firmware declares and what the
//! silicon takes, every figure with its source, kind and band.
//!
//! Mirrors: what /sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,latency,residency}
//! shows on each machine: intel_idle's tables, acpi_idle's _CST states on AMD, and the
//! device-tree idle states (arm,idle-state) that cpuidle-psci registers on Arm, where
//! dt_idle_states.c makes exit_latency = entry-latency-us + exit-latency-us and
//! target_residency = min-residency-us.
//! Model: one table per core type (big.LITTLE clusters differ). State 0 is the
//! shallowest (POLL, WFI or C1). The declared pair (exit latency, target residency) is
//! what the governors read; the wake time is what a wakeup pays: measured where a
//! measurement exists (never the declared bound then), declared where none does (the
//! phones: said so, with a band down to the firmware's measured part). Flags say what a
//! state does to the core once every thread of it is there.
//!
//! Sources, cited by key (the figures are gathered in the project's
//! docs/hardware-sources.md):
//! - \[poll\] drivers/cpuidle/poll_state.c: exit latency 0, target residency 0.
//! - \[skx\] drivers/idle/intel_idle.c `skx_cstates`: C1 2/2, C1E 10/20, C6 133/600 us.
//! - \[pepc\] intel/pepc `docs/misc-c1e-cpu-freq.md`: Sapphire Rapids C1 wakes in ~1 us,
//!   C1E in ~4 us (measured).
//! - \[wult-ivt\] intel/wult published results `ivt-c6-hfm-nic-vs-tdt`: Ivy Bridge-EP C6
//!   timer wake median 17.6, p99 36.1, p99.9 53.1, max 63.2 us (measured).
//! - \[skx-pc6\] kernel commit "intel_idle: Adjust the SKX C6 parameters if PC6 is
//!   disabled": SKX/CLX/CPX core C6 p99.99 92 / 96 / 89 us (measured with wult).
//! - \[d47444\] FreeBSD review D47444: an EPYC 7502P's _CST gives its I/O-port C2 a wake
//!   latency of "roughly 400us" (declared; other AMD firmware declares 18 to 800 us).
//! - \[cezanne\] coreboot `src/soc/amd/cezanne/acpi.c`: C2 latency 18 us (a Zen 3 APU's
//!   _CST); Xen logs of Ryzen desktops print "C2 18 uS" (declared).
//! - \[gvisor\] google/gvisor PR #14526, `runsc/cmd/sandboxsetup/cpu_dma_latency_amd64.go`:
//!   "AMD EPYC's deepest state measures ~5-15us. Advertised sysfs exit latencies do not
//!   distinguish them; only measurement does" (a futex wake-to-run probe: measured,
//!   software included, no tail given).
//! - \[amd-ppr\] AMD PPR wording via cocafe/vcache-tray `src/msr.c`: CC1 keeps L2; the
//!   cache-flush-on-halt (CFOH) timer then flushes L2 and enters CC6; PC6 (every core of
//!   the socket in CC6) flushes the L3s. MSR C001_0294 CFOH_TMRLEN: no firmware default
//!   published.
//! - \[gs101\] mainline arch/arm64/boot/dts/exynos/google/gs101.dtsi idle-states.
//! - \[sm8350\] mainline arch/arm64/boot/dts/qcom/sm8350.dtsi idle-states.
//! - \[psci_wfi\] drivers/cpuidle/cpuidle-psci.c: WFI exit latency 1 us, residency 1 us.
//! - \[juno\] TF-A `docs/perf/psci-performance-juno.rst`: the firmware part of a core
//!   power-down exit takes 13-15 us on Juno (measured; hardware power-up excluded).

use crate::cpuidle::{IdleDriver, IdleState, PackageIdle};
use crate::provenance::{Kind, Provenance};
use crate::topology::Arch;

const US: u64 = 1000;

/// A state with declared exit latency / target residency (us) and a wake time (us).
fn state(name: &str, exit_us: u64, residency_us: u64, declared: Provenance, wake_us: f64, wake: Provenance) -> IdleState {
    IdleState {
        name: name.to_string(),
        exit_latency_ns: exit_us * US,
        target_residency_ns: residency_us * US,
        declared,
        wake_ns: (wake_us * 1000.0).round() as u64,
        wake,
        polling: false,
        watches_flags: false,
        loses_private_caches: false,
        leaves_coherency: false,
        io_port_entry: false,
        power_mw: 0.0,
    }
}

/// A band in us turned into ns.
fn ns_band(kind: Kind, low_us: f64, high_us: f64, source: &'static str) -> Provenance {
    Provenance::new(kind, low_us * 1000.0, high_us * 1000.0, source)
}

/// An exact declared figure in us, as ns.
fn declared(us: u64, source: &'static str) -> Provenance {
    Provenance::exact(Kind::Declared, (us * US) as f64, source)
}

/// The x86 POLL state every cpuidle driver registers first: a busy loop that notices
/// the flag at once.
fn poll() -> IdleState {
    let mut s = state(
        "POLL",
        0,
        0,
        declared(0, "[poll] poll_state.c"),
        0.0,
        ns_band(Kind::Derived, 0.0, 0.1, "[poll] a busy loop on the thread's flags: it sees a resched within a few loads"),
    );
    s.polling = true;
    s.watches_flags = true;
    s
}

/// A core that powers down at once (Intel core C6, Arm core power-down): no flush delay.
fn no_flush_delay(source: &'static str) -> Provenance {
    Provenance::exact(Kind::Declared, 0.0, source)
}

/// The idle driver of a synthetic or host machine of `arch` (`topo()`, `Machine::from_cpus`):
/// the model rule for machines without a record of their own, whose generic cost tables
/// are a Zen 3 server's (x86) and Kunpeng 920's (arm64): acpi_idle as on EPYC for x86,
/// WFI and a provisional PSCI power-down for arm64.
pub fn generic_idle_driver(core_type: &str, arch: Arch) -> IdleDriver {
    match arch {
        Arch::X86_64 => amd_acpi_idle(AmdFirmware::Epyc),
        Arch::Arm64 => arm_server_provisional(core_type),
    }
}

/// Intel Skylake-SP / Cascade Lake: intel_idle `skx_cstates` (declared), wake times
/// from wult measurements.
pub fn skx_intel_idle() -> IdleDriver {
    // MWAIT states poll their flags.
    let mut c1 = state(
        "C1",
        2,
        2,
        declared(2, "[skx] skx_cstates"),
        1.0,
        ns_band(Kind::Measured, 0.5, 2.0, "[pepc] SPR C1 ~1 us (a newer Xeon of the same MWAIT C1; SKX not measured)"),
    );
    c1.watches_flags = true;
    let mut c1e = state(
        "C1E",
        10,
        20,
        declared(10, "[skx] skx_cstates"),
        4.0,
        ns_band(Kind::Measured, 2.0, 10.0, "[pepc] SPR C1E ~4 us (SKX not measured; band up to the declared 10 us)"),
    );
    c1e.watches_flags = true;
    let mut c6 = state(
        "C6",
        133,
        600,
        declared(133, "[skx] skx_cstates (itself a wult p99.99 with PC6)"),
        26.0,
        ns_band(
            Kind::Derived,
            17.6,
            92.0,
            "[wult-ivt] [skx-pc6] median derived by giving SKX's C6 Ivy Bridge-EP's distribution shape: \
             92 us (SKX p99.99) x 17.6/63.2 (IVB median/max); band from IVB's median to SKX's p99.99",
        ),
    );
    c6.watches_flags = true;
    c6.loses_private_caches = true;
    IdleDriver {
        name: "intel_idle".into(),
        states: vec![poll(), c1, c1e, c6],
        source: "intel_idle.c skx_cstates (declared); wult and pepc (wake)".into(),
        core_flush_delay_ns: 0,
        core_flush_delay: no_flush_delay("Intel core C6 writes L1/L2 back on entry (Xeon datasheets, core C6)"),
        package: Some(PackageIdle {
            name: "PC6".into(),
            flushes_llc: false,
            source: "no source says a Xeon Scalable LLC is lost in package C6 (client datasheets flush the L3 only \
                     on the way to package C7): kept"
                .into(),
        }),
        guest_halt: None,
    }
}

/// Which AMD firmware's _CST a preset has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AmdFirmware {
    /// EPYC servers: C2 declared ~400 us.
    Epyc,
    /// Ryzen desktops: C2 declared 18 us.
    RyzenDesktop,
}

/// AMD Zen 2 to Zen 4 through acpi_idle, as drivers/acpi/processor_idle.c registers the
/// firmware's _CST: POLL, then C1 (FFH: MWAIT, so it watches its flags) and C2 (an
/// I/O-port read entering the core's CC6), with target_residency = latency x
/// latency_factor (2).
pub fn amd_acpi_idle(fw: AmdFirmware) -> IdleDriver {
    let mut c1 = state(
        "C1",
        1,
        2,
        declared(1, "_CST FFH C1: the usual MWAIT C1 latency (no vendor table found: assumption)"),
        1.0,
        ns_band(Kind::Estimate, 0.5, 2.0, "no measurement of a Zen MWAIT C1 wake found; Intel's C1 ~1 us [pepc]"),
    );
    c1.watches_flags = true;
    let (c2_us, c2_declared) = match fw {
        AmdFirmware::Epyc => (400, ns_band(Kind::Declared, 18.0, 800.0, "[d47444] EPYC 7502P ~400 us; other firmware declares 18-800 us")),
        AmdFirmware::RyzenDesktop => (
            18,
            ns_band(Kind::Declared, 18.0, 350.0, "[cezanne] 18 us (the 7950X's own _CST not found; some Ryzen firmware declares a C3 of 350 us)"),
        ),
    };
    let mut c2 = state(
        "C2",
        c2_us,
        2 * c2_us,
        c2_declared,
        10.0,
        ns_band(Kind::Measured, 5.0, 15.0, "[gvisor] AMD EPYC deepest state ~5-15 us (a wake-to-run probe)"),
    );
    c2.loses_private_caches = true;
    c2.io_port_entry = true;
    let source = match fw {
        AmdFirmware::Epyc => "_CST via processor_idle.c (C2 declared as an EPYC 7502P's); wake measured on EPYC",
        AmdFirmware::RyzenDesktop => "_CST via processor_idle.c (C2 declared as a Zen 3 APU's); wake measured on EPYC",
    };
    IdleDriver {
        name: "acpi_idle".into(),
        states: vec![poll(), c1, c2],
        source: source.into(),
        core_flush_delay_ns: 50 * US,
        core_flush_delay: ns_band(
            Kind::Estimate,
            0.0,
            1000.0,
            "[amd-ppr] the CFOH timer exists (C001_0294 CFOH_TMRLEN) but no firmware default is published; \
             nonzero, or CC1 would flush L2 on every halt; an L2 write-back takes tens of us, the order a timer \
             would be set at",
        ),
        package: Some(PackageIdle {
            name: "PC6".into(),
            flushes_llc: true,
            source: "[amd-ppr] PC6: when all cores of a socket are in CC6, the L3s are flushed".into(),
        }),
        guest_halt: None,
    }
}

/// Kunpeng 920 and synthetic arm64 machines: WFI and one core power-down state with no
/// source for either figure of the latter (Kunpeng's firmware describes it by ACPI _LPI).
pub fn arm_server_provisional(core_type: &str) -> IdleDriver {
    let mut off = state(
        "cpu-sleep",
        200,
        2000,
        Provenance::new(Kind::Estimate, 50_000.0, 500_000.0, "no _LPI table found: estimate"),
        50.0,
        ns_band(Kind::Estimate, 15.0, 200.0, "no measurement: at least the firmware part [juno], at most the estimate declared"),
    );
    off.loses_private_caches = true;
    off.leaves_coherency = true;
    IdleDriver {
        name: "provisional".into(),
        states: vec![wfi(), off],
        source: format!("provisional table for {core_type} (no source found)"),
        core_flush_delay_ns: 0,
        core_flush_delay: no_flush_delay("PSCI core power-down: caches cleaned on entry"),
        package: None,
        guest_halt: None,
    }
}

/// The WFI state cpuidle-psci registers first.
fn wfi() -> IdleState {
    state(
        "WFI",
        1,
        1,
        declared(1, "[psci_wfi] cpuidle-psci.c"),
        1.0,
        ns_band(Kind::Declared, 0.1, 1.0, "[psci_wfi] declared 1 us; a clock-gated core resumes in well under that"),
    )
}

/// A device-tree power-down state: `entry`/`exit`/`residency` us as the DT gives them.
/// The wake pays the DT's exit part (declared only: no measurement of these SoCs), with a
/// band from the firmware part measured on Juno to the kernel's entry + exit.
fn dt_power_down(name: &str, entry: u64, exit: u64, residency: u64, source: &'static str) -> IdleState {
    let mut s = state(
        name,
        entry + exit,
        residency,
        declared(entry + exit, source),
        exit as f64,
        ns_band(Kind::Declared, 15.0, (entry + exit) as f64, source),
    );
    s.loses_private_caches = true;
    s.leaves_coherency = true;
    s
}

/// Google Tensor GS101 (Pixel 6): WFI plus the cluster's CPU power-down state "c2" at
/// (entry, exit, min-residency) us as the record gives them from [gs101];
/// psci-suspend-param 0x0010000: a power-down state (the core's caches are lost and it
/// leaves coherency).
pub fn gs101_psci_idle(entry: u64, exit: u64, res: u64) -> IdleDriver {
    IdleDriver {
        name: "psci_idle".into(),
        states: vec![wfi(), dt_power_down("c2", entry, exit, res, "[gs101] gs101.dtsi (declared only; wake = exit-latency-us)")],
        source: "gs101.dtsi idle-states (declared; no measurement)".into(),
        core_flush_delay_ns: 0,
        core_flush_delay: no_flush_delay("PSCI core power-down: caches cleaned on entry"),
        package: None,
        guest_halt: None,
    }
}

/// Snapdragon 888 (SM8350): WFI plus the cluster's rail power collapse at (entry, exit,
/// min-residency) us as the record gives them from [sm8350]. The cluster's domain idle
/// states (PSCI OS-initiated) are not modeled.
pub fn sm8350_psci_idle(entry: u64, exit: u64, res: u64) -> IdleDriver {
    IdleDriver {
        name: "psci_idle".into(),
        states: vec![wfi(), dt_power_down("rail-power-collapse", entry, exit, res, "[sm8350] sm8350.dtsi (declared only; wake = exit-latency-us)")],
        source: "sm8350.dtsi idle-states (declared; no measurement)".into(),
        core_flush_delay_ns: 0,
        core_flush_delay: no_flush_delay("PSCI core power-down: caches cleaned on entry"),
        package: None,
        guest_halt: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state of every preset family names its declared and wake sources, and the
    /// wake time it charges lies in its band.
    #[test]
    fn every_state_has_declared_and_wake_figures_with_sources() {
        // Every driver of every preset record, each core type's.
        let drivers: Vec<IdleDriver> =
            crate::topology::presets::PRESET_NAMES.iter().flat_map(|n| crate::topology::presets::preset(n).unwrap().idle_drivers).collect();
        for d in &drivers {
            assert!(d.core_flush_delay.contains(d.core_flush_delay_ns as f64), "{}", d.name);
            for s in &d.states {
                assert!(!s.declared.source.is_empty() && !s.wake.source.is_empty(), "{} {}", d.name, s.name);
                assert!(s.wake.contains(s.wake_ns as f64), "{} {}: wake {} outside {:?}", d.name, s.name, s.wake_ns, s.wake);
                assert!(s.declared.contains(s.exit_latency_ns as f64), "{} {}", d.name, s.name);
            }
        }
    }

    /// Where a measurement exists the wake is far below the firmware's bound: the AMD
    /// CC6 and Intel C6 wakes are measured, not the declared 400 / 133 us.
    #[test]
    fn measured_wakes_are_not_the_declared_bound() {
        let driver = |n: &str| crate::topology::presets::preset(n).unwrap().idle_drivers.remove(0);
        let epyc = driver("epyc-9654-2s");
        let c2 = &epyc.states[2];
        assert_eq!((c2.exit_latency_ns, c2.wake_ns, c2.wake.kind), (400_000, 10_000, Kind::Measured));
        let skx = driver("xeon-80");
        assert!(skx.states[3].wake_ns < skx.states[3].exit_latency_ns / 2);
    }
}
