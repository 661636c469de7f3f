//! `[run] warmup_s`: figures count from the end of the warm-up, and a stationarity check
//! of what comes after it.
//!
//! At the warm-up's end (the first event at or after it: no event of its own, and
//! nothing in the model is touched, so a run with a warm-up makes the same decisions as
//! one without) every accumulated figure is recorded, and the result subtracts it, as
//! `perf stat --delay` starts counting late: per task, per CPU (idle-state residencies
//! too), per group (usage and cpu.stat), the summary counters, work conservation, the
//! mm and shared-runqueue figures, migrations by distance. Spans under way (a running
//! task, a busy or idle CPU, an idle state, a throttle) are split at that instant.
//! Latency histograms cannot be subtracted: they are emptied and start again.
//!
//! Stationarity: the measured window is cut into `BLOCKS` equal blocks; at each block's
//! end (again the first event after it) the headline figures are sampled: machine
//! utilization and, per limited group, its CPU use and throttled share of periods. A
//! figure whose mean over the second half differs from the first half's by more than
//! three standard errors of the difference (the blocks' variance from their successive
//! differences), and by more than `STATIONARITY_FLOOR` of its scale, gets a warning.

use super::Simulator;
use crate::state::measure::{Baseline, Sample, BLOCKS, STATIONARITY_FLOOR};
use crate::state::task::TaskState;
use crate::time::Ns;
impl Simulator {
    /// Before the event at `next` is handled: the warm-up's end and the block
    /// boundaries that fall before it are taken at their own instants (nothing changed
    /// since the last event, so the state then is the state now).
    #[inline]
    pub(super) fn measurement_tick(&mut self, next: Ns) {
        if self.measure.pending_warmup.is_some_and(|w| next >= w) {
            let w = self.measure.pending_warmup.take().expect("checked");
            let at = w.max(self.now);
            let keep = std::mem::replace(&mut self.now, at);
            self.begin_measurement();
            self.now = keep;
        }
        while let Some(&b) = self.measure.boundaries.last().filter(|&&b| next >= b) {
            self.measure.boundaries.pop();
            let at = b.max(self.now);
            let keep = std::mem::replace(&mut self.now, at);
            let s = self.sample();
            self.measure.samples.push(s);
            self.now = keep;
        }
    }

    fn sample(&mut self) -> Sample {
        let now = self.now;
        let busy = self.rqs.iter().map(|r| r.stats.busy_ns + if r.curr.is_some() { now - r.state_since } else { 0 }).sum();
        let groups = (0..self.groups.len())
            .map(|g| {
                let st = self.bw.control.as_ref().filter(|_| g > 0).map(|b| b.stats(g, now));
                let usage = self.groups[g].usage_ns - self.measure.usage_base[g];
                (usage, st.as_ref().map_or(0, |s| s.nr_periods), st.as_ref().map_or(0, |s| s.nr_throttled))
            })
            .collect();
        Sample { at: now, busy_ns: busy, groups }
    }

    /// The warm-up ends: the figures accumulated so far become the baseline that the
    /// result subtracts (nothing in the model is touched: the run goes on as it would).
    fn begin_measurement(&mut self) {
        let now = self.now;
        self.measure.from = now;
        self.stats.wc.advance(now);
        self.idle_hw.package_entries.fill(0);
        self.idle_hw.package_time_ns.fill(0);
        let mut cpus: Vec<crate::metrics::CpuStats> = self.rqs.iter().map(|r| r.stats.clone()).collect();
        let mut task_extra = vec![0; self.tasks.len()];
        let mut group_extra = vec![0; self.groups.len()];
        for (cpu, st) in cpus.iter_mut().enumerate() {
            let rq = &self.rqs[cpu];
            let span = now - rq.state_since;
            if let Some(p) = rq.curr {
                st.busy_ns += span;
                // Run time not yet charged by update_curr().
                let ran = now.saturating_sub(self.tasks[p].se.exec_start);
                task_extra[p] = ran;
                let mut g = Some(self.tasks[p].group);
                while let Some(x) = g {
                    group_extra[x] += ran;
                    g = self.groups[x].parent;
                }
            } else {
                st.idle_ns += span;
            }
            st.idle_states = self.rqs[cpu].idle.usage.clone();
            if let crate::cpuidle::IdlePhase::In { state, entered } = self.rqs[cpu].idle.phase {
                // The residency under way counts in the window (its entry too), minus
                // the part before it.
                if entered < now {
                    let power_mw = self.m.idle_drivers[self.rqs[cpu].idle.driver].states[state].power_mw;
                    st.idle_states[state].time_ns += now - entered;
                    st.idle_states[state].energy_nj += power_mw * (now - entered) as f64 / 1000.0;
                }
            }
            // Active energy is computed at the end of a run (finish.rs); the baseline needs
            // it up to here, and so does the summary's per-cluster figure read below.
            if let Some(nj) = self.energy_active_nj(cpu, st.awake_ns()) {
                st.energy_active_nj = nj;
                self.rqs[cpu].stats.energy_active_nj = nj;
            }
        }
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .map(|(p, t)| {
                let mut s = t.stats.clone();
                s.run_ns += task_extra[p];
                if matches!(t.state, TaskState::Runnable | TaskState::Throttled) {
                    s.wait_ns += now - t.runnable_since;
                }
                s
            })
            .collect();
        let groups = (0..self.groups.len())
            .map(|g| {
                let base = match &self.bw.control {
                    Some(bw) if g > 0 => bw.stats(g, now),
                    _ => crate::metrics::GroupStats::default(),
                };
                crate::metrics::GroupStats { usage_ns: self.groups[g].usage_ns + group_extra[g], ..base }
            })
            .collect::<Vec<_>>();
        for (g, b) in groups.iter().enumerate() {
            self.measure.usage_base[g] = b.usage_ns;
        }
        self.cpufreq_flush();
        let mut summary = self.summary_map();
        let busy: Ns = cpus.iter().map(|c| c.busy_ns).sum();
        summary.insert("cpu_busy_seconds".to_string(), busy as f64 / 1e9);
        self.measure.baseline = Some(Baseline {
            tasks,
            cpus,
            groups,
            summary,
            migrations: self.stats.counters.migrations,
            llc_lost: self.stats.wc.lost_per_llc_ns.clone(),
            locks: self.swq.lock_stats(),
            rq_locks: self.spinlocks.rq.iter().map(|l| l.stats.clone()).collect(),
            cfs_b_locks: self.spinlocks.cfs_b.iter().map(|l| l.stats.clone()).collect(),
        });
        // Maxima cannot be subtracted: they start again.
        self.swq.restart_max();
        self.spinlocks.restart_max();
        // Histograms cannot be subtracted: they start again.
        self.stats.wakeup_latency = Default::default();
        self.stats.timer_latency = Default::default();
        self.stats.timer_bench_ns = Default::default();
        for (_, h) in &mut self.stats.user_hists {
            h.hist = Default::default();
        }
        self.mm.touch_area = Default::default();
    }

    /// Subtracts the warm-up's figures from the result (after `finish` assembled it).
    pub(super) fn apply_baseline(&self, r: &mut crate::metrics::RunResult) {
        let Some(b) = &self.measure.baseline else { return };
        let from = self.measure.from;
        for (t, base) in r.tasks.iter_mut().zip(&b.tasks) {
            t.run_ns -= base.run_ns.min(t.run_ns);
            t.wait_ns -= base.wait_ns.min(t.wait_ns);
            t.nr_switches -= base.nr_switches;
            t.nr_migrations -= base.nr_migrations;
            t.nr_wakeups -= base.nr_wakeups;
            t.work_done_ns -= base.work_done_ns.min(t.work_done_ns);
            t.sys_ns -= base.sys_ns.min(t.sys_ns);
        }
        for (c, base) in r.cpus.iter_mut().zip(&b.cpus) {
            c.busy_ns -= base.busy_ns.min(c.busy_ns);
            c.idle_ns -= base.idle_ns.min(c.idle_ns);
            c.nr_switches -= base.nr_switches;
            c.ipis_received -= base.ipis_received;
            c.ticks -= base.ticks;
            c.newidle_attempts -= base.newidle_attempts;
            c.newidle_skips -= base.newidle_skips;
            c.newidle_pulls -= base.newidle_pulls;
            c.periodic_pulls -= base.periodic_pulls;
            c.shared_runq_pulls -= base.shared_runq_pulls;
            for (u, bu) in c.idle_states.iter_mut().zip(&base.idle_states) {
                u.usage -= bu.usage.min(u.usage);
                u.time_ns -= bu.time_ns.min(u.time_ns);
                u.above -= bu.above.min(u.above);
                u.below -= bu.below.min(u.below);
                u.energy_nj -= bu.energy_nj;
            }
            c.energy_active_nj -= base.energy_active_nj;
        }
        for (g, base) in r.groups.iter_mut().zip(&b.groups) {
            g.usage_ns -= base.usage_ns.min(g.usage_ns);
            g.nr_periods -= base.nr_periods;
            g.nr_throttled -= base.nr_throttled;
            g.throttled_time -= base.throttled_time.min(g.throttled_time);
            g.nr_bursts -= base.nr_bursts;
            g.burst_time -= base.burst_time.min(g.burst_time);
        }
        for (k, v) in r.summary.iter_mut() {
            if let Some(bv) = b.summary.get(k) {
                *v -= bv;
            }
        }
        let window = self.now.saturating_sub(from);
        r.summary.insert("sim_seconds".to_string(), window as f64 / 1e9);
        let busy = r.summary.get("cpu_busy_seconds").copied().unwrap_or(0.0);
        let util = if window > 0 { busy * 1e9 / (window as f64 * self.m.nr_cpus() as f64) } else { 0.0 };
        r.summary.insert("utilization".to_string(), util);
        r.summary.insert("warmup_seconds".to_string(), from as f64 / 1e9);
        for (d, n) in crate::topology::Distance::ALL.iter().zip(b.migrations) {
            if let Some(v) = r.migrations_by_distance.get_mut(d.name()) {
                *v -= n;
            }
        }
        for (l, base) in r.llcs.iter_mut().zip(&b.llc_lost) {
            l.idle_while_waiting_ns -= (*base as u64).min(l.idle_while_waiting_ns);
        }
        for (l, base) in r.shared_runq_locks.iter_mut().zip(&b.locks) {
            l.subtract(base);
        }
    }

    /// The runqueue and bandwidth locks' figures of the measured window: (rq, cfs_b).
    pub(super) fn measured_locks(&self) -> (Vec<crate::lock::LockStats>, Vec<crate::lock::LockStats>) {
        let mut rq: Vec<crate::lock::LockStats> = self.spinlocks.rq.iter().map(|l| l.stats.clone()).collect();
        let mut cfs_b: Vec<crate::lock::LockStats> = self.spinlocks.cfs_b.iter().map(|l| l.stats.clone()).collect();
        if let Some(b) = &self.measure.baseline {
            rq.iter_mut().zip(&b.rq_locks).for_each(|(l, base)| l.subtract(base));
            cfs_b.iter_mut().zip(&b.cfs_b_locks).for_each(|(l, base)| l.subtract(base));
        }
        (rq, cfs_b)
    }

    /// The stationarity warnings of the measured window (none without enough blocks).
    pub(super) fn stationarity_warnings(&mut self) -> Vec<String> {
        if self.measure.samples.len() + 1 < BLOCKS || self.end.is_none_or(|e| self.now < e) {
            return Vec::new();
        }
        let mut samples = std::mem::take(&mut self.measure.samples);
        let start = Sample { at: self.measure.from, busy_ns: 0, groups: vec![(0, 0, 0); self.groups.len()] };
        samples.insert(0, start);
        let last = self.sample();
        samples.push(last);
        let nr_cpus = self.m.nr_cpus() as f64;
        let mut out = Vec::new();
        let blocks = |f: &dyn Fn(&Sample, &Sample) -> Option<f64>| -> Vec<Option<f64>> { samples.windows(2).map(|w| f(&w[0], &w[1])).collect() };
        let util = blocks(&|a, b| Some((b.busy_ns - a.busy_ns) as f64 / ((b.at - a.at) as f64 * nr_cpus)));
        if let Some(w) = drift("utilization", &util, 1.0) {
            out.push(w);
        }
        for g in 1..self.groups.len() {
            let Some(spec) = self.bw.control.as_ref().map(|b| b.spec(g)).filter(|s| s.quota_ns.is_some()) else { continue };
            let name = &self.groups[g].name;
            let cpus = blocks(&|a, b| Some((b.groups[g].0 - a.groups[g].0) as f64 / (b.at - a.at) as f64));
            let scale = spec.quota_ns.unwrap_or(0) as f64 / spec.period_ns.max(1) as f64;
            if let Some(w) = drift(&format!("group.{name}.cpus_used"), &cpus, scale) {
                out.push(w);
            }
            let share = blocks(&|a, b| {
                let periods = b.groups[g].1 - a.groups[g].1;
                (periods > 0).then(|| (b.groups[g].2 - a.groups[g].2) as f64 / periods as f64)
            });
            if let Some(w) = drift(&format!("group.{name}.throttled_share"), &share, 1.0) {
                out.push(w);
            }
        }
        out
    }
}

/// A warning if the halves' means differ beyond 3 standard errors and the floor. The
/// blocks' variance comes from their successive differences (von Neumann's mean square
/// successive difference / 2), which a trend or a step barely inflates, unlike the
/// spread around each half's mean.
fn drift(name: &str, blocks: &[Option<f64>], scale: f64) -> Option<String> {
    let half = blocks.len() / 2;
    let all: Vec<f64> = blocks.iter().copied().collect::<Option<Vec<f64>>>()?;
    let (a, b) = (&all[..half], &all[half..]);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (mean(a), mean(b));
    let mssd = all.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<f64>() / (all.len() - 1) as f64;
    let var = mssd / 2.0;
    let se = (var / a.len() as f64 + var / b.len() as f64).sqrt();
    let diff = mb - ma;
    (diff.abs() > 3.0 * se && diff.abs() > STATIONARITY_FLOOR * scale.abs().max(ma.abs())).then(|| {
        format!(
            "not stationary: {name} is {ma:.4} over the first half of the measured window and {mb:.4} over the second \
             (difference {diff:+.4}, {:.1} standard errors); a longer [run] warmup_s or duration_s may be needed",
            if se > 0.0 { diff.abs() / se } else { f64::INFINITY }
        )
    })
}
