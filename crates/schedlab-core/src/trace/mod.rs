//! Scheduler tracepoints of a run, streamed to a writer as they fire.
//!
//! Mirrors: include/trace/events/sched.h (sched_switch, sched_waking, sched_wakeup,
//! sched_wakeup_new, sched_migrate_task, sched_process_fork, sched_process_exit),
//! include/trace/events/power.h (cpu_idle, cpu_frequency), include/trace/events/timer.h
//! (timer_expire_entry), plus schedlab's own mechanism events in tracepoint style
//! (CFS bandwidth throttle/unthrottle, mm_cid changes, TLB flushes on reclaim,
//! shared-runqueue pulls).
//! Model: the engine hands every record to a [`TraceSink`] at once (time is
//! non-decreasing); sinks write as they go (`text`: tracefs / `trace-cmd report` and
//! `perf script` text, `chrome`: Chrome JSON, `perfetto`: Perfetto protobuf,
//! `trace_dat`: trace-cmd's trace.dat for `trace-cmd report` and KernelShark) so a
//! traced run holds only per-CPU state, never the whole trace. [`Trace`] is the
//! in-memory sink tests use.

pub mod chrome;
pub mod columns;
pub mod perfetto;
pub mod text;
pub mod trace_dat;

use std::io::{self, Write};

use crate::time::Ns;

/// State of the task leaving the CPU, as sched_switch's `prev_state` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: preempted (`R+`), or the idle task (`R`).
    Runnable,
    /// Sleeping or blocked: the simulator's tasks sleep interruptibly (written `S`); a
    /// recorded trace's every sleeping state (S, D, I, T, ...) reads as this.
    Sleeping,
    /// Exited (`X`, EXIT_DEAD).
    Dead,
}

/// One tracepoint hit: what the simulator's traces are written from, and what a
/// recorded text trace is read into (`interchange::trace_text`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// `sched_switch`: `prev` (0 = idle) leaves, `next` (0 = idle) runs.
    Switch {
        /// Outgoing pid (0 = idle).
        prev: usize,
        /// How the outgoing task leaves.
        prev_state: PrevState,
        /// Incoming pid (0 = idle).
        next: usize,
    },
    /// `sched_waking`: `pid` is being woken towards `target_cpu`.
    Waking {
        /// Woken task.
        pid: usize,
        /// CPU chosen by select_task_rq.
        target_cpu: usize,
        /// Woken from interrupt context (a timer), not by the task running here.
        from_irq: bool,
    },
    /// `sched_wakeup`: the woken task is on `target_cpu`'s runqueue (ttwu_do_wakeup).
    Wakeup {
        /// Woken task.
        pid: usize,
        /// Its runqueue.
        target_cpu: usize,
    },
    /// `sched_wakeup_new`: a new task is on `target_cpu`'s runqueue (wake_up_new_task).
    WakeupNew {
        /// New task.
        pid: usize,
        /// Its runqueue.
        target_cpu: usize,
    },
    /// `sched_migrate_task`.
    Migrate {
        /// Moved task.
        pid: usize,
        /// Source CPU.
        orig_cpu: usize,
        /// Destination CPU.
        dest_cpu: usize,
    },
    /// `sched_process_fork`: `parent` created `child`.
    Fork {
        /// Parent pid.
        parent: usize,
        /// Child pid.
        child: usize,
    },
    /// `sched_process_exit`.
    Exit {
        /// Exiting pid.
        pid: usize,
    },
    /// `cpu_idle`: entering idle state `state`, or leaving idle (`state` = None).
    CpuIdle {
        /// Idle state index, None on exit (the kernel prints 4294967295).
        state: Option<u32>,
    },
    /// `cpu_frequency`: the CPU runs at `khz`: one record per CPU at the start, then one
    /// per CPU of a policy at each change schedutil makes (none under `performance`,
    /// which keeps the top operating point).
    CpuFrequency {
        /// Frequency, kHz.
        khz: u32,
    },
    /// `timer_expire_entry`: a wheel timer's callback runs here.
    TimerExpire {
        /// Timer id.
        timer: usize,
        /// CPU whose base held it (another CPU: pulled by a migrator).
        owner_cpu: usize,
    },
    /// schedlab `cfs_throttle`: group `group`'s cfs_rq on this CPU ran out of runtime
    /// (throttle_cfs_rq) or got some back (unthrottle_cfs_rq).
    CfsThrottle {
        /// Group index (names in [`TraceSink::groups`]).
        group: usize,
        /// true: throttled; false: unthrottled.
        throttled: bool,
    },
    /// schedlab `mm_cid`: the concurrency id `pid` holds changed at a switch-in.
    MmCid {
        /// Task.
        pid: usize,
        /// Its cid now (None: it holds none).
        cid: Option<u32>,
    },
    /// schedlab `tlb_flush`: a reclaim pass unmapped pages and flushed TLBs.
    TlbFlush {
        /// Pages unmapped.
        pages: u64,
        /// Flush IPIs sent (x86) or completion waits (arm64 TLBI + DSB).
        ipis: u64,
        /// Completion waits.
        waits: u64,
    },
    /// schedlab `shared_runq_pull`: this CPU pulled `pid` from the shared runqueue.
    SharedRunqPull {
        /// Pulled task.
        pid: usize,
        /// CPU it was queued on.
        from_cpu: usize,
    },
}

impl TraceEvent {
    /// The same event with every pid passed through `f`.
    pub fn map_pids(self, f: impl Fn(usize) -> usize) -> TraceEvent {
        use TraceEvent::*;
        match self {
            Switch { prev, prev_state, next } => Switch { prev: f(prev), prev_state, next: f(next) },
            Waking { pid, target_cpu, from_irq } => Waking { pid: f(pid), target_cpu, from_irq },
            Wakeup { pid, target_cpu } => Wakeup { pid: f(pid), target_cpu },
            WakeupNew { pid, target_cpu } => WakeupNew { pid: f(pid), target_cpu },
            Migrate { pid, orig_cpu, dest_cpu } => Migrate { pid: f(pid), orig_cpu, dest_cpu },
            Fork { parent, child } => Fork { parent: f(parent), child: f(child) },
            Exit { pid } => Exit { pid: f(pid) },
            MmCid { pid, cid } => MmCid { pid: f(pid), cid },
            SharedRunqPull { pid, from_cpu } => SharedRunqPull { pid: f(pid), from_cpu },
            e @ (CpuIdle { .. } | CpuFrequency { .. } | TimerExpire { .. } | CfsThrottle { .. } | TlbFlush { .. }) => e,
        }
    }
}

/// A timestamped record on a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Time.
    pub ts: Ns,
    /// CPU the tracepoint fired on.
    pub cpu: usize,
    /// What happened.
    pub event: TraceEvent,
}

/// A task as the trace names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskInfo {
    /// pid (> 0).
    pub pid: usize,
    /// Thread group (process) leader's pid.
    pub tgid: usize,
    /// Parent pid (0: none in the run).
    pub ppid: usize,
    /// comm.
    pub comm: String,
    /// Kernel priority (120 + nice).
    pub prio: i32,
}

/// What every sink learns before the first record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceMeta {
    /// CPUs of the machine.
    pub nr_cpus: usize,
    /// Group names by index (0 = root).
    pub groups: Vec<String>,
}

/// Where a run's records go. Errors end the tracing (the run goes on) and are
/// reported when the run ends.
pub trait TraceSink: Send {
    /// Called once, before anything else.
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()>;
    /// A task was created (before any record names it).
    fn task(&mut self, ts: Ns, info: &TaskInfo) -> io::Result<()>;
    /// A tracepoint fired.
    fn record(&mut self, r: &TraceRecord) -> io::Result<()>;
    /// The run ended at `end`: flush everything.
    fn finish(&mut self, end: Ns) -> io::Result<()>;
    /// The in-memory trace, if this sink is one.
    fn into_memory(self: Box<Self>) -> Option<Trace> {
        None
    }
    /// Records held in memory so far (a streaming sink holds none): the run's memory
    /// limit counts them.
    fn buffered_records(&self) -> u64 {
        0
    }
}

/// A recorded trace held in memory (tests, small runs).
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Records in time order.
    pub records: Vec<TraceRecord>,
    /// comm of each pid (index = pid; pid 0 is the idle task).
    pub comms: Vec<String>,
    /// Every task, in creation order.
    pub tasks: Vec<(Ns, TaskInfo)>,
    /// Machine and groups.
    pub meta: TraceMeta,
    /// CPUs of the machine.
    pub nr_cpus: usize,
    /// When the run ended.
    pub end: Ns,
}

impl TraceSink for Trace {
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()> {
        self.meta = meta.clone();
        self.nr_cpus = meta.nr_cpus;
        if self.comms.is_empty() {
            self.comms.push("swapper".into());
        }
        Ok(())
    }
    fn task(&mut self, ts: Ns, info: &TaskInfo) -> io::Result<()> {
        if self.comms.len() <= info.pid {
            self.comms.resize(info.pid + 1, String::new());
        }
        self.comms[info.pid] = info.comm.clone();
        self.tasks.push((ts, info.clone()));
        Ok(())
    }
    fn record(&mut self, r: &TraceRecord) -> io::Result<()> {
        self.records.push(*r);
        Ok(())
    }
    fn finish(&mut self, end: Ns) -> io::Result<()> {
        self.end = end;
        Ok(())
    }
    fn into_memory(self: Box<Self>) -> Option<Trace> {
        Some(*self)
    }
    fn buffered_records(&self) -> u64 {
        self.records.len() as u64
    }
}

impl Trace {
    /// Replays the recorded trace into another sink.
    pub fn replay(&self, sink: &mut dyn TraceSink) -> io::Result<()> {
        sink.begin(&self.meta)?;
        let mut tasks = self.tasks.iter().peekable();
        for r in &self.records {
            while let Some((ts, info)) = tasks.next_if(|(ts, _)| *ts <= r.ts) {
                sink.task(*ts, info)?;
            }
            sink.record(r)?;
        }
        for (ts, info) in tasks {
            sink.task(*ts, info)?;
        }
        sink.finish(self.end.max(self.records.last().map_or(0, |r| r.ts)))
    }

    /// Writes Chrome trace-event JSON (see [`chrome`]).
    pub fn write_perfetto_json(&self, out: &mut (impl Write + Send)) -> io::Result<()> {
        let mut sink = chrome::ChromeJson::new(out, None);
        self.replay(&mut sink)
    }

    /// Writes the tracefs `trace` text format with nanosecond timestamps (as
    /// `trace-cmd report -t` prints them).
    pub fn write_ftrace(&self, out: &mut (impl Write + Send)) -> io::Result<()> {
        let mut sink = text::TextTrace::new(out, text::Style::Ftrace);
        self.replay(&mut sink)
    }

    /// Writes `perf script --ns` text of the sched tracepoints.
    pub fn write_perf_script(&self, out: &mut (impl Write + Send)) -> io::Result<()> {
        let mut sink = text::TextTrace::new(out, text::Style::PerfScript);
        self.replay(&mut sink)
    }

    /// Writes trace-cmd's trace.dat (see [`trace_dat`]).
    pub fn write_trace_dat(&self, out: &mut (impl Write + Send)) -> io::Result<()> {
        let mut sink = trace_dat::TraceDat::new(out, None);
        self.replay(&mut sink)
    }

    /// Writes a Perfetto protobuf trace (see [`perfetto`]).
    pub fn write_perfetto_proto(&self, out: &mut (impl Write + Send)) -> io::Result<()> {
        let mut sink = perfetto::PerfettoProto::new(out);
        self.replay(&mut sink)
    }
}

/// The formats a trace file can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Perfetto protobuf (`.pftrace`).
    Perfetto,
    /// Chrome JSON with the ftrace text embedded (`.json`).
    Json,
    /// tracefs text (`.txt`).
    Ftrace,
    /// `perf script` text.
    PerfScript,
    /// trace-cmd's trace.dat (`.dat`).
    TraceDat,
    /// The compact trace's staging tables, a directory (`columns.rs`; Parquet from Python).
    Columns,
}

impl TraceFormat {
    /// Parses a format name.
    pub fn parse(name: &str) -> Option<TraceFormat> {
        Some(match name {
            "perfetto" | "proto" | "pftrace" => TraceFormat::Perfetto,
            "json" | "chrome" => TraceFormat::Json,
            "ftrace" | "text" => TraceFormat::Ftrace,
            "perf" | "perf-script" => TraceFormat::PerfScript,
            "trace-cmd" | "dat" | "trace.dat" => TraceFormat::TraceDat,
            "columns" => TraceFormat::Columns,
            _ => return None,
        })
    }
}

/// Opens a streaming sink writing `path` in `format`.
pub fn file_sink(path: &std::path::Path, format: TraceFormat) -> io::Result<Box<dyn TraceSink>> {
    if format == TraceFormat::Columns {
        return Ok(Box::new(columns::ColumnFiles::create(path)?));
    }
    let f = io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    Ok(match format {
        TraceFormat::Perfetto => Box::new(perfetto::PerfettoProto::new(f)),
        TraceFormat::Json => {
            // The embedded ftrace text goes to a side file first, appended at the end.
            let side = path.with_extension("systrace.tmp");
            Box::new(chrome::ChromeJson::new(f, Some(side)))
        }
        TraceFormat::Ftrace => Box::new(text::TextTrace::new(f, text::Style::Ftrace)),
        TraceFormat::PerfScript => Box::new(text::TextTrace::new(f, text::Style::PerfScript)),
        // Full pages wait in a side file until the header (with every task's comm) is known.
        TraceFormat::TraceDat => Box::new(trace_dat::TraceDat::new(f, Some(path.with_extension("pages.tmp")))),
        TraceFormat::Columns => unreachable!("a directory, opened above"),
    })
}

/// The engine's handle on its sink: remembers the first write error and stops there.
pub(crate) struct Tracer {
    sink: Box<dyn TraceSink>,
    /// First error; tracing stops at it.
    pub(crate) error: Option<io::Error>,
    /// Thread group leader of each mm index.
    tgid_of_mm: std::collections::BTreeMap<usize, usize>,
    /// Last cid reported per pid (mm_cid events fire on change only).
    last_cid: Vec<Option<u32>>,
    /// The pid each task shows (index: the engine's pid - 1), where the scenario gives
    /// pids; empty: the engine's own.
    pub(crate) pids: Vec<usize>,
}

impl Tracer {
    /// Records the sink holds in memory.
    pub(crate) fn buffered_records(&self) -> u64 {
        self.sink.buffered_records()
    }

    pub(crate) fn new(mut sink: Box<dyn TraceSink>, meta: &TraceMeta) -> Tracer {
        let error = sink.begin(meta).err();
        Tracer { sink, error, tgid_of_mm: Default::default(), last_cid: Vec::new(), pids: Vec::new() }
    }

    #[inline]
    pub(crate) fn record(&mut self, mut r: TraceRecord) {
        if self.error.is_none() {
            if !self.pids.is_empty() {
                r.event = r.event.map_pids(|p| if p == 0 { 0 } else { self.pids.get(p - 1).copied().unwrap_or(p) });
            }
            if let Err(e) = self.sink.record(&r) {
                self.error = Some(e);
            }
        }
    }

    pub(crate) fn task(&mut self, ts: Ns, pid: usize, mm: usize, ppid: usize, comm: &str, nice: i32) {
        let tgid = *self.tgid_of_mm.entry(mm).or_insert(pid);
        let info = TaskInfo { pid, tgid, ppid, comm: comm.to_string(), prio: 120 + nice };
        if self.error.is_none() {
            if let Err(e) = self.sink.task(ts, &info) {
                self.error = Some(e);
            }
        }
    }

    /// Returns true if `pid`'s cid changed since the last report.
    pub(crate) fn cid_changed(&mut self, pid: usize, cid: Option<u32>) -> bool {
        if self.last_cid.len() <= pid {
            self.last_cid.resize(pid + 1, None);
        }
        std::mem::replace(&mut self.last_cid[pid], cid) != cid
    }

    /// Flushes the sink; returns it and the first error.
    pub(crate) fn finish(mut self, end: Ns) -> (Box<dyn TraceSink>, Option<io::Error>) {
        if self.error.is_none() {
            self.error = self.sink.finish(end).err();
        }
        (self.sink, self.error)
    }
}

/// The comm and prio of every pid a text sink has seen (pid 0 the idle task, the
/// swapper), as the tracepoints print them.
#[derive(Debug)]
pub(crate) struct TaskNames(Vec<(String, i32)>);

impl TaskNames {
    /// Only the swapper known.
    pub(crate) fn new() -> TaskNames {
        TaskNames(vec![("swapper".into(), 120)])
    }

    /// Records a task's printable comm and prio (TraceSink::task).
    pub(crate) fn set(&mut self, info: &TaskInfo) {
        if self.0.len() <= info.pid {
            self.0.resize(info.pid + 1, (String::new(), 120));
        }
        self.0[info.pid] = (printable_comm(&info.comm), info.prio);
    }

    /// The comm printed for `pid` running on `cpu` (`swapper/CPU` for the idle task).
    pub(crate) fn comm(&self, pid: usize, cpu: usize) -> String {
        if pid == 0 {
            return format!("swapper/{cpu}");
        }
        self.0.get(pid).map_or_else(|| format!("task{pid}"), |n| n.0.clone())
    }

    /// The prio printed for `pid` (120, nice 0, if unknown).
    pub(crate) fn prio(&self, pid: usize) -> i32 {
        self.0.get(pid).map_or(120, |n| n.1)
    }

    /// (pid, comm) of every task recorded, the swapper left out.
    pub(crate) fn tasks(&self) -> impl Iterator<Item = (usize, &str)> {
        self.0.iter().enumerate().skip(1).map(|(pid, (comm, _))| (pid, comm.as_str()))
    }
}

/// The comm a trace prints for `pid` (spaces would break the `key=value` layout).
pub(crate) fn printable_comm(comm: &str) -> String {
    comm.replace(char::is_whitespace, "_")
}
