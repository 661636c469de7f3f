//! Per-entity load tracking (PELT): load, runnable and utilization averages of every
//! scheduling entity and cfs_rq.
//!
//! Mirrors: kernel/sched/pelt.c (___update_load_sum(), accumulate_sum(),
//! __accumulate_pelt_segments(), ___update_load_avg(), get_pelt_divider()) and the fair.c
//! users: update_load_avg() (called, as there, before every enqueue, dequeue, pick, put
//! and tick of an entity), attach/detach_entity_load_avg() for migrations and new tasks
//! (init_entity_runnable_average(), post_init_entity_util_avg()), update_blocked_averages(),
//! cpu_load() / cpu_util_cfs() / cpu_runnable(), the root sums load balance reads.
//! Model: sums advance in 1024 ns units over 1024-unit periods with the kernel's decay
//! table (y^32 = 1/2), exactly as accumulate_sum() does. Utilization is made
//! capacity-invariant by weighting running time with the CPU's capacity (the kernel
//! slows rq_clock_pelt instead; the steady state is the same, the decay of a small CPU's
//! signals while busy is not). Frequency invariance is moot: schedlab runs at the top
//! OPP. Attach/detach propagate to the group entities and cfs_rqs above at once (the
//! kernel defers that to the next update, add_tg_cfs_propagate()): util and runnable by
//! the same amount, load as the group entity's weight times the change in the fraction
//! of time its cfs_rq had tasks (update_tg_cfs_load()). util_est is not modeled.

use super::group::is_group;
use super::timeline::{EntityId, GROUP_SE};
use crate::engine::Simulator;
use crate::features::Feature;
use crate::sched::decay_load;
use crate::task::TaskId;
use crate::time::Ns;

/// LOAD_AVG_MAX: the sum of a signal always on, 1024 x Σ y^n (sched-pelt.h).
pub const LOAD_AVG_MAX: u64 = 47742;
/// PELT_MIN_DIVIDER = LOAD_AVG_MAX - 1024.
const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// SCHED_CAPACITY_SHIFT.
const CAP_SHIFT: u32 = 10;

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
const DIVIDER_RECIPROCAL: [u64; 1024] = {
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
const RECIPROCAL_EXACT_BELOW: u64 = 1 << 48;

impl SchedAvg {
    /// get_pelt_divider().
    fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib as u64
    }

    /// n / divider(), exactly as the division.
    #[inline]
    fn div_by_divider(&self, n: u64) -> u64 {
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

impl Simulator {
    /// Whether PELT averages drive load balance, wake_affine and group shares (feature
    /// PELT); off, the instantaneous queued weights do (pre-3.8).
    #[inline]
    pub(crate) fn pelt_on(&self) -> bool {
        self.feat.has(Feature::PELT)
    }

    /// __update_load_avg_cfs_rq() for cfs_rq `c` (on `cpu`), with the root's sums passed
    /// on to the load-balance group sums.
    fn update_cfs_rq_avg(&mut self, c: usize, cpu: usize) {
        let cap = self.capacity(cpu);
        let q = &mut self.fg.cfs[c];
        let before = q.avg;
        if q.avg.update_sum(self.now, q.load, q.h_nr_running as u64, q.curr.is_some(), cap) {
            q.avg.update_avg(1);
        }
        self.avg_changed(c, before);
    }

    /// A cfs_rq's averages moved: a root's feed the balance sums; a group's its tg load.
    fn avg_changed(&mut self, c: usize, before: SchedAvg) {
        let after = self.fg.cfs[c].avg;
        if c < self.m.nr_cpus() {
            let d = |a: u64, b: u64| a as i64 - b as i64;
            self.load_sums.pelt_changed(
                c,
                d(after.load_avg, before.load_avg),
                d(after.util_avg, before.util_avg),
                d(after.runnable_avg, before.runnable_avg),
            );
        } else if after.load_avg != before.load_avg {
            self.update_tg_load_avg(c);
        }
    }

    /// __update_load_avg_se() for entity `e` on cfs_rq `c`.
    fn update_se_avg(&mut self, c: usize, e: EntityId, cpu: usize) {
        let cap = self.capacity(cpu);
        let on_rq = self.on_rq(e);
        let runnable = if is_group(e) {
            self.fg.cfs[e & !GROUP_SE].h_nr_running as u64
        } else {
            (on_rq && !self.tasks[e].sched_delayed) as u64
        };
        let running = self.fg.cfs[c].curr == Some(e);
        let now = self.now;
        let se = self.se_mut(e);
        if se.avg.last_update_time == 0 {
            return; // not attached yet (a new or migrated task): attached at enqueue
        }
        if se.avg.update_sum(now, on_rq as u64, runnable, running, cap) {
            let w = se.weight;
            se.avg.update_avg(w);
        }
    }

    /// update_load_avg(): cfs_rq `c` and its entity `e` brought up to now, before any
    /// change of their state. A task not attached (new, or moved from another CPU) is
    /// attached here (DO_ATTACH).
    pub(crate) fn update_load_avg(&mut self, c: usize, e: EntityId, cpu: usize) {
        if !self.pelt_on() {
            return;
        }
        self.update_cfs_rq_avg(c, cpu);
        self.update_se_avg(c, e, cpu);
        if !is_group(e) && self.tasks[e].se.avg.last_update_time == 0 {
            self.attach_entity_load_avg(c, e, cpu);
        }
    }

    /// attach_entity_load_avg(): task `p`'s averages join cfs_rq `c` and, propagated,
    /// every level above.
    fn attach_entity_load_avg(&mut self, c: usize, p: TaskId, cpu: usize) {
        let q = self.fg.cfs[c].avg;
        let se = &mut self.tasks[p].se;
        se.avg.last_update_time = q.last_update_time.max(1);
        se.avg.period_contrib = q.period_contrib;
        let div = se.avg.divider();
        se.avg.util_sum = se.avg.util_avg * div;
        se.avg.runnable_sum = se.avg.runnable_avg * div;
        let w = se.weight.max(1);
        se.avg.load_sum = (se.avg.load_avg * div / w).max(1);
        let a = se.avg;
        self.shift_cfs_avg(c, p, cpu, a.load_avg as i64, a.load_sum as i64 * w as i64, a.util_avg as i64, a.runnable_avg as i64, 1);
    }

    /// detach_entity_load_avg() / remove_entity_load_avg(): task `p`'s averages leave
    /// cfs_rq `c` (and every level above); it is re-attached where it is next enqueued.
    pub(crate) fn detach_entity_load_avg(&mut self, p: TaskId, cpu: usize) {
        if !self.pelt_on() || self.tasks[p].se.avg.last_update_time == 0 {
            return;
        }
        let c = self.cfs_of(p, cpu);
        self.update_cfs_rq_avg(c, cpu);
        self.update_se_avg(c, p, cpu);
        let a = self.tasks[p].se.avg;
        let w = self.tasks[p].se.weight as i64;
        self.shift_cfs_avg(c, p, cpu, -(a.load_avg as i64), -(a.load_sum as i64 * w), -(a.util_avg as i64), -(a.runnable_avg as i64), -1);
        self.tasks[p].se.avg.last_update_time = 0;
    }

    /// Adds (or, negative, removes) a task's averages to cfs_rq `c` and propagates the
    /// change to the group entities and cfs_rqs above (add_tg_cfs_propagate()).
    #[allow(clippy::too_many_arguments)]
    fn shift_cfs_avg(&mut self, mut c: usize, p: TaskId, cpu: usize, mut load: i64, mut load_sum: i64, util: i64, runnable: i64, sign: i64) {
        let _ = p;
        loop {
            let before = self.fg.cfs[c].avg;
            let q = &mut self.fg.cfs[c].avg;
            let div = q.divider() as i64;
            let add = |v: u64, d: i64| (v as i64 + d).max(0) as u64;
            q.load_avg = add(q.load_avg, load);
            q.load_sum = add(q.load_sum, load_sum);
            q.util_avg = add(q.util_avg, util);
            q.util_sum = add(q.util_sum, util * div);
            q.runnable_avg = add(q.runnable_avg, runnable);
            q.runnable_sum = add(q.runnable_sum, runnable * div);
            self.avg_changed(c, before);
            if self.fg.group_of_cfs(c) == 0 {
                break;
            }
            // The group entity above: util and runnable follow its cfs_rq; its load is
            // its weight times the fraction of time its cfs_rq had tasks.
            let ge = GROUP_SE | c;
            let gq = self.fg.cfs[c].avg;
            let gdiv = gq.divider();
            let se = self.se_mut(ge);
            let w = se.weight;
            se.avg.util_avg = add(se.avg.util_avg, util);
            se.avg.util_sum = se.avg.util_avg * gdiv;
            se.avg.runnable_avg = add(se.avg.runnable_avg, runnable);
            se.avg.runnable_sum = se.avg.runnable_avg * gdiv;
            let old_load = se.avg.load_avg;
            // Runnable fraction of the group's cfs_rq, bounded by 1.
            let frac_sum = (gq.runnable_sum >> CAP_SHIFT).min(gdiv);
            se.avg.load_sum = frac_sum;
            se.avg.load_avg = w * frac_sum / gdiv;
            if sign > 0 && se.avg.last_update_time == 0 {
                se.avg.last_update_time = gq.last_update_time.max(1);
            }
            load = se.avg.load_avg as i64 - old_load as i64;
            load_sum = load * gdiv as i64;
            c = self.cfs_of(ge, cpu);
        }
    }

    /// init_entity_runnable_average() + post_init_entity_util_avg() for a new task about
    /// to be enqueued on cfs_rq `c`: full load; util a share of the cfs_rq's by weight,
    /// at most half the CPU's spare capacity.
    pub(crate) fn init_entity_avg(&mut self, p: TaskId, cpu: usize) {
        if !self.pelt_on() {
            return;
        }
        let c = self.cfs_of(p, cpu);
        let cap = self.capacity(cpu);
        let q = self.fg.cfs[c].avg;
        let se = &mut self.tasks[p].se;
        se.avg = SchedAvg { load_avg: se.weight, ..SchedAvg::default() };
        let spare = cap.saturating_sub(q.util_avg) / 2;
        let util = if q.util_avg > 0 { (q.util_avg * se.weight / (q.load_avg + 1)).min(spare) } else { spare };
        se.avg.util_avg = util;
        se.avg.runnable_avg = util;
    }

    /// update_blocked_averages(): every cfs_rq of `cpu` decayed to now (the kernel's
    /// periodic update of idle and blocked load, before a balance pass).
    pub(crate) fn update_blocked_averages(&mut self, cpu: usize) {
        if !self.pelt_on() {
            return;
        }
        let nr = self.m.nr_cpus();
        for g in (0..self.fg.parent.len()).rev() {
            let c = g * nr + cpu;
            if g > 0 && self.fg.cfs[c].avg.load_sum == 0 && self.fg.cfs[c].avg.util_sum == 0 && self.fg.cfs[c].load == 0 {
                continue;
            }
            self.update_cfs_rq_avg(c, cpu);
            if g > 0 && !self.fg.gse_on_rq[c] {
                let pc = self.cfs_of(GROUP_SE | c, cpu);
                self.update_se_avg(pc, GROUP_SE | c, cpu);
            }
        }
    }

    /// cpu_load(): the root cfs_rq's load average (its queued weight without PELT).
    pub(crate) fn cpu_load_avg(&self, cpu: usize) -> u64 {
        if self.pelt_on() {
            self.fg.cfs[self.root_cfs(cpu)].avg.load_avg
        } else {
            self.rqs[cpu].load
        }
    }

    /// cpu_util_cfs(): the root cfs_rq's utilization, at most the CPU's capacity.
    pub(crate) fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        self.fg.cfs[self.root_cfs(cpu)].avg.util_avg.min(self.capacity(cpu))
    }
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
