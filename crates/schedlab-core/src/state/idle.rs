//! Which cores and packages are powered down: the hardware behind cpuidle's choices.
//!
//! Model: see `sched::idle`, the behaviour over this state.

use crate::time::Ns;

/// The hardware behind the per-CPU cpuidle devices: which cores and packages are
/// powered down (or will be, unless woken first), and the ACPI PM timer's port.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdleHardware {
    /// Per core: when it powers down (every thread idle in a power-down state, the
    /// flush delay run out), while no thread wakes.
    pub(crate) core_down_at: Vec<Option<Ns>>,
    /// Per core: its socket.
    pub(crate) core_socket: Vec<usize>,
    /// Per socket: its cores, and how many have a power-down time.
    pub(crate) socket_cores: Vec<usize>,
    pub(crate) socket_down: Vec<usize>,
    /// Per socket: when its package state flushes the LLCs, while every core stays down.
    pub(crate) package_down_at: Vec<Option<Ns>>,
    /// Per socket: package-state residencies ended in the measured window, and their
    /// time in it (a residency under way at the warm-up's end counts from there).
    pub(crate) package_entries: Vec<u64>,
    pub(crate) package_time_ns: Vec<Ns>,
    /// When the ACPI PM timer's I/O port is free again (reads are serialized).
    pub(crate) pm_timer_free_at: Ns,
}

impl IdleHardware {
    /// The hardware state of `machine`, every core awake.
    pub(crate) fn new(machine: &crate::topology::Machine) -> IdleHardware {
        let core_socket: Vec<usize> = machine.core_cpus.iter().map(|c| c.first().map_or(0, |&cpu| machine.cpus[cpu].socket)).collect();
        let mut socket_cores = vec![0; machine.nr_sockets()];
        for &s in &core_socket {
            socket_cores[s] += 1;
        }
        IdleHardware {
            core_down_at: vec![None; core_socket.len()],
            socket_down: vec![0; socket_cores.len()],
            package_down_at: vec![None; socket_cores.len()],
            package_entries: vec![0; socket_cores.len()],
            package_time_ns: vec![0; socket_cores.len()],
            core_socket,
            socket_cores,
            pm_timer_free_at: 0,
        }
    }
}

impl IdleHardware {
    /// Socket `socket`'s package was in its state from `entered` until `left`: one
    /// residency, its time counted from `from` (the measured window's start).
    pub(crate) fn package_left(&mut self, socket: usize, entered: Ns, left: Ns, from: Ns) {
        if entered > left {
            return; // a package state due later never happened
        }
        self.package_entries[socket] += 1;
        self.package_time_ns[socket] += left.saturating_sub(entered.max(from));
    }
}

/// What tick_nohz_next_event() found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NextEvent {
    /// The tick may stop and the CPU must wake at this time (KTIME_MAX: never);
    /// None: an event is due within a tick, so the tick keeps running.
    pub expires: Option<Ns>,
    /// Time of the last jiffies update (basemono).
    pub basemono: Ns,
}
