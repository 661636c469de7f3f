//! The engine's side of cpufreq and of the per-task estimates: building the policies
//! (one per performance domain), cpufreq_update_util() where the scheduler calls it, a
//! frequency change re-timing the work running on the cluster, util_est and uclamp
//! bookkeeping at enqueue and dequeue, and the energy of the OPPs actually used.
//!
//! Mirrors: kernel/sched/sched.h cpufreq_update_util() (called from enqueue_task_fair(),
//! dequeue_task_fair(), the tick's update_load_avg() through cfs_rq_util_change(), and
//! attach/detach at migrations), kernel/sched/fair.c util_est_enqueue(),
//! util_est_dequeue(), util_est_update(), kernel/sched/core.c uclamp_rq_inc()/dec(),
//! kernel/sched/topology.c build_perf_domains() (EAS needs schedutil on every policy).
//! Model: fast switching (the new OPP applies at once). Work runs at capacity x cur/max
//! of the top-OPP speed; PELT is frequency-invariant (sched/account.rs and fair/pelt.rs
//! read `speed_of`). Energy: each CPU's busy time is charged at the power of the OPP its
//! cluster ran at; the rest of its awake time (idle entry/exit, outside any idle state)
//! at the same mix. Tasks carry their clamps from sched_attr's util_min/util_max.

use crate::eas::energy::{FeecRules, PerfDomainCosts};
use crate::eas::schedutil::{CpuUtilInput, Governor, SugovPolicy};
use crate::eas::util_est::UtilEstForm;
use crate::eas::Uclamp;
use crate::features::Feature;
use crate::state::cpufreq::{EasState, RATE_LIMIT_NS};
use crate::state::root_domain::PerfDomains;
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    /// Keeps util_est and uclamp where the run has a reader of them, and builds the
    /// policies when the machine has an Energy Model on every CPU and the scenario asks
    /// for schedutil (otherwise: performance).
    /// Model: the kernel keeps them on every run whatever the governor; their readers
    /// here are schedutil and EAS, and with PELT on a machine of asymmetric capacity
    /// misfit and select_idle_capacity() (fair/asym.rs). Elsewhere nothing reads them, so
    /// they are not kept: the same results without their bookkeeping on every enqueue
    /// and dequeue.
    pub(crate) fn setup_cpufreq(&mut self, governor: Governor) {
        let nr = self.m.nr_cpus();
        let schedutil = governor == Governor::Schedutil && nr > 0 && (0..nr).all(|c| self.m.perf_domain(c).is_some());
        let readers = schedutil || (self.pelt_on() && self.balance.asym_capacity);
        let mut e = EasState { schedutil, tracked: readers, ..Default::default() };
        e.nohz_blocked = self.nohz_blocked_readers(schedutil);
        if e.tracked {
            e.util_est_on = self.feat.has(Feature::UTIL_EST);
            e.fastup = self.feat.has(Feature::UTIL_EST_FASTUP);
            e.form = Some(UtilEstForm::of(self.k.version));
        }
        if !schedutil {
            self.eas = e;
            return;
        }
        let mut pd_of_driver = vec![usize::MAX; self.m.idle_drivers.len()];
        let mut pds = PerfDomains::default();
        for cpu in 0..nr {
            let d = self.m.cpu_idle_driver[cpu];
            if pd_of_driver[d] == usize::MAX {
                let em = self.m.perf_domain(cpu).expect("checked");
                pd_of_driver[d] = pds.costs.len();
                pds.costs.push(PerfDomainCosts::from_em(em, self.capacity(cpu)));
                pds.names.push(em.name.clone());
                pds.cpus.push(Vec::new());
            }
            pds.of_cpu.push(pd_of_driver[d]);
            pds.cpus[pd_of_driver[d]].push(cpu);
        }
        for (pd, costs) in pds.costs.iter().enumerate() {
            e.policies.push(SugovPolicy::new(costs.table_khz(), pds.cpus[pd].len(), RATE_LIMIT_NS, Governor::Schedutil));
        }
        e.opp_busy = (0..nr).map(|c| vec![0; pds.costs[pds.of_cpu[c]].states.len()]).collect();
        e.busy_mark = vec![0; nr];
        e.feec = self.feat.has(Feature::ENERGY_AWARE);
        e.rules = Some(FeecRules::of(self.k.version));
        self.eas = e;
        self.rd.pd = pds;
    }

    /// `[kernel.schedutil]`: each policy's rate limits, mainline's one or the Android
    /// split. Refused without schedutil policies to apply them to.
    pub(crate) fn set_schedutil_limits(&mut self, su: &crate::scenario::SchedutilSpec) -> Result<(), crate::error::ScenarioError> {
        if !self.eas.schedutil {
            return Err(crate::error::ScenarioError::new(
                "kernel.schedutil",
                "needs governor = \"schedutil\" on a machine with an Energy Model (no schedutil policy to apply it to)",
            ));
        }
        let limits = su
            .resolve(self.eas.policies.len(), RATE_LIMIT_NS / 1000)
            .map_err(|(f, m)| crate::error::ScenarioError::new(format!("kernel.schedutil.{f}"), m))?;
        for (pol, (base, split)) in self.eas.policies.iter_mut().zip(limits) {
            pol.rate_limit_ns = base * 1000;
            if let Some((up, down)) = split {
                pol.set_up_down(up * 1000, down * 1000);
            }
        }
        Ok(())
    }

    /// sched_setattr()'s util_min / util_max for task `p` (UCLAMP), on every run that
    /// keeps util_est and uclamp.
    pub(crate) fn set_task_uclamp(&mut self, p: TaskId, min: Option<u32>, max: Option<u32>) {
        if !self.eas.tracked || !self.feat.has(Feature::UCLAMP) || (min.is_none() && max.is_none()) {
            return;
        }
        let c = Uclamp { min: min.map_or(0, u64::from), max: max.map_or(crate::eas::SCHED_CAPACITY_SCALE, u64::from) };
        self.eas.task(p).uclamp = c;
        self.eas.uclamp_used = true;
    }

    /// cpu.uclamp.min/max of the scenario's groups (UCLAMP_TASK_GROUP, 5.4+): each group's
    /// effective clamps, its request capped by its parent's effective ones, min at most
    /// max (cpu_util_update_eff()); `groups[i]` is task group i + 1, parents before
    /// children. Recorded on every run that keeps uclamp.
    pub(crate) fn set_group_uclamps(&mut self, groups: &[(Option<(u64, u64)>, usize)]) {
        if !self.eas.tracked
            || !self.feat.has(Feature::UCLAMP)
            || self.k.version < crate::kernel::KernelVersion::new(5, 4)
            || groups.iter().all(|g| g.0.is_none())
        {
            return;
        }
        // The root group's clamps are both SCHED_CAPACITY_SCALE (init_uclamp()): no cap.
        let top = crate::eas::SCHED_CAPACITY_SCALE;
        let mut eff = vec![Uclamp { min: top, max: top }];
        for &(req, parent) in groups {
            let (min, max) = req.unwrap_or((0, top));
            let up = eff[parent];
            let max = max.min(up.max);
            eff.push(Uclamp { min: min.min(up.min).min(max), max });
        }
        self.eas.tg_uclamp = eff;
        self.eas.uclamp_used = true;
    }

    /// The speed of work on `cpu` against the top OPP's: Some((cur, max)) kHz when its
    /// cluster runs below the top.
    #[inline]
    pub(crate) fn freq_slowed(&self, cpu: usize) -> Option<(u64, u64)> {
        if !self.eas.schedutil {
            return None;
        }
        self.eas.slowed(self.rd.pd.of_cpu[cpu])
    }

    /// The capacity PELT weighs running time with: capacity x cur/max
    /// (arch_scale_freq_capacity(), update_rq_clock_pelt()).
    #[inline]
    pub(crate) fn pelt_capacity(&self, cpu: usize) -> u64 {
        match self.freq_slowed(cpu) {
            None => self.capacity(cpu),
            Some((cur, max)) => crate::eas::schedutil::cap_scale(self.capacity(cpu), crate::eas::schedutil::arch_scale_freq_capacity(cur, max)),
        }
    }

    /// util_est_enqueue() and uclamp_rq_inc() for `p` entering `cpu`'s runqueue.
    pub(crate) fn eas_enqueue(&mut self, cpu: usize, p: TaskId) {
        if !self.eas.tracked {
            return;
        }
        self.eas_dequeue(p);
        let util = self.tasks[p].se.avg.util_avg;
        let form = self.eas.form.expect("set when tracked");
        let on = self.eas.util_est_on;
        let t = self.eas.task(p);
        let est = if on { t.util_est.task_util_est(form) } else { 0 };
        t.in_rq = Some((cpu, est));
        t.util_at_enqueue = util;
        let used = self.eas.uclamp_used;
        if used {
            let c = self.eas.uclamp_of(p, self.task_group(p));
            self.eas.task(p).clamp_cpu = Some((cpu, c));
            self.rqs[cpu].uclamp.push(c);
        }
        self.rqs[cpu].util_est.enqueue(est);
    }

    /// util_est_dequeue() and uclamp_rq_dec() for `p` leaving its runqueue (idempotent).
    pub(crate) fn eas_dequeue(&mut self, p: TaskId) {
        if !self.eas.tracked {
            return;
        }
        let t = self.eas.task(p);
        let (in_rq, clamp_cpu) = (t.in_rq.take(), t.clamp_cpu.take());
        if let Some((cpu, est)) = in_rq {
            self.rqs[cpu].util_est.dequeue(est);
        }
        if let Some((cpu, c)) = clamp_cpu {
            let v = &mut self.rqs[cpu].uclamp;
            if let Some(i) = v.iter().position(|&x| x == c) {
                v.swap_remove(i);
            }
        }
    }

    /// util_est_update() at a dequeue to sleep of `p` from `cpu`.
    pub(crate) fn eas_util_est_update(&mut self, cpu: usize, p: TaskId) {
        if !self.eas.tracked || !self.eas.util_est_on {
            return;
        }
        let util = self.tasks[p].se.avg.util_avg;
        let (form, fastup, cap) = (self.eas.form.expect("set"), self.eas.fastup, self.capacity(cpu));
        let t = self.eas.task(p);
        let changed = util != t.util_at_enqueue;
        t.util_est.update(form, true, util, changed, cap, fastup);
    }

    /// cpufreq_update_util() on `cpu` (`from_io`: SCHED_CPUFREQ_IOWAIT): its policy
    /// re-evaluates; a new OPP re-times the work running on the cluster.
    pub(crate) fn cpufreq_update_util(&mut self, cpu: usize, from_io: bool) {
        if !self.eas.schedutil {
            return;
        }
        let pd = self.rd.pd.of_cpu[cpu];
        let cpus = std::mem::take(&mut self.rd.pd.cpus[pd]);
        let idx = cpus.iter().position(|&c| c == cpu).unwrap_or(0);
        let inputs: Vec<CpuUtilInput> = cpus
            .iter()
            .map(|&c| {
                let uclamp = if self.eas.uclamp_used { self.rqs[c].uclamp_aggregate() } else { None };
                CpuUtilInput { util: self.eas_cpu_util(c), capacity: self.capacity(c), uclamp }
            })
            .collect();
        let (now, tick_ns) = (self.now, self.tick.period_ns);
        let old = self.eas.policies[pd].cur_khz;
        let changed = self.eas.policies[pd].update_shared(idx, now, tick_ns, from_io, &inputs);
        if let Some(new) = changed {
            // The work so far at the old speed, then every step end at the new one.
            self.eas.policies[pd].cur_khz = old;
            self.account_opp(pd, &cpus);
            for &c in &cpus {
                if self.rqs[c].curr.is_some() {
                    self.advance_progress(c);
                }
            }
            self.eas.policies[pd].cur_khz = new;
            self.eas.freq_changes += 1;
            for &c in &cpus {
                if self.rqs[c].curr.is_some_and(|t| self.tasks[t].state == TaskState::Running) {
                    self.arm_segment(c);
                }
                self.trace_event(c, crate::trace::TraceEvent::CpuFrequency { khz: new as u32 });
            }
        }
        self.rd.pd.cpus[pd] = cpus;
    }

    /// Busy time since the last call charged to the OPP each CPU of `cpus` ran at.
    fn account_opp(&mut self, pd: usize, cpus: &[usize]) {
        let cur = self.eas.policies[pd].cur_khz;
        let opp = self.rd.pd.costs[pd].states.iter().position(|s| s.frequency_khz == cur).unwrap_or(0);
        for &c in cpus {
            let rq = &self.rqs[c];
            let busy: Ns = rq.stats.busy_ns + if rq.curr.is_some() { self.now - rq.state_since } else { 0 };
            self.eas.opp_busy[c][opp] += busy.saturating_sub(self.eas.busy_mark[c]);
            self.eas.busy_mark[c] = busy;
        }
    }

    /// At the end of a run: each CPU's active energy from its OPP residency (the awake
    /// time outside tasks at the same mix), nJ; None under the performance governor.
    pub(crate) fn cpufreq_energy_nj(&mut self, cpu: usize, awake: Ns) -> Option<f64> {
        if !self.eas.schedutil {
            return None;
        }
        let pd = self.rd.pd.of_cpu[cpu];
        self.account_opp(pd, &[cpu]);
        let busy: Ns = self.eas.opp_busy[cpu].iter().sum();
        let at_opps: f64 =
            self.eas.opp_busy[cpu].iter().zip(&self.rd.pd.costs[pd].states).map(|(&ns, s)| s.power_uw as f64 / 1000.0 * ns as f64 / 1000.0).sum();
        Some(if busy > 0 {
            at_opps * awake as f64 / busy as f64
        } else {
            // Awake without running a task: at the OPP the cluster is at.
            let cur = self.eas.policies[pd].cur_khz;
            let p = self.rd.pd.costs[pd].states.iter().find(|s| s.frequency_khz == cur).map_or(0, |s| s.power_uw);
            p as f64 / 1000.0 * awake as f64 / 1000.0
        })
    }

    /// Energy a CPU with an Energy Model spent awake over `awake` ns so far: at the OPPs
    /// it ran at under schedutil, else at the top OPP's power. None without a model.
    pub(crate) fn energy_active_nj(&mut self, cpu: usize, awake: Ns) -> Option<f64> {
        if let Some(nj) = self.cpufreq_energy_nj(cpu, awake) {
            return Some(nj);
        }
        self.m.perf_domain(cpu).map(|pd| pd.active_power_mw() * awake as f64 / 1000.0)
    }

    /// Every cluster's OPP residency brought up to now (the warm-up's baseline reads it).
    pub(crate) fn cpufreq_flush(&mut self) {
        for pd in 0..self.rd.pd.costs.len() {
            let cpus = std::mem::take(&mut self.rd.pd.cpus[pd]);
            self.account_opp(pd, &cpus);
            self.rd.pd.cpus[pd] = cpus;
        }
    }

    /// Per-cluster figures for the summary (additive, so a warm-up subtracts them):
    /// active energy (mJ, at finish), busy seconds, and busy seconds at each OPP used;
    /// without a warm-up, `work_stretch`: the tasks' run time over their work (1 on an
    /// X1 at its top OPP; the latency cost of smaller CPUs and lower OPPs).
    pub(crate) fn cpufreq_summary(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        if !self.eas.schedutil {
            return out;
        }
        for (pd, name) in self.rd.pd.names.iter().enumerate() {
            let cpus = &self.rd.pd.cpus[pd];
            let nj: f64 = cpus.iter().map(|&c| self.rqs[c].stats.energy_active_nj).sum();
            out.push((format!("energy_active_{name}_mj"), nj / 1e6));
            let busy: Ns = cpus.iter().map(|&c| self.rqs[c].stats.busy_ns).sum();
            out.push((format!("busy_{name}_seconds"), busy as f64 / 1e9));
            for (i, s) in self.rd.pd.costs[pd].states.iter().enumerate() {
                let ns: Ns = cpus.iter().map(|&c| self.eas.opp_busy[c][i]).sum();
                if ns > 0 {
                    out.push((format!("opp_busy_{name}_{}mhz_seconds", s.frequency_khz / 1000), ns as f64 / 1e9));
                }
            }
        }
        if self.measure.from == 0 {
            let run: Ns = self.tasks.iter().map(|t| t.stats.run_ns).sum();
            let work: Ns = self.tasks.iter().map(|t| t.stats.work_done_ns).sum();
            out.push(("work_stretch".into(), run as f64 / work.max(1) as f64));
        }
        out.push(("cpufreq_changes".into(), self.eas.freq_changes as f64));
        out.push(("eas_feec_placements".into(), self.eas.feec_placements as f64));
        if self.eas.feec {
            // rd->overutilized: time set and changes (sched_overutilized_tp).
            out.push(("eas_overutilized_seconds".into(), self.eas_overutilized_ns() as f64 / 1e9));
            out.push(("eas_overutilized_changes".into(), self.eas.overutilized_changes as f64));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// util_est is kept whatever the governor, as in the kernel: a task pinned to X1 CPU 6
    /// with uclamp_min = 1024 (so schedutil keeps its cluster at the top OPP, where the
    /// performance governor has it too) runs 30 ms and sleeps; 50 ms into the sleep its
    /// estimate under the performance governor equals the schedutil run's, and is the
    /// util it reached (over 300), not 0.
    #[test]
    fn the_performance_governor_keeps_util_est() {
        let est = |governor: &str| {
            let text = format!(
                "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\ngovernor = \"{governor}\"\n\
                 [[tasks]]\nname = \"t\"\ncpu = 6\naffinity = \"6\"\nsched_attr = {{ util_min = 1024 }}\n\
                 program = [{{ run = \"30ms\" }}, {{ sleep = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let mut s = Simulator::new(&Scenario::from_toml_str(&text, "<test>").unwrap(), 1, false).unwrap();
            while s.now < 80_000_000 && s.step() {}
            assert!(!s.tasks[0].se.on_rq, "{governor}: asleep");
            let form = s.eas.form.expect("kept");
            (s.eas.tasks[0].util_est.task_util_est(form), s.task_util_synced(0))
        };
        let (perf, perf_avg) = est("performance");
        let (sugov, _) = est("schedutil");
        assert!(perf > 300, "performance: util_est {perf}");
        assert!(perf_avg < perf / 2, "util_avg decayed in the sleep: {perf_avg} against {perf}");
        assert_eq!(perf, sugov, "the same estimate under both governors");
    }
}
