//! The engine's side of energy-aware placement: the root domain's snapshot that
//! find_energy_efficient_cpu() reads at a wakeup, the overutilized flag where the kernel
//! updates it, and the load balancer standing aside while EAS places tasks.
//!
//! Mirrors: kernel/sched/fair.c select_task_rq_fair() (feec first for a wakeup when
//! sched_energy_enabled()), check_update_overutilized_status() (enqueue_task_fair() of a
//! task that is not new, task_tick_fair()), update_sd_lb_stats() (the root level sets or
//! clears rd->overutilized) and find_busiest_group()'s `out_balanced` while EAS is on and
//! the root domain is not overutilized.
//! Model: the snapshot is every CPU's root cfs_rq util_avg as it stands (the kernel reads
//! the remote CPUs' averages unsynced too), the rq's util_est sum, its clamps; the waking
//! task's util synced to now (sync_entity_load_avg()). The rules are eas/energy.rs.

use crate::eas::check::{FeecCheckSummary, FeecDecision};
use crate::eas::energy::{CpuSnap, EasSnapshot, TaskSnap};
use crate::eas::util_est::cpu_util;
use crate::state::task::TaskId;
use crate::state::Simulator;

impl Simulator {
    /// The cfs util of `cpu` as cpu_util(cpu, NULL, -1) with util_est.
    pub(crate) fn eas_cpu_util(&self, cpu: usize) -> u64 {
        let util_avg = self.fg.cfs[self.root_cfs(cpu)].avg.util_avg;
        let est = self.rqs[cpu].util_est.enqueued;
        cpu_util(cpu, util_avg, est, self.capacity(cpu), None, None, self.eas.util_est_on)
    }

    /// find_energy_efficient_cpu() for a waking `p` last on `prev`: None when EAS does
    /// not decide (off, or the root domain is overutilized).
    pub(crate) fn find_energy_efficient_cpu(&mut self, p: TaskId, prev: usize) -> Option<usize> {
        if !self.eas.feec || self.rd.overutilized.overutilized {
            return None;
        }
        let form = self.eas.form.expect("set with feec");
        let util_est = if self.eas.util_est_on { self.eas.task(p).util_est.task_util_est(form) } else { 0 };
        let task = TaskSnap {
            util_avg: self.task_util_synced(p),
            util_est,
            uclamp: self.eas.uclamp_of(p, self.task_group(p)),
            prev_cpu: prev,
            allowed: (0..self.m.nr_cpus()).map(|c| self.tasks[p].cpus_allowed.test(c)).collect(),
        };
        let cpus = (0..self.m.nr_cpus())
            .map(|c| CpuSnap {
                capacity: self.capacity(c),
                util_avg: self.fg.cfs[self.root_cfs(c)].avg.util_avg,
                util_est: self.rqs[c].util_est.enqueued,
                uclamp: if self.eas.uclamp_used { self.rqs[c].uclamp_aggregate() } else { None },
                pd: self.rd.pd.of_cpu[c],
            })
            .collect();
        // The domains' cost tables move into the snapshot and back (no copy per wakeup).
        let snap =
            EasSnapshot { cpus, pds: std::mem::take(&mut self.rd.pd.costs), util_est_on: self.eas.util_est_on, uclamp_used: self.eas.uclamp_used };
        let rules = self.eas.rules.expect("set with feec");
        let cpu = snap.find_energy_efficient_cpu(&task, false, rules);
        if let (Some(c), Some(rec)) = (cpu, self.eas.check.as_mut()) {
            rec.push(snap.judge_feec(&task, p, c, rules, self.now));
        }
        self.rd.pd.costs = snap.pds;
        if cpu.is_some() {
            self.eas.feec_placements += 1;
        }
        cpu
    }

    /// The LISA-style check at the end of a run: the decisions of the measured window,
    /// summed into `eas_check_*` summary keys (fractions of the judged decisions).
    pub(crate) fn eas_check_finish(&mut self, result: &mut crate::metrics::RunResult) -> Option<Vec<FeecDecision>> {
        let mut decisions = self.eas.check.take()?;
        if !self.eas.feec {
            return Some(decisions); // no EAS on this run: nothing to sum
        }
        decisions.retain(|d| d.t_ns >= self.measure.from);
        let s = FeecCheckSummary::of(&decisions);
        // A fraction of no decision is left out (JSON has no NaN).
        let frac = |n: u64, of: u64| (of > 0).then(|| n as f64 / of as f64);
        for (k, v) in [
            ("eas_check_decisions", Some(s.decisions as f64)),
            ("eas_check_judged", Some(s.judged as f64)),
            ("eas_check_within_5pct", frac(s.within_5pct, s.judged)),
            ("eas_check_optimal", frac(s.optimal, s.judged)),
            ("eas_check_within_5pct_lisa", frac(s.within_5pct_lisa, s.judged_lisa)),
            ("eas_check_max_excess", Some(s.max_excess)),
            ("eas_check_miss_candidates", Some(s.miss_candidates as f64)),
            ("eas_check_miss_margin", Some(s.miss_margin as f64)),
            ("eas_check_miss_fits_order", Some(s.miss_fits_order as f64)),
        ] {
            if let Some(v) = v {
                result.summary.insert(k.to_string(), v);
            }
        }
        Some(decisions)
    }

    /// cpu_overutilized() of `cpu` now.
    fn eas_cpu_overutilized(&self, cpu: usize) -> bool {
        let cl = if self.eas.uclamp_used { self.rqs[cpu].uclamp_aggregate().unwrap_or_default() } else { Default::default() };
        crate::eas::energy::cpu_overutilized(self.eas_cpu_util(cpu), self.capacity(cpu), cl, self.eas.uclamp_used)
    }

    /// set_rd_overutilized(): the flag's new value, its changes counted and timed (the
    /// kernel's sched_overutilized_tp fires at each write; only changes are kept here).
    fn set_rd_overutilized(&mut self, flag: bool) {
        if flag == self.rd.overutilized.overutilized {
            return;
        }
        if flag {
            self.rd.overutilized.on_enqueue(true);
            self.eas.overutilized_since = Some(self.now);
        } else {
            self.rd.overutilized.on_root_balance([false]);
            if let Some(since) = self.eas.overutilized_since.take() {
                self.eas.overutilized_ns += self.now - since;
            }
        }
        self.eas.overutilized_changes += 1;
    }

    /// Time the flag has been set, up to now.
    pub(crate) fn eas_overutilized_ns(&self) -> crate::time::Ns {
        self.eas.overutilized_ns + self.eas.overutilized_since.map_or(0, |s| self.now - s)
    }

    /// check_update_overutilized_status(): an enqueue (not a new task's) or a tick on
    /// `cpu` sets the flag when the CPU is overutilized; only the balancer clears it.
    pub(crate) fn check_update_overutilized_status(&mut self, cpu: usize) {
        if !self.eas.feec || self.rd.overutilized.overutilized {
            return;
        }
        if self.eas_cpu_overutilized(cpu) {
            self.set_rd_overutilized(true);
        }
    }

    /// update_sd_lb_stats()'s flag at a load_balance() of `cpu` at `level` (the root
    /// level sets or clears it, a lower one may only set it), then whether
    /// find_busiest_group() stops there: EAS is on and nothing is overutilized. The
    /// remote CPUs' util is read as it stands: an idle CPU's decays only when its blocked
    /// load is updated (eas_nohz_stats()).
    pub(crate) fn eas_balance_stands_aside(&mut self, cpu: usize, level: usize) -> bool {
        if !self.eas.feec {
            return false;
        }
        let any = self.m.domains[cpu][level].span.iter().any(|c| self.eas_cpu_overutilized(c));
        if level + 1 == self.m.domains[cpu].len() || any {
            self.set_rd_overutilized(any);
        }
        !self.rd.overutilized.overutilized
    }

    /// Whether the idle CPUs' blocked load is decayed by the nohz stats update. The kernel
    /// runs it on every NO_HZ_COMMON kernel, whatever the governor. Its readers here are
    /// schedutil's policy util and EAS (feec's snapshot, cpu_overutilized()) on
    /// `schedutil` runs. On every run with PELT they are also the load balancer's group
    /// load and util of idle CPUs (update_sg_lb_stats()), find_idlest_group() at fork and
    /// exec, SIS_UTIL's LLC util and the idle governor's utilized test.
    /// Model: kept on schedutil runs and on machines of asymmetric capacity with PELT
    /// (the phones, where the capacity paths of this model live). Symmetric runs still
    /// keep an idle CPU's averages until it balances itself. Turning the update on for
    /// them is `schedutil || self.pelt_on()`; measured at issue-34g, that moved 585 of
    /// the 918 identity cases (shared-runq, fibtest, mm_cid, timers-dbench, swqueue,
    /// bandwidth what-ifs), so it is left for a change of its own.
    pub(crate) fn nohz_blocked_readers(&self, schedutil: bool) -> bool {
        schedutil || (self.pelt_on() && self.balance.asym_capacity)
    }

    /// nohz_newidle_balance() for a CPU about to idle (its newidle balance pulled nothing):
    /// when it expects to stay idle at least sched_migration_cost and nohz.next_blocked
    /// has passed, it updates the blocked load of the idle CPUs before entering idle
    /// (nohz_run_idle_balance() -> _nohz_idle_balance(NOHZ_STATS_KICK)).
    pub(crate) fn nohz_newidle_balance(&mut self, cpu: usize) {
        if !self.eas.nohz_blocked {
            return;
        }
        self.eas.nohz_has_blocked = true; // nohz_balance_enter_idle(): this CPU's load is blocked now
        if self.rqs[cpu].avg_idle < self.k.tunables.sched_migration_cost_ns {
            return;
        }
        self.eas_nohz_stats(cpu);
    }

    /// The NOHZ_STATS_KICK a busy CPU's tick sends (nohz_balancer_kick(): nohz.has_blocked
    /// and nohz.next_blocked passed): an idle CPU updates every idle CPU's blocked load.
    /// True if the kick went out.
    pub(crate) fn nohz_stats_kick(&mut self, cpu: usize, ilb: usize) -> bool {
        if !self.eas.nohz_blocked || !self.eas.nohz_has_blocked || self.now <= self.eas.nohz_next_blocked {
            return false;
        }
        self.send_ipi(cpu, ilb);
        self.eas_nohz_stats(ilb);
        true
    }

    /// The stats part of a balance kick already sent to `ilb`.
    pub(crate) fn nohz_stats_with_balance(&mut self, ilb: usize) {
        if self.eas.nohz_blocked && self.eas.nohz_has_blocked && self.now > self.eas.nohz_next_blocked {
            self.eas_nohz_stats(ilb);
        }
    }

    /// _nohz_idle_balance(NOHZ_STATS_KICK) run by `by`: update_nohz_stats() of every
    /// idle CPU, nohz.next_blocked moved LOAD_AVG_PERIOD ms on, nohz.has_blocked kept
    /// while some idle CPU still has blocked util or load.
    /// Model: on the runs of [`Self::nohz_blocked_readers`]; the others keep an idle CPU's
    /// averages until it balances itself.
    fn eas_nohz_stats(&mut self, _by: usize) {
        if !self.eas.nohz_has_blocked || self.now < self.eas.nohz_next_blocked {
            return;
        }
        let mut blocked = false;
        for c in 0..self.m.nr_cpus() {
            if !self.cpu_is_idle(c) {
                continue;
            }
            self.update_blocked_averages(c);
            let avg = &self.fg.cfs[self.root_cfs(c)].avg;
            blocked |= avg.util_sum > 0 || avg.load_sum > 0;
        }
        self.eas.nohz_has_blocked = blocked;
        // msecs_to_jiffies(LOAD_AVG_PERIOD): 32 ms in whole jiffies.
        let j = self.tick.period_ns.max(1);
        self.eas.nohz_next_blocked =
            self.now + LOAD_AVG_PERIOD_MS * 1_000_000 / j * j + if !(LOAD_AVG_PERIOD_MS * 1_000_000).is_multiple_of(j) { j } else { 0 };
    }
}

/// LOAD_AVG_PERIOD (kernel/sched/sched-pelt.h, 32): used by _nohz_idle_balance() as
/// milliseconds between blocked-load updates. Declared (kernel constant).
const LOAD_AVG_PERIOD_MS: u64 = 32;
