//! Any scenario's tasks out as rt-app JSON, so a simulated workload runs on real
//! hardware (and comes back in through [`super::rt_app`]), or a one-line refusal naming
//! the task and the step that rt-app has no form for.
//!
//! Mirrors: the grammar of scheduler-tools/rt-app src/rt-app_parse_config.c, both as
//! Debian ships it (v1.0, 2017: ftrace, gnuplot and lock_pages are booleans, a key of
//! the wrong type ends the run; no fork, taskgroup, uclamp or semaphores) and upstream
//! (at 55cb0c0, 2026-05-06: sem_post/sem_wait since 28dccb8, fork, taskgroup, util_*);
//! src/rt-app.c `run_event()` for what each event does; LISA's `RTAPhase._to_json`
//! (ARM-software/lisa lisa/wlgen/rta.py) for the shape: a thread's top-level loops
//! become phases with their `loop`, duplicate event keys get a number suffix.
//! Model: steps rt-app has map to its events. Channels follow how they are used:
//! one signalled with `signal` keeps its tokens, as rt-app's semaphores do
//! (`sem_post`/`sem_wait`); one only `post`ed or `wake_all`ed (a futex word and a
//! waiter list, schbench's) becomes a condition variable, and every run of such steps
//! in a thread is one critical section of the mutex [`SYNC_MUTEX`], so that a
//! thread's post and its wait are atomic against the waker (a post nobody waits for
//! is then lost, where schedlab's futex word keeps it: said in a note). `mark` and
//! `record` (measurement only) are written as `"schedlab.STEP"` keys, which rt-app
//! skips and schedlab reads back. A step whose skipping would change what the threads
//! do (a bounded `send`, a timeout, kernel timers, memory steps) is refused.
//! Random durations export their mean, with a note. Groups' bandwidth, the machine,
//! the kernel and the run go under "schedlab".

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use crate::error::ScenarioError;
use crate::scenario::{OpSpec, PeriodicMode, Scenario, SchedAttrSpec, TaskSpec};

/// The mutex around condition-variable sections (not a thread name: rt-app names a
/// thread's suspend mutex after the thread).
pub const SYNC_MUTEX: &str = "schedlab.sync";

/// Events and keys rt-app 1.0 (Debian's) does not know, with what it does with them.
const NEWER: [(&str, &str); 6] =
    [("sem_post", "skips"), ("sem_wait", "skips"), ("fork", "skips"), ("taskgroup", "ignores"), ("util_min", "ignores"), ("util_max", "ignores")];

/// rt-app JSON and notes on what it does not carry as schedlab runs it.
#[derive(Clone, Debug)]
pub struct RtAppExport {
    /// The document (key order as rt-app reads it).
    pub doc: Value,
    /// Approximations.
    pub notes: Vec<String>,
    /// Events and keys the file uses that rt-app 1.0 does not know.
    pub newer: Vec<String>,
}

struct Out {
    notes: Vec<String>,
    newer: BTreeSet<String>,
    chans: BTreeMap<String, Chan>,
}

impl Out {
    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// How a channel is used across every program.
#[derive(Default, Clone, Copy)]
struct Chan {
    signal: bool,
    post: bool,
    wake_all: bool,
}

impl Chan {
    /// A condition variable (post / wake_all), not a semaphore.
    fn is_cond(&self) -> bool {
        (self.post || self.wake_all) && !self.signal
    }
}

/// Events of one phase, with unique keys and the open critical section.
#[derive(Default)]
struct Events {
    map: Map<String, Value>,
    in_section: bool,
}

impl Events {
    fn push(&mut self, key: &str, v: Value) {
        let mut k = key.to_string();
        let mut n = 1;
        while self.map.contains_key(&k) {
            k = format!("{key}{n}");
            n += 1;
        }
        self.map.insert(k, v);
    }

    fn enter(&mut self) {
        if !self.in_section {
            self.push("lock", json!(SYNC_MUTEX));
            self.in_section = true;
        }
    }

    fn leave(&mut self) {
        if self.in_section {
            self.push("unlock", json!(SYNC_MUTEX));
            self.in_section = false;
        }
    }
}

fn us(ns: u64, out: &mut Out, what: &str) -> Value {
    if !ns.is_multiple_of(1000) {
        out.note(format!("{what}: rt-app times are whole µs; {ns} ns rounded"));
    }
    json!((ns + 500) / 1000)
}

fn scan(ops: &[OpSpec], chans: &mut BTreeMap<String, Chan>) {
    for op in ops {
        match op {
            OpSpec::Signal(c) => chans.entry(c.clone()).or_default().signal = true,
            OpSpec::Post(c) => chans.entry(c.clone()).or_default().post = true,
            OpSpec::WakeAll(c) => chans.entry(c.clone()).or_default().wake_all = true,
            OpSpec::Loop(l) => scan(&l.body, chans),
            _ => {}
        }
    }
}

/// Exports a scenario (a generator's tasks are generated with `seed` first).
pub fn export(s: &Scenario, seed: u64) -> Result<RtAppExport, ScenarioError> {
    let machine = s.machine.build()?;
    let mut tasks = s.tasks.clone();
    let mut templates = s.templates.clone();
    let mut groups = s.groups.clone();
    if let Some(w) = &s.workload {
        let g = crate::workload::generate(w, &machine, seed)?;
        tasks.extend(g.tasks);
        templates.extend(g.templates);
        groups.extend(g.groups);
    }
    let mut out = Out { notes: Vec::new(), newer: BTreeSet::new(), chans: BTreeMap::new() };
    for t in tasks.iter().chain(&templates) {
        scan(&t.program, &mut out.chans);
    }
    for (name, c) in &out.chans {
        if c.signal && (c.post || c.wake_all) {
            let who = tasks.iter().chain(&templates).find(|t| uses(&t.program, name)).map_or("?", |t| t.name.as_str());
            return Err(ScenarioError::new(
                format!("tasks.{who}"),
                format!("channel '{name}' is both signalled (a semaphore in rt-app) and posted or woken (a condition variable): rt-app has no form for both"),
            ));
        }
    }
    if machine.cpus[0].capacity != 1024 {
        out.note(format!(
            "run: schedlab work is at capacity 1024, rt-app's run is calibrated on CPU0 (capacity {} here): calibrate on a big CPU",
            machine.cpus[0].capacity
        ));
    }
    let mut threads = Map::new();
    for t in &tasks {
        threads.insert(t.name.clone(), thread(t, t.count, &mut out)?);
    }
    for t in &templates {
        if threads.contains_key(&t.name) {
            continue; // a thread that is also forked: rt-app forks the thread itself
        }
        threads.insert(t.name.clone(), thread(t, 0, &mut out)?);
    }
    if out.chans.values().any(|c| c.is_cond()) {
        out.note(format!(
            "post and wake_all channels are rt-app condition variables, each run of such steps in a thread a critical section of mutex '{SYNC_MUTEX}': a post nobody waits for is lost in rt-app, kept in schedlab"
        ));
    }
    let mut ext = Map::new();
    ext.insert("name".into(), json!(s.name));
    ext.insert("machine".into(), serde_json::to_value(&s.machine).unwrap_or_default());
    ext.insert("kernel".into(), serde_json::to_value(&s.kernel).unwrap_or_default());
    let mut tg = Map::new();
    for g in &groups {
        let mut lim = Map::new();
        for (k, v) in [
            ("cpu_max", g.cpu_max.as_ref().map(|x| json!(x))),
            ("cfs_quota_us", g.cfs_quota_us.map(|x| json!(x))),
            ("cfs_period_us", g.cfs_period_us.map(|x| json!(x))),
            ("cfs_burst_us", g.cfs_burst_us.map(|x| json!(x))),
        ] {
            if let Some(v) = v {
                lim.insert(k.into(), v);
            }
        }
        if !lim.is_empty() {
            tg.insert(format!("/{}", group_path(&groups, &g.name)), lim.into());
        }
    }
    if !tg.is_empty() {
        ext.insert("taskgroups".into(), tg.into());
    }
    ext.insert("run".into(), json!({"seeds": s.run.seeds, "max_events": s.run.max_events}));
    if !s.timers.is_empty() {
        out.note("[[timers]] (background kernel timers) have no rt-app form: left out".into());
    }
    let duration = match s.run.duration_s {
        Some(d) => {
            if d.fract() != 0.0 {
                out.note(format!("global.duration: rt-app takes whole seconds; {d} s rounded up"));
            }
            json!(d.ceil() as i64)
        }
        None => json!(-1),
    };
    // Only keys rt-app 1.0 reads with these types (its ftrace is a boolean: the string
    // "none" of newer versions ends a 1.0 run); an imported file's own global wins.
    let mut global = Map::new();
    for (k, v) in [
        ("duration", duration),
        ("calibration", json!("CPU0")),
        ("default_policy", json!("SCHED_OTHER")),
        ("pi_enabled", json!(false)),
        ("lock_pages", json!(false)),
        ("logdir", json!("./")),
        ("log_basename", json!(s.name.clone())),
    ] {
        global.insert(k.into(), v);
    }
    if let Some(g) = &s.rt_app {
        for (k, v) in g {
            if k != "duration" || s.run.duration_s.is_none() {
                global.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(Value::String(f)) = global.get("ftrace").cloned() {
        // Upstream's categories ("main,task") stop rt-app 1.0 at parse time (it takes a
        // boolean); tracing marks the trace, it does not change the workload.
        out.note(format!("global.ftrace: \"{f}\" written as false (rt-app 1.0 reads a boolean and stops at a string)"));
        global.insert("ftrace".into(), json!(false));
    }
    let newer: Vec<String> = out.newer.iter().cloned().collect();
    if !newer.is_empty() {
        let what: Vec<String> = newer.iter().map(|n| format!("{n} (it {} it)", NEWER.iter().find(|x| x.0 == n).map_or("skips", |x| x.1))).collect();
        out.note(format!("rt-app 1.0 (Debian's) does not know {}: run this file with upstream rt-app", what.join(", ")));
    }
    let doc = json!({"tasks": threads, "global": global, "schedlab": ext});
    Ok(RtAppExport { doc, notes: out.notes, newer })
}

fn uses(ops: &[OpSpec], chan: &str) -> bool {
    ops.iter().any(|op| match op {
        OpSpec::Signal(c) | OpSpec::Post(c) | OpSpec::WakeAll(c) | OpSpec::Wait(c) => c == chan,
        OpSpec::Loop(l) => uses(&l.body, chan),
        _ => false,
    })
}

/// A group's cgroup path below the root ("parent/child").
fn group_path(groups: &[crate::scenario::GroupSpec], name: &str) -> String {
    let g = groups.iter().find(|g| g.name == name);
    match g.and_then(|g| g.parent.as_ref()) {
        Some(p) if !name.starts_with(&format!("{p}/")) => format!("{}/{name}", group_path(groups, p)),
        _ => name.to_string(),
    }
}

/// rt-app's policy, priority, dl-* and util_* keys.
fn sched_keys(a: &SchedAttrSpec, into: &mut Map<String, Value>, out: &mut Out, what: &str) {
    if let Some(p) = &a.policy {
        into.insert("policy".into(), json!(p));
    }
    if let Some(p) = a.priority {
        into.insert("priority".into(), json!(p));
    }
    for (k, v) in [("dl-runtime", a.runtime), ("dl-period", a.period), ("dl-deadline", a.deadline)] {
        if let Some(d) = v {
            into.insert(k.into(), us(d.0, out, what));
        }
    }
    for (k, v) in [("util_min", a.util_min), ("util_max", a.util_max)] {
        if let Some(u) = v {
            into.insert(k.into(), json!(u));
            out.newer.insert(k.into());
        }
    }
}

fn thread(t: &TaskSpec, instances: usize, out: &mut Out) -> Result<Value, ScenarioError> {
    let mut th = Map::new();
    th.insert("instance".into(), json!(instances));
    match &t.sched_attr {
        Some(a) => sched_keys(a, &mut th, out, &format!("tasks.{}", t.name)),
        None if t.nice != 0 => {
            th.insert("policy".into(), json!("SCHED_OTHER"));
            th.insert("priority".into(), json!(t.nice));
        }
        None => {}
    }
    if let Some(a) = &t.affinity {
        let mask = crate::cpumask::CpuMask::parse_list(a).map_err(|e| ScenarioError::new(format!("tasks.{}.affinity", t.name), e))?;
        th.insert("cpus".into(), json!(mask.iter().collect::<Vec<_>>()));
    }
    if let Some(g) = &t.group {
        th.insert("taskgroup".into(), json!(format!("/{g}")));
        out.newer.insert("taskgroup".into());
    }
    if let Some(d) = t.start {
        th.insert("delay".into(), us(d.0, out, &format!("tasks.{}.delay", t.name)));
    }
    if t.cpu.is_some() || t.pin_each {
        out.note(format!("tasks.{}: cpu / pin_each (start placement) have no rt-app form: left out", t.name));
    }
    let mut ext = Map::new();
    if let Some(p) = &t.process {
        ext.insert("process".into(), json!(p));
    }
    if t.footprint_kib > 0 {
        ext.insert("footprint_kib".into(), json!(t.footprint_kib));
    }
    if let Some(s) = t.timer_slack {
        ext.insert("timer_slack".into(), serde_json::to_value(s).unwrap_or_default());
    }
    if !ext.is_empty() {
        th.insert("schedlab".into(), ext.into());
    }
    // One loop around everything: the thread's own loop.
    let (thread_loop, body, base): (i64, &[OpSpec], String) = match t.program.as_slice() {
        [OpSpec::Loop(l)] => (l.count.map_or(-1, |c| c as i64), &l.body, "program[0].loop.body".to_string()),
        p => (1, p, "program".to_string()),
    };
    // Top-level loops become phases; runs of other steps, phases of loop 1; a phase's
    // cpus, taskgroup and scheduling attributes are set as it starts.
    let mut phases = Map::new();
    let mut flat = Events::default();
    let mut pending = Map::new();
    let close = |flat: &mut Events, phases: &mut Map<String, Value>, lp: i64, pending: &mut Map<String, Value>| {
        flat.leave();
        if flat.map.is_empty() {
            return;
        }
        let mut ph = Map::new();
        ph.insert("loop".into(), json!(lp));
        ph.extend(std::mem::take(pending));
        ph.extend(std::mem::take(&mut flat.map));
        phases.insert(format!("p{}", phases.len()), ph.into());
    };
    let last = body.len().saturating_sub(1);
    for (i, op) in body.iter().enumerate() {
        let at = format!("{base}[{i}]");
        match op {
            OpSpec::Loop(l) if l.count == Some(0) => {}
            OpSpec::Loop(l) => {
                // An endless loop after other steps: a phase of loop -1, which rt-app
                // never leaves.
                close(&mut flat, &mut phases, 1, &mut pending);
                let mut ev = Events::default();
                for (j, inner) in l.body.iter().enumerate() {
                    if matches!(inner, OpSpec::Loop(_)) {
                        return Err(refuse(t, &format!("{at}.loop.body[{j}]"), "loop", "a loop inside a phase's loop: rt-app phases do not nest"));
                    }
                    event(inner, t, &format!("{at}.loop.body[{j}]"), &mut ev, out)?;
                }
                close(&mut ev, &mut phases, l.count.map_or(-1, |c| c as i64), &mut pending);
            }
            OpSpec::SetAffinity(m) => {
                close(&mut flat, &mut phases, 1, &mut pending);
                let mask =
                    crate::cpumask::CpuMask::parse_list(m).map_err(|e| ScenarioError::new(format!("tasks.{}.{at}.set_affinity", t.name), e))?;
                pending.insert("cpus".into(), json!(mask.iter().collect::<Vec<_>>()));
            }
            OpSpec::SetGroup(g) => {
                close(&mut flat, &mut phases, 1, &mut pending);
                pending.insert("taskgroup".into(), json!(if g.is_empty() || g == "root" { "/".to_string() } else { format!("/{g}") }));
                out.newer.insert("taskgroup".into());
            }
            OpSpec::SetSchedAttr(a) => {
                close(&mut flat, &mut phases, 1, &mut pending);
                sched_keys(a, &mut pending, out, &format!("tasks.{}.{at}", t.name));
            }
            // The end of the program ends the thread in rt-app too.
            OpSpec::Exit if i == last && thread_loop == 1 => {}
            other => event(other, t, &at, &mut flat, out)?,
        }
    }
    close(&mut flat, &mut phases, 1, &mut pending);
    if phases.is_empty() {
        return Err(refuse(t, &base, "program", "no step rt-app can run"));
    }
    th.insert("loop".into(), json!(thread_loop));
    th.insert("phases".into(), phases.into());
    Ok(th.into())
}

/// The one-line refusal: the task, where the step is, and why.
fn refuse(t: &TaskSpec, at: &str, step: &str, why: &str) -> ScenarioError {
    ScenarioError::new(format!("tasks.{}.{at}", t.name), format!("step '{step}' has no rt-app form ({why}): not exported"))
}

/// Appends the rt-app form of one step.
fn event(op: &OpSpec, t: &TaskSpec, at: &str, ev: &mut Events, out: &mut Out) -> Result<(), ScenarioError> {
    let field = format!("tasks.{}", t.name);
    let thread = t.name.as_str();
    let cond = |c: &str, out: &Out| out.chans.get(c).is_some_and(|k| k.is_cond());
    // Condition-variable steps run inside one critical section; anything else ends it.
    let in_section = match op {
        OpSpec::Post(_) | OpSpec::WakeAll(_) => true,
        OpSpec::Wait(c) => cond(c, out),
        _ => false,
    };
    if in_section {
        ev.enter();
    } else if !matches!(op, OpSpec::Mark | OpSpec::Record(_) | OpSpec::RtAppPhase) {
        ev.leave();
    }
    match op {
        OpSpec::Run(d) => ev.push("run", us(d.0, out, &field)),
        OpSpec::RunFor(d) => ev.push("runtime", us(d.0, out, &field)),
        OpSpec::Sleep(d) => ev.push("sleep", us(d.0, out, &field)),
        OpSpec::Poll(d) | OpSpec::SleepTimeout(d) => {
            out.note(format!("{field}: poll and sleep_timeout export as rt-app sleep (nanosleep: an hrtimer with the task's slack, not select()'s estimate or a jiffy timer)"));
            ev.push("sleep", us(d.0, out, &field));
        }
        OpSpec::RunExp(d) | OpSpec::SleepExp(d) => {
            out.note(format!("{field}: exponentially distributed durations export their mean"));
            ev.push(if matches!(op, OpSpec::RunExp(_)) { "run" } else { "sleep" }, us(d.0, out, &field));
        }
        OpSpec::Mem(m) => ev.push("mem", json!(m.bytes)),
        OpSpec::Iorun(m) => ev.push("iorun", json!(m.bytes)),
        OpSpec::Periodic(p) => {
            if !p.rt_app {
                out.note(format!("{field}: periodic steps become rt-app timers, whose grid starts at the thread's start"));
            }
            let mode = if p.mode == PeriodicMode::Absolute { "absolute" } else { "relative" };
            ev.push("timer", json!({"ref": "unique", "period": us(p.period.0, out, &field), "mode": mode}));
        }
        OpSpec::Wait(c) if cond(c, out) => ev.push("wait", json!({"ref": c, "mutex": SYNC_MUTEX})),
        OpSpec::Post(c) => ev.push("signal", json!(c)),
        OpSpec::WakeAll(c) => ev.push("broad", json!(c)),
        OpSpec::Wait(c) => {
            out.newer.insert("sem_wait".into());
            ev.push("sem_wait", json!(c));
        }
        OpSpec::Signal(c) => {
            out.newer.insert("sem_post".into());
            ev.push("sem_post", json!(c));
        }
        OpSpec::Lock(l) => ev.push("lock", json!(l)),
        OpSpec::Unlock(l) => ev.push("unlock", json!(l)),
        OpSpec::CondWait(w) if w.mutex.is_none() && w.cond == format!("suspend:{thread}") => ev.push("suspend", json!(thread)),
        OpSpec::CondWait(w) => match &w.mutex {
            Some(m) => ev.push("wait", json!({"ref": w.cond, "mutex": m})),
            None => {
                // pthread_cond_wait() needs a mutex held: a section of its own.
                ev.enter();
                ev.push("wait", json!({"ref": w.cond, "mutex": SYNC_MUTEX}));
                ev.leave();
            }
        },
        OpSpec::CondBroadcast(c) if c.starts_with("suspend:") => ev.push("resume", json!(&c["suspend:".len()..])),
        OpSpec::CondSignal(c) => ev.push("signal", json!(c)),
        OpSpec::CondBroadcast(c) => ev.push("broad", json!(c)),
        OpSpec::Barrier(b) => ev.push("barrier", json!(b)),
        OpSpec::Yield => ev.push("yield", json!("")),
        OpSpec::Fork(f) => {
            out.newer.insert("fork".into());
            for _ in 0..f.count {
                ev.push("fork", json!(f.template));
            }
        }
        OpSpec::Mark => ev.push("schedlab.mark", Value::Null),
        OpSpec::RtAppPhase => {} // a phase's own start: the phases written carry it
        OpSpec::Record(r) => ev.push("schedlab.record", serde_json::to_value(r).unwrap_or_default()),
        OpSpec::Send(s) => {
            return Err(refuse(
                t,
                at,
                "send",
                &format!("a write to bounded channel '{}' that blocks when it is full; rt-app has no bounded queue", s.channel),
            ))
        }
        OpSpec::WaitTimeout(w) => {
            return Err(refuse(t, at, "wait_timeout", &format!("a wait on '{}' with a timeout; rt-app waits have none", w.channel)))
        }
        OpSpec::ModTimer(_) | OpSpec::DelTimer(_) => return Err(refuse(t, at, step_name(op), "a kernel timer_list; rt-app has no kernel timers")),
        OpSpec::TimerBench(_) => return Err(refuse(t, at, "timer_bench", "a kernel micro-benchmark")),
        OpSpec::TouchArea(_) | OpSpec::TouchPages(_) | OpSpec::PageOut(_) => {
            return Err(refuse(t, at, step_name(op), "memory placement, faults and reclaim; rt-app's mem writes a private buffer"));
        }
        OpSpec::WaitChildren => return Err(refuse(t, at, "wait_children", "rt-app does not wait for forked threads")),
        OpSpec::Exit => return Err(refuse(t, at, "exit", "an exit before the program's end; an rt-app thread ends with its loops")),
        OpSpec::SetAffinity(_) | OpSpec::SetGroup(_) | OpSpec::SetSchedAttr(_) | OpSpec::Loop(_) => {
            return Err(refuse(t, at, step_name(op), "inside a loop: rt-app changes these only as a phase starts"));
        }
    }
    Ok(())
}

fn step_name(op: &OpSpec) -> &'static str {
    match op {
        OpSpec::ModTimer(_) => "mod_timer",
        OpSpec::DelTimer(_) => "del_timer",
        OpSpec::TouchArea(_) => "touch_area",
        OpSpec::TouchPages(_) => "touch_pages",
        OpSpec::PageOut(_) => "page_out",
        OpSpec::SetAffinity(_) => "set_affinity",
        OpSpec::SetGroup(_) => "set_group",
        OpSpec::SetSchedAttr(_) => "set_sched_attr",
        OpSpec::Loop(_) => "loop",
        _ => "step",
    }
}
