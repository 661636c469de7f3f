//! The LISA-style check of an energy-aware wakeup: the energy of the CPU
//! find_energy_efficient_cpu() chose against the best placement found by trying every
//! allowed CPU, on the very snapshot feec read.
//!
//! Mirrors: nothing in the kernel. LISA's EAS behaviour tests
//! (lisa/tests/scheduler/eas_behaviour.py, EASBehaviour.test_task_placement(), read with
//! the search tools at ARM-software/lisa): the energy the trace's placement would cost,
//! integrated over the run from the rt-app profile's declared duty cycles and the
//! platform's EM (every CPU at the OPP its util needs, idle power included), must stay
//! within `energy_est_threshold_pct` (5 %; 15-20 % for RampUp, RampDown, ThreeSmallTasks)
//! of the optimal placement's, found by brute force over every task's CPU
//! (EnergyModel.get_optimal_placements(): placements that leave no CPU above its
//! capacity).
//! How this differs: it judges each decision, one task at a time with the others where
//! they are, on the kernel's own inputs at that instant (PELT/util_est, not declared duty
//! cycles) and on compute_energy()'s estimate (active energy of the busy time at each
//! domain's OPP, no idle power); a whole-run energy integral over all tasks' joint
//! placement is not computed. Two sets of CPUs stand for "the search can place it
//! there": the kernel's (util_fits_cpu() != 0: 20 % headroom, clamps) and LISA's (the
//! CPU's util with the task at or under its capacity).
//! Why a choice can miss: feec tries only the CPU with the most spare capacity in each
//! domain (and prev_cpu), 5.x keeps prev_cpu unless the best saves more than 1/16 of
//! prev's delta plus the base energy, and 6.2+ prefers a candidate that fits fully to one
//! that fits only without its uclamp_min hint, whatever the energy.

use super::energy::{EasSnapshot, FeecRules, TaskSnap};
use super::fits_capacity;
use super::uclamp_rq_util_with;
use super::util_est::cpu_util;

/// The tolerance LISA's test_task_placement() defaults to: 5 % over the best.
pub const LISA_THRESHOLD_PCT: u64 = 5;

/// Why a decision's energy is more than 5 % over the best.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeecMiss {
    /// Within 5 % of the best (no miss).
    Within,
    /// No candidate (its domain's max-spare-capacity CPU, or prev_cpu) is as cheap as the
    /// best CPU: the restriction itself cost energy. A candidate as cheap as the best
    /// (a tie, e.g. two idle CPUs of one domain) is not this miss.
    Candidates,
    /// 5.x: the best was a candidate, but it did not save the 1/16 margin over prev_cpu.
    Margin,
    /// 6.2+: the best was a candidate, but one fitting better (util_fits_cpu() 1 against
    /// -1: the uclamp_min hint) or of a bigger capacity among -1s won.
    FitsOrder,
    /// No allowed CPU fits the task (feec keeps prev_cpu or the biggest): not judged.
    NoFit,
}

/// One feec decision as recorded during a run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FeecDecision {
    /// Simulated time, ns.
    pub t_ns: u64,
    /// The waking task (pid).
    pub task: usize,
    /// Its prev_cpu.
    pub prev_cpu: usize,
    /// The CPU feec chose.
    pub cpu: usize,
    /// The root domain's energy (compute_energy() summed over the domains) with the task there.
    pub energy: u64,
    /// The energy with the task on no CPU (the base).
    pub base_energy: u64,
    /// The cheapest allowed CPU the kernel would call fitting (util_fits_cpu() != 0), and its energy.
    pub best_cpu: Option<usize>,
    /// Its energy.
    pub best_energy: Option<u64>,
    /// The cheapest allowed CPU by LISA's rule (util with the task <= capacity).
    pub best_lisa_cpu: Option<usize>,
    /// Its energy.
    pub best_lisa_energy: Option<u64>,
    /// The cheapest of feec's candidates that fit (what feec could at best have chosen).
    pub best_candidate_energy: Option<u64>,
    /// The task's util as feec read it (max of util_avg and util_est).
    pub task_util: u64,
    /// Against the kernel-rule best.
    pub miss: FeecMiss,
}

impl FeecDecision {
    /// energy / best_energy - 1, if judged.
    pub fn excess(&self) -> Option<f64> {
        self.best_energy.filter(|&b| b > 0).map(|b| self.energy as f64 / b as f64 - 1.0)
    }
}

/// Whether `e` is within LISA's 5 % of `best`.
#[inline]
pub fn within(e: u64, best: u64) -> bool {
    e * 100 <= best * (100 + LISA_THRESHOLD_PCT)
}

impl EasSnapshot {
    /// The candidates feec evaluates: per domain the CPU with the most spare capacity
    /// among those that fit (6.2+: best fit first, prev_cpu apart), and prev_cpu if it
    /// fits. The same selection as find_energy_efficient_cpu(), kept apart from it so
    /// the check cannot change a decision.
    pub fn feec_candidates(&self, p: &TaskSnap, rules: FeecRules) -> Vec<usize> {
        let mut out = Vec::new();
        for pd in 0..self.pds.len() {
            let mut best: Option<(i32, u64, usize)> = None;
            let mut prev_spare = None;
            for cpu in self.pd_cpus(pd).filter(|&c| p.allowed[c]) {
                let util = self.cpu_util(cpu, p, Some(cpu));
                let cap = self.cpus[cpu].capacity;
                let fits = self.fits_for_feec(p, cpu, util, rules);
                if fits == 0 {
                    continue;
                }
                let spare = cap.saturating_sub(util);
                if cpu == p.prev_cpu {
                    out.push(cpu);
                    if rules == FeecRules::V6 {
                        prev_spare = Some(spare);
                        continue;
                    }
                }
                let better = match (rules, best) {
                    (_, None) => rules == FeecRules::V6 || spare > 0,
                    (FeecRules::Margin, Some((_, s, _))) => spare > s,
                    (FeecRules::V6, Some((f, s, _))) => fits > f || (fits == f && spare > s),
                };
                if better {
                    best = Some((fits, spare, cpu));
                }
            }
            // 6.x evaluates the domain's candidate only if it has more spare than prev_cpu.
            if let Some((_, _, c)) = best.filter(|b| prev_spare.is_none_or(|ps| b.1 > ps)) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// util_fits_cpu() as each rule set applies it (5.x: fits_capacity() on the clamped util).
    fn fits_for_feec(&self, p: &TaskSnap, cpu: usize, util: u64, rules: FeecRules) -> i32 {
        let cap = self.cpus[cpu].capacity;
        match rules {
            FeecRules::Margin => {
                let clamped = if self.uclamp_used { uclamp_rq_util_with(util, self.cpus[cpu].uclamp, Some(p.uclamp)) } else { util };
                fits_capacity(clamped, cap) as i32
            }
            FeecRules::V6 => {
                let (mut umin, mut umax) = if self.uclamp_used { (p.uclamp.min, p.uclamp.max) } else { (0, super::SCHED_CAPACITY_SCALE) };
                if let (true, Some(rq)) = (self.uclamp_used, self.cpus[cpu].uclamp) {
                    umin = umin.max(rq.min);
                    umax = umax.max(rq.max);
                }
                self.util_fits_cpu(util, umin, umax, cpu)
            }
        }
    }

    /// The CPU's util with the task placed there, not capped at its capacity.
    fn util_with_uncapped(&self, cpu: usize, p: &TaskSnap) -> u64 {
        let c = &self.cpus[cpu];
        let t = super::util_est::TaskAt { cpu: p.prev_cpu, util_avg: p.util_avg, util_est: p.util_est, queued: false };
        cpu_util(cpu, c.util_avg, c.util_est, u64::MAX, Some(t), Some(cpu), self.util_est_on)
    }

    /// Judges feec's `chosen` CPU for `p` at `t_ns` against every allowed CPU.
    pub fn judge_feec(&self, p: &TaskSnap, task: usize, chosen: usize, rules: FeecRules, t_ns: u64) -> FeecDecision {
        let energy_of: Vec<Option<u64>> = (0..self.cpus.len()).map(|c| p.allowed[c].then(|| self.total_energy(p, c))).collect();
        let cheapest = |ok: &dyn Fn(usize) -> bool| (0..self.cpus.len()).filter(|&c| ok(c)).filter_map(|c| energy_of[c].map(|e| (e, c))).min();
        let kernel = cheapest(&|c| self.fits_for_feec(p, c, self.cpu_util(c, p, Some(c)), rules) != 0);
        let lisa = cheapest(&|c| self.util_with_uncapped(c, p) <= self.cpus[c].capacity);
        let energy = self.total_energy(p, chosen);
        let best_candidate_energy = self.feec_candidates(p, rules).into_iter().filter_map(|c| energy_of[c]).min();
        let miss = match kernel {
            None => FeecMiss::NoFit,
            Some((best, _)) if within(energy, best) => FeecMiss::Within,
            Some((best, _)) => {
                // Judged by energy, not by CPU: the search breaks ties by CPU number,
                // feec by spare capacity, so the "best CPU" of a tie says nothing.
                if best_candidate_energy.is_none_or(|e| e > best) {
                    FeecMiss::Candidates
                } else if rules == FeecRules::Margin {
                    FeecMiss::Margin
                } else {
                    FeecMiss::FitsOrder
                }
            }
        };
        let base_energy = (0..self.pds.len()).map(|pd| self.compute_energy(pd, p, None)).sum();
        FeecDecision {
            t_ns,
            task,
            prev_cpu: p.prev_cpu,
            cpu: chosen,
            energy,
            base_energy,
            best_cpu: kernel.map(|(_, c)| c),
            best_energy: kernel.map(|(e, _)| e),
            best_lisa_cpu: lisa.map(|(_, c)| c),
            best_lisa_energy: lisa.map(|(e, _)| e),
            best_candidate_energy,
            task_util: p.util_avg.max(p.util_est),
            miss,
        }
    }
}

/// What a run's decisions add up to (per run; the Python side groups them per task).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FeecCheckSummary {
    /// Decisions recorded (feec placed the wakeup).
    pub decisions: u64,
    /// Decisions with a fitting CPU (judged).
    pub judged: u64,
    /// Judged decisions within 5 % of the kernel-rule best.
    pub within_5pct: u64,
    /// Judged decisions on the kernel-rule best CPU's energy exactly.
    pub optimal: u64,
    /// Decisions within 5 % of LISA's best (CPUs filled to their capacity allowed).
    pub within_5pct_lisa: u64,
    /// Decisions with a LISA-rule best.
    pub judged_lisa: u64,
    /// Misses by cause.
    pub miss_candidates: u64,
    /// Misses by cause.
    pub miss_margin: u64,
    /// Misses by cause.
    pub miss_fits_order: u64,
    /// The largest excess over the kernel-rule best (energy / best - 1).
    pub max_excess: f64,
}

impl FeecCheckSummary {
    /// Sums `decisions`.
    pub fn of(decisions: &[FeecDecision]) -> Self {
        let mut s = FeecCheckSummary { decisions: decisions.len() as u64, ..Default::default() };
        for d in decisions {
            if let Some(b) = d.best_energy {
                s.judged += 1;
                s.within_5pct += within(d.energy, b) as u64;
                s.optimal += (d.energy == b) as u64;
                s.max_excess = s.max_excess.max(d.excess().unwrap_or(0.0));
            }
            if let Some(b) = d.best_lisa_energy {
                s.judged_lisa += 1;
                s.within_5pct_lisa += within(d.energy, b) as u64;
            }
            match d.miss {
                FeecMiss::Candidates => s.miss_candidates += 1,
                FeecMiss::Margin => s.miss_margin += 1,
                FeecMiss::FitsOrder => s.miss_fits_order += 1,
                FeecMiss::Within | FeecMiss::NoFit => {}
            }
        }
        s
    }
}
