//! The energy-aware half's run state: per-task util_est and clamps, one cpufreq policy
//! per performance domain with its OPP residency (the behaviour is sched/cpufreq.rs and
//! fair/energy.rs; the rules are eas/). The per-rq util_est sums and clamps are the
//! `Rq`'s, the performance domains and the overutilized flag the `RootDomain`'s.
//!
//! Mirrors: include/linux/sched.h `struct util_est` and `uclamp_se` in task_struct;
//! kernel/sched/cpufreq_schedutil.c `struct sugov_policy` per policy.
//! Model: util_est and uclamp are kept (`tracked`) on the runs that read them: schedutil,
//! EAS and, on machines of asymmetric capacity with PELT, misfit and
//! select_idle_capacity() (fair/asym.rs); the kernel keeps them on every run. The
//! policies, the overutilized flag and the OPP residency exist only when the machine
//! has an Energy Model and the scenario asks for schedutil (`[kernel] governor`): with
//! the performance governor, the default, every CPU stays at its top OPP.

use crate::eas::energy::FeecRules;
use crate::eas::schedutil::SugovPolicy;
use crate::eas::util_est::{UtilEst, UtilEstForm};
use crate::eas::Uclamp;
use crate::time::Ns;

/// rate_limit_us when the driver declares no transition latency: cpufreq.c
/// cpufreq_policy_transition_delay_us() returns LATENCY_MULTIPLIER (1000) us then.
/// Declared (kernel default); gs101's cpufreq driver value was not found.
pub const RATE_LIMIT_NS: Ns = 1_000_000;

/// A task's energy-aware state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TaskEas {
    /// p->se.avg.util_est.
    pub(crate) util_est: UtilEst,
    /// The estimate util_est_enqueue() added to a CPU's sum, while it is there.
    pub(crate) in_rq: Option<(usize, u64)>,
    /// util_avg at that enqueue (UTIL_AVG_UNCHANGED is clear when it moved).
    pub(crate) util_at_enqueue: u64,
    /// uclamp_eff_value(p, MIN / MAX) (sched_setattr's util_min / util_max).
    pub(crate) uclamp: Uclamp,
    /// Counted in its CPU's clamp aggregation, with the effective clamps counted.
    pub(crate) clamp_cpu: Option<(usize, Uclamp)>,
}

/// The energy-aware state of a run.
#[derive(Debug, Default)]
pub(crate) struct EasState {
    /// schedutil drives the clusters' frequencies (an EM and `governor = "schedutil"`).
    pub(crate) schedutil: bool,
    /// util_est and uclamp are kept (a run that reads them: the per-task records here and
    /// the per-rq sums in `Rq`).
    pub(crate) tracked: bool,
    /// The nohz blocked-load update of idle CPUs runs (nohz.has_blocked; see
    /// fair/energy.rs for the runs that have it).
    pub(crate) nohz_blocked: bool,
    /// sched_energy_enabled(): ENERGY_AWARE, an EM and schedutil on every policy (the
    /// kernel's build_perf_domains() refuses EAS under any other governor).
    pub(crate) feec: bool,
    /// UTIL_EST (read by feec, schedutil, misfit and the asymmetric wakeup path).
    pub(crate) util_est_on: bool,
    /// UTIL_EST_FASTUP.
    pub(crate) fastup: bool,
    /// The util_est form of the profile.
    pub(crate) form: Option<UtilEstForm>,
    /// feec's rules of the profile.
    pub(crate) rules: Option<FeecRules>,
    /// uclamp_is_used(): some task set a clamp (UCLAMP on).
    pub(crate) uclamp_used: bool,
    /// Per task group: its effective clamps (cpu.uclamp.min/max capped by the parent's
    /// effective ones; empty when no group sets any).
    pub(crate) tg_uclamp: Vec<Uclamp>,
    /// One policy per performance domain (`rd.pd`'s order).
    pub(crate) policies: Vec<SugovPolicy>,
    /// Per CPU, per OPP of its domain: busy time spent at it.
    pub(crate) opp_busy: Vec<Vec<Ns>>,
    /// Per CPU: its busy time when `opp_busy` was last brought up to date.
    pub(crate) busy_mark: Vec<Ns>,
    /// Per task.
    pub(crate) tasks: Vec<TaskEas>,
    /// Frequency changes made.
    pub(crate) freq_changes: u64,
    /// Wakeups feec placed.
    pub(crate) feec_placements: u64,
    /// nohz.has_blocked: an idle CPU may still hold blocked load (set at idle entry).
    pub(crate) nohz_has_blocked: bool,
    /// nohz.next_blocked: the earliest next update of idle CPUs' blocked load.
    pub(crate) nohz_next_blocked: Ns,
    /// When rd->overutilized was last set (None: clear now).
    pub(crate) overutilized_since: Option<Ns>,
    /// Time rd->overutilized spent set, closed intervals.
    pub(crate) overutilized_ns: Ns,
    /// Times rd->overutilized changed (sched_overutilized_tp events).
    pub(crate) overutilized_changes: u64,
    /// The LISA-style check's record of feec decisions (RunOptions::eas_check; None: off).
    pub(crate) check: Option<Vec<crate::eas::check::FeecDecision>>,
}

impl EasState {
    /// The per-task record (tasks forked later grow the table).
    #[inline]
    pub(crate) fn task(&mut self, p: usize) -> &mut TaskEas {
        if p >= self.tasks.len() {
            self.tasks.resize(p + 1, TaskEas::default());
        }
        &mut self.tasks[p]
    }

    /// uclamp_eff_value(): the task's requested clamps (none recorded: no clamp) restricted
    /// by its group's effective ones (uclamp_tg_restrict(), 5.13+: each clamped into
    /// [tg min, tg max]; a task in the root group is not restricted).
    #[inline]
    pub(crate) fn uclamp_of(&self, p: usize, group: usize) -> Uclamp {
        let r = self.tasks.get(p).map_or(Uclamp::NONE, |t| t.uclamp);
        match self.tg_uclamp.get(group) {
            Some(tg) if group != 0 => Uclamp { min: r.min.clamp(tg.min, tg.max), max: r.max.clamp(tg.min, tg.max) },
            _ => r,
        }
    }

    /// The running frequency of performance domain `pd` against its top one, when below
    /// the top (under schedutil).
    #[inline]
    pub(crate) fn slowed(&self, pd: usize) -> Option<(u64, u64)> {
        let p = &self.policies[pd];
        let max = p.max_khz();
        (p.cur_khz != max).then_some((p.cur_khz, max))
    }
}
