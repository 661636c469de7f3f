//! Turns a validated scenario into the initial state of a run, one piece per thing it
//! builds, in the order the kernel brings them up: the machine and kernel config, the
//! runqueues, the groups, the programs, the mechanisms' state, the tasks and their first
//! wakeups, then the names the programs' steps refer to. The order of the pieces is the
//! order of their side effects (trace events, random draws, errors): keep it.

use std::collections::BTreeMap;

use crate::state::conservation::WorkConservation;
use crate::state::{Barrier, Channel, Group, Mutex, Simulator, Template};

use crate::cpumask::CpuMask;
use crate::error::{ScenarioError, SimError};
use crate::features::Features;
use crate::kernel::{KernelConfig, KernelVersion};
use crate::rng::Stream;
use crate::scenario::{GroupSpec, KernelTimerSpec, Scenario, TaskSpec};
use crate::state::events::{EventClass, EventKind, EventQueue};
use crate::state::rq::{DomainState, Rq};
use crate::state::task::{nice_to_weight, Names, Program, SchedEntity, Task, TaskState};
use crate::time::{tick_nsec, NSEC_PER_SEC};
use crate::topology::Machine;
use crate::trace::{TraceMeta, Tracer};

/// Builds a run tracing into `sink`; with `memory`, first refuses one whose estimated
/// size exceeds it. Validates the scenario first (Rust callers may hand it one they
/// made); the paths that parsed it (which validates) call [`build_checked`].
pub(super) fn build(s: &Scenario, seed: u64, sink: Option<Box<dyn crate::trace::TraceSink>>, memory: Option<u64>) -> Result<Simulator, SimError> {
    s.validate()?;
    build_checked(s, seed, sink, memory)
}

/// [`build`] of a scenario already validated (by `Scenario::from_*_str` or `api::load`).
pub(super) fn build_checked(
    s: &Scenario,
    seed: u64,
    sink: Option<Box<dyn crate::trace::TraceSink>>,
    memory: Option<u64>,
) -> Result<Simulator, SimError> {
    let (m, k, feat) = machine_and_kernel(s)?;
    let mut specs = WorkloadSpecs::of(s, &m, seed)?;
    // The background's specs (the kernel's, then a profile's) go last, one task each:
    // the last tasks created are its.
    let mut nr_daemons = 0;
    if s.kernel.background == crate::scenario::BackgroundSpec::Kernel {
        let daemons = crate::workload::background::kernel_tasks(&m, tick_nsec(k.tunables.hz), k.version);
        nr_daemons = daemons.len();
        specs.tasks.extend(daemons);
    }
    if let Some(profile) = &s.kernel.background_profile {
        let Some(profile) = profile.spec() else {
            return Err(ScenarioError::new(
                "kernel.background_profile",
                "a profile file is read when the scenario is loaded (api::load); this one was not",
            )
            .into());
        };
        let daemons = crate::workload::background::profile_tasks(profile, m.nr_cpus());
        nr_daemons += daemons.len();
        specs.tasks.extend(daemons);
    }
    if let Some(limit) = memory {
        check_memory(s, &specs.tasks, m.nr_cpus(), specs.groups.len(), limit)?;
    }
    let groups = GroupTree::new(&specs.groups)?;
    let mut names = Names::default();
    let (programs, templates) = compile_templates(&specs.templates, &mut names, &groups.index)?;
    let mut sim = simulator(s, seed, sink, &mut specs, &groups, programs, templates, m, k, feat)?;
    sim.setup_mechanisms(s, &specs.groups, &groups.parents)?;
    if let Some(ext) = &s.kernel.sched_ext {
        sim.setup_sched_ext(ext)?;
    }
    sim.create_declared_tasks(&specs.tasks, &mut names, &groups.index)?;
    if nr_daemons > 0 {
        sim.background_created(nr_daemons);
    }
    check_waits_are_signalled(&sim.programs, &names, specs.templates.len(), &specs.tasks)?;
    sim.boot(s, &specs.timers);
    sim.setup_ipc(&names, &specs.tasks, specs.templates.len());
    sim.resolve_step_names(&names, &groups.index)?;
    if sim.tasks.is_empty() {
        return Err(ScenarioError::new("workload", "the workload created no task").into());
    }
    let warmup = s.run.warmup_s.map_or(0, |w| (w * NSEC_PER_SEC as f64).round() as u64);
    sim.measure = crate::state::measure::Measurement::new(sim.end, warmup, sim.groups.len());
    Ok(sim)
}

/// The machine, the kernel config on it and the sched_features (kernel/sched/features.h
/// defaults, then the scenario's switches); without SCHED_CLUSTER the machine loses its
/// cluster level, as build_sched_domains() would.
fn machine_and_kernel(s: &Scenario) -> Result<(Machine, KernelConfig, Features), SimError> {
    let mut m = s.machine.build()?;
    let version = KernelVersion::parse(&s.kernel.profile).map_err(|e| ScenarioError::new("kernel.profile", e))?;
    let k = KernelConfig::resolve(version, m.nr_cpus(), &s.kernel.tunables).map_err(|e| ScenarioError::new("kernel.tunables", e))?;
    let mut feat = Features::defaults(version, m.arch);
    for (name, on) in &s.kernel.features {
        let f = Features::lookup(name).ok_or_else(|| ScenarioError::new(format!("kernel.features.{name}"), "unknown feature"))?;
        feat.set(f, *on);
    }
    if !feat.has(crate::features::Feature::SCHED_CLUSTER) {
        m.without_clusters();
    }
    Ok((m, k, feat))
}

/// The scenario's own groups, tasks, templates and timers followed by its generator's
/// (generated here, per seed: some generators draw from it), and the generator's
/// reporter.
struct WorkloadSpecs {
    groups: Vec<GroupSpec>,
    tasks: Vec<TaskSpec>,
    templates: Vec<TaskSpec>,
    timers: Vec<KernelTimerSpec>,
    reporter: Option<crate::workload::Reporter>,
}

impl WorkloadSpecs {
    fn of(s: &Scenario, m: &Machine, seed: u64) -> Result<WorkloadSpecs, SimError> {
        let generated = match &s.workload {
            Some(w) if w.rt_app.is_some() => {
                return Err(ScenarioError::new(
                    "workload.rt_app",
                    "the rt-app file is read when the scenario is loaded (interchange::rt_app::expand_workload)",
                )
                .into())
            }
            Some(w) => Some(crate::workload::generate(w, m, seed)?),
            None => None,
        };
        let mut specs = WorkloadSpecs {
            groups: s.groups.clone(),
            tasks: s.tasks.clone(),
            templates: s.templates.clone(),
            timers: s.timers.clone(),
            reporter: None,
        };
        if let Some(g) = generated {
            specs.groups.extend(g.groups);
            specs.tasks.extend(g.tasks);
            specs.templates.extend(g.templates);
            specs.timers.extend(g.timers);
            specs.reporter = Some(g.reporter);
        }
        Ok(specs)
    }
}

/// The task groups (the cgroup tree, sched_create_group()): index 0 is the root, each
/// group's parent before it.
struct GroupTree {
    groups: Vec<Group>,
    parents: Vec<Option<usize>>,
    shares: Vec<u64>,
    index: BTreeMap<String, usize>,
}

impl GroupTree {
    fn new(specs: &[GroupSpec]) -> Result<GroupTree, SimError> {
        let mut groups = vec![Group { name: "root".into(), parent: None, usage_ns: 0 }];
        let mut shares = vec![crate::state::cfs_rq::DEFAULT_SHARES];
        let mut index = BTreeMap::new();
        for (i, g) in specs.iter().enumerate() {
            let parent = g.parent.as_ref().map(|p| index[p]).unwrap_or(0);
            index.insert(g.name.clone(), groups.len());
            groups.push(Group { name: g.name.clone(), parent: Some(parent), usage_ns: 0 });
            shares.push(g.shares().map_err(|e| ScenarioError::new(format!("groups[{i}].{}", e.0), e.1))?);
        }
        let parents = groups.iter().map(|g| g.parent).collect();
        Ok(GroupTree { groups, parents, shares, index })
    }

    /// The group names a trace lists, the root first.
    fn names(&self) -> Vec<String> {
        self.groups.iter().map(|g| g.name.clone()).collect()
    }
}

/// The templates' programs (what fork steps create), compiled first so that programs can
/// fork templates defined after them.
fn compile_templates(
    specs: &[TaskSpec],
    names: &mut Names,
    group_index: &BTreeMap<String, usize>,
) -> Result<(Vec<Program>, Vec<Template>), SimError> {
    for (i, t) in specs.iter().enumerate() {
        names.templates.insert(t.name.clone(), i);
    }
    let mut programs = Vec::new();
    let mut templates = Vec::new();
    for (i, t) in specs.iter().enumerate() {
        programs.push(Program::compile(&t.program, names, &format!("templates[{i}].program"))?);
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
    Ok((programs, templates))
}

/// The runqueues as sched_init() sets them up, each with its sched domains' balancing
/// state (sd_init()) and its cpuidle device.
fn runqueues(m: &Machine, k: &KernelConfig) -> Vec<Rq> {
    let migration_cost = k.tunables.sched_migration_cost_ns;
    (0..m.nr_cpus())
        .map(|cpu| Rq {
            // sched_init: avg_idle = 2 × migration cost, max_idle_balance_cost = migration cost.
            avg_idle: 2 * migration_cost.max(1),
            max_idle_balance_cost: migration_cost,
            sd: m.domains[cpu]
                .iter()
                // sd_init() starts NI_RANDOM's statistics at a 50 % success rate.
                .map(|d| DomainState {
                    balance_interval_ms: d.min_interval_ms,
                    newidle_call: 512,
                    newidle_success: 256,
                    newidle_ratio: 512,
                    ..Default::default()
                })
                .collect(),
            stats: crate::metrics::CpuStats { cpu, ..Default::default() },
            idle: crate::cpuidle::CpuIdleDevice::new(m.cpu_idle_driver[cpu], &m.idle_drivers[m.cpu_idle_driver[cpu]], k.tunables.cpuidle_governor),
            ..Default::default()
        })
        .collect()
}

/// The tick (tick_init(), tick_nohz_init() for nohz_full=, the watchdog's period); its
/// phase is drawn from the seed unless the scenario fixes it.
fn tick_state(m: &Machine, k: &KernelConfig, seed: u64) -> Result<crate::state::TickState, SimError> {
    let tick_ns = tick_nsec(k.tunables.hz);
    let nohz_full = match &k.tunables.nohz_full {
        Some(list) => CpuMask::parse_list(list).map_err(|e| ScenarioError::new("kernel.tunables.nohz_full", e))?.and(&m.all_cpus()),
        None => CpuMask::new(),
    };
    Ok(crate::state::TickState {
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
        stoppers: Vec::new(),
    })
}

/// The run's counters, empty, sized for the machine's LLCs and idle drivers.
fn run_stats(m: &Machine) -> crate::state::RunStats {
    crate::state::RunStats {
        wc: WorkConservation::new(m.llc_span.iter().map(|s| s.weight())),
        counters: Default::default(),
        wakeup_latency: Default::default(),
        events_by_kind: Default::default(),
        cost_reads: Default::default(),
        idle_wake_reads: vec![Default::default(); m.idle_drivers.len()],
        timer_latency: Default::default(),
        timer_bench_ns: Default::default(),
        user_hists: Vec::new(),
    }
}

/// The synchronization objects, none yet: [`Simulator::setup_ipc`] sizes them once every
/// program is compiled.
fn empty_ipc() -> crate::state::IpcState {
    crate::state::IpcState {
        chans: Vec::new(),
        chan_scoped: Vec::new(),
        family_chans: BTreeMap::new(),
        locks: Vec::new(),
        barriers: Vec::new(),
        chan_names: Vec::new(),
        lock_names: Vec::new(),
        chan_capacity: Default::default(),
    }
}

/// The simulator before any task exists: every field from the pieces above; the
/// classes' and mechanisms' state (timers, idle hardware, fair groups, shared runqueue,
/// RT/deadline, root domain) as their constructors make it.
#[allow(clippy::too_many_arguments)]
fn simulator(
    s: &Scenario,
    seed: u64,
    sink: Option<Box<dyn crate::trace::TraceSink>>,
    specs: &mut WorkloadSpecs,
    groups: &GroupTree,
    programs: Vec<Program>,
    templates: Vec<Template>,
    m: Machine,
    k: KernelConfig,
    feat: Features,
) -> Result<Simulator, SimError> {
    let nr = m.nr_cpus();
    let tick = tick_state(&m, &k, seed)?;
    let trace = sink.map(|sink| Tracer::new(sink, &TraceMeta { nr_cpus: nr, groups: groups.names() }));
    let node_of: Vec<_> = m.cpus.iter().map(|c| c.node).collect();
    Ok(Simulator {
        scenario_name: s.name.clone(),
        seed,
        tick,
        bw: crate::state::BandwidthState { control: None, nr: Vec::new(), window_start: Vec::new(), violation: None, lock_scratch: Vec::new() },
        liveness: None,
        measure: crate::state::measure::Measurement::default(),
        has_smt: m.has_smt(),
        balance: crate::state::BalanceState {
            asym_capacity: m.is_asymmetric(),
            llc_nr_idle_scan: m.llc_span.iter().map(|s| s.weight()).collect(),
            ..Default::default()
        },
        now: 0,
        end: s.run.duration_s.map(|d| (d * NSEC_PER_SEC as f64).round() as u64),
        until_done: s.run.until.is_some(),
        max_events: s.run.max_events,
        q: EventQueue::new(nr),
        events: 0,
        tasks: Vec::new(),
        rngs: Vec::new(),
        programs,
        templates,
        mm_names: BTreeMap::new(),
        running: Default::default(),
        affinity_masks: Default::default(),
        ipc: empty_ipc(),
        masks: Vec::new(),
        group_steps: Vec::new(),
        groups: groups.groups.clone(),
        live_tasks: 0,
        deadlock: false,
        next_deadlock_check: 0,
        load_sums: crate::state::load_sums::LoadSums::new(&m),
        stats: run_stats(&m),
        pids: crate::state::PidTable { next: task_specs_max_pid(s).map_or(0, |p| p + 1), ..Default::default() },
        trace,
        reporter: specs.reporter.take(),
        mm: Default::default(),
        timers: crate::timers::Timers::new(
            &node_of,
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
            &groups.parents,
            &groups.shares,
            nr,
            feat.has(crate::features::Feature::FAIR_GROUP_SCHED),
            crate::fair::VRUNTIME_BASE,
        ),
        swq: crate::state::shared_runq::SharedRunq::new(&m, &feat, k.tunables.shared_runq_shard_sz)
            .map_err(|e| ScenarioError::new("kernel.features", e))?,
        spinlocks: crate::lock::Locks::new(nr, groups.parents.len()),
        queue_index: Default::default(),
        error: None,
        eas: Default::default(),
        rtapp_log: None,
        rtc: crate::state::rt_rq::ClassState::new(nr),
        rd: crate::state::root_domain::RootDomain::new(nr, m.cpus.iter().map(|c| c.capacity as u64).max().unwrap_or(1024)),
        scx: Default::default(),
        rqs: runqueues(&m, &k),
        k,
        feat,
        m,
    })
}

impl Simulator {
    /// The mechanisms' state that depends on the groups: CFS bandwidth (the groups'
    /// quotas), cpufreq and schedutil's limits, the groups' uclamps; every CPU then
    /// starts at its top operating point (and stays there under `performance`).
    fn setup_mechanisms(&mut self, s: &Scenario, groups: &[GroupSpec], parents: &[Option<usize>]) -> Result<(), SimError> {
        self.setup_bandwidth(groups)?;
        self.setup_cpufreq(s.kernel.governor.map_or(self.m.default_governor, Into::into));
        if let Some(su) = &s.kernel.schedutil {
            self.set_schedutil_limits(su)?;
        }
        let mut tg_clamps = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let req = g.uclamp().map_err(|e| ScenarioError::new(format!("groups[{i}].{}", e.0), e.1))?;
            tg_clamps.push((req, parents[i + 1].unwrap_or(0)));
        }
        self.set_group_uclamps(&tg_clamps);
        for cpu in 0..self.m.nr_cpus() {
            let khz = (self.m.cpus[cpu].freq_mhz as f64 * 1000.0) as u32;
            self.trace_event(cpu, crate::trace::TraceEvent::CpuFrequency { khz });
        }
        Ok(())
    }

    /// The declared tasks (`count` copies of each spec), in order, each woken at its
    /// start: wake_up_new_task() at 0, a TaskStart event later.
    fn create_declared_tasks(&mut self, specs: &[TaskSpec], names: &mut Names, group_index: &BTreeMap<String, usize>) -> Result<(), SimError> {
        // The declared tasks at once: growing the vector by doubling copies every task.
        self.tasks.reserve(specs.iter().map(|t| t.count).sum());
        let all = self.m.all_cpus();
        for (i, t) in specs.iter().enumerate() {
            let program = Program::compile(&t.program, names, &format!("tasks[{i}].program"))?;
            self.programs.push(program);
            let program = self.programs.len() - 1;
            let affinity = match &t.affinity {
                Some(a) => CpuMask::parse_list(a).expect("validated").and(&all),
                None => all,
            };
            if affinity.is_empty() {
                return Err(ScenarioError::new(
                    format!("tasks[{i}].affinity"),
                    format!("no CPU of '{}' exists on this machine", t.affinity.as_deref().unwrap_or("")),
                )
                .into());
            }
            let pins: Vec<usize> = affinity.iter().collect();
            for copy in 0..t.count {
                let mask = if t.pin_each { CpuMask::single(pins[copy % pins.len()]) } else { affinity };
                let group = t.group.as_ref().map_or(0, |g| group_index[g]);
                self.create_declared_task(i, t, copy, program, mask, group, names)?;
            }
        }
        Ok(())
    }

    /// Copy `copy` of task spec `i`: created, its attributes set as sched_setattr()
    /// and prctl() would, then woken (or its start scheduled).
    #[allow(clippy::too_many_arguments)]
    fn create_declared_task(
        &mut self,
        i: usize,
        t: &TaskSpec,
        copy: usize,
        program: usize,
        mask: CpuMask,
        group: usize,
        names: &mut Names,
    ) -> Result<(), SimError> {
        let name = if t.count > 1 { format!("{}-{copy}", t.name) } else { t.name.clone() };
        self.pids.wanted = t.pid;
        let tid = self.create_task(name, program, t.nice, mask, group, t.process.as_deref(), t.footprint_kib * 1024, None);
        if let Some(slack) = t.timer_slack {
            self.tasks[tid].timer_slack_ns = slack.0;
        }
        self.tasks[tid].cputime_poll_ns = t.cputime_poll.map_or(0, |d| d.0);
        if let Some(h) = &t.timer_histogram {
            let name = if t.count > 1 { format!("{h}-{copy}") } else { h.clone() };
            self.tasks[tid].timer_hist = Some(crate::state::task::intern(&mut names.histograms, &name));
        }
        if let Some(a) = &t.sched_attr {
            self.set_task_uclamp(tid, a.util_min, a.util_max);
            self.set_sched_attr(tid, a)
                .map_err(|e| ScenarioError::new(format!("tasks[{i}].sched_attr"), format!("task '{}': {e}", self.tasks[tid].stats.name)))?;
        }
        // __setparam_fair(): slice_us, or an rt-app thread's sched_runtime (ignored
        // by kernels before 6.12, which have no custom slice).
        let from_attr = t.sched_attr.as_ref().and_then(|a| a.fair_slice_ns()).filter(|_| self.k.version >= crate::kernel::KernelVersion::new(6, 12));
        if let Some(ns) = t.slice_us.map(|us| us * crate::time::NSEC_PER_USEC).or(from_attr) {
            let se = &mut self.tasks[tid].se;
            se.slice = ns;
            se.custom_slice = true;
            self.fg.custom_slices = true;
        }
        if let Some(cpu) = t.cpu {
            if !mask.test(cpu) {
                return Err(ScenarioError::new(format!("tasks[{i}].cpu"), format!("CPU {cpu} is not in the task's affinity")).into());
            }
            self.tasks[tid].cpu = cpu;
            self.tasks[tid].start_on = true;
        }
        let start = t.start.map_or(0, |d| d.0);
        if start == 0 {
            let cpu = self.tasks[tid].cpu;
            self.wake_up_new_task(tid, cpu, None);
        } else {
            self.q.push(start, EventClass::Timer, EventKind::TaskStart { task: tid as u32 });
        }
        Ok(())
    }

    /// What runs at boot besides the tasks: rt-app's global pi_enabled, the background
    /// kernel timers, the watchdogs; CPUs with nothing to run enter the idle loop
    /// (cpu_startup_entry()).
    fn boot(&mut self, s: &Scenario, timers: &[KernelTimerSpec]) {
        // rt-app's global pi_enabled (PTHREAD_PRIO_INHERIT mutexes), in the kept global object.
        self.rtc.pi_enabled = s.rt_app.as_ref().and_then(|g| g.get("pi_enabled")).and_then(|v| v.as_bool()).unwrap_or(false);
        self.arm_kernel_timers(timers);
        self.start_watchdogs();
        for cpu in 0..self.m.nr_cpus() {
            if self.rqs[cpu].curr.is_none() && !self.rqs[cpu].resched_pending {
                self.do_idle(cpu, 0);
            }
        }
    }

    /// The synchronization objects and histograms the compiled programs name: channels
    /// with their capacities, mutexes, barriers with their parties.
    fn setup_ipc(&mut self, names: &Names, tasks: &[TaskSpec], nr_templates: usize) {
        self.ipc.chans = vec![Channel::default(); names.channels.len()];
        for (&ch, &(capacity, wake_at)) in &names.capacities {
            self.ipc.chans[ch].capacity = capacity;
            self.ipc.chans[ch].wake_at = wake_at;
        }
        self.ipc.chan_capacity = names.capacities.iter().map(|(&c, &v)| (c, v)).collect();
        self.stats.user_hists = names
            .histograms
            .iter()
            .map(|(n, &i)| (i, n.clone()))
            .collect::<BTreeMap<_, _>>()
            .into_values()
            .map(|n| (n, Default::default()))
            .collect();
        for h in self.tasks.iter().filter_map(|t| t.timer_hist) {
            self.stats.user_hists[h].1.us_bins = true;
        }
        self.ipc.chan_scoped = vec![false; names.channels.len()];
        for (name, &i) in &names.channels {
            self.ipc.chan_scoped[i] = name.starts_with('@');
        }
        self.ipc.locks = vec![Mutex::default(); names.locks.len()];
        // A barrier's parties: every task instance whose program uses it.
        self.ipc.barriers = vec![Barrier::default(); names.barriers.len()];
        for (i, t) in tasks.iter().enumerate() {
            let p = &self.programs[nr_templates + i];
            let mut used: Vec<usize> =
                p.insns.iter().filter_map(|x| if let crate::state::task::Insn::Barrier(b) = x { Some(*b) } else { None }).collect();
            used.sort_unstable();
            used.dedup();
            for b in used {
                self.ipc.barriers[b].parties += t.count;
            }
        }
    }

    /// The names programs' steps refer to, resolved on this machine and group tree: the
    /// masks of `set_affinity`, the groups of `set_group`, channel and mutex names.
    fn resolve_step_names(&mut self, names: &Names, group_index: &BTreeMap<String, usize>) -> Result<(), SimError> {
        let all = self.m.all_cpus();
        for (i, m) in names.masks.iter().enumerate() {
            let mask = CpuMask::parse_list(m).expect("checked at compile").and(&all);
            if mask.is_empty() {
                return Err(ScenarioError::new("set_affinity", format!("no CPU of '{m}' (step {i}) exists on this machine")).into());
            }
            self.masks.push(mask);
        }
        for g in &names.groups {
            let gi =
                if g.is_empty() { 0 } else { *group_index.get(g).ok_or_else(|| ScenarioError::new("set_group", format!("unknown group '{g}'")))? };
            self.group_steps.push(gi);
        }
        self.ipc.chan_names = vec![String::new(); names.channels.len()];
        for (name, &i) in &names.channels {
            self.ipc.chan_names[i] = name.clone();
        }
        self.ipc.lock_names = vec![String::new(); names.locks.len()];
        for (name, &i) in &names.locks {
            self.ipc.lock_names[i] = name.clone();
        }
        Ok(())
    }
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
            stats: crate::metrics::TaskStats { pid, name, group: self.groups[group].name.clone(), start_ns: self.now, ..Default::default() },
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
            daemon: false,
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
fn check_waits_are_signalled(
    programs: &[Program],
    names: &Names,
    nr_templates: usize,
    tasks: &[crate::scenario::TaskSpec],
) -> Result<(), ScenarioError> {
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
        let policy =
            [SchedPolicy::Normal, SchedPolicy::Fifo, SchedPolicy::Rr, SchedPolicy::Batch, SchedPolicy::Idle, SchedPolicy::Deadline, SchedPolicy::Ext]
                [ca.policy];
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
