//! trace-cmd's `trace.dat` (file format version 6), so `trace-cmd report`, KernelShark
//! and other libtracecmd readers open a run as they open a recorded trace.
//!
//! Mirrors: trace-cmd.dat.v6(5) (magic, `header_page` / `header_event`, event formats,
//! kallsyms, printk formats, saved cmdlines, CPU count, `flyrecord` offsets, page-aligned
//! per-CPU data), the ring-buffer page of kernel/trace/ring_buffer.c (a 16-byte header:
//! u64 timestamp, local_t commit; then events of a 32-bit header `type_len:5
//! time_delta:27`, type_len 1..28 for data of type_len * 4 bytes, 30 for a time extend
//! whose next word holds the delta's upper bits), and the tracefs `format` files of the
//! sched events as Linux 6.6 prints them (sched_migrate_task with its comm in place,
//! before 6.14 made it a `__data_loc` string).
//! Model: little-endian, 64-bit longs, 4096-byte pages, timestamps in ns. Written:
//! sched_switch, sched_waking, sched_wakeup, sched_wakeup_new, sched_migrate_task,
//! sched_process_fork, sched_process_exit; the other records (power, timer and
//! schedlab's mechanism events) are left out, as a recording that did not enable them.
//! Each CPU fills one page at a time; a full page is staged (in memory or a side file),
//! and at the end the header, with the saved cmdlines of every task, is written and
//! each CPU's pages copied after it, so memory holds a page per CPU.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use super::{PrevState, TaskInfo, TraceEvent, TraceMeta, TraceRecord, TraceSink};
use crate::time::Ns;

const PAGE_SIZE: usize = 4096;
/// u64 timestamp + local_t commit.
const PAGE_HEADER: usize = 16;
/// ring_buffer.c RINGBUF_TYPE_TIME_EXTEND.
const TYPE_TIME_EXTEND: u32 = 30;
/// Bits of time_delta in an event header (TS_SHIFT).
const TS_SHIFT: u32 = 27;

/// Event ids, as the format files give them.
const ID_MIGRATE: u16 = 371;
const ID_SWITCH: u16 = 372;
const ID_WAKEUP_NEW: u16 = 373;
const ID_WAKEUP: u16 = 374;
const ID_WAKING: u16 = 375;
const ID_FORK: u16 = 366;
const ID_EXIT: u16 = 369;

/// sched_switch prev_state values (include/linux/sched.h): TASK_INTERRUPTIBLE,
/// EXIT_DEAD, and TASK_REPORT_MAX, the bit __trace_sched_switch_state sets for a
/// preempted task (printed `R+`).
const STATE_S: u64 = 0x1;
const STATE_X: u64 = 0x10;
const STATE_PREEMPTED: u64 = 0x100;

/// ftrace's irq flags (TRACE_FLAG_IRQS_OFF, TRACE_FLAG_HARDIRQ) as the text sink prints them.
const FLAG_IRQS_OFF: u8 = 0x01;
const FLAG_HARDIRQ: u8 = 0x08;

const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

const COMMON_FIELDS: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

const SWITCH_FIELDS: &str = "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", \
REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? \
__print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", \
{ 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", \
REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", \
REC->next_comm, REC->next_pid, REC->next_prio\n";

const WAKEUP_FIELDS: &str = "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n\
print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu\n";

const MIGRATE_FIELDS: &str = "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:int orig_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\
\tfield:int dest_cpu;\toffset:36;\tsize:4;\tsigned:1;\n\n\
print fmt: \"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu\n";

const FORK_FIELDS: &str = "\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:0;\n\
\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;\n\n\
print fmt: \"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid\n";

const EXIT_FIELDS: &str = "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\n\
print fmt: \"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio\n";

/// The `events/sched/<event>/format` text.
fn format_file(name: &str, id: u16, fields: &str) -> String {
    format!("name: {name}\nID: {id}\nformat:\n{COMMON_FIELDS}{fields}")
}

/// Where full pages wait for the end.
enum Staging {
    Memory(Vec<u8>),
    File(PathBuf, std::fs::File),
}

/// One CPU's page being filled.
struct Page {
    buf: Vec<u8>,
    /// Bytes of events after the header.
    used: usize,
    /// Time of the last event written (deltas count from it).
    last: Ns,
}

/// A streaming trace.dat writer.
pub struct TraceDat<W: Write> {
    out: W,
    side_path: Option<PathBuf>,
    staging: Option<Staging>,
    /// Staged page numbers, per CPU.
    pages: Vec<Vec<u64>>,
    staged: u64,
    open: Vec<Page>,
    /// Running pid per CPU (each event's common_pid).
    current: Vec<usize>,
    /// comm and prio by pid.
    names: super::TaskNames,
}

impl<W: Write + Send> TraceDat<W> {
    /// A writer into `out`; full pages are staged in `side` (a file path, removed at the
    /// end) or in memory when `side` is None.
    pub fn new(out: W, side: Option<PathBuf>) -> Self {
        TraceDat {
            out,
            side_path: side,
            staging: None,
            pages: Vec::new(),
            staged: 0,
            open: Vec::new(),
            current: Vec::new(),
            names: super::TaskNames::new(),
        }
    }

    fn comm(&self, pid: usize, cpu: usize) -> String {
        self.names.comm(pid, cpu)
    }

    fn prio(&self, pid: usize) -> i32 {
        self.names.prio(pid)
    }

    /// The event's id and payload after the common fields, or None for events this
    /// format leaves out.
    fn payload(&self, r: &TraceRecord) -> Option<(u16, Vec<u8>)> {
        let cpu = r.cpu;
        let mut p = Vec::with_capacity(56);
        let id = match r.event {
            TraceEvent::Switch { prev, prev_state, next } => {
                let state = match prev_state {
                    PrevState::Runnable if prev == 0 => 0,
                    PrevState::Runnable => STATE_PREEMPTED,
                    PrevState::Sleeping => STATE_S,
                    PrevState::Dead => STATE_X,
                };
                comm16(&mut p, &self.comm(prev, cpu));
                p.extend_from_slice(&(prev as i32).to_le_bytes());
                p.extend_from_slice(&self.prio(prev).to_le_bytes());
                p.extend_from_slice(&state.to_le_bytes());
                comm16(&mut p, &self.comm(next, cpu));
                p.extend_from_slice(&(next as i32).to_le_bytes());
                p.extend_from_slice(&self.prio(next).to_le_bytes());
                ID_SWITCH
            }
            TraceEvent::Waking { pid, target_cpu, .. } | TraceEvent::Wakeup { pid, target_cpu } | TraceEvent::WakeupNew { pid, target_cpu } => {
                comm16(&mut p, &self.comm(pid, target_cpu));
                p.extend_from_slice(&(pid as i32).to_le_bytes());
                p.extend_from_slice(&self.prio(pid).to_le_bytes());
                p.extend_from_slice(&(target_cpu as i32).to_le_bytes());
                match r.event {
                    TraceEvent::Waking { .. } => ID_WAKING,
                    TraceEvent::Wakeup { .. } => ID_WAKEUP,
                    _ => ID_WAKEUP_NEW,
                }
            }
            TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => {
                comm16(&mut p, &self.comm(pid, cpu));
                p.extend_from_slice(&(pid as i32).to_le_bytes());
                p.extend_from_slice(&self.prio(pid).to_le_bytes());
                p.extend_from_slice(&(orig_cpu as i32).to_le_bytes());
                p.extend_from_slice(&(dest_cpu as i32).to_le_bytes());
                ID_MIGRATE
            }
            TraceEvent::Fork { parent, child } => {
                comm16(&mut p, &self.comm(parent, cpu));
                p.extend_from_slice(&(parent as i32).to_le_bytes());
                comm16(&mut p, &self.comm(child, cpu));
                p.extend_from_slice(&(child as i32).to_le_bytes());
                ID_FORK
            }
            TraceEvent::Exit { pid } => {
                comm16(&mut p, &self.comm(pid, cpu));
                p.extend_from_slice(&(pid as i32).to_le_bytes());
                p.extend_from_slice(&self.prio(pid).to_le_bytes());
                ID_EXIT
            }
            _ => return None,
        };
        Some((id, p))
    }

    /// Moves CPU `cpu`'s page to the staging area.
    fn stage(&mut self, cpu: usize) -> io::Result<()> {
        let page = &mut self.open[cpu];
        if page.used == 0 {
            return Ok(());
        }
        page.buf[8..16].copy_from_slice(&(page.used as u64).to_le_bytes());
        match self.staging.as_mut().expect("begun") {
            Staging::Memory(v) => v.extend_from_slice(&page.buf),
            Staging::File(_, f) => f.write_all(&page.buf)?,
        }
        page.buf.iter_mut().for_each(|b| *b = 0);
        page.used = 0;
        self.pages[cpu].push(self.staged);
        self.staged += 1;
        Ok(())
    }

    fn header(&self, nr_cpus: usize) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(&[0x17, 0x08, 0x44]);
        h.extend_from_slice(b"tracing6\0");
        h.push(0); // little endian
        h.push(8); // long size
        h.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        h.extend_from_slice(b"header_page\0");
        h.extend_from_slice(&(HEADER_PAGE.len() as u64).to_le_bytes());
        h.extend_from_slice(HEADER_PAGE.as_bytes());
        h.extend_from_slice(b"header_event\0");
        h.extend_from_slice(&(HEADER_EVENT.len() as u64).to_le_bytes());
        h.extend_from_slice(HEADER_EVENT.as_bytes());
        h.extend_from_slice(&0u32.to_le_bytes()); // no ftrace (function tracer) formats
        h.extend_from_slice(&1u32.to_le_bytes()); // one system: sched
        h.extend_from_slice(b"sched\0");
        let events = [
            format_file("sched_switch", ID_SWITCH, SWITCH_FIELDS),
            format_file("sched_waking", ID_WAKING, WAKEUP_FIELDS),
            format_file("sched_wakeup", ID_WAKEUP, WAKEUP_FIELDS),
            format_file("sched_wakeup_new", ID_WAKEUP_NEW, WAKEUP_FIELDS),
            format_file("sched_migrate_task", ID_MIGRATE, MIGRATE_FIELDS),
            format_file("sched_process_fork", ID_FORK, FORK_FIELDS),
            format_file("sched_process_exit", ID_EXIT, EXIT_FIELDS),
        ];
        h.extend_from_slice(&(events.len() as u32).to_le_bytes());
        for e in &events {
            h.extend_from_slice(&(e.len() as u64).to_le_bytes());
            h.extend_from_slice(e.as_bytes());
        }
        h.extend_from_slice(&0u32.to_le_bytes()); // kallsyms
        h.extend_from_slice(&0u32.to_le_bytes()); // printk formats
                                                  // saved_cmdlines: `PID COMM` lines.
        let mut cmdlines = String::new();
        for (pid, comm) in self.names.tasks() {
            if !comm.is_empty() {
                cmdlines.push_str(&format!("{pid} {comm}\n"));
            }
        }
        h.extend_from_slice(&(cmdlines.len() as u64).to_le_bytes());
        h.extend_from_slice(cmdlines.as_bytes());
        h.extend_from_slice(&(nr_cpus as u32).to_le_bytes());
        h.extend_from_slice(b"flyrecord\0");
        // (offset, size) per CPU follow: filled by the caller.
        h
    }
}

/// A comm as a `char[16]` field (TASK_COMM_LEN: 15 bytes and a NUL).
fn comm16(p: &mut Vec<u8>, comm: &str) {
    let mut b = [0u8; 16];
    let c = comm.as_bytes();
    let n = c.len().min(15);
    b[..n].copy_from_slice(&c[..n]);
    p.extend_from_slice(&b);
}

impl<W: Write + Send> TraceSink for TraceDat<W> {
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()> {
        self.staging = Some(match &self.side_path {
            Some(p) => Staging::File(p.clone(), std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(p)?),
            None => Staging::Memory(Vec::new()),
        });
        self.pages = vec![Vec::new(); meta.nr_cpus];
        self.open = (0..meta.nr_cpus).map(|_| Page { buf: vec![0; PAGE_SIZE], used: 0, last: 0 }).collect();
        self.current = vec![0; meta.nr_cpus];
        Ok(())
    }

    fn task(&mut self, _ts: Ns, info: &TaskInfo) -> io::Result<()> {
        self.names.set(info);
        Ok(())
    }

    fn record(&mut self, r: &TraceRecord) -> io::Result<()> {
        if r.cpu >= self.open.len() {
            return Ok(());
        }
        let ctx = self.current[r.cpu];
        if let TraceEvent::Switch { next, .. } = r.event {
            self.current[r.cpu] = next;
        }
        let Some((id, payload)) = self.payload(r) else { return Ok(()) };
        let (flags, preempt) = match r.event {
            TraceEvent::Waking { from_irq: true, .. } => (FLAG_IRQS_OFF | FLAG_HARDIRQ, 3),
            TraceEvent::Waking { .. } | TraceEvent::Wakeup { .. } => (FLAG_IRQS_OFF, 3),
            _ => (FLAG_IRQS_OFF, 2),
        };
        let mut data = Vec::with_capacity(8 + payload.len() + 3);
        data.extend_from_slice(&id.to_le_bytes());
        data.push(flags);
        data.push(preempt);
        data.extend_from_slice(&(ctx as i32).to_le_bytes());
        data.extend_from_slice(&payload);
        while data.len() % 4 != 0 {
            data.push(0);
        }
        debug_assert!(data.len() <= 28 * 4, "every event written fits a small-data header");
        let page = &self.open[r.cpu];
        let mut delta = if page.used == 0 { 0 } else { r.ts.saturating_sub(page.last) };
        let extend = if delta >= 1 << TS_SHIFT { 8 } else { 0 };
        if page.used + extend + 4 + data.len() > PAGE_SIZE - PAGE_HEADER {
            self.stage(r.cpu)?;
            delta = 0;
        }
        let page = &mut self.open[r.cpu];
        if page.used == 0 {
            // The page's timestamp is its first event's time.
            page.buf[0..8].copy_from_slice(&r.ts.to_le_bytes());
            delta = 0;
        }
        let mut at = PAGE_HEADER + page.used;
        if delta >= 1 << TS_SHIFT {
            let word = TYPE_TIME_EXTEND | (((delta & ((1 << TS_SHIFT) - 1)) as u32) << 5);
            page.buf[at..at + 4].copy_from_slice(&word.to_le_bytes());
            page.buf[at + 4..at + 8].copy_from_slice(&((delta >> TS_SHIFT) as u32).to_le_bytes());
            at += 8;
            delta = 0;
        }
        let word = (data.len() / 4) as u32 | ((delta as u32) << 5);
        page.buf[at..at + 4].copy_from_slice(&word.to_le_bytes());
        page.buf[at + 4..at + 4 + data.len()].copy_from_slice(&data);
        page.used = at + 4 + data.len() - PAGE_HEADER;
        page.last = r.ts;
        Ok(())
    }

    fn finish(&mut self, _end: Ns) -> io::Result<()> {
        for cpu in 0..self.open.len() {
            self.stage(cpu)?;
        }
        let nr_cpus = self.open.len();
        let mut h = self.header(nr_cpus);
        let table_end = h.len() + 16 * nr_cpus;
        // The CPU data starts page-aligned in the file.
        let data_start = table_end.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let mut offset = data_start as u64;
        for pages in &self.pages {
            let size = (pages.len() * PAGE_SIZE) as u64;
            h.extend_from_slice(&offset.to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            offset += size;
        }
        h.resize(data_start, 0);
        self.out.write_all(&h)?;
        let mut buf = vec![0u8; PAGE_SIZE];
        let staging = self.staging.as_mut().expect("begun");
        for pages in &self.pages {
            for &n in pages {
                match staging {
                    Staging::Memory(v) => self.out.write_all(&v[n as usize * PAGE_SIZE..(n as usize + 1) * PAGE_SIZE])?,
                    Staging::File(_, f) => {
                        f.seek(SeekFrom::Start(n * PAGE_SIZE as u64))?;
                        f.read_exact(&mut buf)?;
                        self.out.write_all(&buf)?;
                    }
                }
            }
        }
        if let Some(Staging::File(p, _)) = self.staging.take() {
            std::fs::remove_file(p)?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;

    /// The events of a trace.dat, decoded as trace-cmd.dat.v6(5) and the ring buffer's
    /// page layout say: (cpu, ts, id, common_pid, payload).
    fn decode(b: &[u8]) -> Vec<(usize, Ns, u16, i32, Vec<u8>)> {
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        assert_eq!(&b[..12], b"\x17\x08\x44tracing6\0");
        assert_eq!((b[12], b[13], u32_at(14)), (0, 8, 4096));
        let mut at = 18;
        for name in [&b"header_page\0"[..], b"header_event\0"] {
            assert_eq!(&b[at..at + name.len()], name);
            at += name.len();
            at += 8 + u64_at(at) as usize;
        }
        assert_eq!(u32_at(at), 0);
        assert_eq!(u32_at(at + 4), 1);
        at += 8;
        assert_eq!(&b[at..at + 6], b"sched\0");
        at += 6;
        let events = u32_at(at);
        at += 4;
        for _ in 0..events {
            at += 8 + u64_at(at) as usize;
        }
        assert_eq!((u32_at(at), u32_at(at + 4)), (0, 0));
        at += 8;
        at += 8 + u64_at(at) as usize;
        let cpus = u32_at(at) as usize;
        at += 4;
        assert_eq!(&b[at..at + 10], b"flyrecord\0");
        at += 10;
        let mut out = Vec::new();
        for cpu in 0..cpus {
            let (off, size) = (u64_at(at + 16 * cpu) as usize, u64_at(at + 16 * cpu + 8) as usize);
            assert_eq!(off % PAGE_SIZE, 0);
            for page in (off..off + size).step_by(PAGE_SIZE) {
                let mut ts = u64_at(page);
                let commit = u64_at(page + 8) as usize;
                let mut p = page + PAGE_HEADER;
                while p < page + PAGE_HEADER + commit {
                    let w = u32_at(p);
                    let (type_len, delta) = (w & 31, (w >> 5) as u64);
                    if type_len == TYPE_TIME_EXTEND {
                        ts += delta + ((u32_at(p + 4) as u64) << TS_SHIFT);
                        p += 8;
                        continue;
                    }
                    assert!((1..=28).contains(&type_len));
                    ts += delta;
                    let d = &b[p + 4..p + 4 + type_len as usize * 4];
                    out.push((cpu, ts, u16::from_le_bytes([d[0], d[1]]), i32::from_le_bytes(d[4..8].try_into().unwrap()), d[8..].to_vec()));
                    p += 4 + type_len as usize * 4;
                }
            }
        }
        out
    }

    fn switch(ts: Ns, cpu: usize, prev: usize, prev_state: PrevState, next: usize) -> TraceRecord {
        TraceRecord { ts, cpu, event: TraceEvent::Switch { prev, prev_state, next } }
    }

    #[test]
    fn pages_time_extends_and_fields_decode_as_the_format_files_say() {
        let mut t = Trace::default();
        t.begin(&TraceMeta { nr_cpus: 2, groups: vec!["root".into()] }).unwrap();
        t.task(0, &TaskInfo { pid: 1, tgid: 1, ppid: 0, comm: "a long task name".into(), prio: 120 }).unwrap();
        t.task(0, &TaskInfo { pid: 2, tgid: 2, ppid: 0, comm: "b".into(), prio: 139 }).unwrap();
        // 200 switches on CPU 0, 1 ms apart (several pages: 68 bytes each), then one after
        // a gap beyond the 27-bit delta (134 ms); a wakeup on CPU 1.
        let mut want = Vec::new();
        for i in 0..200u64 {
            let (prev, next) = if i % 2 == 0 { (0, 1) } else { (1, 0) };
            t.record(&switch(1_000_000 * i + 7, 0, prev, if prev == 0 { PrevState::Runnable } else { PrevState::Sleeping }, next)).unwrap();
            want.push((0, 1_000_000 * i + 7));
        }
        t.record(&switch(5_000_000_123, 0, 0, PrevState::Runnable, 2)).unwrap();
        want.push((0, 5_000_000_123));
        t.record(&TraceRecord { ts: 5_000_000_200, cpu: 1, event: TraceEvent::Waking { pid: 1, target_cpu: 1, from_irq: true } }).unwrap();
        want.push((1, 5_000_000_200));
        t.record(&TraceRecord { ts: 5_000_000_300, cpu: 1, event: TraceEvent::CpuIdle { state: Some(1) } }).unwrap();
        let mut b = Vec::new();
        t.write_trace_dat(&mut b).unwrap();
        let ev = decode(&b);
        assert_eq!(ev.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>(), want, "cpu_idle is left out");
        // sched_switch: prev_comm[16] at 8, prev_pid 24, prev_prio 28, prev_state 32 (long),
        // next_comm 40, next_pid 56, next_prio 60 (payloads start at 8).
        let (_, _, id, ctx, p) = &ev[1];
        assert_eq!((*id, *ctx), (ID_SWITCH, 1));
        assert_eq!(&p[0..16], b"a_long_task_nam\0");
        assert_eq!(i32::from_le_bytes(p[16..20].try_into().unwrap()), 1);
        assert_eq!(u64::from_le_bytes(p[24..32].try_into().unwrap()), STATE_S);
        assert_eq!(&p[32..42], b"swapper/0\0");
        let (_, _, id, _, p) = &ev[200];
        assert_eq!((*id, i32::from_le_bytes(p[52..56].try_into().unwrap())), (ID_SWITCH, 139));
        let (_, _, id, _, p) = &ev[201];
        assert_eq!((*id, i32::from_le_bytes(p[16..20].try_into().unwrap()), i32::from_le_bytes(p[24..28].try_into().unwrap())), (ID_WAKING, 1, 1));
        // The saved cmdlines name both tasks.
        let text = String::from_utf8_lossy(&b);
        assert!(text.contains("1 a_long_task_name\n2 b\n"), "cmdlines");
    }
}
