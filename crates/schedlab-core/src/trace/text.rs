//! Text traces: the tracefs `trace` file layout (as `trace-cmd report -t` prints it,
//! with nanosecond timestamps) and `perf script --ns` output of the sched tracepoints.
//!
//! Mirrors: kernel/trace/trace_output.c (`TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: ARGS`),
//! the TP_printk formats of include/trace/events/sched.h and power.h, and
//! tools/perf/builtin-script.c (`COMM TID [CPU] TIMESTAMP: sched:EVENT: ARGS`).
//! Model: each line's task is the one running on that CPU (the tracepoint's context);
//! schedlab's mechanism events print as `schedlab_*` tracepoints in the same layout, so
//! tools that do not know them skip them.

use std::io::{self, Write};

use super::{PrevState, TaskInfo, TraceEvent, TraceMeta, TraceRecord, TraceSink};
use crate::time::Ns;

/// Which text layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// tracefs / trace-cmd report.
    Ftrace,
    /// perf script.
    PerfScript,
}

/// A streaming text trace writer.
pub struct TextTrace<W: Write> {
    out: W,
    style: Style,
    /// Running pid per CPU (the context of each line).
    current: Vec<usize>,
    /// comm and prio by pid.
    names: super::TaskNames,
    groups: Vec<String>,
}

impl<W: Write + Send> TextTrace<W> {
    /// A writer of `style` text into `out`.
    pub fn new(out: W, style: Style) -> Self {
        TextTrace { out, style, current: Vec::new(), names: super::TaskNames::new(), groups: Vec::new() }
    }

    /// The writer (to take an in-memory buffer back).
    pub fn inner(&mut self) -> &mut W {
        &mut self.out
    }

    fn comm(&self, pid: usize, cpu: usize) -> String {
        self.names.comm(pid, cpu)
    }

    fn prio(&self, pid: usize) -> i32 {
        self.names.prio(pid)
    }

    /// The tracepoint's name and its printed arguments.
    fn event_text(&self, r: &TraceRecord) -> (&'static str, String) {
        let cpu = r.cpu;
        match r.event {
            TraceEvent::Switch { prev, prev_state, next } => {
                let state = match prev_state {
                    PrevState::Runnable if prev == 0 => "R",
                    PrevState::Runnable => "R+",
                    PrevState::Sleeping => "S",
                    PrevState::Dead => "X",
                };
                let text = format!(
                    "prev_comm={} prev_pid={prev} prev_prio={} prev_state={state} ==> next_comm={} next_pid={next} next_prio={}",
                    self.comm(prev, cpu),
                    self.prio(prev),
                    self.comm(next, cpu),
                    self.prio(next)
                );
                ("sched_switch", text)
            }
            TraceEvent::Waking { pid, target_cpu, .. } => ("sched_waking", self.wakeup_args(pid, target_cpu)),
            TraceEvent::Wakeup { pid, target_cpu } => ("sched_wakeup", self.wakeup_args(pid, target_cpu)),
            TraceEvent::WakeupNew { pid, target_cpu } => ("sched_wakeup_new", self.wakeup_args(pid, target_cpu)),
            TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => (
                "sched_migrate_task",
                format!("comm={} pid={pid} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}", self.comm(pid, cpu), self.prio(pid)),
            ),
            TraceEvent::Fork { parent, child } => {
                ("sched_process_fork", format!("comm={} pid={parent} child_comm={} child_pid={child}", self.comm(parent, cpu), self.comm(child, cpu)))
            }
            TraceEvent::Exit { pid } => ("sched_process_exit", format!("comm={} pid={pid} prio={}", self.comm(pid, cpu), self.prio(pid))),
            TraceEvent::CpuIdle { state } => ("cpu_idle", format!("state={} cpu_id={cpu}", state.unwrap_or(u32::MAX))),
            TraceEvent::CpuFrequency { khz } => ("cpu_frequency", format!("state={khz} cpu_id={cpu}")),
            TraceEvent::TimerExpire { timer, owner_cpu } => {
                ("timer_expire_entry", format!("timer={timer} function=schedlab_timer owner_cpu={owner_cpu}"))
            }
            TraceEvent::CfsThrottle { group, throttled } => (
                if throttled { "schedlab_cfs_throttle" } else { "schedlab_cfs_unthrottle" },
                format!("tg={} cpu={cpu}", self.groups.get(group).map_or("?", |g| g.as_str())),
            ),
            TraceEvent::MmCid { pid, cid } => {
                ("schedlab_mm_cid", format!("comm={} pid={pid} cid={}", self.comm(pid, cpu), cid.map_or(-1, |c| c as i64)))
            }
            TraceEvent::TlbFlush { pages, ipis, waits } => ("schedlab_tlb_flush", format!("pages={pages} ipis={ipis} waits={waits}")),
            TraceEvent::SharedRunqPull { pid, from_cpu } => {
                ("schedlab_shared_runq_pull", format!("comm={} pid={pid} from_cpu={from_cpu}", self.comm(pid, cpu)))
            }
        }
    }

    fn wakeup_args(&self, pid: usize, target_cpu: usize) -> String {
        format!("comm={} pid={pid} prio={} target_cpu={target_cpu:03}", self.comm(pid, target_cpu), self.prio(pid))
    }
}

/// `secs.nanoseconds`, as `trace-cmd report -t` and `perf script --ns` print time.
pub fn format_ts(ts: Ns) -> String {
    format!("{:>5}.{:09}", ts / 1_000_000_000, ts % 1_000_000_000)
}

impl<W: Write + Send> TraceSink for TextTrace<W> {
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()> {
        self.current = vec![0; meta.nr_cpus];
        self.groups = meta.groups.clone();
        if self.style == Style::Ftrace {
            writeln!(self.out, "# tracer: nop\n#\n# schedlab trace: #P:{}, timestamps in ns (as trace-cmd report -t)\n#", meta.nr_cpus)?;
            writeln!(self.out, "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION")?;
            writeln!(self.out, "#              | |         |   |||||     |         |")?;
        }
        Ok(())
    }

    fn task(&mut self, _ts: Ns, info: &TaskInfo) -> io::Result<()> {
        self.names.set(info);
        Ok(())
    }

    fn record(&mut self, r: &TraceRecord) -> io::Result<()> {
        let ctx = self.current.get(r.cpu).copied().unwrap_or(0);
        let (name, args) = self.event_text(r);
        let ts = format_ts(r.ts);
        match self.style {
            Style::Ftrace => {
                let comm = if ctx == 0 { "<idle>".to_string() } else { self.comm(ctx, r.cpu) };
                let flags = match r.event {
                    TraceEvent::Waking { from_irq: true, .. } | TraceEvent::TimerExpire { .. } => "d.h3.",
                    TraceEvent::Waking { .. } | TraceEvent::Wakeup { .. } => "d..3.",
                    _ => "d..2.",
                };
                writeln!(self.out, "{comm:>16}-{ctx:<7} [{:03}] {flags} {ts}: {name}: {args}", r.cpu)?;
            }
            Style::PerfScript => {
                let comm = self.comm(ctx, r.cpu);
                let comm = if ctx == 0 { "swapper" } else { comm.as_str() };
                let system = match r.event {
                    TraceEvent::CpuIdle { .. } | TraceEvent::CpuFrequency { .. } => "power",
                    TraceEvent::TimerExpire { .. } => "timer",
                    TraceEvent::CfsThrottle { .. } | TraceEvent::MmCid { .. } | TraceEvent::TlbFlush { .. } | TraceEvent::SharedRunqPull { .. } => {
                        "schedlab"
                    }
                    _ => "sched",
                };
                writeln!(self.out, "{comm:>16} {ctx:>7} [{:03}] {ts}: {system}:{name}: {args}", r.cpu)?;
            }
        }
        if let TraceEvent::Switch { next, .. } = r.event {
            if let Some(c) = self.current.get_mut(r.cpu) {
                *c = next;
            }
        }
        Ok(())
    }

    fn finish(&mut self, _end: Ns) -> io::Result<()> {
        self.out.flush()
    }
}
