//! Perfetto protobuf traces, encoded by hand (the wire format is a few varints and
//! length-prefixed fields), streamed to disk in per-CPU ftrace event bundles.
//!
//! Mirrors: google/perfetto protos/perfetto/trace/ (at ec5d16b14b, 2026-08-22):
//! trace.proto `Trace { repeated TracePacket packet = 1 }`; trace_packet.proto
//! (`ftrace_events = 1`, `process_tree = 2`, `timestamp = 8`,
//! `trusted_packet_sequence_id = 10`); ftrace/ftrace_event_bundle.proto (`cpu = 1`,
//! `event = 2`); ftrace/ftrace_event.proto (`timestamp = 1`, `pid = 2`, `print = 3`,
//! `sched_switch = 4`, `cpu_frequency = 11`, `cpu_idle = 13`, `sched_wakeup = 17`,
//! `sched_waking = 20`, `sched_wakeup_new = 114`, `sched_process_exit = 238`,
//! `sched_process_fork = 239`, `sched_migrate_task = 491`); the field numbers of
//! ftrace/sched.proto, power.proto and ftrace.proto (PrintFtraceEvent); and
//! ps/process_tree.proto.
//! Model: mechanism events without a kernel tracepoint are atrace `print` events
//! (`C|tgid|name|value` counters, `I|0|name` instants), which Perfetto turns into
//! counter tracks and instants (src/trace_processor/importers/systrace/systrace_parser.h).

use std::io::{self, Write};

use super::{printable_comm, PrevState, TaskInfo, TraceEvent, TraceMeta, TraceRecord, TraceSink};
use crate::time::Ns;

/// A bundle is written once its events reach this size.
const BUNDLE_BYTES: usize = 64 * 1024;
/// trusted_packet_sequence_id of every packet (one writer).
const SEQUENCE_ID: u64 = 1;

/// Wire-format helpers.
pub mod wire {
    /// Appends a base-128 varint.
    pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        buf.push(v as u8);
    }
    /// Appends a varint field (wire type 0); int32/int64 negatives sign-extend.
    pub fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
        varint(buf, (field as u64) << 3);
        varint(buf, v);
    }
    /// Appends an int32/int64 field.
    pub fn int(buf: &mut Vec<u8>, field: u32, v: i64) {
        uint(buf, field, v as u64);
    }
    /// Appends a length-delimited field (wire type 2).
    pub fn bytes(buf: &mut Vec<u8>, field: u32, b: &[u8]) {
        varint(buf, ((field as u64) << 3) | 2);
        varint(buf, b.len() as u64);
        buf.extend_from_slice(b);
    }
}

/// A streaming Perfetto protobuf writer.
pub struct PerfettoProto<W: Write> {
    out: W,
    /// Encoded FtraceEvents waiting per CPU.
    pending: Vec<Vec<u8>>,
    current: Vec<usize>,
    names: Vec<(String, i32, usize)>,
    groups: Vec<String>,
    throttled: Vec<u32>,
    scratch: Vec<u8>,
}

impl<W: Write + Send> PerfettoProto<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Self {
        PerfettoProto {
            out,
            pending: Vec::new(),
            current: Vec::new(),
            names: vec![("swapper".into(), 120, 0)],
            groups: Vec::new(),
            throttled: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn comm(&self, pid: usize, cpu: usize) -> String {
        if pid == 0 {
            return format!("swapper/{cpu}");
        }
        self.names.get(pid).map_or_else(|| format!("task{pid}"), |n| n.0.clone())
    }

    fn prio(&self, pid: usize) -> i64 {
        self.names.get(pid).map_or(120, |n| n.1 as i64)
    }

    fn tgid(&self, pid: usize) -> usize {
        self.names.get(pid).map_or(pid, |n| n.2)
    }

    fn packet(&mut self, body: &[u8]) -> io::Result<()> {
        let mut head = Vec::with_capacity(12);
        wire::varint(&mut head, (1 << 3) | 2);
        wire::varint(&mut head, body.len() as u64);
        self.out.write_all(&head)?;
        self.out.write_all(body)
    }

    fn flush_cpu(&mut self, cpu: usize) -> io::Result<()> {
        if self.pending[cpu].is_empty() {
            return Ok(());
        }
        let mut bundle = Vec::with_capacity(self.pending[cpu].len() + 8);
        wire::uint(&mut bundle, 1, cpu as u64);
        bundle.extend_from_slice(&self.pending[cpu]);
        self.pending[cpu].clear();
        let mut pkt = Vec::with_capacity(bundle.len() + 8);
        wire::bytes(&mut pkt, 1, &bundle);
        wire::uint(&mut pkt, 10, SEQUENCE_ID);
        self.packet(&pkt)
    }

    /// The `comm/pid/prio/...` body shared by the sched_wakeup family.
    fn wakeup_body(&self, pid: usize, target_cpu: usize) -> Vec<u8> {
        let mut b = Vec::new();
        wire::bytes(&mut b, 1, self.comm(pid, target_cpu).as_bytes());
        wire::int(&mut b, 2, pid as i64);
        wire::int(&mut b, 3, self.prio(pid));
        wire::int(&mut b, 4, 1);
        wire::int(&mut b, 5, target_cpu as i64);
        b
    }

    /// Encodes a record as (FtraceEvent field, body), or None to skip it.
    fn encode(&mut self, r: &TraceRecord) -> Option<(u32, Vec<u8>)> {
        let cpu = r.cpu;
        let mut b = Vec::new();
        let field = match r.event {
            TraceEvent::Switch { prev, prev_state, next } => {
                // include/linux/sched.h: TASK_RUNNING 0, TASK_INTERRUPTIBLE 1, EXIT_DEAD 0x10.
                let state = match prev_state {
                    PrevState::Runnable => 0,
                    PrevState::Sleeping => 1,
                    PrevState::Dead => 0x10,
                };
                wire::bytes(&mut b, 1, self.comm(prev, cpu).as_bytes());
                wire::int(&mut b, 2, prev as i64);
                wire::int(&mut b, 3, self.prio(prev));
                wire::int(&mut b, 4, state);
                wire::bytes(&mut b, 5, self.comm(next, cpu).as_bytes());
                wire::int(&mut b, 6, next as i64);
                wire::int(&mut b, 7, self.prio(next));
                4
            }
            TraceEvent::Waking { pid, target_cpu, .. } => {
                b = self.wakeup_body(pid, target_cpu);
                20
            }
            TraceEvent::Wakeup { pid, target_cpu } => {
                b = self.wakeup_body(pid, target_cpu);
                17
            }
            TraceEvent::WakeupNew { pid, target_cpu } => {
                b = self.wakeup_body(pid, target_cpu);
                114
            }
            TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => {
                wire::bytes(&mut b, 1, self.comm(pid, cpu).as_bytes());
                wire::int(&mut b, 2, pid as i64);
                wire::int(&mut b, 3, self.prio(pid));
                wire::int(&mut b, 4, orig_cpu as i64);
                wire::int(&mut b, 5, dest_cpu as i64);
                491
            }
            TraceEvent::Fork { parent, child } => {
                wire::bytes(&mut b, 1, self.comm(parent, cpu).as_bytes());
                wire::int(&mut b, 2, parent as i64);
                wire::bytes(&mut b, 3, self.comm(child, cpu).as_bytes());
                wire::int(&mut b, 4, child as i64);
                239
            }
            TraceEvent::Exit { pid } => {
                wire::bytes(&mut b, 1, self.comm(pid, cpu).as_bytes());
                wire::int(&mut b, 2, pid as i64);
                wire::int(&mut b, 3, self.tgid(pid) as i64);
                wire::int(&mut b, 4, self.prio(pid));
                238
            }
            TraceEvent::CpuIdle { state } => {
                wire::uint(&mut b, 1, state.unwrap_or(u32::MAX) as u64);
                wire::uint(&mut b, 2, cpu as u64);
                13
            }
            TraceEvent::CpuFrequency { khz } => {
                wire::uint(&mut b, 1, khz as u64);
                wire::uint(&mut b, 2, cpu as u64);
                11
            }
            _ => {
                let text = self.atrace(r)?;
                wire::bytes(&mut b, 2, text.as_bytes());
                3
            }
        };
        Some((field, b))
    }

    /// An atrace marker for a mechanism event.
    fn atrace(&mut self, r: &TraceRecord) -> Option<String> {
        Some(match r.event {
            TraceEvent::CfsThrottle { group, throttled } => {
                let n = self.throttled.get_mut(group)?;
                *n = if throttled { *n + 1 } else { n.saturating_sub(1) };
                format!("C|0|throttled CPUs: {}|{}", self.groups[group], *n)
            }
            TraceEvent::MmCid { pid, cid } => {
                format!("C|{}|mm_cid {}|{}", self.tgid(pid), self.comm(pid, r.cpu), cid.map_or(-1, |c| c as i64))
            }
            TraceEvent::TlbFlush { pages, ipis, waits } => {
                format!("I|0|schedlab_tlb_flush cpu={} pages={pages} ipis={ipis} waits={waits}", r.cpu)
            }
            TraceEvent::TimerExpire { timer, owner_cpu } => {
                format!("I|0|timer_expire_entry cpu={} timer={timer} owner_cpu={owner_cpu}", r.cpu)
            }
            TraceEvent::SharedRunqPull { pid, from_cpu } => {
                format!("I|{}|schedlab_shared_runq_pull pid={pid} from_cpu={from_cpu}", self.tgid(pid))
            }
            _ => return None,
        })
    }
}

impl<W: Write + Send> TraceSink for PerfettoProto<W> {
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()> {
        self.pending = vec![Vec::new(); meta.nr_cpus];
        self.current = vec![0; meta.nr_cpus];
        self.groups = meta.groups.clone();
        self.throttled = vec![0; meta.groups.len()];
        Ok(())
    }

    fn task(&mut self, ts: Ns, info: &TaskInfo) -> io::Result<()> {
        let comm = printable_comm(&info.comm);
        if self.names.len() <= info.pid {
            self.names.resize(info.pid + 1, (String::new(), 120, 0));
        }
        self.names[info.pid] = (comm.clone(), info.prio, info.tgid);
        let mut tree = Vec::new();
        if info.tgid == info.pid {
            let mut p = Vec::new();
            wire::int(&mut p, 1, info.pid as i64);
            wire::int(&mut p, 2, info.ppid as i64);
            wire::bytes(&mut p, 3, comm.as_bytes());
            wire::bytes(&mut tree, 1, &p);
        }
        let mut t = Vec::new();
        wire::int(&mut t, 1, info.pid as i64);
        wire::bytes(&mut t, 2, comm.as_bytes());
        wire::int(&mut t, 3, info.tgid as i64);
        wire::bytes(&mut tree, 2, &t);
        let mut pkt = Vec::new();
        wire::uint(&mut pkt, 8, ts);
        wire::bytes(&mut pkt, 2, &tree);
        wire::uint(&mut pkt, 10, SEQUENCE_ID);
        self.packet(&pkt)
    }

    fn record(&mut self, r: &TraceRecord) -> io::Result<()> {
        let ctx = self.current.get(r.cpu).copied().unwrap_or(0);
        if let TraceEvent::Switch { next, .. } = r.event {
            self.current[r.cpu] = next;
        }
        let Some((field, body)) = self.encode(r) else { return Ok(()) };
        let mut ev = std::mem::take(&mut self.scratch);
        ev.clear();
        wire::uint(&mut ev, 1, r.ts);
        wire::uint(&mut ev, 2, ctx as u64);
        wire::bytes(&mut ev, field, &body);
        wire::bytes(&mut self.pending[r.cpu], 2, &ev);
        self.scratch = ev;
        if self.pending[r.cpu].len() >= BUNDLE_BYTES {
            self.flush_cpu(r.cpu)?;
        }
        Ok(())
    }

    fn finish(&mut self, _end: Ns) -> io::Result<()> {
        for cpu in 0..self.pending.len() {
            self.flush_cpu(cpu)?;
        }
        self.out.flush()
    }
}
