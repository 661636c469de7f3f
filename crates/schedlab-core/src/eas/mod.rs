//! The energy-aware half of the fair class as pure mechanisms: per-task utilization
//! estimates, utilization clamps, the schedutil frequency request and the Energy Model's
//! energy estimate with the placement that minimizes it.
//!
//! Mirrors: kernel/sched/fair.c (util_est_*(), cpu_util(), fits_capacity(),
//! util_fits_cpu(), cpu_overutilized(), find_energy_efficient_cpu(), compute_energy()),
//! kernel/sched/sched.h (uclamp_rq_util_with(), map_util_perf(), map_util_freq()),
//! kernel/sched/cpufreq_schedutil.c, kernel/sched/pelt.h (update_rq_clock_pelt()'s
//! frequency and capacity scaling), include/linux/energy_model.h (em_cpu_energy(),
//! em_pd_get_efficient_state()), kernel/power/energy_model.c (em_compute_costs()).
//! Text read (search tools, torvalds/linux as stored): fair.c and cpufreq_schedutil.c at
//! the 5.8-era revision the index holds (feec with the 6 % margin, schedutil_cpu_util());
//! the 6.x forms named in each module (margin removed in 6.0, util_fits_cpu() in 6.2,
//! util_est simplified in 6.8) are re-expressed from the commits that changed them, each
//! named (their hashes and titles checked against the mailing-list text the search tools
//! hold; their code was not read).
//! Switches, in `features.rs` with the engine glue (sched/cpufreq.rs, fair/energy.rs):
//! ENERGY_AWARE 5.0+ (732cd75b8c92, sysctl
//! kernel.sched_energy_aware), UTIL_EST 4.17+ (7f65ea42eb00), UTIL_EST_FASTUP 5.5+
//! (b8c96361402a; permanent from 6.8, 7736ae55ba6d removed the switch), UCLAMP 5.3+
//! (69842cba9ace, CONFIG_UCLAMP_TASK).
//! Model: no `Simulator` here. Each function takes the numbers the kernel reads
//! (utilizations, capacities, clamps, the EM table) and returns what the kernel would
//! decide; the engine glue feeds them from the runqueues and tasks.

pub mod check;
pub mod energy;
pub mod schedutil;
pub mod util_est;

#[cfg(test)]
mod tests;

/// SCHED_CAPACITY_SHIFT (include/linux/sched.h): capacities and utilizations are in 1/1024.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// SCHED_CAPACITY_SCALE = 1 << SCHED_CAPACITY_SHIFT.
pub const SCHED_CAPACITY_SCALE: u64 = 1 << SCHED_CAPACITY_SHIFT;

/// fits_capacity() (fair.c, 5.6+; the margin is declared there as "~20%"): `cap` fits
/// `max` when cap x 1280 < max x 1024, i.e. the CPU keeps 20 % headroom.
#[inline]
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

/// A task's or a runqueue's utilization clamps (`uclamp_se` values, UCLAMP 5.3+).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uclamp {
    /// UCLAMP_MIN: the utilization the task asks to be treated as at least.
    pub min: u64,
    /// UCLAMP_MAX: the utilization the task's demand is capped at.
    pub max: u64,
}

impl Uclamp {
    /// No clamping: [0, SCHED_CAPACITY_SCALE] (the root group's and a task's default).
    pub const NONE: Uclamp = Uclamp { min: 0, max: SCHED_CAPACITY_SCALE };
}

impl Default for Uclamp {
    fn default() -> Self {
        Uclamp::NONE
    }
}

/// The rq-level clamps: the max of each clamp over the RUNNABLE tasks (uclamp_rq_inc()'s
/// max aggregation over the per-bucket refcounts). An empty rq has no clamps (`None`,
/// uclamp_rq_is_idle()).
pub fn uclamp_rq_aggregate<I: IntoIterator<Item = Uclamp>>(runnable: I) -> Option<Uclamp> {
    runnable.into_iter().fold(None, |acc, c| match acc {
        None => Some(c),
        Some(a) => Some(Uclamp { min: a.min.max(c.min), max: a.max.max(c.max) }),
    })
}

/// uclamp_rq_util_with() (sched.h, 5.3+; the idle-rq rule is 6.0's): clamps `util` by the
/// rq's aggregated clamps, max-combined with those of task `p` about to be placed there.
/// An idle rq contributes nothing (only `p`'s clamps apply). A min above the max wins.
pub fn uclamp_rq_util_with(util: u64, rq: Option<Uclamp>, p: Option<Uclamp>) -> u64 {
    let (mut lo, mut hi) = match rq {
        Some(r) => (r.min, r.max),
        None => (0, 0),
    };
    match p {
        Some(t) => {
            lo = lo.max(t.min);
            hi = hi.max(t.max);
        }
        None if rq.is_none() => return util,
        None => {}
    }
    if lo >= hi {
        return lo;
    }
    util.clamp(lo, hi)
}
