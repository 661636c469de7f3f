//! schedutil: the frequency a cpufreq policy asks for from its CPUs' utilization, and the
//! `performance` governor as the other side; frequency invariance as pure functions.
//!
//! Mirrors: kernel/sched/cpufreq_schedutil.c (read at the 5.8-era text: get_next_freq(),
//! sugov_should_update_freq(), sugov_update_next_freq(), sugov_iowait_boost(),
//! sugov_iowait_reset(), sugov_iowait_apply(), sugov_next_freq_shared()),
//! include/linux/sched/cpufreq.h map_util_perf()/map_util_freq() in the 6.x split (5.8
//! folds the 1.25 into map_util_freq(): (f + f/4) x util / cap, which rounds once less),
//! drivers/cpufreq/cpufreq.c cpufreq_driver_resolve_freq() with CPUFREQ_RELATION_L,
//! kernel/sched/pelt.h update_rq_clock_pelt() and arch/arm64 topology's
//! arch_scale_freq_capacity().
//! Model: fast switching (policy->cur follows next_freq at once). Policies are shared
//! (one per cluster, as on the phones), so sugov_update_single()'s "busy CPU keeps its
//! frequency" rule does not apply. The frequency is frequency-invariant: the reference is
//! cpuinfo.max_freq (get_capacity_ref_freq() when arch_scale_freq_invariant()).

use super::{uclamp_rq_util_with, Uclamp, SCHED_CAPACITY_SCALE, SCHED_CAPACITY_SHIFT};
use crate::time::Ns;

/// IOWAIT_BOOST_MIN (cpufreq_schedutil.c): SCHED_CAPACITY_SCALE / 8.
pub const IOWAIT_BOOST_MIN: u64 = SCHED_CAPACITY_SCALE / 8;

/// map_util_perf() (sched/cpufreq.h, 6.x): util + util/4, the 1.25 headroom that puts
/// the tipping point at 80 % of the capacity.
#[inline]
pub fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// map_util_freq() (6.x): freq x util / cap.
#[inline]
pub fn map_util_freq(util: u64, freq: u64, cap: u64) -> u64 {
    freq * util / cap.max(1)
}

/// cpufreq_driver_resolve_freq() with CPUFREQ_RELATION_L on an ascending table: the
/// target clamped to [min, max] of the table, then the lowest OPP at or above it.
pub fn resolve_freq_relation_l(table_khz: &[u64], target_khz: u64) -> u64 {
    let top = *table_khz.last().expect("an OPP table has at least one OPP");
    let target = target_khz.clamp(table_khz[0], top);
    table_khz.iter().copied().find(|&f| f >= target).unwrap_or(top)
}

/// The raw next frequency: 1.25 x util / cap x max_freq (get_next_freq() before resolve).
#[inline]
pub fn next_freq_raw(util: u64, cap: u64, max_freq_khz: u64) -> u64 {
    map_util_freq(map_util_perf(util), max_freq_khz, cap)
}

/// The cpufreq governor of a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Governor {
    /// schedutil: frequency from utilization.
    Schedutil,
    /// performance: always the policy's maximum.
    Performance,
}

/// One CPU's input to its policy's frequency (sugov_get_util() and the iowait state).
#[derive(Clone, Copy, Debug)]
pub struct CpuUtilInput {
    /// cpu_util_cfs() (with util_est when on) + rt util: what sugov_get_util() reads.
    pub util: u64,
    /// arch_scale_cpu_capacity().
    pub capacity: u64,
    /// The rq's aggregated clamps (None: no runnable task).
    pub uclamp: Option<Uclamp>,
}

/// A CPU's iowait boost (`struct sugov_cpu` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IowaitBoost {
    /// iowait_boost, in capacity units of 1024.
    pub boost: u64,
    /// iowait_boost_pending: a wakeup from I/O doubled it since the last apply.
    pub pending: bool,
    /// last_update: the last cpufreq_update_util() on this CPU.
    pub last_update: Ns,
}

impl IowaitBoost {
    /// sugov_iowait_reset(): after more than a tick without an update the boost restarts
    /// (at IOWAIT_BOOST_MIN if this update is from I/O, else off). Returns whether it reset.
    fn reset(&mut self, now: Ns, tick_ns: Ns, from_io: bool) -> bool {
        if now.saturating_sub(self.last_update) <= tick_ns {
            return false;
        }
        self.boost = if from_io { IOWAIT_BOOST_MIN } else { 0 };
        self.pending = from_io;
        true
    }

    /// sugov_iowait_boost() then `last_update = now`: called at every
    /// cpufreq_update_util() of the CPU; `from_io` is SCHED_CPUFREQ_IOWAIT (a task waking
    /// from I/O is enqueued).
    pub fn on_update(&mut self, now: Ns, tick_ns: Ns, from_io: bool) {
        let reset = self.boost != 0 && self.reset(now, tick_ns, from_io);
        if !reset && from_io && !self.pending {
            self.pending = true;
            self.boost = if self.boost != 0 { (self.boost << 1).min(SCHED_CAPACITY_SCALE) } else { IOWAIT_BOOST_MIN };
        }
        self.last_update = now;
    }

    /// sugov_iowait_apply(): the boosted util; without a new I/O wakeup since the last
    /// apply the boost halves, and below IOWAIT_BOOST_MIN it is dropped.
    pub fn apply(&mut self, now: Ns, tick_ns: Ns, util: u64, max: u64) -> u64 {
        if self.boost == 0 || self.reset(now, tick_ns, false) {
            return util;
        }
        if !self.pending {
            self.boost >>= 1;
            if self.boost < IOWAIT_BOOST_MIN {
                self.boost = 0;
                return util;
            }
        }
        self.pending = false;
        util.max((self.boost * max) >> SCHED_CAPACITY_SHIFT)
    }
}

/// A cpufreq policy under schedutil (`struct sugov_policy` with its `cpufreq_policy`).
#[derive(Clone, Debug)]
pub struct SugovPolicy {
    /// The OPP frequencies, kHz, ascending (the driver's table = the EM's).
    pub table_khz: Vec<u64>,
    /// rate_limit_us as ns (freq_update_delay_ns).
    pub rate_limit_ns: Ns,
    /// The Android common kernel's split of the limit (its schedutil before 5.10, and
    /// Pixel's sched_pixel governor): (up_rate_limit_us, down_rate_limit_us) as ns, a
    /// raise waiting out the first, a lowering the second. None: mainline's one limit.
    pub up_down_ns: Option<(Ns, Ns)>,
    /// The governor.
    pub governor: Governor,
    /// next_freq = policy->cur under fast switching, kHz.
    pub cur_khz: u64,
    /// last_freq_update_time (None: never, so the first update passes).
    pub last_freq_update: Option<Ns>,
    /// cached_raw_freq: the last unresolved frequency.
    pub cached_raw_freq: u64,
    /// need_freq_update (limits changed).
    pub need_freq_update: bool,
    /// Per-CPU iowait state, in the policy's CPU order.
    pub iowait: Vec<IowaitBoost>,
}

impl SugovPolicy {
    /// A policy over `nr_cpus` CPUs starting at the top OPP (as schedlab ran before).
    pub fn new(table_khz: Vec<u64>, nr_cpus: usize, rate_limit_ns: Ns, governor: Governor) -> Self {
        let top = *table_khz.last().expect("an OPP table has at least one OPP");
        SugovPolicy {
            table_khz,
            rate_limit_ns,
            up_down_ns: None,
            governor,
            cur_khz: top,
            last_freq_update: None,
            cached_raw_freq: 0,
            need_freq_update: false,
            iowait: vec![IowaitBoost::default(); nr_cpus],
        }
    }

    /// The policy's cpuinfo.max_freq.
    pub fn max_khz(&self) -> u64 {
        *self.table_khz.last().expect("non-empty")
    }

    /// The split limits (the Android form): freq_update_delay_ns becomes the smaller of
    /// the two, as its sugov_init() sets it.
    pub fn with_up_down(mut self, up_ns: Ns, down_ns: Ns) -> Self {
        self.set_up_down(up_ns, down_ns);
        self
    }

    /// [`Self::with_up_down`] on a policy in place.
    pub fn set_up_down(&mut self, up_ns: Ns, down_ns: Ns) {
        self.up_down_ns = Some((up_ns, down_ns));
        self.rate_limit_ns = up_ns.min(down_ns);
    }

    /// sugov_should_update_freq(): outside the rate limit, or after a limits change.
    pub fn should_update(&mut self, now: Ns) -> bool {
        if self.need_freq_update {
            return true;
        }
        self.last_freq_update.is_none_or(|t| now.saturating_sub(t) >= self.rate_limit_ns)
    }

    /// sugov_up_down_rate_limit() (the Android form): a raise inside up_rate_limit_us or
    /// a lowering inside down_rate_limit_us of the last change is refused.
    fn up_down_limited(&self, now: Ns, next: u64) -> bool {
        let (Some((up, down)), Some(t)) = (self.up_down_ns, self.last_freq_update) else {
            return false;
        };
        let delta = now.saturating_sub(t);
        (next > self.cur_khz && delta < up) || (next < self.cur_khz && delta < down)
    }

    /// sugov_update_shared() for CPU `idx` of the policy at `now`: the iowait bookkeeping,
    /// then (outside the rate limit) the max over the policy's CPUs of the clamped,
    /// boosted util relative to its capacity, resolved to an OPP. Returns the new
    /// frequency when it changed. `performance` sets the maximum and ignores the rest.
    pub fn update_shared(&mut self, idx: usize, now: Ns, tick_ns: Ns, from_io: bool, cpus: &[CpuUtilInput]) -> Option<u64> {
        if self.governor == Governor::Performance {
            let top = self.max_khz();
            return (self.cur_khz != top).then(|| {
                self.cur_khz = top;
                top
            });
        }
        self.iowait[idx].on_update(now, tick_ns, from_io);
        if !self.should_update(now) {
            return None;
        }
        // sugov_next_freq_shared(): the CPU with the highest util / max ratio decides.
        let (mut util, mut max) = (0u64, 1u64);
        for (j, c) in cpus.iter().enumerate() {
            let ju = uclamp_rq_util_with(c.util, c.uclamp, None).min(c.capacity);
            let ju = self.iowait[j].apply(now, tick_ns, ju, c.capacity);
            if ju * max > c.capacity * util {
                util = ju;
                max = c.capacity;
            }
        }
        let next = self.next_freq(util, max);
        // sugov_update_next_freq(): an unchanged frequency does not restart the limit.
        if next == self.cur_khz && !self.need_freq_update {
            return None;
        }
        if self.up_down_limited(now, next) {
            // A raw frequency that did not become next_freq is not cached.
            self.cached_raw_freq = 0;
            return None;
        }
        self.need_freq_update = false;
        self.cur_khz = next;
        self.last_freq_update = Some(now);
        Some(next)
    }

    /// get_next_freq(): the raw target, cached, resolved RELATION_L.
    pub fn next_freq(&mut self, util: u64, max: u64) -> u64 {
        let raw = next_freq_raw(util, max, self.max_khz());
        if raw == self.cached_raw_freq && !self.need_freq_update {
            return self.cur_khz;
        }
        self.cached_raw_freq = raw;
        resolve_freq_relation_l(&self.table_khz, raw)
    }
}

/// arch_scale_freq_capacity(): cur / max in 1024ths (arm64 AMU/cpufreq invariance).
#[inline]
pub fn arch_scale_freq_capacity(cur_khz: u64, max_khz: u64) -> u64 {
    (cur_khz << SCHED_CAPACITY_SHIFT) / max_khz.max(1)
}

/// cap_scale() (sched.h): v x s >> SCHED_CAPACITY_SHIFT.
#[inline]
pub fn cap_scale(v: u64, s: u64) -> u64 {
    (v * s) >> SCHED_CAPACITY_SHIFT
}

/// update_rq_clock_pelt()'s scaling (pelt.h): a running delta counted for PELT as
/// delta x capacity x cur/max, so utilization is frequency- and capacity-invariant.
#[inline]
pub fn scale_pelt_delta(delta: Ns, capacity: u64, cur_khz: u64, max_khz: u64) -> Ns {
    cap_scale(cap_scale(delta, capacity), arch_scale_freq_capacity(cur_khz, max_khz))
}
