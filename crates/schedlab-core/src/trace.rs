//! Optional record of scheduler tracepoints, written as Perfetto/Chrome JSON or ftrace text.
//!
//! Mirrors: include/trace/events/sched.h (sched_switch, sched_waking,
//! sched_migrate_task) and include/trace/events/power.h (cpu_idle).
//! Model: records are appended in event order (time is non-decreasing); writers turn
//! them into one track per CPU (Perfetto opens the JSON at ui.perfetto.dev) or into
//! the kernel's own `trace` file lines.

use std::io::{self, Write};

use crate::time::Ns;

/// One tracepoint hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// `sched_switch`: `prev` (0 = idle) leaves, `next` (0 = idle) runs.
    Switch {
        /// Outgoing pid (0 = idle).
        prev: usize,
        /// Whether the outgoing task stays runnable (state R) rather than sleeping (S).
        prev_runnable: bool,
        /// Incoming pid (0 = idle).
        next: usize,
    },
    /// `sched_waking`: `pid` is being woken towards `target_cpu`.
    Waking {
        /// Woken task.
        pid: usize,
        /// CPU chosen by select_task_rq.
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
    /// `cpu_idle`: entering idle state `state`, or leaving idle (`state` = None).
    CpuIdle {
        /// Idle state index, None on exit (the kernel prints 4294967295).
        state: Option<u32>,
    },
    /// `timer_expire_entry`: a wheel timer's callback runs here.
    TimerExpire {
        /// Timer id.
        timer: usize,
        /// CPU whose base held it (another CPU: pulled by a migrator).
        owner_cpu: usize,
    },
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

/// A recorded trace with the task names it refers to.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Records in time order.
    pub records: Vec<TraceRecord>,
    /// comm of each pid (index = pid; pid 0 is the idle task).
    pub comms: Vec<String>,
    /// CPUs of the machine.
    pub nr_cpus: usize,
}

impl Trace {
    fn comm(&self, pid: usize, cpu: usize) -> String {
        if pid == 0 {
            format!("swapper/{cpu}")
        } else {
            self.comms.get(pid).cloned().unwrap_or_else(|| format!("task{pid}"))
        }
    }

    /// Writes Chrome trace-event JSON: one thread track per CPU, a slice per task run.
    pub fn write_perfetto_json(&self, out: &mut impl Write) -> io::Result<()> {
        let us = |ns: Ns| ns as f64 / 1000.0;
        let mut first = true;
        let mut emit = |out: &mut dyn Write, v: serde_json::Value| -> io::Result<()> {
            if !first {
                out.write_all(b",\n")?;
            }
            first = false;
            serde_json::to_writer(&mut *out, &v).map_err(io::Error::other)
        };
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")?;
        emit(out, serde_json::json!({"ph":"M","pid":0,"name":"process_name","args":{"name":"CPUs"}}))?;
        for cpu in 0..self.nr_cpus {
            emit(out, serde_json::json!({"ph":"M","pid":0,"tid":cpu,"name":"thread_name","args":{"name":format!("CPU {cpu}")}}))?;
            emit(out, serde_json::json!({"ph":"M","pid":0,"tid":cpu,"name":"thread_sort_index","args":{"sort_index":cpu}}))?;
        }
        let mut running: Vec<(usize, Ns)> = vec![(0, 0); self.nr_cpus];
        let mut end = 0;
        for r in &self.records {
            end = r.ts;
            match r.event {
                TraceEvent::Switch { prev, next, .. } => {
                    let (pid, start) = running[r.cpu];
                    if pid != 0 && pid == prev {
                        emit(out, serde_json::json!({"ph":"X","pid":0,"tid":r.cpu,"ts":us(start),"dur":us(r.ts - start),"name":self.comm(pid, r.cpu),"args":{"pid":pid}}))?;
                    }
                    running[r.cpu] = (next, r.ts);
                }
                TraceEvent::Waking { pid, target_cpu } => emit(out, serde_json::json!({"ph":"i","s":"t","pid":0,"tid":r.cpu,"ts":us(r.ts),"name":"sched_waking","args":{"pid":pid,"comm":self.comm(pid, 0),"target_cpu":target_cpu}}))?,
                TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => emit(out, serde_json::json!({"ph":"i","s":"t","pid":0,"tid":r.cpu,"ts":us(r.ts),"name":"sched_migrate_task","args":{"pid":pid,"orig_cpu":orig_cpu,"dest_cpu":dest_cpu}}))?,
                TraceEvent::CpuIdle { .. } => {}
                TraceEvent::TimerExpire { timer, owner_cpu } => emit(out, serde_json::json!({"ph":"i","s":"t","pid":0,"tid":r.cpu,"ts":us(r.ts),"name":"timer_expire_entry","args":{"timer":timer,"owner_cpu":owner_cpu}}))?,
            }
        }
        for (cpu, &(pid, start)) in running.iter().enumerate() {
            if pid != 0 && end > start {
                emit(out, serde_json::json!({"ph":"X","pid":0,"tid":cpu,"ts":us(start),"dur":us(end - start),"name":self.comm(pid, cpu),"args":{"pid":pid}}))?;
            }
        }
        out.write_all(b"\n]}\n")
    }

    /// Writes the tracefs `trace` text format, as `cat /sys/kernel/tracing/trace` prints it.
    pub fn write_ftrace(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "# tracer: nop\n#\n# entries-in-buffer/entries-written: {0}/{0}   #P:{1}\n#", self.records.len(), self.nr_cpus)?;
        writeln!(out, "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION")?;
        writeln!(out, "#              | |         |   |||||     |         |")?;
        let mut current: Vec<usize> = vec![0; self.nr_cpus];
        for r in &self.records {
            let cur = current[r.cpu];
            let head = format!("{:>16}-{:<7} [{:03}] d..2. {:>6}.{:06}:", self.comm(cur, r.cpu), cur, r.cpu, r.ts / 1_000_000_000, (r.ts / 1000) % 1_000_000);
            match r.event {
                TraceEvent::Switch { prev, prev_runnable, next } => {
                    let state = if prev == 0 || prev_runnable { "R" } else { "S" };
                    writeln!(out, "{head} sched_switch: prev_comm={} prev_pid={prev} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={next} next_prio=120", self.comm(prev, r.cpu), self.comm(next, r.cpu))?;
                    current[r.cpu] = next;
                }
                TraceEvent::Waking { pid, target_cpu } => writeln!(out, "{head} sched_waking: comm={} pid={pid} prio=120 target_cpu={target_cpu:03}", self.comm(pid, 0))?,
                TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => writeln!(out, "{head} sched_migrate_task: comm={} pid={pid} prio=120 orig_cpu={orig_cpu} dest_cpu={dest_cpu}", self.comm(pid, 0))?,
                TraceEvent::CpuIdle { state } => writeln!(out, "{head} cpu_idle: state={} cpu_id={}", state.unwrap_or(u32::MAX), r.cpu)?,
                TraceEvent::TimerExpire { timer, owner_cpu } => writeln!(out, "{head} timer_expire_entry: timer={timer} owner_cpu={owner_cpu}")?,
            }
        }
        Ok(())
    }
}
