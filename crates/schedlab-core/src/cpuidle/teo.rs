//! The teo (timer events oriented) governor as 6.x kernels before the 6.12 rework have it.
//!
//! Mirrors: drivers/cpuidle/governors/teo.c: teo_select(), teo_update(), teo_reflect(),
//! teo_find_shallower_state(), with per-state bins of decaying "hits" (the CPU woke
//! about when the next timer said) and "intercepts" (it woke earlier), PULSE 1024,
//! DECAY_SHIFT 3, the 9 most recent intercepts, and the "utilized" shortcut
//! (CPU utilization above capacity >> 6).
//! Model: the same arithmetic on integer ns; the sleep length and the tick's state come
//! from the engine exactly as tick_nohz_get_sleep_length() gives them.

use super::{IdleDriver, SelectInput, Selection};
use crate::time::Ns;

const PULSE: u64 = 1024;
const DECAY_SHIFT: u32 = 3;
const NR_RECENT: usize = 9;

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    intercepts: u64,
    hits: u64,
    recent: u64,
}

/// Per-CPU memory of teo (struct teo_cpu).
#[derive(Clone, Debug)]
pub struct TeoCpu {
    time_span_ns: Ns,
    sleep_length_ns: Ns,
    bins: Vec<Bin>,
    total: u64,
    next_recent_idx: usize,
    recent_idx: [Option<usize>; NR_RECENT],
    last_state: Option<usize>,
    last_residency_ns: Ns,
    selected_at: Ns,
}

impl TeoCpu {
    /// Creates the memory for a driver of `states` states (teo_enable_device()).
    pub fn new(states: usize) -> Self {
        TeoCpu {
            time_span_ns: 0,
            sleep_length_ns: 0,
            bins: vec![Bin::default(); states],
            total: 0,
            next_recent_idx: 0,
            recent_idx: [None; NR_RECENT],
            last_state: None,
            last_residency_ns: 0,
            selected_at: 0,
        }
    }

    /// teo_update(): classify the last idle period as a hit or an intercept.
    fn update(&mut self, drv: &IdleDriver, last: usize) {
        let measured = if self.time_span_ns >= self.sleep_length_ns {
            Ns::MAX // a safety net triggered, or the wakeup was close to the timer
        } else {
            let lat = drv.states[last].exit_latency_ns;
            let m = self.last_residency_ns;
            if m >= lat {
                m - lat / 2
            } else {
                m / 2
            }
        };
        self.total = 0;
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for (i, s) in drv.states.iter().enumerate() {
            let b = &mut self.bins[i];
            b.hits -= b.hits >> DECAY_SHIFT;
            b.intercepts -= b.intercepts >> DECAY_SHIFT;
            self.total += b.hits + b.intercepts;
            if s.target_residency_ns <= self.sleep_length_ns {
                idx_timer = i;
                if s.target_residency_ns <= measured {
                    idx_duration = i;
                }
            }
        }
        let i = self.next_recent_idx;
        self.next_recent_idx = (i + 1) % NR_RECENT;
        if let Some(old) = self.recent_idx[i] {
            self.bins[old].recent -= 1;
        }
        if idx_timer == idx_duration {
            self.bins[idx_timer].hits += PULSE;
            self.recent_idx[i] = None;
        } else {
            self.bins[idx_duration].intercepts += PULSE;
            self.bins[idx_duration].recent += 1;
            self.recent_idx[i] = Some(idx_duration);
        }
        self.total += PULSE;
    }

    /// teo_select().
    pub fn select(&mut self, drv: &IdleDriver, inp: &SelectInput) -> Selection {
        if let Some(last) = self.last_state.take() {
            self.update(drv, last);
        }
        let states = &drv.states;
        let n = states.len();
        let disabled = |i: usize| i > inp.max_state;
        let time_ok = |ns: Ns| !inp.tick_stopped || ns >= inp.tick_nsec;
        let middle = |i: usize| (states[i].target_residency_ns + states[i + 1].target_residency_ns) / 2;
        self.selected_at = inp.now;
        let mut duration = inp.sleep_length_ns;
        self.sleep_length_ns = duration;
        let keep_tick = |state: usize| Selection { state, stop_tick: false };
        if n < 2 {
            return keep_tick(0);
        }
        let mut idx: Option<usize> = None;
        if !disabled(0) {
            idx = Some(0);
            if states[1].target_residency_ns > duration {
                return keep_tick(0);
            }
        }
        if n < 3 && inp.utilized {
            duration = middle(0);
            if (idx == Some(0) && !states[0].polling && time_ok(duration)) || disabled(1) {
                return keep_tick(0);
            }
            return self.end(drv, inp, 1, duration, 0);
        }
        let (mut intercept_sum, mut hit_sum, mut recent_sum) = (0, 0, 0);
        let (mut idx_intercept_sum, mut idx_hit_sum, mut idx_recent_sum) = (0, 0, 0);
        let mut constraint_idx = 0;
        let mut idx0 = 0;
        let mut first_enabled = idx.is_some();
        for i in 1..n {
            let prev = self.bins[i - 1];
            intercept_sum += prev.intercepts;
            hit_sum += prev.hits;
            recent_sum += prev.recent;
            if disabled(i) {
                continue;
            }
            if !first_enabled {
                idx = Some(i);
                idx0 = i;
                first_enabled = true;
            }
            if states[i].target_residency_ns > duration {
                break;
            }
            idx = Some(i);
            if states[i].exit_latency_ns <= inp.latency_req_ns {
                constraint_idx = i;
            }
            idx_intercept_sum = intercept_sum;
            idx_hit_sum = hit_sum;
            idx_recent_sum = recent_sum;
        }
        let Some(mut idx) = idx else { return keep_tick(0) };
        if idx == idx0 {
            return self.end(drv, inp, idx, states[idx].target_residency_ns, idx0);
        }
        let alt_intercepts = 2 * idx_intercept_sum > self.total.saturating_sub(idx_hit_sum);
        let alt_recent = idx_recent_sum > (NR_RECENT / 2) as u64;
        if alt_recent || alt_intercepts {
            let (mut first_span, mut first_idx) = (duration, idx);
            let (mut isum, mut rsum) = (0, 0);
            for i in (0..idx).rev() {
                let b = self.bins[i];
                isum += b.intercepts;
                rsum += b.recent;
                let span = middle(i);
                if (!alt_recent || 2 * rsum > idx_recent_sum) && (!alt_intercepts || 2 * isum > idx_intercept_sum) {
                    if time_ok(span) && !disabled(i) {
                        idx = i;
                        duration = span;
                    } else {
                        idx = first_idx;
                        duration = first_span;
                    }
                    break;
                }
                if disabled(i) {
                    continue;
                }
                if !time_ok(span) {
                    if first_idx != idx {
                        continue;
                    }
                    break;
                }
                first_span = span;
                first_idx = i;
            }
        }
        idx = idx.min(constraint_idx);
        if inp.utilized {
            let i = find_shallower(drv, inp, idx, duration, true);
            let span = middle(i);
            if time_ok(span) {
                idx = i;
                duration = span;
            }
        }
        self.end(drv, inp, idx, duration, idx0)
    }

    /// The end of teo_select(): stop the tick unless the state polls or the expected
    /// idle is under a tick; with the tick kept, fit the state to the tick's distance.
    fn end(&self, drv: &IdleDriver, inp: &SelectInput, mut idx: usize, duration: Ns, idx0: usize) -> Selection {
        if (!drv.states[idx].polling && duration >= inp.tick_nsec) || inp.tick_stopped {
            return Selection { state: idx, stop_tick: true };
        }
        if idx > idx0 && drv.states[idx].target_residency_ns > inp.delta_tick_ns {
            idx = find_shallower(drv, inp, idx, inp.delta_tick_ns, false);
        }
        Selection { state: idx, stop_tick: false }
    }

    /// teo_reflect(): how long the CPU was idle since the selection; a wakeup by a tick
    /// that the sleep length said would not come counts as a safety net.
    pub fn reflect(&mut self, _drv: &IdleDriver, state: usize, residency_ns: Ns, by_tick: bool, wake: Ns, tick_nsec: Ns) {
        self.last_state = Some(state);
        self.last_residency_ns = residency_ns;
        self.time_span_ns = if by_tick && self.sleep_length_ns > tick_nsec { self.sleep_length_ns } else { wake.saturating_sub(self.selected_at) };
    }
}

/// teo_find_shallower_state().
fn find_shallower(drv: &IdleDriver, inp: &SelectInput, mut state: usize, duration: Ns, no_poll: bool) -> usize {
    for i in (0..state).rev() {
        if i > inp.max_state || (no_poll && drv.states[i].polling) {
            continue;
        }
        state = i;
        if drv.states[i].target_residency_ns <= duration {
            break;
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuidle::test_driver;

    fn input(sleep_us: u64, now: Ns) -> SelectInput {
        SelectInput {
            sleep_length_ns: sleep_us * 1000,
            delta_tick_ns: 1_000_000,
            tick_stopped: false,
            tick_nsec: 1_000_000,
            latency_req_ns: Ns::MAX,
            max_state: usize::MAX,
            now,
            utilized: false,
        }
    }

    #[test]
    fn hits_keep_the_timer_state_and_intercepts_pull_it_shallower() {
        let drv = test_driver();
        let mut t = TeoCpu::new(drv.states.len());
        assert_eq!(t.select(&drv, &input(10_000, 0)), Selection { state: 2, stop_tick: true });
        // Every idle period ends after 40 us although the timer was 10 ms away.
        let mut now = 0;
        for _ in 0..20 {
            let s = t.select(&drv, &input(10_000, now));
            t.reflect(&drv, s.state, 40_000, false, now + 40_000, 1_000_000);
            now += 100_000;
        }
        let s = t.select(&drv, &input(10_000, now));
        assert!(s.state < 2, "intercepts make teo pick a shallower state: {s:?}");
        assert!(drv.states[s.state].target_residency_ns <= 40_000);
    }

    #[test]
    fn a_short_sleep_length_keeps_state_zero_and_the_tick() {
        let drv = test_driver();
        let mut t = TeoCpu::new(drv.states.len());
        assert_eq!(t.select(&drv, &input(5, 0)), Selection { state: 0, stop_tick: false });
    }
}
