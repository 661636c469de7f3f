//! struct sched_avg and PELT's arithmetic: the sums, the divider, the decay.
//!
//! Mirrors: kernel/sched/pelt.c (accumulate_sum(), decay_load(), get_pelt_divider()),
//! include/linux/sched.h `struct sched_avg`; the users in fair.c are `fair::pelt`.

use crate::time::Ns;

/// LOAD_AVG_MAX: the sum of a signal always on, 1024 x Σ y^n (sched-pelt.h).
pub const LOAD_AVG_MAX: u64 = 47742;
/// PELT_MIN_DIVIDER = LOAD_AVG_MAX - 1024.
pub(crate) const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// SCHED_CAPACITY_SHIFT.
pub(crate) const CAP_SHIFT: u32 = 10;

/// struct sched_avg.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// When the sums were last brought up to date (0: not attached to any cfs_rq).
    pub last_update_time: Ns,
    /// An entity: Σ decayed runnable time; a cfs_rq: Σ decayed time x load.weight.
    pub load_sum: u64,
    /// Σ decayed time x runnable tasks x SCHED_CAPACITY_SCALE.
    pub runnable_sum: u64,
    /// Σ decayed running time x capacity.
    pub util_sum: u64,
    /// Time into the current 1024-unit period already accounted, in 1024 ns units.
    pub period_contrib: u32,
    /// load_avg.
    pub load_avg: u64,
    /// runnable_avg.
    pub runnable_avg: u64,
    /// util_avg.
    pub util_avg: u64,
}

/// ceil(2^64 / d) for every divider d = PELT_MIN_DIVIDER + period_contrib: dividing by a
/// divider is then a multiply (the averages are recomputed at every update).
pub(crate) const DIVIDER_RECIPROCAL: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut i = 0;
    while i < 1024 {
        // No divider is a power of two, so floor((2^64 - 1) / d) + 1 = ceil(2^64 / d).
        t[i] = u64::MAX / (PELT_MIN_DIVIDER + i as u64) + 1;
        i += 1;
    }
    t
};

/// Below this a quotient by reciprocal is exact: with m = (2^64 + e) / d, 0 < e < d,
/// n * m / 2^64 = n / d + n * e / (d * 2^64), and the excess stays under 1 / d while
/// n * e < 2^64, which n < 2^64 / d ensures (d < 2^16).
pub(crate) const RECIPROCAL_EXACT_BELOW: u64 = 1 << 48;

impl SchedAvg {
    /// get_pelt_divider().
    pub(crate) fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib as u64
    }

    /// n / divider(), exactly as the division.
    #[inline]
    pub(crate) fn div_by_divider(&self, n: u64) -> u64 {
        if n < RECIPROCAL_EXACT_BELOW {
            ((n as u128 * DIVIDER_RECIPROCAL[self.period_contrib as usize] as u128) >> 64) as u64
        } else {
            n / self.divider()
        }
    }

    /// ___update_load_sum(): brings the sums to `now` for a signal that was `load`
    /// (weight), `runnable` (tasks) and `running` (at capacity `cap`) since the last
    /// update. Returns whether a period boundary was crossed (the averages then change).
    pub fn update_sum(&mut self, now: Ns, load: u64, runnable: u64, running: bool, cap: u64) -> bool {
        if now < self.last_update_time {
            return false;
        }
        let delta = (now - self.last_update_time) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let (runnable, running) = if load == 0 { (0, false) } else { (runnable, running) };
        // accumulate_sum()
        let mut contrib = delta;
        let d = delta + self.period_contrib as u64;
        let periods = d / 1024;
        let rest = d % 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            if load > 0 {
                // __accumulate_pelt_segments(): the end of the first period, the full
                // periods between (decayed), the start of the current one.
                let d1 = 1024 - self.period_contrib as u64;
                let c1 = decay_load(d1, periods);
                let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
                contrib = c1 + c2 + rest;
            }
        }
        self.period_contrib = rest as u32;
        if load > 0 {
            self.load_sum += load * contrib;
        }
        if runnable > 0 {
            self.runnable_sum += (runnable * contrib) << CAP_SHIFT;
        }
        if running {
            self.util_sum += contrib * cap;
        }
        periods > 0
    }

    /// ___update_load_avg(): averages from the sums (`weight` scales an entity's load).
    pub fn update_avg(&mut self, weight: u64) {
        // The kernel's div_u64(weight * load_sum, divider).
        self.load_avg = match weight.checked_mul(self.load_sum) {
            Some(p) => self.div_by_divider(p),
            None => crate::time::mul_div(weight, self.load_sum, self.divider()),
        };
        self.runnable_avg = self.div_by_divider(self.runnable_sum);
        self.util_avg = self.div_by_divider(self.util_sum);
    }
}

/// y^n × 2^32 for n = 0..31 with y^32 = 1/2 (runnable_avg_yN_inv, kernel/sched/sched-pelt.h).
const RUNNABLE_AVG_YN_INV: [u64; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85,
    0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// Returns val × y^n (decay_load).
pub(crate) fn decay_load(val: u64, n: u64) -> u64 {
    if n > 63 * 32 {
        return 0;
    }
    let v = val >> (n / 32);
    ((v as u128 * RUNNABLE_AVG_YN_INV[(n % 32) as usize] as u128) >> 32) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reciprocal's quotient is the division's, at every divider and at the edges
    /// where a rounding error would show: just below a multiple, and at the bound.
    #[test]
    fn dividing_by_reciprocal_is_exact() {
        for contrib in 0..1024u32 {
            let a = SchedAvg { period_contrib: contrib, ..Default::default() };
            let d = a.divider();
            let top = RECIPROCAL_EXACT_BELOW - 1;
            for n in [0, 1, d - 1, d, d + 1, top / d * d - 1, top / d * d, top, top + 1, u64::MAX] {
                assert_eq!(a.div_by_divider(n), n / d, "n = {n}, d = {d}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn dividing_by_reciprocal_matches_division(contrib in 0u32..1024, n in 0u64..(1 << 49)) {
            let a = SchedAvg { period_contrib: contrib, ..Default::default() };
            proptest::prop_assert_eq!(a.div_by_divider(n), n / a.divider());
        }
    }

    #[test]
    fn an_always_running_signal_converges_to_its_weight() {
        let mut a = SchedAvg { last_update_time: 1, ..Default::default() };
        // 1 s in 1 ms steps, always runnable and running at full capacity.
        for ms in 1..=1000u64 {
            if a.update_sum(ms * 1_000_000 + 1, 1, 1, true, 1024) {
                a.update_avg(1024);
            }
        }
        assert!(a.load_avg >= 1000 && a.load_avg <= 1024, "{a:?}");
        assert!(a.util_avg >= 1000 && a.util_avg <= 1024, "{a:?}");
        assert!(a.runnable_avg >= 1000 && a.runnable_avg <= 1024, "{a:?}");
    }

    #[test]
    fn half_life_is_32_ms_and_duty_cycles_average() {
        let mut a = SchedAvg { last_update_time: 1, load_sum: 0, ..Default::default() };
        // Converge at 100 %, then 32 periods (32 x 1024 x 1024 ns) of nothing halve it.
        let mut t = 1;
        for _ in 0..1000 {
            t += 1 << 20;
            a.update_sum(t, 1, 1, true, 1024);
        }
        a.update_avg(1024);
        let full = a.util_avg;
        t += 32 << 20;
        a.update_sum(t, 0, 0, false, 1024);
        a.update_avg(1024);
        assert!((a.util_avg as i64 - full as i64 / 2).abs() <= 8, "{} vs {}", a.util_avg, full);
        // 25 % duty in 4 ms cycles settles near a quarter.
        let mut b = SchedAvg { last_update_time: 1, ..Default::default() };
        let mut t = 1;
        for _ in 0..200 {
            t += 1_000_000;
            b.update_sum(t, 1, 1, true, 1024);
            t += 3_000_000;
            b.update_sum(t, 0, 0, false, 1024);
        }
        b.update_avg(1024);
        assert!((b.util_avg as i64 - 256).abs() < 40, "{b:?}");
        // Capacity-invariant: the same duty on a 512-capacity CPU counts half.
        let mut s = SchedAvg { last_update_time: 1, ..Default::default() };
        let mut t = 1;
        for _ in 0..1000 {
            t += 1 << 20;
            s.update_sum(t, 1, 1, true, 512);
        }
        s.update_avg(1024);
        assert!((s.util_avg as i64 - 512).abs() < 16, "{s:?}");
    }
}
