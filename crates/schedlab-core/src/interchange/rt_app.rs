//! rt-app JSON workloads in: the grammar rt-app itself accepts, as scenario tasks.
//!
//! Mirrors: scheduler-tools/rt-app (at 55cb0c0, 2026-05-06) src/rt-app_parse_config.c
//! (events matched by key prefix in the order lock, unlock, wait, signal, broad, sync,
//! sleep, runtime, run, timer, suspend, resume, memrun, mem, iorun, yield, barrier, fork,
//! sem_post, sem_wait; `loop`, `instance`, `delay`, `phases`, `cpus`, `taskgroup`,
//! `priority`/`policy` at thread or phase level) and src/rt-app.c `run_event()` for what
//! each event does; doc/tutorial.txt for units (µs) and defaults.
//! Model: a thread is a task (`instance` copies); its phases are loops (`loop`,
//! default 1) inside the thread's loop (default forever); a phase's `cpus` and `taskgroup`
//! become set_affinity / set_group steps when they change. `run` is work calibrated on
//! the calibration CPU (its capacity scales it), `runtime` wall-clock spinning, `timer`
//! rt-app's own periodic timer. Condition variables lose signals nobody waits for,
//! semaphores keep them, as in pthreads. SCHED_FIFO / SCHED_RR (`priority` 1..99, 10 by
//! default as rt-app's DEFAULT_THREAD_PRIORITY) and SCHED_DEADLINE (`dl-runtime`,
//! `dl-period`, `dl-deadline`, checked as sched_setattr() would) run in their classes
//! (issue 35); `global.pi_enabled` gives the
//! mutexes priority inheritance; what schedlab cannot model (uclamp, NUMA binding, a
//! phase's change of policy) is kept out with a note.
//! A `"schedlab"` key adds what rt-app lacks: the machine, the kernel, the run, CFS
//! bandwidth of task groups (`"taskgroups": {"/tg1": {"cpu_max": "50000 100000"}}`),
//! per-task process/footprint, and any schedlab step as an event `"schedlab.STEP"`.

use std::collections::BTreeMap;

use super::lenient_json::{self, Node, Value};
use super::ImportError;
use crate::scenario::rt_app_spec::{SchedAttrSpec, DEFAULT_MEM_BUFFER, IO_WRITE_NS, MEM_BYTES_PER_NS};
use crate::scenario::{
    CondWaitSpec, Duration, ForkSpec, GroupSpec, KernelSpec, LoopSpec, MachineSpec, MemSpec, OpSpec, PeriodicMode, PeriodicSpec, RunSpec, Scenario,
    TaskSpec, Until,
};
use crate::time::{Ns, NSEC_PER_USEC};
/// What a run that rt-app would let go until Ctrl-C is simulated for.
const FOREVER_RUN_S: f64 = 10.0;

/// rt-app's event names, in the order its parser tries them (prefix match).
pub const EVENTS: [&str; 20] = [
    "lock", "unlock", "wait", "signal", "broad", "sync", "sleep", "runtime", "run", "timer", "suspend", "resume", "memrun", "mem", "iorun", "yield",
    "barrier", "fork", "sem_post", "sem_wait",
];

const TASK_KEYS: [&str; 14] = [
    "instance",
    "loop",
    "phases",
    "priority",
    "policy",
    "cpus",
    "nodes_membind",
    "delay",
    "taskgroup",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
];

/// The scheduling policies rt-app names.
const POLICIES: [&str; 6] = ["SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE"];

/// Options of an import.
#[derive(Clone, Debug, Default)]
pub struct RtAppOptions {
    /// The machine, overriding the file's `schedlab.machine`.
    pub machine: Option<MachineSpec>,
}

/// A scenario made from an rt-app file, and what was approximated or left out.
#[derive(Clone, Debug)]
pub struct RtAppImport {
    /// The scenario.
    pub scenario: Scenario,
    /// One line per thing not modeled as written.
    pub notes: Vec<String>,
}

/// Returns the rt-app event a key names (prefix match in rt-app's order).
pub fn event_of(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

struct Ctx<'a> {
    file: &'a str,
    notes: Vec<String>,
    /// Capacity of the calibration CPU.
    calib_cap: u64,
    mem_buffer: u64,
    default_policy: String,
    groups: BTreeMap<String, GroupSpec>,
    forked: Vec<String>,
    shared_timers: BTreeMap<String, usize>,
    /// What is kept but not modeled ("SCHED_FIFO") -> the threads asking for it.
    unmodeled: BTreeMap<String, Vec<String>>,
    /// The `global` object as written, kept for export.
    global: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Ctx<'_> {
    fn err(&self, node: &Node, field: &str, msg: impl Into<String>) -> ImportError {
        ImportError::new(self.file, node.line, field, msg)
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    fn int(&self, node: &Node, field: &str) -> Result<i64, ImportError> {
        match node.value {
            Value::Int(i) => Ok(i),
            Value::Float(f) if f.fract() == 0.0 => Ok(f as i64),
            _ => Err(self.err(node, field, format!("expected an integer, got {}", node.kind()))),
        }
    }

    fn us(&self, node: &Node, field: &str) -> Result<Ns, ImportError> {
        let v = self.int(node, field)?;
        if v < 0 {
            return Err(self.err(node, field, format!("negative duration {v} µs: expected µs >= 0")));
        }
        (v as Ns).checked_mul(NSEC_PER_USEC).ok_or_else(|| self.err(node, field, format!("{v} µs is too long")))
    }

    fn string<'n>(&self, node: &'n Node, field: &str) -> Result<&'n str, ImportError> {
        match &node.value {
            Value::Str(s) => Ok(s),
            _ => Err(self.err(node, field, format!("expected a string, got {}", node.kind()))),
        }
    }

    /// A group for a taskgroup path ("/tg1/tg11"), with its parents; None = root.
    fn group(&mut self, path: &str) -> Option<String> {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let mut parent: Option<String> = None;
        for i in 0..parts.len() {
            let name = parts[..=i].join("/");
            self.groups.entry(name.clone()).or_insert_with(|| GroupSpec {
                name: name.clone(),
                parent: parent.clone(),
                cpu_max: None,
                cfs_quota_us: None,
                cfs_period_us: None,
                cfs_burst_us: None,
                cpu_shares: None,
                cpu_weight: None,
                uclamp_min: None,
                uclamp_max: None,
            });
            parent = Some(name);
        }
        parent
    }
}

/// Imports rt-app JSON text; `file` names it in errors.
pub fn import(text: &str, file: &str, opts: &RtAppOptions) -> Result<RtAppImport, ImportError> {
    let root = lenient_json::parse(text, file)?;
    let Some(entries) = root.entries() else {
        return Err(ImportError::new(file, root.line, "json", format!("expected an object with \"tasks\", got {}", root.kind())));
    };
    let ext = root.get("schedlab");
    let ext_field = |key: &str| ext.and_then(|e| e.get(key));
    let serde_err = |node: &Node, field: &str, e: serde_json::Error| ImportError::new(file, node.line, field, e.to_string());
    let machine: MachineSpec = match (&opts.machine, ext_field("machine")) {
        (Some(m), _) => m.clone(),
        (None, Some(n)) => serde_json::from_value(n.to_json()).map_err(|e| serde_err(n, "schedlab.machine", e))?,
        (None, None) => {
            MachineSpec { topo: Some(crate::scenario::TopoSpec { sockets: 1, llcs: 1, cores: 8, smt: 1, arch: None }), ..Default::default() }
        }
    };
    let built = machine.build().map_err(|e| ImportError::new(file, 0, e.field, e.message))?;
    let mut cx = Ctx {
        file,
        notes: Vec::new(),
        calib_cap: built.cpus[0].capacity as u64,
        mem_buffer: DEFAULT_MEM_BUFFER,
        default_policy: "SCHED_OTHER".into(),
        groups: BTreeMap::new(),
        forked: Vec::new(),
        shared_timers: BTreeMap::new(),
        unmodeled: BTreeMap::new(),
        global: None,
    };
    if opts.machine.is_none() && ext_field("machine").is_none() {
        cx.note("no machine given: a synthetic 8-CPU machine (topo cores = 8); choose one with --machine or \"schedlab\": {\"machine\": ...}".into());
    }
    let mut duration_s: Option<f64> = None;
    for (key, node) in entries {
        match key.as_str() {
            "tasks" | "schedlab" => {}
            "global" => duration_s = global(&mut cx, node, &built)?,
            "resources" => cx.note("resources: ignored (rt-app creates resources on the fly; kept for backward compatibility)".into()),
            other => cx.note(format!("top-level key '{other}' ignored")),
        }
    }
    let Some(tasks_node) = root.get("tasks") else {
        return Err(ImportError::new(file, root.line, "tasks", "missing: an rt-app file needs a \"tasks\" object"));
    };
    let Some(task_entries) = tasks_node.entries() else {
        return Err(cx.err(tasks_node, "tasks", format!("expected an object of threads, got {}", tasks_node.kind())));
    };
    if task_entries.is_empty() {
        return Err(cx.err(tasks_node, "tasks", "no thread defined"));
    }
    let mut tasks = Vec::new();
    let mut seen = Vec::new();
    for (name, node) in task_entries {
        if seen.contains(name) {
            return Err(cx.err(node, &format!("tasks.{name}"), "duplicate thread name"));
        }
        seen.push(name.clone());
        tasks.push(thread(&mut cx, name, node)?);
    }
    if !cx.unmodeled.is_empty() {
        let what: Vec<String> = cx.unmodeled.iter().map(|(k, v)| format!("{k}: {}", v.join(", "))).collect();
        cx.note(format!(
            "not modeled yet (schedlab has the fair class only, without uclamp; issues 34, 35), run as fair tasks \
             and kept for export: {}",
            what.join("; ")
        ));
    }
    // A forked thread is a template; instance 0 threads exist only as templates.
    let mut templates = Vec::new();
    for f in cx.forked.clone() {
        let Some(t) = tasks.iter().find(|t: &&(TaskSpec, usize)| t.0.name == f) else {
            return Err(ImportError::new(file, tasks_node.line, "fork", format!("fork of '{f}', which is not a thread of \"tasks\"")));
        };
        let mut tpl = t.0.clone();
        tpl.count = 1;
        templates.push(tpl);
    }
    let tasks: Vec<TaskSpec> = tasks.into_iter().filter(|(_, instances)| *instances > 0).map(|(t, _)| t).collect();
    for (name, n) in cx.shared_timers.clone() {
        if n > 1 {
            cx.note(format!("timer '{name}' is shared by {n} threads in rt-app: schedlab gives each thread its own"));
        }
    }
    // Bandwidth of task groups (what rt-app has no syntax for).
    if let Some(tg) = ext_field("taskgroups") {
        for (path, spec) in tg.entries().unwrap_or_default() {
            let field = format!("schedlab.taskgroups.{path}");
            let name = cx.group(path).ok_or_else(|| cx.err(spec, &field, "the root group has no limits"))?;
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Limits {
                cpu_max: Option<String>,
                cfs_quota_us: Option<i64>,
                cfs_period_us: Option<u64>,
                cfs_burst_us: Option<u64>,
            }
            let l: Limits = serde_json::from_value(spec.to_json()).map_err(|e| serde_err(spec, &field, e))?;
            let g = cx.groups.get_mut(&name).expect("created");
            (g.cpu_max, g.cfs_quota_us, g.cfs_period_us, g.cfs_burst_us) = (l.cpu_max, l.cfs_quota_us, l.cfs_period_us, l.cfs_burst_us);
        }
    }
    let kernel: KernelSpec = match ext_field("kernel") {
        Some(n) => serde_json::from_value(n.to_json()).map_err(|e| serde_err(n, "schedlab.kernel", e))?,
        None => KernelSpec::default(),
    };
    let forever = tasks.iter().any(|t| program_is_endless(&t.program));
    let mut run = RunSpec { duration_s, until: Some(Until::WorkloadDone), ..Default::default() };
    if forever && duration_s.is_none() {
        run.duration_s = Some(FOREVER_RUN_S);
        cx.note(format!("global.duration is -1 (until stopped) and a thread loops forever: simulating {FOREVER_RUN_S} s (set global.duration)"));
    }
    if let Some(n) = ext_field("run") {
        let mut doc = serde_json::to_value(&run).map_err(|e| serde_err(n, "schedlab.run", e))?;
        if let (Some(d), serde_json::Value::Object(extra)) = (doc.as_object_mut(), n.to_json()) {
            d.extend(extra);
        }
        run = serde_json::from_value(doc).map_err(|e| serde_err(n, "schedlab.run", e))?;
    }
    let mut groups: Vec<GroupSpec> = Vec::new();
    // Parents first: BTreeMap order puts "a" before "a/b".
    for g in cx.groups.values() {
        groups.push(g.clone());
    }
    let name = std::path::Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let str_ext = |k: &str| ext_field(k).and_then(|n| if let Value::Str(s) = &n.value { Some(s.clone()) } else { None });
    let scenario = Scenario {
        name: str_ext("name").unwrap_or(name),
        description: str_ext("description").unwrap_or_else(|| format!("rt-app workload {file}")),
        machine,
        kernel,
        groups,
        workload: None,
        tasks,
        templates,
        timers: Vec::new(),
        run,
        rt_app: cx.global.take(),
    };
    scenario.validate().map_err(|e| ImportError::new(file, 0, e.field, e.message))?;
    Ok(RtAppImport { scenario, notes: cx.notes })
}

/// Replaces a scenario's `[workload] rt_app = "file.json"` by the file's threads (read
/// relative to `base`, the scenario file's directory); returns the import's notes. The
/// scenario keeps its machine, kernel and run; the file's duration applies when the
/// scenario gives no end.
pub fn expand_workload(s: &mut Scenario, base: &std::path::Path) -> Result<Vec<String>, crate::error::ScenarioError> {
    let Some(file) = s.workload.as_ref().and_then(|w| w.rt_app.clone()) else { return Ok(Vec::new()) };
    let path = base.join(&file);
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(&path).map_err(|e| crate::error::ScenarioError::new("workload.rt_app", format!("cannot read {shown}: {e}")))?;
    let imp = import(&text, &shown, &RtAppOptions { machine: Some(s.machine.clone()) })?;
    let f = imp.scenario;
    s.workload = None;
    s.groups.extend(f.groups.into_iter().filter(|g| !s.groups.iter().any(|x| x.name == g.name)).collect::<Vec<_>>());
    s.tasks.extend(f.tasks);
    s.templates.extend(f.templates);
    if s.run.duration_s.is_none() && s.run.until.is_none() {
        s.run.duration_s = f.run.duration_s;
        s.run.until = f.run.until;
    }
    s.validate()?;
    Ok(imp.notes)
}

/// Whether JSON text looks like an rt-app file (a "tasks" object) rather than a
/// schedlab scenario (whose "tasks" is a list).
pub fn looks_like_rt_app(text: &str) -> bool {
    match lenient_json::parse(text, "") {
        Ok(n) => n.get("machine").is_none() && n.get("tasks").is_some_and(|t| t.entries().is_some()),
        Err(_) => {
            // Comments and trailing commas are not JSON: only rt-app files have them.
            text.contains("/*") || !text.contains("\"machine\"")
        }
    }
}

fn program_is_endless(p: &[OpSpec]) -> bool {
    p.iter().any(|op| matches!(op, OpSpec::Loop(l) if l.count.is_none() || program_is_endless(&l.body)))
}

fn global(cx: &mut Ctx<'_>, node: &Node, m: &crate::topology::Machine) -> Result<Option<f64>, ImportError> {
    let Some(entries) = node.entries() else {
        return Err(cx.err(node, "global", format!("expected an object, got {}", node.kind())));
    };
    let mut duration = None;
    if let serde_json::Value::Object(m) = node.to_json() {
        cx.global = Some(m);
    }
    for (k, v) in entries {
        let field = format!("global.{k}");
        match k.as_str() {
            "duration" => {
                let d = cx.int(v, &field)?;
                if d == 0 || d < -1 {
                    return Err(cx.err(v, &field, format!("{d}: expected seconds > 0, or -1 (until stopped)")));
                }
                duration = (d > 0).then_some(d as f64);
            }
            "default_policy" => {
                let policy = cx.string(v, &field)?.to_string();
                if !POLICIES.contains(&policy.as_str()) {
                    return Err(cx.err(v, &field, format!("unknown policy '{policy}': expected {}", POLICIES.join(", "))));
                }
                cx.default_policy = policy;
            }
            "calibration" => {
                match &v.value {
                    Value::Str(s) if s.starts_with("CPU") => {
                        let cpu: usize = s[3..].parse().map_err(|_| cx.err(v, &field, format!("'{s}': expected \"CPUn\" or ns per loop")))?;
                        let c = m.cpus.get(cpu).ok_or_else(|| cx.err(v, &field, format!("{s}: the machine has {} CPUs", m.cpus.len())))?;
                        cx.calib_cap = c.capacity as u64;
                    }
                    _ => {}
                }
                cx.note(format!(
                    "global.calibration: run times are µs on the calibration CPU (capacity {}); the calibration itself is not simulated",
                    cx.calib_cap
                ));
            }
            // Read by the run from the kept global object (sched/pi.rs).
            "pi_enabled" => {}
            "mem_buffer_size" => cx.mem_buffer = cx.int(v, &field)?.max(1) as u64,
            "lock_pages" | "logdir" | "log_basename" | "log_size" | "ftrace" | "gnuplot" | "io_device" | "cumulative_slack" => {}
            other => cx.note(format!("global.{other} ignored")),
        }
    }
    Ok(duration)
}

/// Scheduling attributes of a thread or phase.
#[derive(Clone, Default)]
struct Attrs {
    cpus: Option<String>,
    group: Option<Option<String>>,
    nice: Option<i32>,
    /// policy, priority, dl-*, util_* as written (kept for export).
    sched: SchedAttrSpec,
}

/// `inherited`: the policy in force where `node` gives none (a thread's: the global
/// default_policy; a phase's: its thread's).
fn attrs(cx: &mut Ctx<'_>, node: &Node, path: &str, thread: &str, inherited: &str) -> Result<Attrs, ImportError> {
    let mut a = Attrs::default();
    if let Some(p) = node.get("policy") {
        let policy = cx.string(p, &format!("{path}.policy"))?.to_string();
        if !POLICIES.contains(&policy.as_str()) {
            return Err(cx.err(p, &format!("{path}.policy"), format!("unknown policy '{policy}': expected {}", POLICIES.join(", "))));
        }
        a.sched.policy = Some(policy);
    }
    if let Some(p) = node.get("priority") {
        a.sched.priority = Some(cx.int(p, &format!("{path}.priority"))?);
    }
    for (k, slot) in [("dl-runtime", &mut a.sched.runtime), ("dl-period", &mut a.sched.period), ("dl-deadline", &mut a.sched.deadline)] {
        if let Some(n) = node.get(k) {
            *slot = Some(Duration(cx.us(n, &format!("{path}.{k}"))?));
        }
    }
    for (k, slot) in [("util_min", &mut a.sched.util_min), ("util_max", &mut a.sched.util_max)] {
        if let Some(n) = node.get(k) {
            let v = cx.int(n, &format!("{path}.{k}"))?;
            if !(0..=1024).contains(&v) {
                return Err(cx.err(n, &format!("{path}.{k}"), format!("{v} is outside 0..1024 (SCHED_CAPACITY_SCALE)")));
            }
            *slot = Some(v as u32);
        }
    }
    // What the fair-class model makes of it, under the policy in force.
    let policy = Some(a.sched.policy.clone().unwrap_or_else(|| inherited.to_string()));
    let mut kept = SchedAttrSpec { policy: policy.clone(), ..a.sched.clone() };
    match policy.as_deref() {
        None | Some("SCHED_OTHER") | Some("SCHED_BATCH") => {
            if let Some(v) = a.sched.priority {
                if !(-20..=19).contains(&v) {
                    let p = node.get("priority").unwrap_or(node);
                    return Err(cx.err(p, &format!("{path}.priority"), format!("nice {v} is outside -20..19")));
                }
                a.nice = Some(v as i32);
            }
        }
        Some("SCHED_IDLE") => {
            // Its weight is WEIGHT_IDLEPRIO: a priority (nice) means nothing to it.
            if let (Some(v), false) = (a.sched.priority, path.contains(".phases.")) {
                let p = node.get("priority").unwrap_or(node);
                return Err(cx.err(
                    p,
                    &format!("{path}.priority"),
                    format!("{v} for SCHED_IDLE: expected none (SCHED_IDLE has no priority or nice)"),
                ));
            }
        }
        Some(_) => {
            // The RT and deadline classes: checked as sched_setattr() would.
            kept.priority = None;
            // A thread's own attributes (a phase's are kept for export only).
            let check = SchedAttrSpec { policy: policy.clone(), ..a.sched.clone() };
            let own = a.sched.policy.is_some() || a.sched.priority.is_some() || a.sched.runtime.is_some();
            if let (true, false, Err((f, msg))) = (own, path.contains(".phases."), check.class_attr()) {
                let key = match f {
                    "priority" => "priority",
                    "runtime" => "dl-runtime",
                    _ => "policy",
                };
                let n = node.get(key).unwrap_or(node);
                return Err(cx.err(n, &format!("{path}.{key}"), msg));
            }
        }
    }
    for what in kept.unmodeled() {
        let v = cx.unmodeled.entry(what.to_string()).or_default();
        if !v.iter().any(|t| t == thread) {
            v.push(thread.to_string());
        }
    }
    if let Some(c) = node.get("cpus") {
        let field = format!("{path}.cpus");
        let list = match &c.value {
            Value::Array(v) => v
                .iter()
                .map(|x| cx.int(x, &field).and_then(|i| if i < 0 { Err(cx.err(x, &field, "negative CPU")) } else { Ok(i.to_string()) }))
                .collect::<Result<Vec<_>, _>>()?,
            Value::Int(i) if *i >= 0 => vec![i.to_string()],
            _ => return Err(cx.err(c, &field, format!("expected an array of CPU numbers, got {}", c.kind()))),
        };
        if list.is_empty() {
            return Err(cx.err(c, &field, "empty CPU list"));
        }
        a.cpus = Some(list.join(","));
    }
    if let Some(g) = node.get("taskgroup") {
        let path_s = cx.string(g, &format!("{path}.taskgroup"))?.to_string();
        a.group = Some(cx.group(&path_s));
    }
    if node.get("nodes_membind").is_some() {
        cx.note(format!("{path}.nodes_membind: NUMA memory binding is not modeled, ignored"));
    }
    Ok(a)
}

/// A thread: (task, instances).
fn thread(cx: &mut Ctx<'_>, name: &str, node: &Node) -> Result<(TaskSpec, usize), ImportError> {
    let path = format!("tasks.{name}");
    if node.entries().is_none() {
        return Err(cx.err(node, &path, format!("expected an object, got {}", node.kind())));
    }
    let instances = match node.get("instance") {
        Some(n) => {
            let v = cx.int(n, &format!("{path}.instance"))?;
            if v < 0 {
                return Err(cx.err(n, &format!("{path}.instance"), format!("{v}: expected 0 or more")));
            }
            v as usize
        }
        None => 1,
    };
    let default_policy = cx.default_policy.clone();
    let a = attrs(cx, node, &path, name, &default_policy)?;
    let thread_policy = a.sched.policy.clone().unwrap_or(default_policy);
    let mut a = a;
    if a.sched.policy.is_none() && matches!(thread_policy.as_str(), "SCHED_FIFO" | "SCHED_RR" | "SCHED_DEADLINE") {
        // global.default_policy in force: the engine reads the thread's own attributes.
        a.sched.policy = Some(thread_policy.clone());
    }
    let delay = match node.get("delay") {
        Some(d) => cx.us(d, &format!("{path}.delay"))?,
        None => 0,
    };
    let mut ext = TaskExt::default();
    if let Some(e) = node.get("schedlab") {
        ext = serde_json::from_value(e.to_json()).map_err(|err| cx.err(e, &format!("{path}.schedlab"), err.to_string()))?;
    }
    let mut cur = a.clone();
    let mut program = Vec::new();
    let thread_loop = if let Some(phases) = node.get("phases") {
        let Some(list) = phases.entries() else {
            return Err(cx.err(phases, &format!("{path}.phases"), format!("expected an object of phases, got {}", phases.kind())));
        };
        if list.is_empty() {
            return Err(cx.err(phases, &format!("{path}.phases"), "no phase defined"));
        }
        for (pname, pnode) in list {
            let ppath = format!("{path}.phases.{pname}");
            if pnode.entries().is_none() {
                return Err(cx.err(pnode, &ppath, format!("expected an object, got {}", pnode.kind())));
            }
            let pa = attrs(cx, pnode, &ppath, name, &thread_policy)?;
            // A phase without cpus runs on the thread's; without taskgroup, stays put.
            let want_cpus = pa.cpus.clone().or_else(|| a.cpus.clone());
            if want_cpus != cur.cpus {
                program.push(OpSpec::SetAffinity(want_cpus.clone().unwrap_or_else(|| format!("0-{}", crate::cpumask::MAX_CPUS - 1))));
                cur.cpus = want_cpus;
            }
            if let Some(g) = pa.group {
                if Some(&g) != cur.group.as_ref() {
                    program.push(OpSpec::SetGroup(g.clone().unwrap_or_default()));
                    cur.group = Some(g);
                }
            }
            if !pa.sched.is_empty() {
                // rt-app sets these at the phase's start; schedlab keeps them for export.
                if pa.sched.priority.is_some() && matches!(thread_policy.as_str(), "SCHED_FIFO" | "SCHED_RR") && pa.sched.priority != a.sched.priority
                {
                    cx.note(format!("{ppath}.priority: a phase's own RT priority is not modeled: the thread keeps its own"));
                }
                if pa.nice.is_some() && pa.nice != a.nice {
                    cx.note(format!("{ppath}.priority: a phase's own priority is not modeled: the thread keeps nice {}", a.nice.unwrap_or(0)));
                }
                program.push(OpSpec::SetSchedAttr(pa.sched.clone()));
            }
            let body = [vec![OpSpec::RtAppPhase], events(cx, pnode, &ppath, name)?].concat();
            let l = phase_loop(cx, pnode, &ppath, 1)?;
            push_loop(&mut program, l, body);
        }
        phase_loop(cx, node, &path, -1)?
    } else {
        let body = [vec![OpSpec::RtAppPhase], events(cx, node, &path, name)?].concat();
        let l = phase_loop(cx, node, &path, 1)?;
        push_loop(&mut program, l, body);
        if node.get("loop").is_some() {
            1
        } else {
            -1
        }
    };
    let program = match thread_loop {
        1 => program,
        n => vec![OpSpec::Loop(LoopSpec { count: (n >= 0).then_some(n as u64), body: program })],
    };
    let task = TaskSpec {
        name: name.to_string(),
        count: instances.max(1),
        nice: a.nice.unwrap_or(0),
        affinity: a.cpus,
        cpu: None,
        pin_each: false,
        group: a.group.flatten(),
        process: ext.process,
        footprint_kib: ext.footprint_kib,
        start: (delay > 0).then_some(Duration(delay)),
        timer_slack: ext.timer_slack,
        cputime_poll: None,
        timer_histogram: None,
        sched_attr: (!a.sched.is_empty()).then_some(a.sched),
        slice_us: None,
        pid: None,
        program,
    };
    Ok((task, instances))
}

/// schedlab's per-thread additions.
#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskExt {
    process: Option<String>,
    #[serde(default)]
    footprint_kib: u64,
    timer_slack: Option<Duration>,
}

fn phase_loop(cx: &Ctx<'_>, node: &Node, path: &str, default: i64) -> Result<i64, ImportError> {
    match node.get("loop") {
        Some(l) => {
            let v = cx.int(l, &format!("{path}.loop"))?;
            if v < -1 {
                return Err(cx.err(l, &format!("{path}.loop"), format!("{v}: expected -1 (forever) or a count >= 0")));
            }
            Ok(v)
        }
        None => Ok(default),
    }
}

fn push_loop(program: &mut Vec<OpSpec>, count: i64, body: Vec<OpSpec>) {
    match count {
        0 => {}
        1 => program.extend(body),
        n => program.push(OpSpec::Loop(LoopSpec { count: (n >= 0).then_some(n as u64), body })),
    }
}

/// The events of a phase (or of a thread without phases), in order.
fn events(cx: &mut Ctx<'_>, node: &Node, path: &str, thread: &str) -> Result<Vec<OpSpec>, ImportError> {
    let mut out = Vec::new();
    for (key, v) in node.entries().unwrap_or_default() {
        let field = format!("{path}.{key}");
        if let Some(step) = key.strip_prefix("schedlab.") {
            // Repeated steps carry a number suffix (record, record1), as rt-app's events.
            let step = step.trim_end_matches(|c: char| c.is_ascii_digit());
            let mut doc = serde_json::Map::new();
            doc.insert(step.to_string(), v.to_json());
            let op: OpSpec = serde_json::from_value(doc.into()).map_err(|e| cx.err(v, &field, e.to_string()))?;
            out.push(op);
            continue;
        }
        let Some(ev) = event_of(key) else {
            if TASK_KEYS.contains(&key.as_str()) || key == "schedlab" {
                continue;
            }
            return Err(cx.err(v, &field, format!("unknown event '{key}': expected one of {} (with an optional suffix such as run1), a thread or phase key ({}), or \"schedlab.STEP\"", EVENTS.join(", "), TASK_KEYS.join(", "))));
        };
        let ref_of = |cx: &Ctx<'_>, n: &Node, k: &str| -> Result<String, ImportError> {
            let r = n.get(k).ok_or_else(|| cx.err(n, &field, format!("missing \"{k}\"")))?;
            Ok(cx.string(r, &format!("{field}.{k}"))?.to_string())
        };
        match ev {
            "run" => {
                let ns = cx.us(v, &field)?;
                // rt-app's loops are calibrated on the calibration CPU.
                out.push(OpSpec::Run(Duration((ns as u128 * cx.calib_cap as u128 / 1024) as Ns)));
            }
            "runtime" => out.push(OpSpec::RunFor(Duration(cx.us(v, &field)?))),
            "sleep" => out.push(OpSpec::Sleep(Duration(cx.us(v, &field)?))),
            "timer" => {
                if v.entries().is_none() {
                    return Err(cx.err(v, &field, format!("expected {{\"ref\": ..., \"period\": µs}}, got {}", v.kind())));
                }
                let r = ref_of(cx, v, "ref")?;
                let period = cx.us(v.get("period").ok_or_else(|| cx.err(v, &field, "missing \"period\""))?, &format!("{field}.period"))?;
                if period == 0 {
                    return Err(cx.err(v, &format!("{field}.period"), "expected a period > 0 µs"));
                }
                let mode = match v.get("mode") {
                    None => PeriodicMode::Relative,
                    Some(m) => match cx.string(m, &format!("{field}.mode"))? {
                        s if s.starts_with("absolute") => PeriodicMode::Absolute,
                        s if s.starts_with("relative") => PeriodicMode::Relative,
                        s => return Err(cx.err(m, &format!("{field}.mode"), format!("'{s}': expected relative or absolute"))),
                    },
                };
                if !r.starts_with("unique") {
                    *cx.shared_timers.entry(r).or_default() += 1;
                }
                out.push(OpSpec::Periodic(PeriodicSpec { period: Duration(period), mode, rt_app: true }));
            }
            "suspend" => out.push(OpSpec::CondWait(CondWaitSpec { cond: format!("suspend:{thread}"), mutex: None })),
            "resume" => out.push(OpSpec::CondBroadcast(format!("suspend:{}", cx.string(v, &field)?))),
            "lock" => out.push(OpSpec::Lock(cx.string(v, &field)?.to_string())),
            "unlock" => out.push(OpSpec::Unlock(cx.string(v, &field)?.to_string())),
            "wait" | "sync" => {
                if v.entries().is_none() {
                    return Err(cx.err(v, &field, format!("expected {{\"ref\": cond, \"mutex\": m}}, got {}", v.kind())));
                }
                let cond = ref_of(cx, v, "ref")?;
                let mutex = ref_of(cx, v, "mutex")?;
                if ev == "sync" {
                    out.push(OpSpec::CondSignal(cond.clone()));
                }
                out.push(OpSpec::CondWait(CondWaitSpec { cond, mutex: Some(mutex) }));
            }
            "signal" => out.push(OpSpec::CondSignal(cx.string(v, &field)?.to_string())),
            "broad" => out.push(OpSpec::CondBroadcast(cx.string(v, &field)?.to_string())),
            "barrier" => out.push(OpSpec::Barrier(cx.string(v, &field)?.to_string())),
            "mem" => {
                let bytes = cx.int(v, &field)?.max(0) as u64;
                out.push(OpSpec::Mem(MemSpec { bytes, buffer: cx.mem_buffer }));
                cx.note(format!("mem events: memset at {MEM_BYTES_PER_NS} bytes/ns, an estimate, as CPU work"));
            }
            "memrun" => {
                let size = v.get("size").map(|n| cx.int(n, &format!("{field}.size"))).transpose()?.unwrap_or(0).max(0) as u64;
                let count = v.get("count").map(|n| cx.int(n, &format!("{field}.count"))).transpose()?.unwrap_or(0).max(0) as u64;
                out.push(OpSpec::Run(Duration(size.saturating_mul(count).div_ceil(MEM_BYTES_PER_NS))));
                cx.note(format!(
                    "memrun events: size x count bytes at {MEM_BYTES_PER_NS} bytes/ns, an estimate, as CPU work (access patterns not modeled)"
                ));
            }
            "iorun" => {
                let bytes = cx.int(v, &field)?.max(0) as u64;
                out.push(OpSpec::Iorun(MemSpec { bytes, buffer: cx.mem_buffer }));
                cx.note(format!(
                    "iorun events: one write() of up to mem_buffer_size bytes to /dev/null costs {IO_WRITE_NS} ns, an estimate, as CPU work"
                ));
            }
            "yield" => out.push(OpSpec::Yield),
            "fork" => {
                let t = cx.string(v, &field)?.to_string();
                if !cx.forked.contains(&t) {
                    cx.forked.push(t.clone());
                }
                out.push(OpSpec::Fork(ForkSpec { template: t, count: 1 }));
            }
            "sem_post" => out.push(OpSpec::Signal(cx.string(v, &field)?.to_string())),
            "sem_wait" => out.push(OpSpec::Wait(cx.string(v, &field)?.to_string())),
            _ => unreachable!("every rt-app event is handled"),
        }
    }
    if out.is_empty() {
        return Err(cx.err(node, path, "no events: rt-app needs at least one event (run, sleep, timer, ...)"));
    }
    Ok(out)
}
