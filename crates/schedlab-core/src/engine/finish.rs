//! Closes the books at the end of a run and assembles the [`RunResult`].

use std::collections::BTreeMap;

use super::options::RunOutput;
use super::Simulator;
use crate::metrics::{EngineStats, GroupStats, RunResult, SCHEMA_VERSION};
use crate::time::Ns;
use crate::topology::Distance;

impl Simulator {
    /// What each task left blocked waits on, for a deadlock report.
    fn blocked_tasks(&self) -> Vec<String> {
        let mut out = Vec::new();
        let blocked: Vec<usize> =
            (0..self.tasks.len()).filter(|&p| self.tasks[p].state == crate::state::task::TaskState::Blocked && !self.tasks[p].daemon).collect();
        for &p in blocked.iter().take(8) {
            let name = &self.tasks[p].stats.name;
            let on = if let Some(c) = self.ipc.chans.iter().position(|c| c.waiters.contains(&p)) {
                format!("channel '{}'", self.ipc.chan_names.get(c).map_or("?", |s| s.as_str()))
            } else if let Some(l) = self.ipc.locks.iter().position(|m| m.waiters.contains(&p)) {
                format!("mutex '{}'", self.ipc.lock_names.get(l).map_or("?", |s| s.as_str()))
            } else if self.tasks[p].live_children > 0 {
                format!("its {} children", self.tasks[p].live_children)
            } else {
                "nothing it can name".to_string()
            };
            out.push(format!("{name} waits on {on}"));
        }
        if blocked.len() > 8 {
            out.push(format!("and {} more", blocked.len() - 8));
        }
        out
    }

    /// When the last task blocked or exited: a blocked task's time was last accounted
    /// (update_curr) as it left its CPU.
    fn deadlock_start(&self) -> Ns {
        use crate::state::task::TaskState;
        self.tasks
            .iter()
            .map(|t| match t.state {
                TaskState::Exited => t.stats.exit_ns.unwrap_or(0),
                TaskState::Blocked => t.progress_stamp,
                _ => self.now,
            })
            .max()
            .unwrap_or(self.now)
    }

    /// The summary figures as the state holds them now (spans closed by the caller).
    pub(super) fn summary_map(&self) -> BTreeMap<String, f64> {
        let c = &self.stats.counters;
        let mut summary = BTreeMap::new();
        let busy: u64 = self.rqs.iter().map(|r| r.stats.busy_ns).sum();
        let mut put = |k: &str, v: f64| {
            summary.insert(k.to_string(), v);
        };
        put("sim_seconds", self.now as f64 / 1e9);
        if self.m.perf_domains.iter().any(Option::is_some) {
            let nj: f64 = self.rqs.iter().map(|r| r.stats.energy_nj()).sum();
            put("energy_cpu_mj", nj / 1e6);
        }
        for (k, v) in self.cpufreq_summary() {
            put(&k, v);
        }
        put("cpu_busy_seconds", busy as f64 / 1e9);
        put("utilization", if self.now > 0 { busy as f64 / (self.now as f64 * self.m.nr_cpus() as f64) } else { 0.0 });
        put("context_switches", c.switches as f64);
        put("wakeups", c.wakeups as f64);
        put("migrations", c.migrations.iter().sum::<u64>() as f64);
        put("ipis", c.ipis as f64);
        put("lb_moved", c.lb_moved as f64);
        put("active_balances", c.active_balances as f64);
        put("nohz_kicks", c.nohz_kicks as f64);
        put("sis_cpus_scanned", c.sis_scanned as f64);
        put("refill_seconds", c.refill_ns as f64 / 1e9);
        put("newidle_attempts", self.rqs.iter().map(|r| r.stats.newidle_attempts).sum::<u64>() as f64);
        put("newidle_skips", self.rqs.iter().map(|r| r.stats.newidle_skips).sum::<u64>() as f64);
        put("newidle_pulls", self.rqs.iter().map(|r| r.stats.newidle_pulls).sum::<u64>() as f64);
        put("idle_while_waiting_llc_seconds", self.stats.wc.lost_llc_ns as f64 / 1e9);
        put("idle_while_waiting_machine_seconds", self.stats.wc.lost_machine_ns as f64 / 1e9);
        let locks = self.swq.lock_stats();
        put("shared_runq_pulls", self.rqs.iter().map(|r| r.stats.shared_runq_pulls).sum::<u64>() as f64);
        put("shared_runq_enqueues", self.swq.enqueues() as f64);
        put("shared_runq_lock_acquisitions", locks.iter().map(|l| l.acquisitions).sum::<u64>() as f64);
        put("shared_runq_lock_contended", locks.iter().map(|l| l.contended).sum::<u64>() as f64);
        let wait: u64 = locks.iter().map(|l| l.wait_ns).sum();
        put("shared_runq_lock_wait_seconds", wait as f64 / 1e9);
        put("shared_runq_failed_pulls", self.swq.failed_pulls as f64);
        put("shared_runq_discards", self.swq.discards as f64);
        put("newidle_random_skips", c.newidle_random_skips as f64);
        put("newidle_domain_skips", c.newidle_domain_skips as f64);
        put("newidle_lb_llc", c.newidle_lb_llc as f64);
        put("newidle_lb_above_llc", c.newidle_lb_above_llc as f64);
        put("timers_armed", c.timers_armed as f64);
        put("timers_pushed", c.timers_pushed as f64);
        put("timer_same_bucket", c.timer_same_bucket as f64);
        put("timer_expiries", c.timer_expiries as f64);
        put("timer_remote_expiries", c.timer_remote_expiries as f64);
        put("hrtimer_expiries", c.hrtimer_expiries as f64);
        put("timer_ipis", c.timer_ipis as f64);
        put("wake_idle_without_ipi", c.wake_idle_without_ipi as f64);
        put("tmigr_remote_cpus", c.tmigr_remote_cpus as f64);
        put("tmigr_walk_levels", c.tmigr_walk_levels as f64);
        put("idle_ticks_empty", c.idle_ticks_empty as f64);
        put("early_timed_wakeups", c.early_timed_wakeups as f64);
        put("wait_timeouts", c.wait_timeouts as f64);
        let idle_entries: u64 = self.rqs.iter().flat_map(|rq| rq.idle.usage.iter().map(|u| u.usage)).sum();
        put("idle_state_entries", idle_entries as f64);
        for (name, ns) in &self.mm.kernel_ns {
            summary.insert(format!("kernel_{name}_seconds"), *ns as f64 / 1e9);
        }
        for (name, n) in &self.mm.counts {
            summary.insert(name.to_string(), *n as f64);
        }
        summary.extend(self.class_summary());
        summary.extend(self.scx_summary());
        summary
    }

    /// Each socket's package-state residencies, a residency under way closed at the end
    /// (none on a machine without a package state).
    fn package_stats(&mut self) -> Vec<crate::metrics::PackageStats> {
        let mut out = Vec::new();
        for socket in 0..self.m.nr_sockets() {
            let Some(cpu) = self.m.cpus.iter().position(|c| c.socket == socket) else { continue };
            let Some(pkg) = &self.m.idle_drivers[self.rqs[cpu].idle.driver].package else { continue };
            let hw = &mut self.idle_hw;
            if let Some(entered) = hw.package_down_at[socket].take() {
                hw.package_left(socket, entered, self.now, self.measure.from);
            }
            let (entries, time_ns) = (hw.package_entries[socket], hw.package_time_ns[socket]);
            out.push(crate::metrics::PackageStats { socket, state: pkg.name.clone(), entries, time_ns });
        }
        out
    }

    pub(super) fn finish(mut self, stopped_by: &str, wall_ns: u64) -> RunOutput {
        // Account the time up to now of whatever is running, and open idle/busy spans.
        for cpu in 0..self.m.nr_cpus() {
            self.update_curr(cpu);
            self.update_blocked_averages(cpu);
            self.rqs[cpu].stats.util_avg_end = if self.pelt_on() { self.cpu_util_cfs(cpu) } else { 0 };
            self.rqs[cpu].stats.load_avg_end = self.cpu_load_avg(cpu);
            let now = self.now;
            let rq = &mut self.rqs[cpu];
            rq.stats.nr_running_end = rq.nr_running;
            let span = now - rq.state_since;
            rq.state_since = now;
            if rq.curr.is_some() {
                rq.stats.busy_ns += span;
            } else {
                rq.stats.idle_ns += span;
            }
            // Close an open idle-state residency at the end of the run.
            let dev = &mut self.rqs[cpu].idle;
            if let crate::cpuidle::IdlePhase::In { state, entered } = dev.phase {
                if entered < now {
                    let s = &self.m.idle_drivers[dev.driver].states[state];
                    let u = &mut dev.usage[state];
                    u.usage += 1;
                    u.time_ns += now - entered;
                    u.energy_nj += s.power_mw * (now - entered) as f64 / 1000.0;
                }
            }
            self.rqs[cpu].stats.idle_states = self.rqs[cpu].idle.usage.clone();
            let awake = self.rqs[cpu].stats.awake_ns();
            if let Some(nj) = self.energy_active_nj(cpu, awake) {
                self.rqs[cpu].stats.energy_active_nj = nj;
            }
        }
        for t in &mut self.tasks {
            if matches!(t.state, crate::state::task::TaskState::Runnable | crate::state::task::TaskState::Throttled) {
                t.stats.wait_ns += self.now - t.runnable_since;
            }
        }
        self.stats.wc.advance(self.now);
        let packages = self.package_stats();
        let summary = self.summary_map();
        let locks = self.swq.lock_stats();
        let c = &self.stats.counters;
        let migrations_by_distance = Distance::ALL.iter().map(|d| (d.name().to_string(), c.migrations[*d as usize])).collect();
        let groups = self
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let base = match &self.bw.control {
                    Some(bw) if i > 0 => bw.stats(i, self.now),
                    _ => GroupStats::default(),
                };
                GroupStats { name: g.name.clone(), usage_ns: g.usage_ns, ..base }
            })
            .collect();
        let mut histograms = BTreeMap::new();
        histograms.insert("wakeup_latency".to_string(), self.stats.wakeup_latency.summary());
        histograms.insert("timer_latency".to_string(), self.stats.timer_latency.summary());
        let bench = self.stats.timer_bench_ns.summary();
        if bench.count > 0 {
            histograms.insert("timer_bench".to_string(), bench);
        }
        // `record` steps: the intervals, and completions per second counted over 100 ms
        // bins (complete bins only), as a histogram of rates.
        let last_bin = (self.now / 100_000_000) as usize;
        // After a warm-up, complete bins of the measured window only.
        let first_bin = self.measure.from.div_ceil(100_000_000) as usize;
        for (name, h) in &self.stats.user_hists {
            let mut summary = h.hist.summary();
            if h.us_bins {
                summary.us_bins = h.hist.us_bins();
            }
            histograms.insert(name.clone(), summary);
            let mut rates = crate::metrics::LatencyHistogram::default();
            for &n in h.per_100ms.iter().take(last_bin).skip(first_bin) {
                rates.record(n * 10);
            }
            for _ in h.per_100ms.len().max(first_bin)..last_bin {
                rates.record(0);
            }
            histograms.insert(format!("{name}_per_second"), rates.summary());
        }
        let touch = self.mm.touch_area.summary();
        if touch.count > 0 {
            histograms.insert("touch_area".to_string(), touch);
        }
        let mut warnings = self.stationarity_warnings();
        warnings.extend(self.scx_warnings());
        self.stats.events_by_kind[crate::state::events::EventCount::Inline] = self.q.inline_pops();
        let mut result = RunResult {
            schema_version: SCHEMA_VERSION,
            scenario: self.scenario_name.clone(),
            seed: self.seed,
            machine: self.m.name.clone(),
            nr_cpus: self.m.nr_cpus(),
            kernel: self.k.clone(),
            features: self.feat.to_map(),
            engine: EngineStats {
                events: self.events,
                sim_ns: self.now,
                wall_ns,
                stopped_by: stopped_by.to_string(),
                partial: !matches!(stopped_by, "duration" | "workload_done"),
                blocked: if stopped_by == "deadlock" { self.blocked_tasks() } else { Vec::new() },
                deadlock_ns: (stopped_by == "deadlock").then(|| self.deadlock_start()),
                events_by_kind: self.stats.events_by_kind.named().map(|(name, n)| (name.to_string(), n)).collect(),
                constants_read: self.constants_read(),
            },
            summary,
            workload: BTreeMap::new(),
            // The run is over: the tasks give up their statistics (100,000 tasks made
            // 200,000 string copies here).
            tasks: std::mem::take(&mut self.tasks).into_iter().map(|t| t.stats).collect(),
            cpus: self.rqs.iter().map(|r| r.stats.clone()).collect(),
            groups,
            migrations_by_distance,
            histograms,
            llcs: (0..self.m.llc_span.len())
                .map(|l| crate::metrics::LlcStats {
                    llc: l,
                    cpus: self.m.llc_span[l].to_list(),
                    idle_while_waiting_ns: self.stats.wc.lost_per_llc_ns[l] as u64,
                })
                .collect(),
            packages,
            shared_runq_locks: locks,
            lock_stat: Vec::new(),
            warnings,
        };
        self.apply_baseline(&mut result);
        let (rq_locks, cfs_b_locks) = self.measured_locks();
        result.lock_stat = Simulator::lock_stat_classes(&rq_locks, &result.shared_runq_locks, &cfs_b_locks);
        // Averages of the measured window (lock_stat's waittime-avg is per contention).
        let class = |c: crate::lock::LockClass| result.lock_stat.iter().find(|l| l.class == c.name()).cloned().unwrap_or_default();
        let (shard, rq) = (class(crate::lock::LockClass::SharedRunqShard), class(crate::lock::LockClass::RqLock));
        for (k, v) in [
            ("shared_runq_lock_wait_avg_us", shard.wait_avg_ns / 1e3),
            ("shared_runq_lock_hold_avg_ns", shard.hold_avg_ns),
            ("rq_lock_contended", rq.contentions as f64),
            ("rq_lock_wait_seconds", rq.wait_total_ns as f64 / 1e9),
            ("rq_lock_wait_avg_us", rq.wait_avg_ns / 1e3),
        ] {
            result.summary.insert(k.to_string(), v);
        }
        if let Some(report) = &self.reporter {
            result.workload = report(&result);
        }
        let (trace, trace_error) = match self.trace.take() {
            Some(t) => {
                let (sink, err) = t.finish(self.now);
                (sink.into_memory(), err.map(|e| e.to_string()))
            }
            None => (None, None),
        };
        let liveness = self.take_liveness();
        let eas_check = self.eas_check_finish(&mut result);
        let rtapp_logs = self.rtapp_log.take().map(|l| l.passes);
        RunOutput { result, trace, trace_error, liveness, eas_check, rtapp_logs }
    }
}
