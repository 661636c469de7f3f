//! Which idle state a core (and a package) is really in, from what its threads request.
//!
//! Mirrors: the hardware, not the kernel. The kernel requests a state per CPU (thread);
//! the core resolves the requests. Intel datasheets (e.g. Core i7-4820K, section 4.2.4):
//! "a core C-state is determined by the lowest numerical thread state"; if any thread is
//! in C0 the core is in C0. AMD: CC6 power-gates the whole core, so the same rule
//! follows (no PPR quote was found: an inference). The AMD PPR (as reproduced in
//! cocafe/vcache-tray `src/msr.c`): "after a core enters CC1, a programmable timer
//! starts; if the core does not go back to C0 by the time the timer expires, the L2
//! cache is flushed and the core enters CC6 ... When all of the cores of a socket are
//! in CC6, then the L3s are flushed" (PC6).
//! Model: pure functions over the threads' (requested state, entry time) pairs at one
//! instant: the core's state and since when, the state a waking thread really leaves
//! (what its wake costs), and when the core loses its private caches.

use super::{IdleDriver, IdlePhase};
use crate::time::Ns;

/// The core of some threads at one instant: the shallowest state they request and
/// when the last of them went idle, or None while any thread is awake (C0) or still
/// finishing the handler before its entry.
pub fn core_state(threads: impl IntoIterator<Item = IdlePhase>, at: Ns) -> Option<(usize, Ns)> {
    let mut core: Option<(usize, Ns)> = None;
    for phase in threads {
        match phase {
            IdlePhase::In { state, entered } if entered <= at => {
                core = Some(match core {
                    None => (state, entered),
                    Some((s, since)) => (s.min(state), since.max(entered)),
                });
            }
            _ => return None,
        }
    }
    core
}

/// The state a thread that requested `own` really leaves when woken at `at`, given its
/// core (from [`core_state`], the thread itself included): while a sibling runs the
/// core is in C0 and the thread only halted; a power-down state is reached only after
/// the driver's flush delay (AMD's CFOH timer; the core sits in CC1 until then).
pub fn effective_state(drv: &IdleDriver, own: usize, core: Option<(usize, Ns)>, at: Ns) -> usize {
    let halt = drv.halt_state();
    match core {
        None => own.min(halt),
        Some((s, since)) if drv.states[s].loses_private_caches && at < since.saturating_add(drv.core_flush_delay_ns) => s.min(halt),
        Some((s, _)) => s,
    }
}

/// When the core of a fully idle core state `core` loses its private caches, if its
/// state powers it down and no thread wakes first.
pub fn power_down_at(drv: &IdleDriver, core: Option<(usize, Ns)>) -> Option<Ns> {
    let (s, since) = core?;
    drv.states[s].loses_private_caches.then(|| since.saturating_add(drv.core_flush_delay_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::test_driver;

    fn amd_like() -> IdleDriver {
        let mut d = test_driver();
        d.core_flush_delay_ns = 50_000;
        d
    }

    #[test]
    fn a_running_sibling_keeps_the_core_awake() {
        let drv = test_driver();
        // Thread 0 asked for C6 at t=0; its sibling runs.
        let core = core_state([IdlePhase::In { state: 2, entered: 0 }, IdlePhase::Awake], 10_000);
        assert_eq!(core, None);
        assert_eq!(effective_state(&drv, 2, core, 10_000), drv.halt_state());
        assert_eq!(power_down_at(&drv, core), None);
        // A sibling still in the handler before its own entry is awake too.
        let core = core_state([IdlePhase::In { state: 2, entered: 0 }, IdlePhase::In { state: 2, entered: 20_000 }], 10_000);
        assert_eq!(core, None);
    }

    #[test]
    fn the_core_takes_the_shallowest_request_from_the_last_entry() {
        let drv = test_driver();
        let core = core_state([IdlePhase::In { state: 2, entered: 0 }, IdlePhase::In { state: 1, entered: 5_000 }], 10_000);
        assert_eq!(core, Some((1, 5_000)));
        // C1E keeps the caches: the thread that asked for C6 wakes from C1E.
        assert_eq!(effective_state(&drv, 2, core, 10_000), 1);
        assert_eq!(power_down_at(&drv, core), None);
        let both_deep = core_state([IdlePhase::In { state: 2, entered: 0 }, IdlePhase::In { state: 2, entered: 5_000 }], 10_000);
        assert_eq!(effective_state(&drv, 2, both_deep, 10_000), 2);
        assert_eq!(power_down_at(&drv, both_deep), Some(5_000));
    }

    #[test]
    fn amd_cores_flush_only_after_the_cfoh_timer() {
        let drv = amd_like();
        let core = core_state([IdlePhase::In { state: 2, entered: 0 }, IdlePhase::In { state: 2, entered: 10_000 }], 20_000);
        // In CC1 until 10 us + 50 us: a wake before pays the halt state and keeps L2.
        assert_eq!(effective_state(&drv, 2, core, 59_999), drv.halt_state());
        assert_eq!(effective_state(&drv, 2, core, 60_000), 2);
        assert_eq!(power_down_at(&drv, core), Some(60_000));
    }
}
