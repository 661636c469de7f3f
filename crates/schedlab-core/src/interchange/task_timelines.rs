//! Per-task timelines rebuilt from a trace: when each task ran (where, for how long),
//! when it slept, who woke it, who forked it, when it exited.
//!
//! Mirrors: what `perf sched timehist` and `perf sched replay` reconstruct
//! (tools/perf/builtin-sched.c): runs between sched_switch in and out, sleeps from a
//! blocking switch-out to the sched_waking (or sched_wakeup, in traces without
//! sched_waking) that ends them, the waker being the task the waking fired in the
//! context of (none from interrupt context or the idle task).
//! Model: what the trace lacks is counted, not fatal: events of pids never seen
//! switching (unknown pids), a task switched in from a sleep with no wakeup seen
//! (missing wakeups), runs already going when the trace starts (cut runs), events the
//! tracer reported lost.

use std::collections::BTreeMap;

use super::trace_text::{LeaveState, ParsedTrace, SchedEvent};
use crate::time::Ns;

/// One run of a task on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunInterval {
    /// CPU.
    pub cpu: usize,
    /// Switched in.
    pub start: Ns,
    /// Switched out (or the end of the trace).
    pub end: Ns,
}

/// One sleep: from a blocking switch-out to the wakeup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SleepInterval {
    /// Switched out blocked.
    pub start: Ns,
    /// Woken (None: still asleep at the end of the trace).
    pub end: Option<Ns>,
    /// The task whose context woke it (None: interrupt context, the idle task, or
    /// no wakeup seen).
    pub woken_by: Option<usize>,
}

/// What the trace shows of one task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTimeline {
    /// pid.
    pub pid: usize,
    /// Last comm seen.
    pub comm: String,
    /// First time the task appears (created, woken or running).
    pub first_seen: Ns,
    /// The parent that forked it in the trace.
    pub forked_by: Option<usize>,
    /// Runs in time order.
    pub runs: Vec<RunInterval>,
    /// Sleeps in time order.
    pub sleeps: Vec<SleepInterval>,
    /// Exit time.
    pub exit: Option<Ns>,
    /// Time runnable but waiting for a CPU.
    pub wait_ns: Ns,
}

/// What the trace lacked, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Warnings {
    /// Wakeups, migrations or forks of pids that never ran in the trace.
    pub unknown_pids: u64,
    /// Tasks switched in from a sleep with no wakeup seen.
    pub missing_wakeups: u64,
    /// Runs already going when the trace (or the CPU's buffer) started.
    pub cut_runs: u64,
    /// Events the tracer reported lost.
    pub lost_events: u64,
    /// Events of other kinds, skipped.
    pub other_events: u64,
    /// sched_switch whose prev_pid was not the task the CPU was running.
    pub inconsistent_switches: u64,
}

/// Every task's timeline.
#[derive(Clone, Debug, Default)]
pub struct Timelines {
    /// By pid (pid 0, the idle task, is left out).
    pub tasks: BTreeMap<usize, TaskTimeline>,
    /// First and last timestamps.
    pub start: Ns,
    /// Last timestamp.
    pub end: Ns,
    /// Highest CPU number seen plus one.
    pub nr_cpus: usize,
    /// What was missing.
    pub warnings: Warnings,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Running(Ns),
    Runnable(Ns),
    Sleeping,
    Dead,
}

/// Rebuilds timelines from a parsed trace.
pub fn build(trace: &ParsedTrace) -> Timelines {
    let mut tl = Timelines::default();
    tl.warnings.lost_events = trace.lost_events;
    tl.warnings.other_events = trace.other_events;
    let Some(first) = trace.lines.first() else { return tl };
    tl.start = first.ts;
    let mut state: BTreeMap<usize, State> = BTreeMap::new();
    let mut current: Vec<Option<usize>> = Vec::new();
    let mut cpu_start: Vec<Option<Ns>> = Vec::new();
    // Events about pids not (yet) seen running: resolved at the end.
    let mut pending_unknown: Vec<usize> = Vec::new();
    for l in &trace.lines {
        tl.end = tl.end.max(l.ts);
        if current.len() <= l.cpu {
            current.resize(l.cpu + 1, None);
            cpu_start.resize(l.cpu + 1, None);
        }
        cpu_start[l.cpu].get_or_insert(l.ts);
        match &l.event {
            SchedEvent::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm } => {
                if *prev_pid != 0 {
                    task(&mut tl, *prev_pid, prev_comm, l.ts);
                    let since = match state.get(prev_pid) {
                        Some(State::Running(s)) => *s,
                        _ => {
                            // Running since before this CPU's first event.
                            tl.warnings.cut_runs += 1;
                            cpu_start[l.cpu].unwrap_or(l.ts)
                        }
                    };
                    if current[l.cpu].is_some_and(|c| c != *prev_pid) {
                        tl.warnings.inconsistent_switches += 1;
                    }
                    let t = tl.tasks.get_mut(prev_pid).expect("just added");
                    t.runs.push(RunInterval { cpu: l.cpu, start: since, end: l.ts });
                    let s = match prev_state {
                        LeaveState::Runnable => State::Runnable(l.ts),
                        LeaveState::Blocked => {
                            t.sleeps.push(SleepInterval { start: l.ts, end: None, woken_by: None });
                            State::Sleeping
                        }
                        LeaveState::Dead => {
                            t.exit.get_or_insert(l.ts);
                            State::Dead
                        }
                    };
                    state.insert(*prev_pid, s);
                }
                current[l.cpu] = (*next_pid != 0).then_some(*next_pid);
                if *next_pid != 0 {
                    if state.get(next_pid) == Some(&State::Sleeping) {
                        tl.warnings.missing_wakeups += 1;
                    }
                    let t = task(&mut tl, *next_pid, next_comm, l.ts);
                    match state.get(next_pid) {
                        Some(State::Runnable(since)) => t.wait_ns += l.ts.saturating_sub(*since),
                        Some(State::Sleeping) => {
                            if let Some(s) = t.sleeps.last_mut() {
                                s.end = Some(l.ts);
                            }
                        }
                        _ => {}
                    }
                    state.insert(*next_pid, State::Running(l.ts));
                }
            }
            SchedEvent::Wake { pid, comm, kind, .. } => {
                if *pid == 0 {
                    continue;
                }
                let new_task = !tl.tasks.contains_key(pid);
                let t = task(&mut tl, *pid, comm, l.ts);
                if *kind == 2 || new_task {
                    if !state.contains_key(pid) {
                        state.insert(*pid, State::Runnable(l.ts));
                    }
                    continue;
                }
                if state.get(pid) == Some(&State::Sleeping) {
                    if let Some(s) = t.sleeps.last_mut() {
                        s.end = Some(l.ts);
                        s.woken_by = (!l.in_irq && l.ctx_pid != 0 && l.ctx_pid != *pid).then_some(l.ctx_pid);
                    }
                    state.insert(*pid, State::Runnable(l.ts));
                }
            }
            SchedEvent::Fork { parent, child, child_comm } => {
                let t = task(&mut tl, *child, child_comm, l.ts);
                t.forked_by = Some(*parent);
                pending_unknown.push(*parent);
            }
            SchedEvent::Exit { pid } => {
                if let Some(t) = tl.tasks.get_mut(pid) {
                    t.exit.get_or_insert(l.ts);
                } else if *pid != 0 {
                    pending_unknown.push(*pid);
                }
            }
            SchedEvent::Migrate { pid, .. } => pending_unknown.push(*pid),
            SchedEvent::CpuIdle { .. } => {}
        }
    }
    // Close what is still open at the end of the trace.
    for (pid, s) in &state {
        if let (State::Running(since), Some(t)) = (s, tl.tasks.get_mut(pid)) {
            let cpu = current.iter().position(|c| *c == Some(*pid)).unwrap_or(0);
            t.runs.push(RunInterval { cpu, start: *since, end: tl.end });
        }
    }
    pending_unknown.sort_unstable();
    pending_unknown.dedup();
    let ran = |t: &TaskTimeline| !t.runs.is_empty();
    tl.warnings.unknown_pids = pending_unknown.iter().filter(|p| **p != 0 && !tl.tasks.get(p).is_some_and(ran)).count() as u64
        + tl.tasks.values().filter(|t| !ran(t)).count() as u64;
    tl.nr_cpus = current.len();
    tl
}

fn task<'a>(tl: &'a mut Timelines, pid: usize, comm: &str, ts: Ns) -> &'a mut TaskTimeline {
    let t = tl.tasks.entry(pid).or_insert_with(|| TaskTimeline { pid, first_seen: ts, ..Default::default() });
    if !comm.is_empty() && !comm.starts_with("<...>") {
        t.comm = comm.to_string();
    }
    t
}
