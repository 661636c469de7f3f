//! Replaying a trace's timelines as a scenario on another machine or kernel.
//!
//! Mirrors: `perf sched replay` (tools/perf/builtin-sched.c): each task becomes a
//! program of run and sleep steps; a wakeup by another task becomes a signal the waker
//! sends at the moment it woke it, and the wakee's sleep a wait for it.
//! Model: a run's CPU time becomes work at capacity 1024 (`run`), scaled by the
//! capacity of the CPU it ran on in the source machine, so a little core's burst is
//! short work on a big one. Sleeps ended by an interrupt or the idle task (timers,
//! devices) become timed sleeps of the traced length. Time spent waiting for a CPU is
//! not replayed: that is what the target machine's scheduler decides.

use super::task_timelines::{TaskTimeline, Timelines};
use crate::scenario::{Duration, MachineSpec, OpSpec, RunSpec, Scenario, TaskSpec, Until};
use crate::time::Ns;

/// Options of a replay.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// Capacity (0..1024) of each CPU of the machine the trace was taken on; empty:
    /// 1024 everywhere.
    pub source_capacity: Vec<u32>,
}

/// A step with the time it happens, before it is turned into program steps.
enum Step {
    Run { cpu: usize, start: Ns, end: Ns },
    Signal { at: Ns, channel: String },
    Block { start: Ns, end: Option<Ns>, channel: Option<String> },
}

fn wake_channel(pid: usize) -> String {
    format!("wake:{pid}")
}

/// Builds a scenario (machine `machine`, default kernel) replaying `tl`.
pub fn to_scenario(tl: &Timelines, machine: MachineSpec, opts: &ReplayOptions, name: &str) -> Scenario {
    // Wakeups by traced tasks: signals in the waker's timeline.
    let mut signals: std::collections::BTreeMap<usize, Vec<(Ns, String)>> = Default::default();
    for t in tl.tasks.values() {
        for s in &t.sleeps {
            if let (Some(w), Some(end)) = (s.woken_by, s.end) {
                if tl.tasks.get(&w).is_some_and(|x| !x.runs.is_empty()) {
                    signals.entry(w).or_default().push((end, wake_channel(t.pid)));
                }
            }
        }
    }
    let mut tasks = Vec::new();
    for t in tl.tasks.values().filter(|t| !t.runs.is_empty()) {
        let program = program_of(t, tl, signals.remove(&t.pid).unwrap_or_default(), opts);
        if program.is_empty() {
            continue;
        }
        let name = if t.comm.is_empty() { format!("pid{}", t.pid) } else { t.comm.clone() };
        tasks.push(TaskSpec {
            start: Some(Duration(t.first_seen.saturating_sub(tl.start))),
            pid: (t.pid > 0).then_some(t.pid),
            ..crate::workload::task(&name, program)
        });
    }
    Scenario {
        name: name.to_string(),
        description: format!("replay of a trace: {} tasks, {:.6} s", tasks.len(), tl.end.saturating_sub(tl.start) as f64 / 1e9),
        machine,
        kernel: Default::default(),
        groups: Vec::new(),
        workload: None,
        tasks,
        templates: Vec::new(),
        timers: Vec::new(),
        run: RunSpec { until: Some(Until::WorkloadDone), ..Default::default() },
        rt_app: None,
    }
}

fn program_of(t: &TaskTimeline, tl: &Timelines, signals: Vec<(Ns, String)>, opts: &ReplayOptions) -> Vec<OpSpec> {
    let mut steps: Vec<Step> = Vec::new();
    for r in &t.runs {
        steps.push(Step::Run { cpu: r.cpu, start: r.start, end: r.end });
    }
    for s in &t.sleeps {
        let by_task = s.woken_by.filter(|w| tl.tasks.get(w).is_some_and(|x| !x.runs.is_empty()));
        steps.push(Step::Block { start: s.start, end: s.end, channel: by_task.map(|_| wake_channel(t.pid)) });
    }
    for (at, channel) in signals {
        steps.push(Step::Signal { at, channel });
    }
    let key = |s: &Step| match s {
        Step::Run { start, .. } => (*start, 1),
        Step::Signal { at, .. } => (*at, 0),
        Step::Block { start, .. } => (*start, 2),
    };
    steps.sort_by_key(key);
    let cap = |cpu: usize| opts.source_capacity.get(cpu).copied().unwrap_or(1024) as u128;
    let mut out = Vec::new();
    // Signals fall inside runs: split each run at the signals it contains.
    let mut i = 0;
    let mut pending_signals: Vec<(Ns, String)> = Vec::new();
    while i < steps.len() {
        match &steps[i] {
            Step::Signal { at, channel } => pending_signals.push((*at, channel.clone())),
            Step::Run { cpu, start, end } => {
                let mut from = *start;
                // Signals of this run (they sort before a run starting at the same time
                // only if they happen at its start).
                let mut inside: Vec<(Ns, String)> = std::mem::take(&mut pending_signals);
                let mut j = i + 1;
                while j < steps.len() {
                    match &steps[j] {
                        Step::Signal { at, channel } if *at <= *end => inside.push((*at, channel.clone())),
                        Step::Signal { .. } | Step::Block { .. } | Step::Run { .. } => break,
                    }
                    j += 1;
                }
                for (at, channel) in inside {
                    let at = at.max(from).min((*end).max(from));
                    push_run(&mut out, at - from, cap(*cpu));
                    out.push(OpSpec::Signal(channel));
                    from = at;
                }
                push_run(&mut out, end.saturating_sub(from), cap(*cpu));
                i = j;
                continue;
            }
            Step::Block { start, end, channel } => {
                for (_, ch) in pending_signals.drain(..) {
                    out.push(OpSpec::Signal(ch));
                }
                match (channel, end) {
                    (Some(ch), _) => out.push(OpSpec::Wait(ch.clone())),
                    (None, Some(end)) if *end > *start => out.push(OpSpec::Sleep(Duration(end - start))),
                    (None, Some(_)) => {}
                    (None, None) => break, // asleep until the end of the trace
                }
            }
        }
        i += 1;
    }
    for (_, ch) in pending_signals {
        out.push(OpSpec::Signal(ch));
    }
    out
}

fn push_run(out: &mut Vec<OpSpec>, wall: Ns, cap: u128) {
    let work = (wall as u128 * cap / 1024) as Ns;
    if work == 0 {
        return;
    }
    if let Some(OpSpec::Run(d)) = out.last_mut() {
        d.0 += work; // a preempted run goes on where it stopped
        return;
    }
    out.push(OpSpec::Run(Duration(work)));
}
