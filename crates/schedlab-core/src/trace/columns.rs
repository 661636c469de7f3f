//! The compact trace's staging form: the switch, wakeup and idle records as fixed-width
//! little-endian rows, one file per table, which the Python side turns into Parquet
//! (`schedlab.trace_parquet`).
//!
//! Mirrors: the fields of sched_switch, sched_waking / sched_wakeup / sched_wakeup_new
//! and cpu_idle (include/trace/events/sched.h, power.h).
//! Model: a row is 24 bytes (idle: 16), written as it fires, so a run holds nothing but
//! the writers' buffers. Measured on examples/pipe_pingpong.toml (240,444 of these
//! events): 5.1 MB of rows against 29.1 MB of their ftrace text, and 0.97 MB once the
//! Python side has written them as Parquet. Other events (timers, migrations, mechanisms' own) are not in this
//! form: the text, Perfetto and trace.dat sinks carry them.
//!
//! Layout (all little-endian), in the directory the sink is given:
//! - `switch.bin`: ts u64, cpu u32, prev_pid u32, next_pid u32, prev_state u8 (0
//!   runnable, 1 sleeping, 2 dead), 3 bytes of padding;
//! - `wakeup.bin`: ts u64, cpu u32 (where it fired), pid u32, target_cpu u32, kind u8
//!   (0 sched_waking, 1 sched_wakeup, 2 sched_wakeup_new), from_irq u8, 2 bytes of padding;
//! - `idle.bin`: ts u64, cpu u32, state i32 (-1: leaving idle);
//! - `tasks.jsonl`: a JSON object per task (pid, tgid, ppid, comm, prio, created_ns);
//! - `meta.json`: nr_cpus, groups, end_ns, and the row sizes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{PrevState, TaskInfo, TraceEvent, TraceMeta, TraceRecord, TraceSink};
use crate::time::Ns;

/// Bytes per row of `switch.bin` and `wakeup.bin`.
pub const WIDE_ROW: usize = 24;
/// Bytes per row of `idle.bin`.
pub const IDLE_ROW: usize = 16;

/// Writes the staging tables into a directory.
pub struct ColumnFiles {
    dir: PathBuf,
    switch: BufWriter<File>,
    wakeup: BufWriter<File>,
    idle: BufWriter<File>,
    tasks: BufWriter<File>,
    meta: TraceMeta,
}

impl ColumnFiles {
    /// Creates `dir` (and its tables).
    pub fn create(dir: &Path) -> io::Result<ColumnFiles> {
        std::fs::create_dir_all(dir)?;
        let open = |name: &str| File::create(dir.join(name)).map(|f| BufWriter::with_capacity(1 << 20, f));
        Ok(ColumnFiles {
            dir: dir.to_path_buf(),
            switch: open("switch.bin")?,
            wakeup: open("wakeup.bin")?,
            idle: open("idle.bin")?,
            tasks: open("tasks.jsonl")?,
            meta: TraceMeta::default(),
        })
    }
}

/// One 24-byte row: a timestamp, four u32 fields packed into the next 16 bytes.
fn wide(out: &mut impl Write, ts: Ns, a: u32, b: u32, c: u32, tail: [u8; 4]) -> io::Result<()> {
    let mut row = [0u8; WIDE_ROW];
    row[..8].copy_from_slice(&ts.to_le_bytes());
    row[8..12].copy_from_slice(&a.to_le_bytes());
    row[12..16].copy_from_slice(&b.to_le_bytes());
    row[16..20].copy_from_slice(&c.to_le_bytes());
    row[20..].copy_from_slice(&tail);
    out.write_all(&row)
}

impl TraceSink for ColumnFiles {
    fn begin(&mut self, meta: &TraceMeta) -> io::Result<()> {
        self.meta = meta.clone();
        Ok(())
    }

    fn task(&mut self, ts: Ns, info: &TaskInfo) -> io::Result<()> {
        let row = serde_json::json!({
            "pid": info.pid, "tgid": info.tgid, "ppid": info.ppid, "comm": info.comm, "prio": info.prio, "created_ns": ts,
        });
        writeln!(self.tasks, "{row}")
    }

    fn record(&mut self, r: &TraceRecord) -> io::Result<()> {
        let cpu = r.cpu as u32;
        match r.event {
            TraceEvent::Switch { prev, prev_state, next } => {
                let state = match prev_state {
                    PrevState::Runnable => 0,
                    PrevState::Sleeping => 1,
                    PrevState::Dead => 2,
                };
                wide(&mut self.switch, r.ts, cpu, prev as u32, next as u32, [state, 0, 0, 0])
            }
            TraceEvent::Waking { pid, target_cpu, from_irq } => {
                wide(&mut self.wakeup, r.ts, cpu, pid as u32, target_cpu as u32, [0, from_irq as u8, 0, 0])
            }
            TraceEvent::Wakeup { pid, target_cpu } => wide(&mut self.wakeup, r.ts, cpu, pid as u32, target_cpu as u32, [1, 0, 0, 0]),
            TraceEvent::WakeupNew { pid, target_cpu } => wide(&mut self.wakeup, r.ts, cpu, pid as u32, target_cpu as u32, [2, 0, 0, 0]),
            TraceEvent::CpuIdle { state } => {
                let mut row = [0u8; IDLE_ROW];
                row[..8].copy_from_slice(&r.ts.to_le_bytes());
                row[8..12].copy_from_slice(&cpu.to_le_bytes());
                row[12..].copy_from_slice(&state.map_or(-1, |s| s as i32).to_le_bytes());
                self.idle.write_all(&row)
            }
            _ => Ok(()),
        }
    }

    fn finish(&mut self, end: Ns) -> io::Result<()> {
        for w in [&mut self.switch, &mut self.wakeup, &mut self.idle, &mut self.tasks] {
            w.flush()?;
        }
        let meta = serde_json::json!({
            "nr_cpus": self.meta.nr_cpus, "groups": self.meta.groups, "end_ns": end,
            "row_bytes": {"switch": WIDE_ROW, "wakeup": WIDE_ROW, "idle": IDLE_ROW},
        });
        std::fs::write(self.dir.join("meta.json"), format!("{meta}\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_fixed_width_little_endian() {
        let dir = std::env::temp_dir().join(format!("schedlab-columns-{}", std::process::id()));
        let mut s = ColumnFiles::create(&dir).unwrap();
        s.begin(&TraceMeta { nr_cpus: 2, groups: vec!["root".into()] }).unwrap();
        let rec = |ts, cpu, event| TraceRecord { ts, cpu, event };
        s.record(&rec(5, 1, TraceEvent::Switch { prev: 3, prev_state: PrevState::Sleeping, next: 0 })).unwrap();
        s.record(&rec(7, 0, TraceEvent::Waking { pid: 3, target_cpu: 1, from_irq: true })).unwrap();
        s.record(&rec(9, 1, TraceEvent::CpuIdle { state: None })).unwrap();
        s.record(&rec(9, 1, TraceEvent::Exit { pid: 3 })).unwrap(); // not in this form
        s.finish(10).unwrap();
        let sw = std::fs::read(dir.join("switch.bin")).unwrap();
        assert_eq!(sw.len(), WIDE_ROW);
        assert_eq!((u64::from_le_bytes(sw[..8].try_into().unwrap()), u32::from_le_bytes(sw[12..16].try_into().unwrap()), sw[20]), (5, 3, 1));
        let wk = std::fs::read(dir.join("wakeup.bin")).unwrap();
        assert_eq!((wk.len(), wk[20], wk[21]), (WIDE_ROW, 0, 1));
        let idle = std::fs::read(dir.join("idle.bin")).unwrap();
        assert_eq!((idle.len(), i32::from_le_bytes(idle[12..16].try_into().unwrap())), (IDLE_ROW, -1));
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!((meta["nr_cpus"].as_u64(), meta["end_ns"].as_u64()), (Some(2), Some(10)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
