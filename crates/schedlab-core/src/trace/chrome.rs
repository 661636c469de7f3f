//! Chrome trace-event JSON, for small traces and generic viewers.
//!
//! Mirrors: the Trace Event Format as Perfetto's JSON importer reads it
//! (google/perfetto src/trace_processor/importers/json/json_trace_tokenizer.cc):
//! `traceEvents` plus `systemTraceEvents`, a string of ftrace text that Perfetto parses
//! with its systrace parser into real CPU scheduling tracks (sched_switch,
//! sched_waking, cpu_idle, cpu_frequency).
//! Model: threads are real threads (pid = tgid, tid = pid) with a slice per run (its CPU
//! in `args.cpu`); wakeups and migrations are instants on the woken task's track; a
//! group's throttled CPUs and a task's mm_cid are counters; TLB flushes, timer expiries
//! and shared-runqueue pulls are instants. The ftrace text is written to a side file
//! while the run goes and copied in, escaped, at the end, so memory stays flat.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use super::text::{Style, TextTrace};
use super::{TaskInfo, TraceEvent, TraceMeta, TraceRecord, TraceSink};
use crate::time::Ns;

enum Side {
    Memory(TextTrace<Vec<u8>>),
    File(PathBuf, TextTrace<io::BufWriter<std::fs::File>>),
}

/// A streaming Chrome JSON writer.
pub struct ChromeJson<W: Write> {
    out: W,
    side_path: Option<PathBuf>,
    side: Option<Side>,
    first: bool,
    /// (pid, since) running per CPU.
    running: Vec<(usize, Ns)>,
    /// tgid and comm by pid.
    tasks: Vec<(usize, String)>,
    groups: Vec<String>,
    /// Throttled CPUs per group.
    throttled: Vec<u32>,
}

fn us(ns: Ns) -> f64 {
    ns as f64 / 1000.0
}

impl<W: Write + Send> ChromeJson<W> {
    /// A writer into `out`; the embedded ftrace text is staged in `side` (a file path)
    /// or in memory when `side` is None.
    pub fn new(out: W, side: Option<PathBuf>) -> Self {
        ChromeJson {
            out,
            side_path: side,
            side: None,
            first: true,
            running: Vec::new(),
            tasks: vec![(0, "swapper".into())],
            groups: Vec::new(),
            throttled: Vec::new(),
        }
    }

    fn emit(&mut self, v: serde_json::Value) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.out, &v).map_err(io::Error::other)
    }

    fn tgid(&self, pid: usize) -> usize {
        self.tasks.get(pid).map_or(pid, |t| t.0)
    }

    fn comm(&self, pid: usize) -> String {
        self.tasks.get(pid).map_or_else(|| format!("task{pid}"), |t| t.1.clone())
    }

    fn slice(&mut self, cpu: usize, pid: usize, start: Ns, end: Ns) -> io::Result<()> {
        if pid == 0 || end <= start {
            return Ok(());
        }
        let v = serde_json::json!({"ph":"X","pid":self.tgid(pid),"tid":pid,"ts":us(start),"dur":us(end - start),
            "name":self.comm(pid),"cat":"sched","args":{"cpu":cpu,"pid":pid}});
        self.emit(v)
    }

    fn instant(&mut self, ts: Ns, pid: usize, name: &str, args: serde_json::Value) -> io::Result<()> {
        let v = if pid == 0 {
            serde_json::json!({"ph":"i","s":"g","pid":0,"tid":0,"ts":us(ts),"name":name,"cat":"schedlab","args":args})
        } else {
            serde_json::json!({"ph":"i","s":"t","pid":self.tgid(pid),"tid":pid,"ts":us(ts),"name":name,"cat":"sched","args":args})
        };
        self.emit(v)
    }
}

impl<W: Write + Send> TraceSink for ChromeJson<W> {
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()> {
        let mut side = match &self.side_path {
            Some(p) => Side::File(p.clone(), TextTrace::new(io::BufWriter::new(std::fs::File::create(p)?), Style::Ftrace)),
            None => Side::Memory(TextTrace::new(Vec::new(), Style::Ftrace)),
        };
        match &mut side {
            Side::Memory(t) => t.begin(meta)?,
            Side::File(_, t) => t.begin(meta)?,
        }
        self.side = Some(side);
        self.running = vec![(0, 0); meta.nr_cpus];
        self.groups = meta.groups.clone();
        self.throttled = vec![0; meta.groups.len()];
        self.out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        self.emit(serde_json::json!({"ph":"M","pid":0,"name":"process_name","args":{"name":"kernel (schedlab)"}}))
    }

    fn task(&mut self, ts: Ns, info: &TaskInfo) -> io::Result<()> {
        match self.side.as_mut() {
            Some(Side::Memory(t)) => t.task(ts, info)?,
            Some(Side::File(_, t)) => t.task(ts, info)?,
            None => {}
        }
        if self.tasks.len() <= info.pid {
            self.tasks.resize(info.pid + 1, (0, String::new()));
        }
        self.tasks[info.pid] = (info.tgid, info.comm.clone());
        if info.tgid == info.pid {
            self.emit(serde_json::json!({"ph":"M","pid":info.tgid,"name":"process_name","args":{"name":info.comm}}))?;
        }
        self.emit(serde_json::json!({"ph":"M","pid":info.tgid,"tid":info.pid,"name":"thread_name","args":{"name":info.comm}}))
    }

    fn record(&mut self, r: &TraceRecord) -> io::Result<()> {
        match self.side.as_mut() {
            Some(Side::Memory(t)) => t.record(r)?,
            Some(Side::File(_, t)) => t.record(r)?,
            None => {}
        }
        match r.event {
            TraceEvent::Switch { prev, next, .. } => {
                let (pid, start) = self.running[r.cpu];
                if pid == prev {
                    self.slice(r.cpu, pid, start, r.ts)?;
                }
                self.running[r.cpu] = (next, r.ts);
            }
            TraceEvent::Waking { pid, target_cpu, from_irq } => {
                self.instant(r.ts, pid, "sched_waking", serde_json::json!({"target_cpu":target_cpu,"from_cpu":r.cpu,"from_irq":from_irq}))?
            }
            TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => {
                self.instant(r.ts, pid, "sched_migrate_task", serde_json::json!({"orig_cpu":orig_cpu,"dest_cpu":dest_cpu}))?
            }
            TraceEvent::Fork { parent, child } => self.instant(r.ts, parent, "sched_process_fork", serde_json::json!({"child_pid":child}))?,
            TraceEvent::Exit { pid } => self.instant(r.ts, pid, "sched_process_exit", serde_json::json!({}))?,
            TraceEvent::CfsThrottle { group, throttled } => {
                if let Some(n) = self.throttled.get_mut(group) {
                    *n = if throttled { *n + 1 } else { n.saturating_sub(1) };
                    let (n, name) = (*n, format!("throttled CPUs: {}", self.groups[group]));
                    self.emit(serde_json::json!({"ph":"C","pid":0,"ts":us(r.ts),"name":name,"args":{"cpus":n}}))?;
                }
            }
            TraceEvent::MmCid { pid, cid } => {
                let name = format!("mm_cid {}", self.comm(pid));
                let v = serde_json::json!({"ph":"C","pid":self.tgid(pid),"ts":us(r.ts),"name":name,"args":{"cid":cid.map_or(-1, |c| c as i64)}});
                self.emit(v)?
            }
            TraceEvent::TlbFlush { pages, ipis, waits } => {
                self.instant(r.ts, 0, "schedlab_tlb_flush", serde_json::json!({"cpu":r.cpu,"pages":pages,"ipis":ipis,"waits":waits}))?
            }
            TraceEvent::TimerExpire { timer, owner_cpu } => {
                self.instant(r.ts, 0, "timer_expire_entry", serde_json::json!({"cpu":r.cpu,"timer":timer,"owner_cpu":owner_cpu}))?
            }
            TraceEvent::SharedRunqPull { pid, from_cpu } => {
                self.instant(r.ts, pid, "schedlab_shared_runq_pull", serde_json::json!({"cpu":r.cpu,"from_cpu":from_cpu}))?
            }
            TraceEvent::Wakeup { .. } | TraceEvent::WakeupNew { .. } | TraceEvent::CpuIdle { .. } | TraceEvent::CpuFrequency { .. } => {}
        }
        Ok(())
    }

    fn finish(&mut self, end: Ns) -> io::Result<()> {
        for cpu in 0..self.running.len() {
            let (pid, start) = self.running[cpu];
            self.slice(cpu, pid, start, end)?;
        }
        self.out.write_all(b"\n],\"systemTraceEvents\":\"")?;
        let escape = |chunk: &[u8], out: &mut W| -> io::Result<()> {
            let s = String::from_utf8_lossy(chunk);
            let quoted = serde_json::to_string(&*s).map_err(io::Error::other)?;
            out.write_all(&quoted.as_bytes()[1..quoted.len() - 1])
        };
        match self.side.take() {
            Some(Side::Memory(mut t)) => {
                t.finish(end)?;
                let text = std::mem::take(t.inner());
                escape(&text, &mut self.out)?;
            }
            Some(Side::File(path, mut t)) => {
                t.finish(end)?;
                drop(t);
                let mut f = io::BufReader::new(std::fs::File::open(&path)?);
                let mut buf = Vec::with_capacity(1 << 20);
                loop {
                    buf.clear();
                    // Whole lines only, so no UTF-8 sequence is cut.
                    let n = io::BufRead::read_until(&mut f, b'\n', &mut buf)?;
                    if n == 0 {
                        break;
                    }
                    let more = (&mut f).take((1 << 20) as u64).read_to_end(&mut buf)?;
                    if more > 0 {
                        io::BufRead::read_until(&mut f, b'\n', &mut buf)?;
                    }
                    escape(&buf, &mut self.out)?;
                }
                std::fs::remove_file(&path)?;
            }
            None => {}
        }
        self.out.write_all(b"\"}\n")?;
        self.out.flush()
    }
}
