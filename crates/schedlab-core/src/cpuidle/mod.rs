//! cpuidle: the idle states a CPU can enter and the governor that picks one.
//!
//! Mirrors: drivers/cpuidle/cpuidle.c (cpuidle_enter_state(): residency, usage,
//! above/below accounting), include/linux/cpuidle.h (struct cpuidle_state: exit
//! latency, target residency, CPUIDLE_FLAG_POLLING / TLB_FLUSHED), the drivers that
//! fill the tables (intel_idle, acpi_idle, psci/dt_idle_states), and the governors
//! (`menu`, `teo`).
//! Model: each CPU has a device with the states of its core type (big.LITTLE clusters
//! differ), its governor's memory and the sysfs counters (usage, time, above, below).
//! A state carries two kinds of figure: the *declared* exit latency and target
//! residency (what firmware tells the kernel; the governors choose by them) and the
//! *measured* wake time (what the silicon takes; a wakeup pays it). Which state a CPU
//! is really in is decided per core (`core_state`): the shallowest state its threads
//! request, so a thread whose SMT sibling runs wakes at halt cost; a core powers down
//! (losing its private caches) only once every thread sleeps deep, and on AMD only
//! after the cache-flush-on-halt timer; a package state (PC6) follows when every core
//! of the socket is down.

pub mod core_state;
pub mod guest_halt;
pub mod menu;
pub mod teo;

use serde::Serialize;

use crate::provenance::Provenance;
use crate::time::Ns;

/// One idle state (struct cpuidle_state), as the driver reports it, with the time the
/// hardware really takes to leave it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdleState {
    /// Name as in /sys/devices/system/cpu/cpuN/cpuidle/stateK/name.
    pub name: String,
    /// Declared worst-case time from the wakeup event to the CPU running again, ns
    /// (exit_latency_ns; DT states: entry + exit latency). The governors choose by it
    /// and menu deducts it from the measured residency; no wakeup pays it.
    pub exit_latency_ns: Ns,
    /// Declared minimum idle time for the state to pay off, ns (target_residency_ns).
    pub target_residency_ns: Ns,
    /// Where the declared pair comes from, with the band other firmware declares.
    pub declared: Provenance,
    /// The time the hardware takes to resume from the state once its core is really in
    /// it, ns: what a wakeup pays.
    pub wake_ns: Ns,
    /// Where the wake time comes from and how sure it is (band in ns).
    pub wake: Provenance,
    /// CPUIDLE_FLAG_POLLING: the state is the poll_idle() busy loop (x86 state 0,
    /// "POLL"), which the governors treat specially.
    pub polling: bool,
    /// TIF_POLLING_NRFLAG is set while in the state (POLL, and MWAIT states on x86): a
    /// remote resched writes the monitored flag and needs no IPI
    /// (set_nr_and_not_polling()).
    pub watches_flags: bool,
    /// Once the whole core is in the state, it is powered down: its L1/L2 contents are
    /// written back and lost.
    pub loses_private_caches: bool,
    /// Once the whole core is in the state, it leaves the coherency/DVM domain (arm64
    /// broadcast TLBI need not wait for it).
    pub leaves_coherency: bool,
    /// Entered by an I/O-port read (acpi_idle's ACPI_CSTATE_SYSTEMIO), after which
    /// kernels before 6.0 did the "dummy wait" read of the ACPI PM timer.
    pub io_port_entry: bool,
    /// Power drawn by one core in this state, mW (0 where unknown).
    pub power_mw: f64,
}

impl IdleState {
    /// How long a wakeup from this state takes on the hardware.
    #[inline]
    pub fn wake_latency_ns(&self) -> Ns {
        self.wake_ns
    }
}

/// What the hardware does with a whole package once every core of it is powered down.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PackageIdle {
    /// The package state's name ("PC6").
    pub name: String,
    /// Entering it flushes every last-level cache of the package.
    pub flushes_llc: bool,
    /// The source of the rule.
    pub source: String,
}

/// The states of one core type, shallowest first (state 0 is WFI/C1/POLL), and what the
/// core and package do with them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdleDriver {
    /// Driver name ("intel_idle", "acpi_idle", "psci_idle").
    pub name: String,
    /// States, shallowest first.
    pub states: Vec<IdleState>,
    /// Where the figures come from.
    pub source: String,
    /// Time a core whose threads all requested a power-down state stays halted with its
    /// caches (AMD CC1) before it flushes them and powers down (the cache-flush-on-halt
    /// timer, CFOH), ns; 0 where the core powers down at once (Intel core C6).
    pub core_flush_delay_ns: Ns,
    /// Where that delay comes from.
    pub core_flush_delay: Provenance,
    /// The package state entered once every core of the socket is powered down, if the
    /// model has one for this machine.
    pub package: Option<PackageIdle>,
    /// In a virtual machine, what the hypervisor adds to a wake from the halt state by
    /// how long the CPU was halted (`guest_halt.rs`); None on bare metal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest_halt: Option<guest_halt::GuestHalt>,
}

impl IdleDriver {
    /// The shallowest state that halts the thread (C1, WFI): what a thread sits in
    /// while its core cannot go deeper (a sibling runs, or the flush timer runs).
    pub fn halt_state(&self) -> usize {
        self.states.iter().position(|s| !s.polling).unwrap_or(0)
    }
}

/// Which governor picks the state (the cpuidle.governor= boot option).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GovernorKind {
    /// drivers/cpuidle/governors/menu.c.
    Menu,
    /// drivers/cpuidle/governors/teo.c.
    Teo,
}

impl GovernorKind {
    /// Parses a governor name.
    pub fn parse(name: &str) -> Result<GovernorKind, String> {
        match name {
            "menu" => Ok(GovernorKind::Menu),
            "teo" => Ok(GovernorKind::Teo),
            other => Err(format!("unknown cpuidle governor '{other}': expected \"menu\" or \"teo\"")),
        }
    }
}

/// What the governor is told when it picks a state.
#[derive(Clone, Copy, Debug)]
pub struct SelectInput {
    /// Time to the next timer event the CPU must wake for (tick_nohz_get_sleep_length),
    /// ns; Ns::MAX if none.
    pub sleep_length_ns: Ns,
    /// Time to the next tick if it keeps running (delta_next), ns.
    pub delta_tick_ns: Ns,
    /// The tick is already stopped (tick_nohz_tick_stopped()).
    pub tick_stopped: bool,
    /// Tick period, ns (TICK_NSEC).
    pub tick_nsec: Ns,
    /// PM QoS resume latency limit, ns (Ns::MAX = none).
    pub latency_req_ns: Ns,
    /// Deepest state the user allows (cpuidle state disable / max_cstate).
    pub max_state: usize,
    /// When the selection happens.
    pub now: Ns,
    /// The CPU's utilization is above its capacity >> 6 (teo's "utilized").
    pub utilized: bool,
}

/// The governor's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// State index.
    pub state: usize,
    /// Whether to stop the tick.
    pub stop_tick: bool,
}

/// A governor's per-CPU memory.
#[derive(Clone, Debug)]
pub enum Governor {
    /// menu.
    Menu(menu::MenuDevice),
    /// teo.
    Teo(teo::TeoCpu),
}

/// Per-state counters as sysfs shows them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StateUsage {
    /// State name.
    pub name: String,
    /// Times entered (usage).
    pub usage: u64,
    /// Time spent in the state, ns (time, in us in sysfs).
    pub time_ns: Ns,
    /// Entries whose idle period was shorter than the target residency (above).
    pub above: u64,
    /// Entries where a deeper state would have fit the idle period (below).
    pub below: u64,
    /// Energy spent in the state, nJ (power × time).
    pub energy_nj: f64,
}

/// Where a CPU is in its idle loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdlePhase {
    /// Running a task, or the idle task handling an interrupt / polling.
    Awake,
    /// In an idle state since `entered` (may lie in the future: the CPU finishes an
    /// interrupt handler first and cannot be woken before).
    In {
        /// State index.
        state: usize,
        /// When the state was entered.
        entered: Ns,
    },
}

/// One CPU's cpuidle device: the governor's memory and the counters.
#[derive(Clone, Debug)]
pub struct CpuIdleDevice {
    /// Index of the driver (core type) in the machine's list.
    pub driver: usize,
    /// Current phase.
    pub phase: IdlePhase,
    /// Governor memory.
    pub governor: Governor,
    /// Counters per state.
    pub usage: Vec<StateUsage>,
    /// The last idle period was ended by the tick (tick_nohz_idle_got_tick()).
    pub tick_wakeup: bool,
    tick_nsec: Ns,
}

/// A device with no idle state, as a runqueue holds it before the build gives its CPU
/// the device of its core type's driver (`CpuIdleDevice::new`).
impl Default for CpuIdleDevice {
    fn default() -> Self {
        CpuIdleDevice {
            driver: 0,
            phase: IdlePhase::Awake,
            governor: Governor::Menu(menu::MenuDevice::default()),
            usage: Vec::new(),
            tick_wakeup: false,
            tick_nsec: Ns::MAX,
        }
    }
}

impl CpuIdleDevice {
    /// Creates the device of a CPU whose core type uses `driver`.
    pub fn new(driver_index: usize, driver: &IdleDriver, kind: GovernorKind) -> Self {
        CpuIdleDevice {
            driver: driver_index,
            phase: IdlePhase::Awake,
            governor: match kind {
                GovernorKind::Menu => Governor::Menu(menu::MenuDevice::default()),
                GovernorKind::Teo => Governor::Teo(teo::TeoCpu::new(driver.states.len())),
            },
            usage: driver.states.iter().map(|s| StateUsage { name: s.name.clone(), ..Default::default() }).collect(),
            tick_wakeup: false,
            tick_nsec: Ns::MAX,
        }
    }

    /// Asks the governor for a state (cpuidle_select).
    pub fn select(&mut self, drv: &IdleDriver, input: &SelectInput) -> Selection {
        self.tick_nsec = input.tick_nsec;
        let sel = match &mut self.governor {
            Governor::Menu(m) => m.select(drv, input),
            Governor::Teo(t) => t.select(drv, input),
        };
        debug_assert!(sel.state < drv.states.len());
        sel
    }

    /// Enters `state` at `entered` (cpuidle_enter_state's start).
    pub fn enter(&mut self, state: usize, entered: Ns) {
        self.phase = IdlePhase::In { state, entered };
    }

    /// Leaves the current state because something woke it at `wake`; the hardware took
    /// `wake_ns` to resume (the core's real state decides it, see [`core_state`], plus
    /// anything the driver does before interrupts are enabled again). Accounts the
    /// residency and lets the governor reflect (the end of cpuidle_enter_state).
    /// Returns the time the waker must wait, or the time left in a handler the CPU is
    /// still running.
    pub fn exit(&mut self, drv: &IdleDriver, wake: Ns, wake_ns: Ns, by_tick: bool) -> Ns {
        let IdlePhase::In { state, entered } = self.phase else { return 0 };
        self.phase = IdlePhase::Awake;
        if wake < entered {
            // Still in the interrupt handler that preceded this entry: no state to leave.
            return entered - wake;
        }
        let s = &drv.states[state];
        // last_residency_ns: from entry to the CPU running again, as the hardware took
        // it (the governors then deduct the declared exit latency).
        let residency = wake - entered + wake_ns;
        let u = &mut self.usage[state];
        u.usage += 1;
        u.time_ns += wake - entered;
        u.energy_nj += s.power_mw * (wake - entered) as f64 / 1000.0;
        if residency < s.target_residency_ns {
            u.above += 1;
        } else if let Some(deeper) = drv.states.get(state + 1) {
            if residency >= deeper.target_residency_ns + deeper.exit_latency_ns {
                u.below += 1;
            }
        }
        self.tick_wakeup = by_tick;
        match &mut self.governor {
            Governor::Menu(m) => m.reflect(drv, state, residency, by_tick),
            Governor::Teo(t) => t.reflect(drv, state, residency, by_tick, wake, self.tick_nsec),
        }
        wake_ns
    }

    /// The state requested and its entry time, if the CPU is in an idle state at `at`.
    pub fn requested_at(&self, at: Ns) -> Option<(usize, Ns)> {
        match self.phase {
            IdlePhase::In { state, entered } if entered <= at => Some((state, entered)),
            _ => None,
        }
    }

    /// The state the CPU is in at `now`, if any.
    pub fn state_at(&self, now: Ns) -> Option<usize> {
        match self.phase {
            IdlePhase::In { state, entered } if entered <= now => Some(state),
            _ => None,
        }
    }
}

#[cfg(test)]
pub(crate) fn test_driver() -> IdleDriver {
    use crate::provenance::Kind;
    // intel_idle's skx_cstates as declared; the wake times are the test's own (C6 wakes
    // in 30 us, well under its declared 133 us).
    let st = |name: &str, lat_us: u64, res_us: u64, wake_us: u64, polling: bool, off: bool| IdleState {
        name: name.into(),
        exit_latency_ns: lat_us * 1000,
        target_residency_ns: res_us * 1000,
        declared: Provenance::exact(Kind::Declared, lat_us as f64 * 1000.0, "test"),
        wake_ns: wake_us * 1000,
        wake: Provenance::exact(Kind::Estimate, wake_us as f64 * 1000.0, "test"),
        polling: false,
        watches_flags: polling,
        loses_private_caches: off,
        leaves_coherency: off,
        io_port_entry: false,
        power_mw: if off { 1.0 } else { 50.0 },
    };
    IdleDriver {
        name: "test".into(),
        states: vec![st("C1", 2, 2, 1, true, false), st("C1E", 10, 20, 4, false, false), st("C6", 133, 600, 30, false, true)],
        source: "intel_idle skx_cstates (test copy)".into(),
        core_flush_delay_ns: 0,
        core_flush_delay: Provenance::exact(Kind::Estimate, 0.0, "test"),
        package: None,
        guest_halt: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_accounts_residency_and_above_below() {
        let drv = test_driver();
        let mut d = CpuIdleDevice::new(0, &drv, GovernorKind::Menu);
        d.enter(2, 1000);
        assert_eq!(d.state_at(999), None);
        assert_eq!(d.state_at(1000), Some(2));
        // Woken after 100 us: shorter than C6's 600 us target residency ("above"); the
        // waker waits the wake time it is given, not the declared 133 us.
        assert_eq!(d.exit(&drv, 101_000, 30_000, false), 30_000);
        assert_eq!(d.usage[2].usage, 1);
        assert_eq!(d.usage[2].time_ns, 100_000);
        assert_eq!(d.usage[2].above, 1);
        // C1 for 5 ms: C1E would have fit ("below").
        d.enter(0, 200_000);
        d.exit(&drv, 5_200_000, 1000, false);
        assert_eq!(d.usage[0].below, 1);
        // A wake during the handler before an entry costs the handler's remaining time.
        d.enter(1, 10_000_000);
        assert_eq!(d.exit(&drv, 9_999_000, 4000, false), 1000);
        assert_eq!(d.usage[1].usage, 0);
    }
}
