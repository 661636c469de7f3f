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

use super::trace_text::ParsedTrace;
use crate::time::Ns;
use crate::trace::{PrevState, TraceEvent};

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
    /// Since, on CPU.
    Running(Ns, usize),
    Runnable(Ns),
    Sleeping,
    Dead,
}

/// What a CPU is believed to run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnCpu {
    /// No sched_switch seen on it yet: its first switch's prev ran since the CPU's
    /// first event.
    Unknown,
    /// The idle task (or nothing we can name).
    Idle,
    /// This pid, switched in.
    Task(usize),
}

/// Rebuilds timelines from a parsed trace.
///
/// A run opens only at a sched_switch that switches the task in, or at the CPU's first
/// event when the task is the prev of the CPU's first switch (a cut run). A switch
/// whose prev is not the task the CPU is believed to run (lost or reordered events)
/// closes that task's run at the switch, and opens none for prev: the time in between
/// is unknown, and counting it from an older timestamp would overlap runs the trace
/// shows (as `perf sched` drops the atom of an inconsistent switch).
pub fn build(trace: &ParsedTrace) -> Timelines {
    let mut tl = Timelines::default();
    tl.warnings.lost_events = trace.lost_events;
    tl.warnings.other_events = trace.other_events;
    let Some(first) = trace.lines.first() else { return tl };
    tl.start = first.ts;
    let mut state: BTreeMap<usize, State> = BTreeMap::new();
    let mut current: Vec<OnCpu> = Vec::new();
    let mut cpu_start: Vec<Option<Ns>> = Vec::new();
    // Events about pids not (yet) seen running: resolved at the end.
    let mut pending_unknown: Vec<usize> = Vec::new();
    for l in &trace.lines {
        tl.end = tl.end.max(l.ts);
        if current.len() <= l.cpu {
            current.resize(l.cpu + 1, OnCpu::Unknown);
            cpu_start.resize(l.cpu + 1, None);
        }
        cpu_start[l.cpu].get_or_insert(l.ts);
        match l.event {
            TraceEvent::Switch { prev, prev_state, next } => {
                let believed = current[l.cpu];
                let consistent = match believed {
                    OnCpu::Unknown => true,
                    OnCpu::Idle => prev == 0,
                    OnCpu::Task(c) => c == prev,
                };
                if !consistent {
                    tl.warnings.inconsistent_switches += 1;
                    // Whatever we thought ran here stopped by now.
                    if let OnCpu::Task(c) = believed {
                        if let Some(State::Running(since, cpu)) = state.get(&c).copied() {
                            if cpu == l.cpu {
                                tl.tasks.get_mut(&c).expect("ran").runs.push(RunInterval { cpu, start: since, end: l.ts });
                                state.insert(c, State::Runnable(l.ts));
                            }
                        }
                    }
                }
                if prev != 0 {
                    let t = task(&mut tl, prev, l.comm(prev), l.ts);
                    if let Some(State::Running(s, cpu)) = state.get(&prev).copied() {
                        if cpu != l.cpu {
                            // Believed running on another CPU (its switch-out there
                            // was lost): it stopped there by now at the latest.
                            t.runs.push(RunInterval { cpu, start: s, end: l.ts });
                            if current[cpu] == OnCpu::Task(prev) {
                                current[cpu] = OnCpu::Idle;
                            }
                        }
                    }
                    let mut cut = false;
                    let since = match (believed, state.get(&prev).copied()) {
                        (OnCpu::Task(_), Some(State::Running(s, cpu))) if consistent && cpu == l.cpu => Some(s),
                        (OnCpu::Unknown, _) => {
                            // Running since before this CPU's first event, and since it
                            // last left a CPU in the trace.
                            cut = true;
                            let from = cpu_start[l.cpu].unwrap_or(l.ts).max(t.runs.last().map_or(0, |r| r.end));
                            (from < l.ts).then_some(from)
                        }
                        _ => None,
                    };
                    if let Some(start) = since {
                        t.runs.push(RunInterval { cpu: l.cpu, start, end: l.ts });
                        // A cut run: the task was there before its first event.
                        t.first_seen = t.first_seen.min(start);
                    }
                    let s = match prev_state {
                        PrevState::Runnable => State::Runnable(l.ts),
                        PrevState::Sleeping => {
                            t.sleeps.push(SleepInterval { start: l.ts, end: None, woken_by: None });
                            State::Sleeping
                        }
                        PrevState::Dead => {
                            t.exit.get_or_insert(l.ts);
                            State::Dead
                        }
                    };
                    state.insert(prev, s);
                    tl.warnings.cut_runs += cut as u64;
                }
                current[l.cpu] = if next != 0 { OnCpu::Task(next) } else { OnCpu::Idle };
                if next != 0 {
                    if state.get(&next) == Some(&State::Sleeping) {
                        tl.warnings.missing_wakeups += 1;
                    }
                    let t = task(&mut tl, next, l.comm(next), l.ts);
                    let mut stolen = false;
                    match state.get(&next).copied() {
                        Some(State::Runnable(since)) => t.wait_ns += l.ts.saturating_sub(since),
                        Some(State::Sleeping) => {
                            if let Some(s) = t.sleeps.last_mut() {
                                s.end = Some(l.ts);
                            }
                        }
                        Some(State::Running(since, cpu)) if cpu != l.cpu => {
                            // Switched in here while believed running there (its
                            // switch-out there was lost): that run ended by now.
                            stolen = true;
                            t.runs.push(RunInterval { cpu, start: since, end: l.ts });
                            if current[cpu] == OnCpu::Task(next) {
                                current[cpu] = OnCpu::Idle;
                            }
                        }
                        _ => {}
                    }
                    state.insert(next, State::Running(l.ts, l.cpu));
                    tl.warnings.inconsistent_switches += stolen as u64;
                }
            }
            TraceEvent::Waking { pid, .. } | TraceEvent::Wakeup { pid, .. } | TraceEvent::WakeupNew { pid, .. } => {
                if pid == 0 {
                    continue;
                }
                let new_task = !tl.tasks.contains_key(&pid);
                let t = task(&mut tl, pid, l.comm(pid), l.ts);
                if matches!(l.event, TraceEvent::WakeupNew { .. }) || new_task {
                    state.entry(pid).or_insert(State::Runnable(l.ts));
                    continue;
                }
                if state.get(&pid) == Some(&State::Sleeping) {
                    if let Some(s) = t.sleeps.last_mut() {
                        s.end = Some(l.ts);
                        s.woken_by = (!l.in_irq && l.ctx_pid != 0 && l.ctx_pid != pid).then_some(l.ctx_pid);
                    }
                    state.insert(pid, State::Runnable(l.ts));
                }
            }
            TraceEvent::Fork { parent, child } => {
                let t = task(&mut tl, child, l.comm(child), l.ts);
                t.forked_by = Some(parent);
                pending_unknown.push(parent);
            }
            TraceEvent::Exit { pid } => {
                if let Some(t) = tl.tasks.get_mut(&pid) {
                    t.exit.get_or_insert(l.ts);
                } else if pid != 0 {
                    pending_unknown.push(pid);
                }
            }
            TraceEvent::Migrate { pid, .. } => pending_unknown.push(pid),
            // The decoder makes no other kind of event.
            _ => {}
        }
    }
    // Close what is still open at the end of the trace.
    for (pid, s) in &state {
        if let (State::Running(since, cpu), Some(t)) = (s, tl.tasks.get_mut(pid)) {
            t.runs.push(RunInterval { cpu: *cpu, start: *since, end: tl.end });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interchange::trace_text::parse;

    const INCONSISTENT: &str = include_str!("../../../../tests/data/inconsistent_switch.trace.txt");

    fn run_ns(tl: &Timelines, pid: usize) -> Ns {
        tl.tasks[&pid].runs.iter().map(|r| r.end - r.start).sum()
    }

    #[test]
    fn an_inconsistent_switch_closes_the_cpus_task_and_opens_no_run_from_the_start() {
        let tl = build(&parse(INCONSISTENT, "inconsistent_switch.trace.txt").unwrap());
        // The intervals the switches show (the file's header works them out).
        let want = [(10, 1_000_000), (11, 2_000_000), (12, 1_000_000), (13, 2_000_000), (14, 2_500_000)];
        for (pid, ns) in want {
            assert_eq!(run_ns(&tl, pid), ns, "pid {pid}");
        }
        assert_eq!(tl.tasks.values().map(|t| t.runs.iter().map(|r| r.end - r.start).sum::<Ns>()).sum::<Ns>(), 8_500_000);
        assert_eq!((tl.warnings.inconsistent_switches, tl.warnings.cut_runs), (1, 1));
        assert_eq!(tl.tasks[&13].runs, vec![RunInterval { cpu: 1, start: 1_000_500_000, end: 1_002_500_000 }]);
        assert_eq!(tl.tasks[&13].first_seen, 1_000_500_000);
        // No two runs overlap on a CPU.
        let mut runs: Vec<RunInterval> = tl.tasks.values().flat_map(|t| t.runs.iter().copied()).collect();
        runs.sort_by_key(|r| (r.cpu, r.start));
        for w in runs.windows(2) {
            assert!(w[0].cpu != w[1].cpu || w[0].end <= w[1].start, "{:?} overlaps {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn a_switch_in_on_another_cpu_ends_the_run_whose_switch_out_was_lost() {
        let text = "\
  <idle>-0 [000] d..2. 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
  <idle>-0 [001] d..2. 1.001000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
       a-10 [001] d..2. 1.002000: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
  <idle>-0 [000] d..2. 1.003000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=b next_pid=11 next_prio=120
";
        let tl = build(&parse(text, "t.txt").unwrap());
        // a: 1.000-1.001 on CPU 0 (ended by its switch-in on CPU 1), 1.001-1.002 on 1.
        assert_eq!(
            tl.tasks[&10].runs,
            vec![RunInterval { cpu: 0, start: 1_000_000_000, end: 1_001_000_000 }, RunInterval { cpu: 1, start: 1_001_000_000, end: 1_002_000_000 }]
        );
        // CPU 0 was then believed idle: the switch from the idle task is consistent.
        assert_eq!(tl.warnings.inconsistent_switches, 1);
        assert_eq!(run_ns(&tl, 11), 0);
    }
}
