//! What a run reports: per run, per task, per CPU, per group, and histograms.
//!
//! Mirrors: schedstat (run_delay, pcount), /proc/PID/sched (nr_switches,
//! nr_migrations), cpu.stat (nr_periods, nr_throttled, throttled_time).
//! Model: every counter is an integer of nanoseconds or events; the JSON shape of
//! [`RunResult`] is the stable output schema (`schema_version`).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::time::Ns;

/// Version of the result schema; bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Per-task figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TaskStats {
    /// Task id (pid), unique in the run.
    pub pid: usize,
    /// Name (comm).
    pub name: String,
    /// Group name ("root" if none).
    pub group: String,
    /// Time on a CPU.
    pub run_ns: Ns,
    /// Time runnable but waiting on a runqueue (schedstat run_delay).
    pub wait_ns: Ns,
    /// Context switches into this task (pcount).
    pub nr_switches: u64,
    /// Migrations.
    pub nr_migrations: u64,
    /// Wakeups.
    pub nr_wakeups: u64,
    /// Time the task was created.
    pub start_ns: Ns,
    /// Time the task exited (None = still alive at the end).
    pub exit_ns: Option<Ns>,
    /// Work the task completed (at capacity 1024), a measure of progress.
    pub work_done_ns: Ns,
    /// Part of `run_ns` spent in the kernel on the task's behalf (faults, reclaim).
    pub sys_ns: Ns,
}

/// Per-CPU figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CpuStats {
    /// CPU number.
    pub cpu: usize,
    /// Time running tasks (including charged overheads).
    pub busy_ns: Ns,
    /// Time idle.
    pub idle_ns: Ns,
    /// Context switches.
    pub nr_switches: u64,
    /// IPIs received.
    pub ipis_received: u64,
    /// Ticks taken.
    pub ticks: u64,
    /// Newidle balance entries.
    pub newidle_attempts: u64,
    /// Newidle balances skipped by the avg_idle gates.
    pub newidle_skips: u64,
    /// Newidle balances that pulled a task.
    pub newidle_pulls: u64,
    /// Periodic balance passes that pulled at least one task.
    pub periodic_pulls: u64,
    /// Tasks pulled from the shared wakequeue.
    pub shared_runq_pulls: u64,
    /// Runnable tasks on the CPU when the run ended.
    pub nr_running_end: usize,
    /// The root cfs_rq's PELT util_avg when the run ended (0..capacity; 0 without PELT).
    pub util_avg_end: u64,
    /// The root cfs_rq's PELT load_avg when the run ended (its queued weight without PELT).
    pub load_avg_end: u64,
    /// Residency per cpuidle state (sysfs cpuidle/stateN: name, usage, time, above,
    /// below) with the energy spent in it.
    pub idle_states: Vec<crate::cpuidle::StateUsage>,
    /// Energy spent awake (all time outside idle states, at the top OPP's Energy Model
    /// power), nJ; 0 on a machine without an Energy Model.
    pub energy_active_nj: f64,
}

impl CpuStats {
    /// Time outside every idle state: tasks, and the idle loop's own entry/exit and
    /// interrupt handlers (the cpu_idle tracepoint's state -1).
    pub fn awake_ns(&self) -> Ns {
        let in_states: Ns = self.idle_states.iter().map(|s| s.time_ns).sum();
        (self.busy_ns + self.idle_ns).saturating_sub(in_states)
    }

    /// Energy spent awake and in idle states, nJ.
    pub fn energy_nj(&self) -> f64 {
        self.energy_active_nj + self.idle_states.iter().map(|s| s.energy_nj).sum::<f64>()
    }
}

/// Per-group figures, named as cpu.stat names them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GroupStats {
    /// Group name.
    pub name: String,
    /// CPU time used by the group's tasks (cpuacct.usage).
    pub usage_ns: Ns,
    /// Quota per period (None = unlimited).
    pub quota_ns: Option<Ns>,
    /// Period.
    pub period_ns: Ns,
    /// Periods elapsed while the period timer was active.
    pub nr_periods: u64,
    /// Periods in which the group was throttled.
    pub nr_throttled: u64,
    /// Sum over CPUs of time spent throttled.
    pub throttled_time: Ns,
    /// Periods that used burst (5.16+ nr_bursts).
    pub nr_bursts: u64,
    /// Runtime used above quota out of burst.
    pub burst_time: Ns,
}

/// Percentile summary of a latency histogram.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HistogramSummary {
    /// Samples.
    pub count: u64,
    /// Smallest sample, ns.
    pub min_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// 20th percentile, ns.
    pub p20_ns: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 95th percentile, ns.
    pub p95_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Largest sample, ns.
    pub max_ns: u64,
    /// (upper bound ns, count) for non-empty buckets, log-spaced.
    pub buckets: Vec<(u64, u64)>,
    /// (us, count) in 1-us bins, non-empty ones only (a task's `timer_histogram`:
    /// cyclictest's -h histogram). A sample of v ns counts in bin floor(v / 1000),
    /// to the histogram's 3 significant digits (exact below 1 ms).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub us_bins: Vec<(u64, u64)>,
}

/// A latency histogram (HDR, 3 significant digits, up to an hour).
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self { hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("static bounds are valid") }
    }
}

impl LatencyHistogram {
    /// Records one sample (saturating at the upper bound).
    #[inline]
    pub fn record(&mut self, ns: Ns) {
        self.hist.saturating_record(ns.max(1));
    }

    /// The samples in 1-us bins (non-empty ones), as cyclictest's histogram counts them.
    pub fn us_bins(&self) -> Vec<(u64, u64)> {
        let mut bins: Vec<(u64, u64)> = Vec::new();
        for v in self.hist.iter_recorded() {
            let us = self.hist.lowest_equivalent(v.value_iterated_to()) / 1000;
            match bins.last_mut() {
                Some((b, n)) if *b == us => *n += v.count_at_value(),
                _ => bins.push((us, v.count_at_value())),
            }
        }
        bins
    }

    /// Returns the percentile summary.
    pub fn summary(&self) -> HistogramSummary {
        let h = &self.hist;
        if h.is_empty() {
            return HistogramSummary::default();
        }
        let buckets = h
            .iter_log(1000, 2.0)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| (v.value_iterated_to(), v.count_since_last_iteration()))
            .collect();
        HistogramSummary {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            p20_ns: h.value_at_quantile(0.20),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p95_ns: h.value_at_quantile(0.95),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            buckets,
            us_bins: Vec::new(),
        }
    }
}

/// Engine statistics.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    /// Events processed.
    pub events: u64,
    /// Simulated time reached.
    pub sim_ns: Ns,
    /// Wall-clock time of the run.
    pub wall_ns: u64,
    /// Why the run ended: "duration" or "workload_done" as the scenario asked; or short of
    /// it, "max_events", "max_sim_time", "max_wall_time", "max_memory" (a limit),
    /// "deadlock" (every task left blocked for good) or "interrupted" (cancelled).
    pub stopped_by: String,
    /// The figures cover only part of what the scenario asked (any `stopped_by` but
    /// "duration" and "workload_done").
    pub partial: bool,
    /// With "deadlock": the tasks left blocked and what each waits on ("a waits on
    /// channel 'b-done'"), at most 8 and a count of the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
    /// With "deadlock": when it began, the last time a task blocked or exited (the
    /// engine notices a deadlock later, at a background timer's check: `sim_ns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlock_ns: Option<Ns>,
    /// Events by kind (those of a stale generation apart, `*_stale`), the engine's own
    /// bookkeeping like `events`: what the run spent events on.
    pub events_by_kind: BTreeMap<String, u64>,
    /// The machine's constants the run read, by the keys `[machine.cost]` takes: cost-table
    /// leaves and `cpuidle.STATE.wake_us` of the idle states a wakeup paid. A constant not
    /// listed cannot move this run's result; a sensitivity study varies only these.
    pub constants_read: Vec<String>,
}

/// Everything one run reports. Its JSON form is the stable output schema.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// Schema version of this document.
    pub schema_version: u32,
    /// Scenario name.
    pub scenario: String,
    /// Seed of this run.
    pub seed: u64,
    /// Machine name.
    pub machine: String,
    /// CPUs of the machine.
    pub nr_cpus: usize,
    /// Kernel profile, policy and effective tunables.
    pub kernel: crate::kernel::KernelConfig,
    /// Every feature with its state.
    pub features: BTreeMap<String, bool>,
    /// Engine statistics.
    pub engine: EngineStats,
    /// Machine-wide scheduler counters and work-conservation figures.
    pub summary: BTreeMap<String, f64>,
    /// The workload's own figures (makespan, iterations, ns per burst, ...).
    pub workload: BTreeMap<String, f64>,
    /// Per task.
    pub tasks: Vec<TaskStats>,
    /// Per CPU.
    pub cpus: Vec<CpuStats>,
    /// Per group.
    pub groups: Vec<GroupStats>,
    /// Migrations by sharing distance.
    pub migrations_by_distance: BTreeMap<String, u64>,
    /// Latency histograms by name ("wakeup_latency").
    pub histograms: BTreeMap<String, HistogramSummary>,
    /// Per LLC: CPU time idle while a task that could have run there waited in it.
    pub llcs: Vec<LlcStats>,
    /// Per socket, on machines with a package idle state: its residencies (absent
    /// where the machine has none, or its firmware turned it off).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<PackageStats>,
    /// The shared runqueue's locks as lock_stat would show them (absent when off).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared_runq_locks: Vec<crate::lock::LockStats>,
    /// lock_stat's line of each lock class that was taken (runqueue locks, shared
    /// runqueue shards, bandwidth pools): contentions, acquisitions, bounces, wait and
    /// hold totals and averages, the longest wait.
    pub lock_stat: Vec<crate::lock::LockClassStats>,
    /// What the run says about its own figures: "not stationary: ..." when the measured
    /// window's halves differ beyond their spread (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl RunResult {
    /// The seconds the result's figures cover: the measured window after a warm-up
    /// (`summary.sim_seconds`), else the whole run. What a rate divides by.
    pub fn measured_s(&self) -> f64 {
        self.summary.get("sim_seconds").copied().unwrap_or(self.engine.sim_ns as f64 / 1e9)
    }

    /// [`RunResult::measured_s`] in ns (the run's own `sim_ns` without a warm-up).
    pub fn measured_ns(&self) -> f64 {
        match self.summary.get("warmup_seconds") {
            Some(_) => self.measured_s() * 1e9,
            None => self.engine.sim_ns as f64,
        }
    }
}

/// Per-socket package idle state (AMD's PC6 with DF C-states, Intel's package C6): the
/// state every core of the socket must be in before it is entered.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PackageStats {
    /// Socket index.
    pub socket: usize,
    /// The package state's name ("PC6").
    pub state: String,
    /// Residencies in the measured window (a package leaves its state when any core wakes).
    pub entries: u64,
    /// Time in the state, ns.
    pub time_ns: Ns,
}

/// Per-LLC figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LlcStats {
    /// LLC index.
    pub llc: usize,
    /// Its CPUs (cpulist).
    pub cpus: String,
    /// CPU time its CPUs were idle while a migratable task waited on one of its
    /// runqueues (min(idle CPUs, waiting tasks) integrated over time).
    pub idle_while_waiting_ns: u64,
}
