//! Turns a validated scenario into the initial state of a run.

use std::collections::BTreeMap;

use crate::state::conservation::WorkConservation;
use crate::state::{Barrier, Channel, Group, Mutex, Simulator, Template};

use crate::cpumask::CpuMask;
use crate::error::{ScenarioError, SimError};
use crate::features::Features;
use crate::kernel::{KernelConfig, KernelVersion};
use crate::state::rq::{DomainState, Rq};
use crate::scenario::{Scenario, TaskSpec};
use crate::state::task::{nice_to_weight, Names, Program, SchedEntity, Task, TaskState};
use crate::time::{tick_nsec, NSEC_PER_SEC};
use crate::trace::{TraceMeta, Tracer};
use crate::state::events::{EventClass, EventKind, EventQueue};
use crate::rng::Stream;

/// Builds a run tracing into `sink`; with `memory`, first refuses one whose estimated
/// size exceeds it.
pub(super) fn build(s: &Scenario, seed: u64, sink: Option<Box<dyn crate::trace::TraceSink>>, memory: Option<u64>) -> Result<Simulator, SimError> {
    s.validate()?;
    let mut m = s.machine.build()?;
    let version = KernelVersion::parse(&s.kernel.profile).map_err(|e| ScenarioError::new("kernel.profile", e))?;
    let k = KernelConfig::resolve(version, m.nr_cpus(), &s.kernel.tunables)
        .map_err(|e| ScenarioError::new("kernel.tunables", e))?;
    let mut feat = Features::defaults(version, m.arch);
    for (name, on) in &s.kernel.features {
        let f = Features::lookup(name).ok_or_else(|| ScenarioError::new(format!("kernel.features.{name}"), "unknown feature"))?;
        feat.set(f, *on);
    }
    if !feat.has(crate::features::Feature::SCHED_CLUSTER) {
        m.without_clusters();
    }
    let generated = match &s.workload {
        Some(w) if w.rt_app.is_some() => {
            return Err(ScenarioError::new("workload.rt_app", "the rt-app file is read when the scenario is loaded (interchange::rt_app::expand_workload)").into())
        }
        Some(w) => Some(crate::workload::generate(w, &m, seed)?),
        None => None,
    };
    let mut all_groups = s.groups.clone();
    let mut task_specs: Vec<TaskSpec> = s.tasks.clone();
    let mut template_specs: Vec<TaskSpec> = s.templates.clone();
    let mut kernel_timers = s.timers.clone();
    let reporter = generated.map(|g| {
        all_groups.extend(g.groups);
        task_specs.extend(g.tasks);
        template_specs.extend(g.templates);
        kernel_timers.extend(g.timers);
        g.reporter
    });
    if let Some(limit) = memory {
        check_memory(s, &task_specs, m.nr_cpus(), all_groups.len(), limit)?;
    }

    let nr = m.nr_cpus();
    let tick_ns = tick_nsec(k.tunables.hz);
    let migration_cost = k.tunables.sched_migration_cost_ns;
    let rqs = (0..nr)
        .map(|cpu| Rq {
            // sched_init: avg_idle = 2 × migration cost, max_idle_balance_cost = migration cost.
            avg_idle: 2 * migration_cost.max(1),
            max_idle_balance_cost: migration_cost,
            sd: m.domains[cpu]
                .iter()
                // sd_init() starts NI_RANDOM's statistics at a 50 % success rate.
                .map(|d| DomainState { balance_interval_ms: d.min_interval_ms, newidle_call: 512, newidle_success: 256, newidle_ratio: 512, ..Default::default() })
                .collect(),
            stats: crate::metrics::CpuStats { cpu, ..Default::default() },
            idle: crate::cpuidle::CpuIdleDevice::new(m.cpu_idle_driver[cpu], &m.idle_drivers[m.cpu_idle_driver[cpu]], k.tunables.cpuidle_governor),
            ..Default::default()
        })
        .collect();

    let mut groups = vec![Group { name: "root".into(), parent: None, usage_ns: 0 }];
    let mut group_shares = vec![crate::state::cfs_rq::DEFAULT_SHARES];
    let mut group_index = BTreeMap::new();
    for (i, g) in all_groups.iter().enumerate() {
        let parent = g.parent.as_ref().map(|p| group_index[p]).unwrap_or(0);
        group_index.insert(g.name.clone(), groups.len());
        groups.push(Group { name: g.name.clone(), parent: Some(parent), usage_ns: 0 });
        group_shares.push(g.shares().map_err(|e| ScenarioError::new(format!("groups[{i}].{}", e.0), e.1))?);
    }

    // Template names first, so programs can fork templates defined after them.
    let mut names = Names::default();
    for (i, t) in template_specs.iter().enumerate() {
        names.templates.insert(t.name.clone(), i);
    }
    let mut programs = Vec::new();
    let mut templates = Vec::new();
    for (i, t) in template_specs.iter().enumerate() {
        programs.push(Program::compile(&t.program, &mut names, &format!("templates[{i}].program"))?);
        templates.push(Template {
            name: t.name.clone(),
            program: programs.len() - 1,
            nice: t.nice,
            affinity: t.affinity.as_deref().map(|a| CpuMask::parse_list(a).expect("validated")),
            group: t.group.as_ref().map_or(0, |g| group_index[g]),
            process: t.process.clone(),
            footprint: t.footprint_kib * 1024,
            timer_slack_ns: t.timer_slack.map(|d| d.0),
        });
    }

    let group_parents: Vec<Option<usize>> = groups.iter().map(|g| g.parent).collect();
    let all = m.all_cpus();
    let nohz_full = match &k.tunables.nohz_full {
        Some(list) => CpuMask::parse_list(list)
            .map_err(|e| ScenarioError::new("kernel.tunables.nohz_full", e))?
            .and(&all),
        None => CpuMask::new(),
    };
    let mut sim = Simulator {
        scenario_name: s.name.clone(),
        seed,
        tick: crate::state::TickState {
            period_ns: tick_ns,
            offset: match k.tunables.tick_phase_ns {
                Some(phase) => phase % tick_ns,
                None => Stream::new(seed, "tick_phase").below(tick_ns),
            },
            do_timer_cpu: Some(0),
            nohz_idle_cpus: 0,
            nohz_full,
            // kernel/watchdog.c set_sample_period(): 2 x watchdog_thresh / NUM_SAMPLE_PERIODS (5).
            watchdog_period: k.tunables.watchdog_thresh * 2 * crate::time::NSEC_PER_SEC / 5,
        },
        bw: crate::state::BandwidthState {
            control: None,
            nr: Vec::new(),
            window_start: Vec::new(),
            violation: None,
            lock_scratch: Vec::new(),
        },
        liveness: None,
        measure: crate::state::measure::Measurement::default(),
        has_smt: m.has_smt(),
        balance: crate::state::BalanceState {
            asym_capacity: m.is_asymmetric(),
            nr_misfit: 0,
            has_tasks: Default::default(),
            nohz_next_balance: 0,
            llc_nr_idle_scan: m.llc_span.iter().map(|s| s.weight()).collect(),
        },
        now: 0,
        end: s.run.duration_s.map(|d| (d * NSEC_PER_SEC as f64).round() as u64),
        until_done: s.run.until.is_some(),
        max_events: s.run.max_events,
        q: EventQueue::new(m.nr_cpus()),
        events: 0,
        tasks: Vec::new(),
        rngs: Vec::new(),
        programs,
        templates,
        mm_names: BTreeMap::new(),
        running: Default::default(),
        affinity_masks: Default::default(),
        ipc: crate::state::IpcState {
            chans: Vec::new(),
            chan_scoped: Vec::new(),
            family_chans: BTreeMap::new(),
            locks: Vec::new(),
            barriers: Vec::new(),
            chan_names: Vec::new(),
            lock_names: Vec::new(),
            chan_capacity: Default::default(),
        },
        masks: Vec::new(),
        group_steps: Vec::new(),
        groups,
        live_tasks: 0,
        deadlock: false,
        next_deadlock_check: 0,
        load_sums: crate::state::load_sums::LoadSums::new(&m),
        stats: crate::state::RunStats {
            wc: WorkConservation::new(m.llc_span.iter().map(|s| s.weight())),
            counters: Default::default(),
            wakeup_latency: Default::default(),
            events_by_kind: Default::default(),
            cost_reads: Default::default(),
            idle_wake_reads: vec![Default::default(); m.idle_drivers.len()],
            timer_latency: Default::default(),
            timer_bench_ns: Default::default(),
            user_hists: Vec::new(),
        },
        pids: crate::state::PidTable {
            of_task: Vec::new(),
            next: task_specs_max_pid(s).map_or(0, |p| p + 1),
            wanted: None,
        },
        trace: sink.map(|sink| {
            let meta = TraceMeta { nr_cpus: nr, groups: all_groups.iter().map(|g| g.name.clone()).fold(vec!["root".to_string()], |mut v, n| { v.push(n); v }) };
            Tracer::new(sink, &meta)
        }),
        reporter,
        mm: Default::default(),
        timers: crate::timers::Timers::new(
            &m.cpus.iter().map(|c| c.node).collect::<Vec<_>>(),
            m.node_span.len(),
            k.tunables.hz,
            feat.has(crate::features::Feature::TIMER_PULL),
            k.tunables.timer_migration,
        ),
        idle_hw: crate::state::idle::IdleHardware::new(&m),
        timer_base_writer: (0..nr).collect(),
        task_timers: Default::default(),
        scratch_hr: Vec::new(),
        scratch_timers: Vec::new(),
        fg: crate::state::cfs_rq::FairGroups::new(
            &group_parents,
            &group_shares,
            nr,
            feat.has(crate::features::Feature::FAIR_GROUP_SCHED),
            crate::fair::VRUNTIME_BASE,
        ),
        swq: crate::state::shared_runq::SharedRunq::new(&m, &feat, k.tunables.shared_runq_shard_sz).map_err(|e| ScenarioError::new("kernel.features", e))?,
        spinlocks: crate::lock::Locks::new(nr, group_parents.len()),
        sched_rng: Vec::new(),
        queue_index: Default::default(),
        error: None,
        eas: Default::default(),
        rtc: crate::state::rt_rq::ClassState::new(nr),
        rd: crate::state::root_domain::RootDomain::new(nr, m.cpus.iter().map(|c| c.capacity as u64).max().unwrap_or(1024)),
        rqs,
        k,
        feat,
        m,
    };

    sim.setup_bandwidth(&all_groups)?;
    sim.setup_cpufreq(s.kernel.governor.into());
    if let Some(su) = &s.kernel.schedutil {
        sim.set_schedutil_limits(su)?;
    }
    let mut tg_clamps = Vec::new();
    for (i, g) in all_groups.iter().enumerate() {
        let req = g.uclamp().map_err(|e| ScenarioError::new(format!("groups[{i}].{}", e.0), e.1))?;
        tg_clamps.push((req, group_parents[i + 1].unwrap_or(0)));
    }
    sim.set_group_uclamps(&tg_clamps);
    // Every CPU starts at its top operating point (and stays there under `performance`).
    for cpu in 0..nr {
        let khz = (sim.m.cpus[cpu].freq_mhz as f64 * 1000.0) as u32;
        sim.trace_event(cpu, crate::trace::TraceEvent::CpuFrequency { khz });
    }
    // The declared tasks at once: growing the vector by doubling copies every task.
    sim.tasks.reserve(task_specs.iter().map(|t| t.count).sum());
    for (i, t) in task_specs.iter().enumerate() {
        let program = Program::compile(&t.program, &mut names, &format!("tasks[{i}].program"))?;
        sim.programs.push(program);
        let program = sim.programs.len() - 1;
        let affinity = match &t.affinity {
            Some(a) => CpuMask::parse_list(a).expect("validated").and(&all),
            None => all,
        };
        if affinity.is_empty() {
            return Err(ScenarioError::new(format!("tasks[{i}].affinity"), format!("no CPU of '{}' exists on this machine", t.affinity.as_deref().unwrap_or(""))).into());
        }
        let pins: Vec<usize> = affinity.iter().collect();
        let start = t.start.map_or(0, |d| d.0);
        for copy in 0..t.count {
            let name = if t.count > 1 { format!("{}-{copy}", t.name) } else { t.name.clone() };
            let mask = if t.pin_each { CpuMask::single(pins[copy % pins.len()]) } else { affinity };
            let group = t.group.as_ref().map_or(0, |g| group_index[g]);
            sim.pids.wanted = t.pid;
            let tid = sim.create_task(name, program, t.nice, mask, group, t.process.as_deref(), t.footprint_kib * 1024, None);
            if let Some(slack) = t.timer_slack {
                sim.tasks[tid].timer_slack_ns = slack.0;
            }
            sim.tasks[tid].cputime_poll_ns = t.cputime_poll.map_or(0, |d| d.0);
            if let Some(h) = &t.timer_histogram {
                let name = if t.count > 1 { format!("{h}-{copy}") } else { h.clone() };
                sim.tasks[tid].timer_hist = Some(crate::state::task::intern(&mut names.histograms, &name));
            }
            if let Some(a) = &t.sched_attr {
                sim.set_task_uclamp(tid, a.util_min, a.util_max);
                sim.set_sched_attr(tid, a).map_err(|e| ScenarioError::new(format!("tasks[{i}].sched_attr"), format!("task '{}': {e}", sim.tasks[tid].stats.name)))?;
            }
            // __setparam_fair(): slice_us, or an rt-app thread's sched_runtime (ignored
            // by kernels before 6.12, which have no custom slice).
            let from_attr = t.sched_attr.as_ref().and_then(|a| a.fair_slice_ns()).filter(|_| sim.k.version >= crate::kernel::KernelVersion::new(6, 12));
            if let Some(ns) = t.slice_us.map(|us| us * crate::time::NSEC_PER_USEC).or(from_attr) {
                let se = &mut sim.tasks[tid].se;
                se.slice = ns;
                se.custom_slice = true;
                sim.fg.custom_slices = true;
            }
            if let Some(cpu) = t.cpu {
                if !mask.test(cpu) {
                    return Err(ScenarioError::new(format!("tasks[{i}].cpu"), format!("CPU {cpu} is not in the task's affinity")).into());
                }
                sim.tasks[tid].cpu = cpu;
                sim.tasks[tid].start_on = true;
            }
            if start == 0 {
                let cpu = sim.tasks[tid].cpu;
                sim.wake_up_new_task(tid, cpu, None);
            } else {
                sim.q.push(start, EventClass::Timer, EventKind::TaskStart { task: tid as u32 });
            }
        }
    }
    check_waits_are_signalled(&sim.programs, &names, template_specs.len(), &task_specs)?;
    // rt-app's global pi_enabled (PTHREAD_PRIO_INHERIT mutexes), in the kept global object.
    sim.rtc.pi_enabled = s.rt_app.as_ref().and_then(|g| g.get("pi_enabled")).and_then(|v| v.as_bool()).unwrap_or(false);
    sim.arm_kernel_timers(&kernel_timers);
    sim.start_watchdogs();
    // CPUs with nothing to run at boot enter the idle loop.
    for cpu in 0..nr {
        if sim.rqs[cpu].curr.is_none() && !sim.rqs[cpu].resched_pending {
            sim.do_idle(cpu, 0);
        }
    }
    sim.ipc.chans = vec![Channel::default(); names.channels.len()];
    for (&ch, &(capacity, wake_at)) in &names.capacities {
        sim.ipc.chans[ch].capacity = capacity;
        sim.ipc.chans[ch].wake_at = wake_at;
    }
    sim.ipc.chan_capacity = names.capacities.iter().map(|(&c, &v)| (c, v)).collect();
    sim.stats.user_hists = names.histograms.iter().map(|(n, &i)| (i, n.clone())).collect::<BTreeMap<_, _>>().into_values().map(|n| (n, Default::default())).collect();
    for h in sim.tasks.iter().filter_map(|t| t.timer_hist) {
        sim.stats.user_hists[h].1.us_bins = true;
    }
    sim.ipc.chan_scoped = vec![false; names.channels.len()];
    for (name, &i) in &names.channels {
        sim.ipc.chan_scoped[i] = name.starts_with('@');
    }
    sim.ipc.locks = vec![Mutex::default(); names.locks.len()];
    // A barrier's parties: every task instance whose program uses it.
    sim.ipc.barriers = vec![Barrier::default(); names.barriers.len()];
    for (i, t) in task_specs.iter().enumerate() {
        let p = &sim.programs[template_specs.len() + i];
        let mut used: Vec<usize> = p.insns.iter().filter_map(|x| if let crate::state::task::Insn::Barrier(b) = x { Some(*b) } else { None }).collect();
        used.sort_unstable();
        used.dedup();
        for b in used {
            sim.ipc.barriers[b].parties += t.count;
        }
    }
    for (i, m) in names.masks.iter().enumerate() {
        let mask = CpuMask::parse_list(m).expect("checked at compile").and(&all);
        if mask.is_empty() {
            return Err(ScenarioError::new("set_affinity", format!("no CPU of '{m}' (step {i}) exists on this machine")).into());
        }
        sim.masks.push(mask);
    }
    for g in &names.groups {
        let gi = if g.is_empty() { 0 } else {
            *group_index.get(g).ok_or_else(|| ScenarioError::new("set_group", format!("unknown group '{g}'")))?
        };
        sim.group_steps.push(gi);
    }
    sim.ipc.chan_names = vec![String::new(); names.channels.len()];
    for (name, &i) in &names.channels {
        sim.ipc.chan_names[i] = name.clone();
    }
    sim.ipc.lock_names = vec![String::new(); names.locks.len()];
    for (name, &i) in &names.locks {
        sim.ipc.lock_names[i] = name.clone();
    }
    if sim.tasks.is_empty() {
        return Err(ScenarioError::new("workload", "the workload created no task").into());
    }
    let warmup = s.run.warmup_s.map_or(0, |w| (w * NSEC_PER_SEC as f64).round() as u64);
    sim.measure = crate::state::measure::Measurement::new(sim.end, warmup, sim.groups.len());
    Ok(sim)
}

impl Simulator {
    /// The one shared copy of affinity mask `m`.
    pub(crate) fn shared_mask(&mut self, m: CpuMask) -> std::sync::Arc<CpuMask> {
        self.affinity_masks.entry(m).or_insert_with(|| std::sync::Arc::new(m)).clone()
    }

    /// Creates the bandwidth state machine if any group has a quota.
    fn setup_bandwidth(&mut self, groups: &[crate::scenario::GroupSpec]) -> Result<(), SimError> {
        use crate::bandwidth::{BandwidthMode, BandwidthSpec, CfsBandwidthControl};
        let mut specs = vec![(None, BandwidthSpec { quota_ns: None, period_ns: 100_000_000, burst_ns: 0 })];
        for (i, g) in groups.iter().enumerate() {
            let spec = BandwidthSpec::from_group(g).map_err(|(f, msg)| ScenarioError::new(format!("groups[{i}].{f}"), msg))?;
            // A quota the whole machine could not use up is no limit at all: most often a
            // digit too many (the kernel would take it and never throttle).
            let cpus = self.m.nr_cpus() as u64;
            if let Some(q) = spec.quota_ns.filter(|&q| q > spec.period_ns * cpus) {
                let field = if g.cpu_max.is_some() { "cpu_max" } else { "cfs_quota_us" };
                return Err(ScenarioError::new(
                    format!("groups[{i}].{field}"),
                    format!(
                        "a quota of {} µs per {} µs period is {:.1} CPUs' worth, more than the machine's {cpus}: it could never throttle (a typo? \"max {}\" is no limit)",
                        q / 1000,
                        spec.period_ns / 1000,
                        q as f64 / spec.period_ns as f64,
                        spec.period_ns / 1000
                    ),
                )
                .into());
            }
            specs.push((self.groups[i + 1].parent, spec));
        }
        if specs.iter().all(|(_, s)| s.quota_ns.is_none()) {
            return Ok(());
        }
        let slice = self.k.tunables.sched_cfs_bandwidth_slice_us * 1000;
        let mode = BandwidthMode::from_features(&self.feat);
        self.bw.control = Some(CfsBandwidthControl::new(&specs, self.m.nr_cpus(), mode, slice, self.tick.period_ns));
        self.bw.nr = vec![0; specs.len() * self.m.nr_cpus()];
        self.bw.window_start = vec![0; specs.len()];
        Ok(())
    }

    /// Creates a task (not yet runnable) and returns its index.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create_task(
        &mut self,
        name: String,
        program: usize,
        nice: i32,
        cpus_allowed: CpuMask,
        group: usize,
        process: Option<&str>,
        footprint: u64,
        parent: Option<usize>,
    ) -> usize {
        let tid = self.tasks.len();
        // Tasks of a named process share its mm; any other task is a process of its own.
        let next_mm = self.mm_names.len() + self.tasks.len();
        let mm = match process {
            Some(p) => *self.mm_names.entry(p.to_string()).or_insert(next_mm),
            None => next_mm,
        };
        let first = cpus_allowed.first().expect("non-empty affinity");
        let shared = self.shared_mask(cpus_allowed);
        // Where the scenario gives pids, the others (and forked tasks) get the next ones.
        let pid = match (self.pids.next, self.pids.wanted.take()) {
            (0, _) => tid + 1,
            (_, Some(p)) => p,
            (n, None) => {
                self.pids.next = n + 1;
                n
            }
        };
        if self.pids.next > 0 {
            self.pids.of_task.push(pid);
            if let Some(t) = &mut self.trace {
                t.pids.push(pid);
            }
        }
        if let Some(t) = &mut self.trace {
            t.task(self.now, pid, mm, parent.map_or(0, |p| self.pids.of_task.get(p).copied().unwrap_or(p + 1)), &name, nice);
        }
        self.tasks.push(Task {
            stats: crate::metrics::TaskStats {
                pid,
                name,
                group: self.groups[group].name.clone(),
                start_ns: self.now,
                ..Default::default()
            },
            program,
            pc: 0,
            loops: Vec::new(),
            state: TaskState::New,
            cpu: first,
            nr_cpus_allowed: cpus_allowed.weight(),
            cpus_allowed: shared,
            nice,
            se: SchedEntity { weight: nice_to_weight(nice), ..Default::default() },
            work_left: 0,
            overhead_ns: 0,
            progress_stamp: 0,
            group,
            mm,
            footprint,
            data_cpu: first,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            recent_used_cpu: first,
            timer_slack_ns: self.k.tunables.timer_slack_ns,
            cputime_poll_ns: 0,
            hrtimer: None,
            timer_due: None,
            timer_hist: None,
            wheel_timer: None,
            wheel_timer_fired: false,
            waiting_on: None,
            period_next: None,
            run_until: None,
            periods_late: 0,
            pending_exit_ns: 0,
            blocking: None,
            throttle_work: false,
            sched_delayed: false,
            woken_at: 0,
            woken_from: None,
            mark: 0,
            msg_stamp: 0,
            parent,
            family: parent.unwrap_or(tid),
            live_children: 0,
            runnable_since: 0,
            woken: false,
            start_on: false,
            rseq: false,
            sched: Default::default(),
        });
        self.rngs.push(Stream::for_task(self.seed, tid));
        self.live_tasks += 1;
        if process.is_some() {
            self.mm_register_thread(tid);
        }
        tid
    }
}

/// Refuses a run whose estimated memory exceeds `limit`, naming the task spec (or the
/// generator) that brings the most tasks, before anything is allocated for them.
fn check_memory(s: &Scenario, specs: &[TaskSpec], cpus: usize, groups: usize, limit: u64) -> Result<(), ScenarioError> {
    let tasks = specs.iter().fold(0u64, |n, t| n.saturating_add(t.count as u64));
    let need = super::limits::estimate(tasks, cpus as u64, groups as u64);
    if need <= limit {
        return Ok(());
    }
    let biggest = specs.iter().enumerate().max_by_key(|(_, t)| t.count).map_or(0, |(i, _)| i);
    let field = if biggest < s.tasks.len() { format!("tasks[{biggest}].count") } else { "workload".to_string() };
    Err(ScenarioError::new(
        field,
        format!(
            "{tasks} tasks on {cpus} CPUs would need about {}, more than the memory limit of {} (by default the memory available; --max-memory, or max_memory= from Python)",
            super::limits::format_bytes(need),
            super::limits::format_bytes(limit)
        ),
    ))
}

/// A `wait` on a channel that no program's `signal` and no timer's expiry ever signals can
/// only block forever: it is a scenario error (most often a misspelt name), reported
/// before anything runs. `programs` holds the templates' programs, then the tasks'.
fn check_waits_are_signalled(programs: &[Program], names: &Names, nr_templates: usize, tasks: &[crate::scenario::TaskSpec]) -> Result<(), ScenarioError> {
    use crate::state::task::Insn;
    let mut signalled = vec![false; names.channels.len()];
    for insn in programs.iter().flat_map(|p| &p.insns) {
        match insn {
            Insn::Signal(c)
            | Insn::Send(c)
            | Insn::Post(c)
            | Insn::WakeAll(c)
            | Insn::ModTimer { signal: Some(c), .. }
            | Insn::CondSignal(c)
            | Insn::CondBroadcast(c) => signalled[*c] = true,
            _ => {}
        }
    }
    for (i, p) in programs.iter().enumerate() {
        for insn in &p.insns {
            let Insn::Wait(c) = insn else { continue };
            if signalled[*c] {
                continue;
            }
            let channel = names.channels.iter().find(|(_, &id)| id == *c).map_or("?", |(n, _)| n.as_str());
            let field = if i < nr_templates {
                format!("templates[{i}].program")
            } else {
                let t = i - nr_templates;
                format!("tasks[{t}].program ({})", tasks.get(t).map_or("?", |s| s.name.as_str()))
            };
            return Err(ScenarioError::new(
                field,
                format!("waits on channel '{channel}', which no signal step or timer ever signals (a misspelt channel name?)"),
            ));
        }
    }
    Ok(())
}

/// The largest pid the scenario's tasks give, if any gives one.
fn task_specs_max_pid(s: &Scenario) -> Option<usize> {
    s.tasks.iter().filter_map(|t| t.pid).max()
}

impl Simulator {
    /// sched_setattr() at creation: the task's policy and class parameters; a deadline
    /// task is admitted against the root domain's bandwidth (the error is EBUSY's reason).
    fn set_sched_attr(&mut self, tid: usize, a: &crate::scenario::SchedAttrSpec) -> Result<(), String> {
        use crate::state::task::SchedPolicy;
        let ca = a.class_attr().map_err(|(f, e)| format!("{f}: {e}"))?;
        let slack_before = self.tasks[tid].timer_slack_ns;
        let policy = [SchedPolicy::Normal, SchedPolicy::Fifo, SchedPolicy::Rr, SchedPolicy::Batch, SchedPolicy::Idle, SchedPolicy::Deadline][ca.policy];
        let s = &mut self.tasks[tid].sched;
        s.policy = policy;
        s.rt_priority = ca.rt_priority;
        s.dl_reclaim = ca.reclaim;
        s.dl = ca.dl.map(|p| crate::rt::deadline::DlEntity::new(p, 0));
        s.reset_on_fork = a.reset_on_fork;
        if policy == SchedPolicy::Idle {
            // set_load_weight(): WEIGHT_IDLEPRIO whatever the nice.
            self.rtc.idle_policy = true;
            self.tasks[tid].se.weight = crate::sched::WEIGHT_IDLEPRIO;
        }
        // The class's part of sched_setscheduler() (RT and deadline tasks sleep with no
        // timer slack: hrtimer_nanosleep() and select_estimate_accuracy() drop it for
        // rt_task()/dl_task() (3.x-6.10), and since 6.11 (ed4fb6d7ef68)
        // sched_setscheduler() sets timer_slack_ns to 0).
        self.class_switched_to(tid);
        if policy == SchedPolicy::Deadline {
            let before = self.rd.dl_bw.total_bw;
            if a.ebusy_stays_fair && self.dl_admit(tid).is_err() {
                // sched_setattr() failed with EBUSY: the task stays SCHED_OTHER.
                let s = &mut self.tasks[tid].sched;
                s.policy = SchedPolicy::Normal;
                s.dl = None;
                s.dl_reclaim = false;
                self.tasks[tid].timer_slack_ns = slack_before;
                self.rtc.dl_refused += 1;
                return Ok(());
            }
            if a.ebusy_stays_fair {
                return Ok(());
            }
            self.dl_admit(tid).map_err(|_| {
                let t = &self.k.tunables;
                format!(
                    "refused with EBUSY as sched_setattr(): its bandwidth {:.3} on top of the {:.3} admitted exceeds the root domain's {} CPUs x sched_rt_runtime_us / sched_rt_period_us ({} / {})",
                    a.class_attr().ok().and_then(|c| c.dl).map_or(0.0, |p| p.runtime as f64 / p.period as f64),
                    before as f64 / crate::rt::deadline::BW_UNIT as f64,
                    self.m.nr_cpus(),
                    t.sched_rt_runtime_us,
                    t.sched_rt_period_us
                )
            })?;
        }
        Ok(())
    }
}
