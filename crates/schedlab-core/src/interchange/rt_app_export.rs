//! Any scenario's tasks out as rt-app JSON, so a simulated workload can run on real
//! hardware (and come back in through [`super::rt_app`] unchanged).
//!
//! Mirrors: the grammar of scheduler-tools/rt-app doc/tutorial.txt; LISA's
//! `RTAPhase._to_json` (ARM-software/lisa lisa/wlgen/rta.py) for the shape: a thread's
//! top-level loops become phases with their `loop`, duplicate event keys get a number
//! suffix (rt-app matches events by prefix).
//! Model: steps rt-app has map to its events (semaphores for channels, which keep
//! signals as channels do); steps it lacks go in `"schedlab.STEP"` events, which
//! rt-app skips and schedlab reads back; random durations export their mean, with a
//! note. Groups' bandwidth, the machine, the kernel and the run go under "schedlab".

use serde_json::{json, Map, Value};

use crate::error::ScenarioError;
use crate::scenario::{OpSpec, PeriodicMode, Scenario, TaskSpec};

/// rt-app JSON and notes on what it does not carry as schedlab runs it.
#[derive(Clone, Debug)]
pub struct RtAppExport {
    /// The document (key order as rt-app reads it).
    pub doc: Value,
    /// Approximations.
    pub notes: Vec<String>,
}

struct Out {
    notes: Vec<String>,
}

impl Out {
    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// Events of one phase, with unique keys.
#[derive(Default)]
struct Events {
    map: Map<String, Value>,
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
}

fn us(ns: u64, out: &mut Out, what: &str) -> Value {
    if ns % 1000 != 0 {
        out.note(format!("{what}: rt-app times are whole µs; {ns} ns rounded"));
    }
    json!((ns + 500) / 1000)
}

/// Exports a scenario (a generator's tasks are generated with `seed` first).
pub fn export(s: &Scenario, seed: u64) -> Result<RtAppExport, ScenarioError> {
    let machine = crate::api::build_machine(&s.machine)?;
    let mut tasks = s.tasks.clone();
    let mut templates = s.templates.clone();
    let mut groups = s.groups.clone();
    if let Some(w) = &s.workload {
        let g = crate::workload::generate(w, &machine, seed)?;
        tasks.extend(g.tasks);
        templates.extend(g.templates);
        groups.extend(g.groups);
    }
    let mut out = Out { notes: Vec::new() };
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
    let mut ext = Map::new();
    ext.insert("name".into(), json!(s.name));
    ext.insert("machine".into(), serde_json::to_value(&s.machine).unwrap_or_default());
    ext.insert("kernel".into(), serde_json::to_value(&s.kernel).unwrap_or_default());
    let mut tg = Map::new();
    for g in &groups {
        let mut lim = Map::new();
        for (k, v) in [("cpu_max", g.cpu_max.as_ref().map(|x| json!(x))), ("cfs_quota_us", g.cfs_quota_us.map(|x| json!(x))),
            ("cfs_period_us", g.cfs_period_us.map(|x| json!(x))), ("cfs_burst_us", g.cfs_burst_us.map(|x| json!(x)))]
        {
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
    let doc = json!({
        "tasks": threads,
        "global": {"duration": duration, "calibration": "CPU0", "default_policy": "SCHED_OTHER", "pi_enabled": false,
                   "lock_pages": false, "logdir": "./", "log_basename": s.name.clone(), "ftrace": "none", "gnuplot": false},
        "schedlab": ext,
    });
    Ok(RtAppExport { doc, notes: out.notes })
}

/// A group's cgroup path below the root ("parent/child").
fn group_path(groups: &[crate::scenario::GroupSpec], name: &str) -> String {
    let g = groups.iter().find(|g| g.name == name);
    match g.and_then(|g| g.parent.as_ref()) {
        Some(p) if !name.starts_with(&format!("{p}/")) => format!("{}/{name}", group_path(groups, p)),
        _ => name.to_string(),
    }
}

fn thread(t: &TaskSpec, instances: usize, out: &mut Out) -> Result<Value, ScenarioError> {
    let mut th = Map::new();
    th.insert("instance".into(), json!(instances));
    if t.nice != 0 {
        th.insert("policy".into(), json!("SCHED_OTHER"));
        th.insert("priority".into(), json!(t.nice));
    }
    if let Some(a) = &t.affinity {
        let mask = crate::cpumask::CpuMask::parse_list(a).map_err(|e| ScenarioError::new(format!("tasks.{}.affinity", t.name), e))?;
        th.insert("cpus".into(), json!(mask.iter().collect::<Vec<_>>()));
    }
    if let Some(g) = &t.group {
        th.insert("taskgroup".into(), json!(format!("/{g}")));
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
    // One endless loop around everything: the thread's own loop.
    let (thread_loop, body): (i64, &[OpSpec]) = match t.program.as_slice() {
        [OpSpec::Loop(l)] => (l.count.map_or(-1, |c| c as i64), &l.body),
        p => (1, p),
    };
    // Top-level loops become phases; runs of other steps, phases of loop 1.
    let mut phases = Map::new();
    let mut flat = Events::default();
    let mut cpus_changed: Option<Value> = None;
    let mut group_changed: Option<Value> = None;
    let close = |flat: &mut Events, phases: &mut Map<String, Value>, lp: i64, cpus: &mut Option<Value>, group: &mut Option<Value>| {
        if flat.map.is_empty() {
            return;
        }
        let mut ph = Map::new();
        ph.insert("loop".into(), json!(lp));
        if let Some(c) = cpus.take() {
            ph.insert("cpus".into(), c);
        }
        if let Some(g) = group.take() {
            ph.insert("taskgroup".into(), g);
        }
        ph.extend(std::mem::take(&mut flat.map));
        phases.insert(format!("p{}", phases.len()), ph.into());
    };
    for op in body {
        match op {
            OpSpec::Loop(l) if l.count.is_some() => {
                close(&mut flat, &mut phases, 1, &mut cpus_changed, &mut group_changed);
                let mut ev = Events::default();
                for inner in &l.body {
                    event(inner, &t.name, &mut ev, out);
                }
                close(&mut ev, &mut phases, l.count.unwrap_or(1) as i64, &mut cpus_changed, &mut group_changed);
            }
            OpSpec::SetAffinity(m) => {
                close(&mut flat, &mut phases, 1, &mut cpus_changed, &mut group_changed);
                let mask = crate::cpumask::CpuMask::parse_list(m).map_err(|e| ScenarioError::new(format!("tasks.{}.set_affinity", t.name), e))?;
                cpus_changed = Some(json!(mask.iter().collect::<Vec<_>>()));
            }
            OpSpec::SetGroup(g) => {
                close(&mut flat, &mut phases, 1, &mut cpus_changed, &mut group_changed);
                group_changed = Some(json!(if g.is_empty() || g == "root" { "/".to_string() } else { format!("/{g}") }));
            }
            other => event(other, &t.name, &mut flat, out),
        }
    }
    close(&mut flat, &mut phases, 1, &mut cpus_changed, &mut group_changed);
    th.insert("loop".into(), json!(thread_loop));
    th.insert("phases".into(), phases.into());
    Ok(th.into())
}

/// Appends the rt-app form of one step.
fn event(op: &OpSpec, thread: &str, ev: &mut Events, out: &mut Out) {
    let field = format!("tasks.{thread}");
    match op {
        OpSpec::Run(d) => ev.push("run", us(d.0, out, &field)),
        OpSpec::RunFor(d) => ev.push("runtime", us(d.0, out, &field)),
        OpSpec::Sleep(d) => ev.push("sleep", us(d.0, out, &field)),
        OpSpec::RunExp(d) | OpSpec::SleepExp(d) => {
            out.note(format!("{field}: exponentially distributed durations export their mean"));
            ev.push(if matches!(op, OpSpec::RunExp(_)) { "run" } else { "sleep" }, us(d.0, out, &field));
        }
        OpSpec::Periodic(p) => {
            if !p.rt_app {
                out.note(format!("{field}: periodic steps become rt-app timers, whose grid starts at the thread's start"));
            }
            let mode = if p.mode == PeriodicMode::Absolute { "absolute" } else { "relative" };
            ev.push("timer", json!({"ref": "unique", "period": us(p.period.0, out, &field), "mode": mode}));
        }
        OpSpec::Wait(c) => ev.push("sem_wait", json!(c)),
        OpSpec::Signal(c) => ev.push("sem_post", json!(c)),
        OpSpec::Lock(l) => ev.push("lock", json!(l)),
        OpSpec::Unlock(l) => ev.push("unlock", json!(l)),
        OpSpec::CondWait(w) if w.mutex.is_none() && w.cond == format!("suspend:{thread}") => ev.push("suspend", json!(thread)),
        OpSpec::CondWait(w) if w.mutex.is_some() => ev.push("wait", json!({"ref": w.cond, "mutex": w.mutex})),
        OpSpec::CondBroadcast(c) if c.starts_with("suspend:") => ev.push("resume", json!(&c["suspend:".len()..])),
        OpSpec::CondSignal(c) => ev.push("signal", json!(c)),
        OpSpec::CondBroadcast(c) => ev.push("broad", json!(c)),
        OpSpec::Barrier(b) => ev.push("barrier", json!(b)),
        OpSpec::Yield => ev.push("yield", json!("")),
        OpSpec::Fork(f) => {
            for _ in 0..f.count {
                ev.push("fork", json!(f.template));
            }
        }
        other => {
            // No rt-app event: a schedlab step rt-app skips.
            if let Ok(Value::Object(m)) = serde_json::to_value(other) {
                for (k, v) in m {
                    ev.push(&format!("schedlab.{k}"), v);
                }
            } else if let Ok(Value::String(k)) = serde_json::to_value(other) {
                ev.push(&format!("schedlab.{k}"), Value::Null);
            }
            out.note(format!("{field}: steps rt-app has no event for are \"schedlab.STEP\" events, which rt-app skips"));
        }
    }
}
