//! The menu governor as 6.6-era kernels have it.
//!
//! Mirrors: drivers/cpuidle/governors/menu.c: menu_select(), menu_reflect()/
//! menu_update(), get_typical_interval(), which_bucket(), with RESOLUTION 1024,
//! DECAY 8, 8 remembered intervals, 6 sleep-length buckets (x2 for I/O waiters, none
//! here), RESIDENCY_THRESHOLD_NS 15 us and MAX_INTERESTING 50 ms.
//! Model: the prediction is min(sleep length x the bucket's correction factor, the
//! typical recent interval when the recent intervals agree); the deepest state whose
//! target residency fits the prediction and whose exit latency fits the latency limit
//! wins; the tick is kept when the prediction is under a tick.

use super::{IdleDriver, SelectInput, Selection};
use crate::time::{Ns, NSEC_PER_USEC};

const BUCKETS: usize = 12;
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
const MAX_INTERESTING: Ns = 50_000 * NSEC_PER_USEC;
const RESIDENCY_THRESHOLD_NS: Ns = 15 * NSEC_PER_USEC;

/// Per-CPU memory of the menu governor (struct menu_device).
#[derive(Clone, Debug)]
pub struct MenuDevice {
    needs_update: bool,
    tick_wakeup: bool,
    next_timer_ns: Ns,
    bucket: usize,
    correction_factor: [u64; BUCKETS],
    intervals: [u32; INTERVALS],
    interval_ptr: usize,
    last_state: usize,
    last_residency_ns: Ns,
    tick_nsec: Ns,
    /// The expected idle duration behind the last choice (predicted_ns).
    pub predicted_ns: Ns,
}

impl Default for MenuDevice {
    fn default() -> Self {
        // menu_enable_device(): every factor starts at unity (RESOLUTION * DECAY).
        MenuDevice {
            needs_update: false,
            tick_wakeup: false,
            next_timer_ns: 0,
            bucket: 0,
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            last_state: 0,
            last_residency_ns: 0,
            tick_nsec: Ns::MAX,
            predicted_ns: 0,
        }
    }
}

/// which_bucket(): decades of the sleep length from 10 us (no I/O waiters modeled).
fn which_bucket(duration_ns: Ns) -> usize {
    let us = NSEC_PER_USEC;
    [10 * us, 100 * us, 1000 * us, 10_000 * us, 100_000 * us].iter().take_while(|&&b| duration_ns >= b).count()
}

impl MenuDevice {
    /// get_typical_interval(): the average of the recent intervals when their spread is
    /// small, discarding upside outliers down to 3/4 of the samples; u32::MAX if none.
    fn typical_interval_us(&self) -> u64 {
        let mut thresh = u64::MAX;
        loop {
            // Which intervals pass the threshold is data, not a pattern: the sums count
            // each interval times "it passes" rather than branch on it.
            let (mut max, mut sum, mut n) = (0u64, 0u64, 0u64);
            for &v in &self.intervals {
                let (v, keep) = (v as u64, (v as u64 <= thresh) as u64);
                sum += v * keep;
                n += keep;
                max = max.max(v * keep);
            }
            if max == 0 {
                return u32::MAX as u64;
            }
            let avg = sum / n;
            let variance = self
                .intervals
                .iter()
                .map(|&v| {
                    let (v, keep) = (v as u64, (v as u64 <= thresh) as u64);
                    let d = v as i64 - avg as i64;
                    d.wrapping_mul(d) as u64 * keep
                })
                .sum::<u64>()
                / n;
            if variance <= u64::MAX / 36 && ((avg * avg > variance * 36 && n * 4 >= INTERVALS as u64 * 3) || variance <= 400) {
                return avg;
            }
            if n * 4 <= INTERVALS as u64 * 3 {
                return u32::MAX as u64;
            }
            thresh = max - 1;
        }
    }

    /// menu_select().
    pub fn select(&mut self, drv: &IdleDriver, inp: &SelectInput) -> Selection {
        if self.needs_update {
            self.update(drv);
            self.needs_update = false;
        }
        self.tick_nsec = inp.tick_nsec;
        let states = &drv.states[..=inp.max_state.min(drv.states.len() - 1)];
        let mut latency_req = inp.latency_req_ns;
        let mut predicted_ns = self.typical_interval_us().saturating_mul(NSEC_PER_USEC);
        let mut delta_tick = inp.delta_tick_ns;
        if predicted_ns > RESIDENCY_THRESHOLD_NS {
            self.next_timer_ns = inp.sleep_length_ns;
            self.bucket = which_bucket(self.next_timer_ns);
            // Round up to half a microsecond.
            let scale = RESOLUTION * DECAY * NSEC_PER_USEC;
            let cf = self.correction_factor[self.bucket];
            // 64-bit arithmetic unless the product overflows (a 128-bit division is a slow
            // library call; the sleep length is often "no timer").
            let timer_us = match self.next_timer_ns.checked_mul(cf).and_then(|p| p.checked_add(scale / 2)) {
                Some(p) => p / scale,
                None => (((scale / 2) as u128 + self.next_timer_ns as u128 * cf as u128) / scale as u128) as u64,
            };
            predicted_ns = predicted_ns.min(timer_us.saturating_mul(NSEC_PER_USEC));
        } else {
            // The next timer is not looked up: assume it is far, the tick half a period away.
            self.next_timer_ns = Ns::MAX;
            delta_tick = inp.tick_nsec / 2;
            self.bucket = which_bucket(Ns::MAX);
        }
        if states.len() <= 1 || latency_req == 0 || self.next_timer_ns < states[1].target_residency_ns || latency_req < states[1].exit_latency_ns {
            // State 0 no matter what; keep the tick only if it polls.
            return Selection { state: 0, stop_tick: !states[0].polling };
        }
        if inp.tick_stopped {
            // A misprediction now costs a long stay in a shallow state: trust the timer.
            if predicted_ns < inp.tick_nsec {
                predicted_ns = self.next_timer_ns;
            }
        } else {
            // performance_multiplier() is 1 without I/O waiters.
            latency_req = latency_req.min(predicted_ns);
        }
        let mut idx = 0;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns > predicted_ns {
                if states[idx].polling && s.exit_latency_ns <= latency_req && s.target_residency_ns <= self.next_timer_ns {
                    predicted_ns = s.target_residency_ns;
                    idx = i;
                    break;
                }
                if predicted_ns < inp.tick_nsec {
                    break;
                }
                if !inp.tick_stopped {
                    // Shallow so far: retain the tick and let the governor run again.
                    predicted_ns = states[idx].target_residency_ns;
                    break;
                }
                if states[idx].target_residency_ns < inp.tick_nsec && s.target_residency_ns <= delta_tick {
                    idx = i;
                }
                self.predicted_ns = predicted_ns;
                return Selection { state: idx, stop_tick: true };
            }
            if s.exit_latency_ns > latency_req {
                break;
            }
            idx = i;
        }
        self.predicted_ns = predicted_ns;
        let mut stop_tick = true;
        if (states[idx].polling || predicted_ns < inp.tick_nsec) && !inp.tick_stopped {
            stop_tick = false;
            if idx > 0 && states[idx].target_residency_ns > delta_tick {
                // The tick will end the idle period first: pick a state that fits it.
                for i in (0..idx).rev() {
                    idx = i;
                    if states[i].target_residency_ns <= delta_tick {
                        break;
                    }
                }
            }
        }
        Selection { state: idx, stop_tick }
    }

    /// menu_reflect(): remember how the last idle period ended; the update runs at the
    /// next selection, as in the kernel.
    pub fn reflect(&mut self, _drv: &IdleDriver, state: usize, residency_ns: Ns, by_tick: bool) {
        self.last_state = state;
        self.last_residency_ns = residency_ns;
        self.tick_wakeup = by_tick;
        self.needs_update = true;
    }

    /// menu_update(): fold the measured idle period into the bucket's correction factor
    /// and the interval history.
    fn update(&mut self, drv: &IdleDriver) {
        let target = &drv.states[self.last_state];
        let mut measured = if self.tick_wakeup && self.next_timer_ns > self.tick_nsec {
            // The sleep length said nothing was due within a tick, yet the (retained)
            // tick ended the period: assume it could have been long.
            9 * MAX_INTERESTING / 10
        } else {
            let m = self.last_residency_ns;
            if m > 2 * target.exit_latency_ns {
                m - target.exit_latency_ns
            } else {
                m / 2
            }
        };
        measured = measured.min(self.next_timer_ns);
        let mut f = self.correction_factor[self.bucket];
        f -= f / DECAY;
        if self.next_timer_ns > 0 && measured < MAX_INTERESTING {
            // measured < MAX_INTERESTING here: the product fits in 64 bits.
            f += RESOLUTION * measured / self.next_timer_ns;
        } else {
            f += RESOLUTION;
        }
        self.correction_factor[self.bucket] = f;
        self.intervals[self.interval_ptr] = (measured / NSEC_PER_USEC).min(u32::MAX as u64) as u32;
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::test_driver;

    fn input(sleep_us: u64, stopped: bool) -> SelectInput {
        SelectInput {
            sleep_length_ns: sleep_us * 1000,
            delta_tick_ns: 1_000_000,
            tick_stopped: stopped,
            tick_nsec: 1_000_000,
            latency_req_ns: Ns::MAX,
            max_state: usize::MAX,
            now: 0,
            utilized: false,
        }
    }

    #[test]
    fn fresh_governor_trusts_the_sleep_length() {
        let drv = test_driver();
        let mut m = MenuDevice::default();
        // No history: the typical interval is unknown, the sleep length decides.
        assert_eq!(m.select(&drv, &input(5_000, false)), Selection { state: 2, stop_tick: true });
        assert_eq!(m.select(&drv, &input(50, false)), Selection { state: 1, stop_tick: false });
        assert_eq!(m.select(&drv, &input(5, false)).state, 0);
    }

    #[test]
    fn short_idle_history_keeps_the_cpu_shallow_and_the_tick_running() {
        let drv = test_driver();
        let mut m = MenuDevice::default();
        for _ in 0..8 {
            m.select(&drv, &input(10_000, false));
            m.reflect(&drv, 2, 50_000, false); // woken after 50 us every time
        }
        let s = m.select(&drv, &input(10_000, false));
        assert!(s.state < 2 && !s.stop_tick, "{s:?}");
        // Never a state whose target residency exceeds the predicted idle.
        assert!(drv.states[s.state].target_residency_ns <= 50_000);
    }

    proptest::proptest! {
        /// With the tick running, menu never picks a state whose target residency exceeds
        /// the idle duration it predicted, whatever the history (the kernel makes one
        /// exception, when the tick is already stopped: it then prefers a deeper state
        /// to getting stuck in a shallow one).
        #[test]
        fn never_deeper_than_predicted_with_the_tick_running(
            hist in proptest::collection::vec((0u64..20_000, 0usize..3, proptest::bool::ANY), 0..30),
            sleep_us in 1u64..50_000,
        ) {
            let drv = test_driver();
            let mut m = MenuDevice::default();
            for (res_us, state, tick) in hist {
                m.select(&drv, &input(sleep_us, false));
                m.reflect(&drv, state, res_us * 1000, tick);
            }
            let s = m.select(&drv, &input(sleep_us, false));
            proptest::prop_assert!(drv.states[s.state].target_residency_ns <= m.predicted_ns.max(drv.states[0].target_residency_ns),
                "state {} for predicted {}", s.state, m.predicted_ns);
        }
    }

    /// menu_update() deducts the *declared* exit latency from the residency it is told
    /// (which includes the real, measured wake), or halves a residency shorter than twice
    /// it ("the state was never reached"): C6 declares 133 us and wakes in 30 us here.
    #[test]
    fn the_correction_deducts_the_declared_latency() {
        let drv = test_driver();
        let mut m = MenuDevice::default();
        m.select(&drv, &input(10_000, true));
        m.reflect(&drv, 2, 1_000_000 + 30_000, false);
        m.select(&drv, &input(10_000, true));
        assert_eq!(m.intervals[0], 1_030 - 133);
        m.reflect(&drv, 2, 200_000 + 30_000, false);
        m.select(&drv, &input(10_000, true));
        assert_eq!(m.intervals[1], 230 / 2);
    }

    #[test]
    fn latency_limit_caps_the_depth() {
        let drv = test_driver();
        let mut m = MenuDevice::default();
        let mut i = input(10_000, false);
        i.latency_req_ns = 20_000;
        assert_eq!(m.select(&drv, &i).state, 1);
        i.max_state = 0;
        assert_eq!(m.select(&drv, &i).state, 0);
    }
}
