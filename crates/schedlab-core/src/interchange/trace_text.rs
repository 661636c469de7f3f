//! Reading text traces: the tracefs `trace` file and `trace-cmd report` (printk
//! format, `-R` raw format, and the libtraceevent plugin format that is its default),
//! and `perf script` / `perf sched script` output.
//!
//! Mirrors: kernel/trace/trace_output.c (`TASK-PID [(TGID)] [CPU] FLAGS TS: EVENT: ARGS`),
//! the TP_printk formats of include/trace/events/sched.h and power.h,
//! rostedt/libtraceevent plugins/plugin_sched_switch.c
//! (`prev_comm:prev_pid [prio] S ==> next_comm:next_pid [prio]`,
//! `comm:pid [prio] success=1 CPU:003`), and tools/perf/builtin-script.c
//! (`COMM TID [CPU] TS: sched:EVENT: ARGS`).
//! Model: a line is split into its header and the event's arguments; the sched and
//! power events a timeline needs are decoded into the vocabulary schedlab's own traces
//! are written in (`trace::TraceEvent`), with the task names the line gives beside the
//! event; other events are counted and skipped,
//! `[LOST N EVENTS]` markers are counted. A line that is none of these is an error
//! naming the file and line, as is a known event with a malformed field.

use super::ImportError;
use crate::time::Ns;
use crate::trace::{PrevState, TraceEvent};

/// One decoded line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceLine {
    /// 1-based line number.
    pub line: usize,
    /// Time, ns.
    pub ts: Ns,
    /// CPU.
    pub cpu: usize,
    /// The task the event fired in the context of.
    pub ctx_pid: usize,
    /// In hard or soft interrupt context (ftrace flags `h`/`s`/`H`).
    pub in_irq: bool,
    /// The event, as schedlab's own traces name it.
    pub event: TraceEvent,
    /// The task names (comm) the line gives, by pid: a switch's two tasks, the woken
    /// task, a fork's child.
    pub comms: Vec<(usize, String)>,
}

impl TraceLine {
    /// The name the line gives `pid` ("" if none).
    pub fn comm(&self, pid: usize) -> &str {
        self.comms.iter().find(|(p, _)| *p == pid).map_or("", |(_, c)| c.as_str())
    }
}

/// A decoded event and the task names its line gives.
type Decoded = (TraceEvent, Vec<(usize, String)>);

/// A whole parsed trace.
#[derive(Clone, Debug, Default)]
pub struct ParsedTrace {
    /// Decoded events in file order.
    pub lines: Vec<TraceLine>,
    /// Events of other kinds, skipped.
    pub other_events: u64,
    /// Events the tracer reported lost.
    pub lost_events: u64,
    /// "perf" or "ftrace".
    pub flavour: &'static str,
}

/// Parses ftrace or perf-script text.
pub fn parse(text: &str, file: &str) -> Result<ParsedTrace, ImportError> {
    let mut out = ParsedTrace { flavour: "ftrace", ..Default::default() };
    let mut perf_lines = 0u64;
    // (timestamp, line) of the latest event: a trace runs forward in time.
    let mut last: Option<(Ns, usize)> = None;
    let mut events = 0u64;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("cpus=") || line.starts_with("version =") {
            continue;
        }
        if let Some(lost) = lost_events(line) {
            out.lost_events += lost;
            continue;
        }
        if line.starts_with("CPU ") && line.contains("is empty") {
            continue;
        }
        let head = split_header(line).ok_or_else(|| {
            ImportError::new(
                file,
                n,
                "line",
                format!("not a trace event line (expected `TASK-PID [CPU] TIMESTAMP: EVENT: ARGS`): '{}'", shorten(line)),
            )
        })?;
        if head.cpu >= crate::cpumask::MAX_CPUS {
            return Err(ImportError::new(
                file,
                n,
                "cpu",
                format!("CPU {} is beyond the {} CPUs schedlab models", head.cpu, crate::cpumask::MAX_CPUS),
            ));
        }
        if let Some((ts, at)) = last.filter(|&(ts, _)| head.ts < ts) {
            return Err(ImportError::new(
                file,
                n,
                "timestamp",
                format!(
                    "{} s is before {} s of line {at}: a trace runs forward in time (two traces joined, or per-CPU buffers not merged?)",
                    secs(head.ts),
                    secs(ts)
                ),
            ));
        }
        last = Some((head.ts, n));
        events += 1;
        perf_lines += head.perf as u64;
        let decoded = match head.event {
            "sched_switch" => decode_switch(head.args),
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => decode_wake(head.args, head.event, head.cpu, head.in_irq),
            "sched_migrate_task" => decode_migrate(head.args),
            "sched_process_fork" => decode_fork(head.args),
            "sched_process_exit" => field_usize(&kv(head.args), "pid").map(|pid| (TraceEvent::Exit { pid }, Vec::new())),
            "cpu_idle" => {
                let f = kv(head.args);
                field_i64(&f, "state").map(|s| (TraceEvent::CpuIdle { state: (s >= 0 && s < u32::MAX as i64).then_some(s as u32) }, Vec::new()))
            }
            _ => {
                out.other_events += 1;
                continue;
            }
        };
        let (event, comms) = decoded.map_err(|(field, msg)| ImportError::new(file, n, format!("{}.{field}", head.event), msg))?;
        out.lines.push(TraceLine { line: n, ts: head.ts, cpu: head.cpu, ctx_pid: head.pid, in_irq: head.in_irq, event, comms });
    }
    if events == 0 {
        return Err(ImportError::new(file, 0, "trace", "no events: the file is empty or holds only comments and headers"));
    }
    if perf_lines * 2 > out.lines.len() as u64 + out.other_events {
        out.flavour = "perf";
    }
    Ok(out)
}

/// A timestamp as the trace prints it (seconds, 6 decimals).
fn secs(ns: Ns) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

/// `CPU:2 [LOST 45 EVENTS]` (tracefs) or `CPU 2: ... LOST 45 events` variants.
fn lost_events(line: &str) -> Option<u64> {
    let up = line.to_ascii_uppercase();
    let at = up.find("[LOST ")?;
    up[at + 6..].split_whitespace().next()?.parse().ok()
}

struct Header<'a> {
    pid: usize,
    cpu: usize,
    ts: Ns,
    in_irq: bool,
    perf: bool,
    event: &'a str,
    args: &'a str,
}

/// Splits `TASK-PID [(TGID)] [CPU] [FLAGS] TS: EVENT: ARGS` or `COMM TID [CPU] TS:
/// [SYS:]EVENT: ARGS`.
fn split_header(line: &str) -> Option<Header<'_>> {
    // The CPU is the first `[digits]` preceded by whitespace.
    let bytes = line.as_bytes();
    let mut open = None;
    let mut from = 0;
    while let Some(rel) = line[from..].find('[') {
        let at = from + rel;
        if let Some(close) = line[at..].find(']') {
            let inner = &line[at + 1..at + close];
            if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) && at > 0 && bytes[at - 1].is_ascii_whitespace() {
                open = Some((at, at + close));
                break;
            }
        }
        from = at + 1;
    }
    let (open, close) = open?;
    let cpu: usize = line[open + 1..close].parse().ok()?;
    let mut left = line[..open].trim_end();
    // `(  tgid)` column of `trace-cmd report` / tracefs record-tgid.
    if left.ends_with(')') {
        let p = left.rfind('(')?;
        left = left[..p].trim_end();
    }
    let sep = left.char_indices().rev().find(|(_, c)| c.is_whitespace() || *c == '-');
    let (pid, perf) = match sep {
        Some((p, '-')) if !left[p + 1..].is_empty() && left[p + 1..].bytes().all(|b| b.is_ascii_digit()) => (left[p + 1..].parse().ok()?, false),
        Some((p, c)) => {
            // perf: `comm tid` or `comm pid/tid`.
            let id = &left[p + c.len_utf8()..];
            let tid = id.rsplit('/').next()?;
            (tid.parse().ok()?, true)
        }
        None => return None,
    };
    let rest = line[close + 1..].trim_start();
    // Optional flags column, then `TS:`.
    let colon = rest.find(": ")?;
    let before = &rest[..colon];
    let mut parts = before.split_whitespace();
    let (flags, ts_text) = match (parts.next(), parts.next(), parts.next()) {
        (Some(ts), None, None) => ("", ts),
        (Some(flags), Some(ts), None) => (flags, ts),
        _ => return None,
    };
    let ts = parse_ts(ts_text)?;
    let in_irq = flags.contains(['h', 's', 'H']);
    let after = rest[colon + 2..].trim_start();
    let (name, args) = match after.find(':') {
        Some(p) => {
            let mut name = &after[..p];
            let mut args = &after[p + 1..];
            // perf's `sched:sched_switch:` (subsystem first).
            if !name.contains(char::is_whitespace) && args.starts_with(|c: char| c.is_ascii_alphabetic()) {
                if let Some(q) = args.find(':') {
                    if !args[..q].contains(char::is_whitespace) {
                        name = &args[..q];
                        args = &args[q + 1..];
                    }
                }
            }
            (name, args)
        }
        None => (after, ""),
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    Some(Header { pid, cpu, ts, in_irq, perf, event: name, args: args.trim() })
}

/// `secs.fraction` (any number of decimals) to ns.
pub fn parse_ts(t: &str) -> Option<Ns> {
    let (s, f) = t.split_once('.').unwrap_or((t, ""));
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = s.parse().ok()?;
    let mut frac = f.to_string();
    frac.truncate(9);
    while frac.len() < 9 {
        frac.push('0');
    }
    secs.checked_mul(1_000_000_000)?.checked_add(frac.parse::<u64>().ok()?)
}

type Fields<'a> = Vec<(&'a str, &'a str)>;
type FieldError = (String, String);

/// `key=value` pairs; a value runs to the next ` key=` (comms may hold spaces).
fn kv(args: &str) -> Fields<'_> {
    let mut starts = Vec::new();
    let b = args.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if (i == 0 || b[i - 1] == b' ') && (b[i].is_ascii_alphabetic() || b[i] == b'_') {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j < b.len() && b[j] == b'=' {
                starts.push((i, j));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    let mut out = Vec::new();
    for (k, &(ks, ke)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(args.len(), |n| n.0);
        let v = args[ke + 1..end].trim().trim_end_matches("==>").trim();
        out.push((&args[ks..ke], v));
    }
    out
}

fn field<'a>(f: &Fields<'a>, key: &str) -> Result<&'a str, FieldError> {
    f.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).ok_or_else(|| (key.to_string(), format!("missing field {key}")))
}

fn field_usize(f: &Fields<'_>, key: &str) -> Result<usize, FieldError> {
    let v = field(f, key)?;
    v.parse().map_err(|_| (key.to_string(), format!("expected a non-negative integer, got '{v}'")))
}

fn field_i64(f: &Fields<'_>, key: &str) -> Result<i64, FieldError> {
    let v = field(f, key)?;
    v.parse().map_err(|_| (key.to_string(), format!("expected an integer, got '{v}'")))
}

/// prev_state as letters (`S`, `R+`, `D|K`, `X`) or a number (raw format); every
/// sleeping or blocked state (S, D, I, T, ...) reads as `Sleeping`.
fn prev_state(v: &str) -> Result<PrevState, FieldError> {
    if let Ok(n) = v.parse::<u64>() {
        // TASK_RUNNING 0; EXIT_DEAD 0x10, EXIT_ZOMBIE 0x20; bits above 0xff only
        // (TASK_REPORT_MAX): preempted.
        return Ok(if n == 0 || n & 0xff == 0 {
            PrevState::Runnable
        } else if n & 0x30 != 0 {
            PrevState::Dead
        } else {
            PrevState::Sleeping
        });
    }
    let letters = v.trim_end_matches('+');
    if letters.is_empty() || !letters.bytes().all(|b| b.is_ascii_alphabetic() || b == b'|') {
        return Err(("prev_state".into(), format!("expected a task state (R, S, D, X, ... or a number), got '{v}'")));
    }
    Ok(if letters.starts_with('R') {
        PrevState::Runnable
    } else if letters.contains(['X', 'Z', 'x']) {
        PrevState::Dead
    } else {
        PrevState::Sleeping
    })
}

/// `comm:pid [prio]` of the plugin format.
fn plugin_task(s: &str, what: &str) -> Result<(String, usize), FieldError> {
    let s = s.trim();
    let s = match s.rfind('[') {
        Some(p) => s[..p].trim_end(),
        None => s,
    };
    let (comm, pid) = s.rsplit_once(':').ok_or_else(|| (format!("{what}_pid"), format!("expected comm:pid, got '{s}'")))?;
    let pid = pid.parse().map_err(|_| (format!("{what}_pid"), format!("expected an integer pid, got '{pid}'")))?;
    Ok((comm.to_string(), pid))
}

fn decode_switch(args: &str) -> Result<Decoded, FieldError> {
    let (prev, prev_comm, state, next, next_comm) = if !args.contains("prev_pid=") {
        // Plugin format: `prev:1 [120] S ==> next:2 [120]`.
        let (l, r) = args.split_once("==>").ok_or_else(|| ("prev_state".to_string(), "expected `... ==> ...`".to_string()))?;
        let l = l.trim();
        let (task, state) = l.rsplit_once(' ').ok_or_else(|| ("prev_state".to_string(), format!("expected comm:pid [prio] STATE, got '{l}'")))?;
        let (prev_comm, prev) = plugin_task(task, "prev")?;
        let (next_comm, next) = plugin_task(r, "next")?;
        (prev, prev_comm, state, next, next_comm)
    } else {
        // Read in the tracepoint's field order, so a missing field is named as it comes.
        let f = kv(args);
        let (prev, prev_comm, state) = (field_usize(&f, "prev_pid")?, field(&f, "prev_comm")?.to_string(), field(&f, "prev_state")?);
        (prev, prev_comm, state, field_usize(&f, "next_pid")?, field(&f, "next_comm")?.to_string())
    };
    Ok((TraceEvent::Switch { prev, prev_state: prev_state(state)?, next }, vec![(prev, prev_comm), (next, next_comm)]))
}

/// sched_waking / sched_wakeup / sched_wakeup_new of the line `event`, which fired on
/// `cpu` (the target where a format leaves it out), in interrupt context if `in_irq`.
fn decode_wake(args: &str, event: &str, cpu: usize, in_irq: bool) -> Result<Decoded, FieldError> {
    let (pid, comm, target_cpu) = if !args.contains("pid=") {
        // Plugin format: `comm:pid [prio] success=1 CPU:003`.
        let upto = args.find(" success=").or_else(|| args.find(" CPU:")).unwrap_or(args.len());
        let (comm, pid) = plugin_task(&args[..upto], "")?;
        (pid, comm, args.split("CPU:").nth(1).and_then(|c| c.trim().parse().ok()))
    } else {
        let f = kv(args);
        let target_cpu = match field(&f, "target_cpu") {
            Ok(v) => Some(v.parse().map_err(|_| ("target_cpu".to_string(), format!("expected a CPU number, got '{v}'")))?),
            Err(_) => None,
        };
        (field_usize(&f, "pid")?, field(&f, "comm")?.to_string(), target_cpu)
    };
    let target_cpu = target_cpu.unwrap_or(cpu);
    let ev = match event {
        "sched_waking" => TraceEvent::Waking { pid, target_cpu, from_irq: in_irq },
        "sched_wakeup" => TraceEvent::Wakeup { pid, target_cpu },
        _ => TraceEvent::WakeupNew { pid, target_cpu },
    };
    Ok((ev, vec![(pid, comm)]))
}

fn decode_migrate(args: &str) -> Result<Decoded, FieldError> {
    let f = kv(args);
    let ev = TraceEvent::Migrate { pid: field_usize(&f, "pid")?, orig_cpu: field_usize(&f, "orig_cpu")?, dest_cpu: field_usize(&f, "dest_cpu")? };
    Ok((ev, Vec::new()))
}

fn decode_fork(args: &str) -> Result<Decoded, FieldError> {
    let f = kv(args);
    let (parent, child) = (field_usize(&f, "pid")?, field_usize(&f, "child_pid")?);
    Ok((TraceEvent::Fork { parent, child }, vec![(child, field(&f, "child_comm")?.to_string())]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_ftrace_flavours_and_perf() {
        let text = "\
# tracer: nop
          <idle>-0     [001] d..2.  1.958079: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my task next_pid=12 next_prio=120
   <...>-1701  [001]    5.211513: sched_switch:          prev_comm=trace-cmd prev_pid=1701 prev_prio=120 prev_state=64 next_comm=swapper/1 next_pid=0 next_prio=120
     bash-1234  (1234) [002] d.h3. 10.000000500: sched_waking: comm=cat pid=77 prio=120 target_cpu=002
     bash-1234  [002]  10.5: sched_switch: bash:1234 [120] S ==> cat:77 [120]
     bash-1234  [002]  10.6: sched_wakeup: cat:77 [120] success=1 CPU:003
            Xorg   829 [003]  2726.130986: sched:sched_wakeup: comm=spotify pid=9288 prio=120 target_cpu=000
CPU:2 [LOST 45 EVENTS]
     bash-1234  [002]  2727.7: irq_handler_entry: irq=5 name=eth0
";
        let t = parse(text, "t.txt").unwrap();
        assert_eq!(t.lines.len(), 6);
        assert_eq!((t.lost_events, t.other_events), (45, 1));
        assert!(matches!(t.lines[0].event, TraceEvent::Switch { next: 12, prev_state: PrevState::Runnable, .. }));
        assert_eq!(t.lines[0].comm(12), "my task");
        assert!(matches!(t.lines[1].event, TraceEvent::Switch { prev: 1701, prev_state: PrevState::Sleeping, .. }));
        assert_eq!(t.lines[2].ts, 10_000_000_500);
        assert!(t.lines[2].in_irq);
        assert!(matches!(t.lines[2].event, TraceEvent::Waking { pid: 77, target_cpu: 2, from_irq: true }));
        assert!(matches!(t.lines[3].event, TraceEvent::Switch { prev: 1234, next: 77, prev_state: PrevState::Sleeping }));
        assert!(matches!(t.lines[4].event, TraceEvent::Wakeup { pid: 77, target_cpu: 3 }));
        assert_eq!(t.lines[4].comm(77), "cat");
        assert_eq!((t.lines[5].ctx_pid, t.lines[5].cpu, t.lines[5].ts), (829, 3, 2_726_130_986_000));
    }

    #[test]
    fn garbage_and_bad_fields_name_the_line_and_field() {
        let e = parse(
            "  a-1 [000] 1.0: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid=x next_prio=120\n",
            "t.txt",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "t.txt:1: sched_switch.next_pid: expected a non-negative integer, got 'x'");
        let e = parse("# header\nhello world\n", "t.txt").unwrap_err();
        assert!(e.to_string().starts_with("t.txt:2: line: not a trace event line"), "{e}");
        // A trace runs forward in time, and has events.
        let two = "  a-1 [000] 2.0: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n  a-1 [001] 1.5: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n";
        let e = parse(two, "t.txt").unwrap_err();
        assert_eq!(e.to_string(), "t.txt:2: timestamp: 1.500000 s is before 2.000000 s of line 1: a trace runs forward in time (two traces joined, or per-CPU buffers not merged?)");
        let e = parse("# tracer: nop\n#\n", "t.txt").unwrap_err();
        assert_eq!(e.to_string(), "t.txt:0: trace: no events: the file is empty or holds only comments and headers");
    }
}
