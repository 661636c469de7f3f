//! What an rt-app file asks for that schedlab keeps as data without modeling it yet, so
//! that an imported file exports back unchanged: sched_setattr() attributes (policies
//! other than the fair class, real-time priorities, deadline parameters, uclamp), and
//! rt-app's `mem` / `iorun` events, which run as CPU work of an estimated length.
//!
//! Mirrors: include/uapi/linux/sched/types.h `struct sched_attr` (sched_policy,
//! sched_priority, sched_runtime, sched_deadline, sched_period, sched_util_min,
//! sched_util_max) as rt-app's JSON names them (scheduler-tools/rt-app doc/tutorial.txt:
//! `policy`, `priority`, `dl-runtime`, `dl-period`, `dl-deadline`, `util_min`, `util_max`).
//! Model: the engine reads the policy, the RT priority and the deadline parameters
//! (`class_attr()`, issue 35) and util_min/util_max (uclamp, for EAS and schedutil).

use serde::{Deserialize, Serialize};

use crate::time::Duration;

/// sched_setattr() attributes of a task or an rt-app phase, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedAttrSpec {
    /// Policy name: SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE or
    /// SCHED_EXT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// rt-app's `priority`: nice for SCHED_OTHER/BATCH, sched_priority for FIFO/RR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// sched_runtime (rt-app `dl-runtime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Duration>,
    /// sched_period (rt-app `dl-period`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Duration>,
    /// sched_deadline (rt-app `dl-deadline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Duration>,
    /// sched_util_min (uclamp), 0..1024: read by EAS and schedutil.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_min: Option<u32>,
    /// sched_util_max (uclamp), 0..1024.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub util_max: Option<u32>,
    /// SCHED_FLAG_RECLAIM (GRUB) for a SCHED_DEADLINE task; rt-app has no key for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reclaim: bool,
    /// SCHED_FLAG_RESET_ON_FORK: the task's children start SCHED_NORMAL (an RT or
    /// deadline parent's) and at nice >= 0; rt-app has no key for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset_on_fork: bool,
    /// A SCHED_DEADLINE task refused by admission control (EBUSY) stays SCHED_OTHER, as
    /// a program that ignores sched_setattr()'s error would, and the summary counts it
    /// (`dl_refused`); without it the run is refused with the error (rt-app exits).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ebusy_stays_fair: bool,
}

/// A task's class as the engine reads it from its sched_setattr() attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassAttr {
    /// Index of the policy in [`POLICY_NAMES`].
    pub policy: usize,
    /// sched_priority (1..99) of SCHED_FIFO / SCHED_RR, else 0.
    pub rt_priority: u32,
    /// SCHED_DEADLINE's checked parameters.
    pub dl: Option<crate::rt::deadline::DlParams>,
    /// SCHED_FLAG_RECLAIM.
    pub reclaim: bool,
}

/// The policies in include/uapi/linux/sched.h order (SCHED_NORMAL = 0 ... SCHED_DEADLINE = 6,
/// SCHED_ISO (4) reserved and left out).
pub const POLICY_NAMES: [&str; 7] = ["SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_IDLE", "SCHED_DEADLINE", "SCHED_EXT"];

impl SchedAttrSpec {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == SchedAttrSpec::default()
    }

    /// Whether it asks for something schedlab does not model: deadline parameters outside
    /// SCHED_DEADLINE, but for the runtime of a SCHED_OTHER / SCHED_BATCH thread (rt-app
    /// passes it as sched_runtime, the custom slice of 6.12+: [`Self::fair_slice_ns`]).
    pub fn unmodeled(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let dl = self.policy.as_deref() == Some("SCHED_DEADLINE");
        let runtime = self.runtime.is_some() && self.fair_slice_ns().is_none();
        if !dl && (runtime || self.period.is_some() || self.deadline.is_some()) {
            out.push("dl-runtime/period/deadline (outside SCHED_DEADLINE)");
        }
        out
    }

    /// The custom slice a SCHED_OTHER or SCHED_BATCH thread's sched_runtime asks for, as
    /// `__setparam_fair()` clamps it (rt-app's `__set_thread_sched_other_attrs()` passes
    /// `dl-runtime`, or a thread's legacy `runtime`, as sched_attr.sched_runtime for these
    /// two policies only; kernels before 6.12 ignore it, which the caller decides).
    pub fn fair_slice_ns(&self) -> Option<u64> {
        let fair = matches!(self.policy.as_deref(), None | Some("SCHED_OTHER" | "SCHED_BATCH"));
        let r = self.runtime.filter(|r| fair && r.0 > 0)?;
        Some(r.0.clamp(SLICE_US_MIN * 1_000, SLICE_US_MAX * 1_000))
    }
}

impl SchedAttrSpec {
    /// The class the attributes ask for, checked as sched_setattr() would
    /// (`__checkparam_dl()`, `valid_policy()`, sched_priority 1..99 for FIFO/RR): Err is
    /// (the field under `sched_attr`, what was expected); sched_setattr() returns EINVAL.
    pub fn class_attr(&self) -> Result<ClassAttr, (&'static str, String)> {
        let name = self.policy.as_deref().unwrap_or("SCHED_OTHER");
        let policy = POLICY_NAMES
            .iter()
            .position(|&p| p == name)
            .ok_or_else(|| ("policy", format!("unknown policy '{name}': expected one of {}", POLICY_NAMES.join(", "))))?;
        let mut out = ClassAttr { policy, rt_priority: 0, dl: None, reclaim: self.reclaim };
        match name {
            "SCHED_FIFO" | "SCHED_RR" => {
                // rt-app's DEFAULT_THREAD_PRIORITY (src/rt-app_parse_config.c) where none is given.
                let p = self.priority.unwrap_or(10);
                if !(1..=99).contains(&p) {
                    return Err(("priority", format!("{p} for {name}: expected 1..99 (EINVAL as sched_setattr())")));
                }
                out.rt_priority = p as u32;
            }
            "SCHED_DEADLINE" => {
                // rt-app's defaults (rt-app_parse_config.c): period = runtime, deadline = period.
                let Some(r) = self.runtime else {
                    return Err(("runtime", "SCHED_DEADLINE needs a runtime".into()));
                };
                let period = self.period.unwrap_or(r);
                let d = self.deadline.unwrap_or(period);
                let params = crate::rt::deadline::DlParams { runtime: r.0, deadline: d.0, period: period.0 };
                out.dl = Some(params.check().map_err(|e| ("runtime", format!("{e} (EINVAL as sched_setattr())")))?);
            }
            "SCHED_IDLE" => {
                // No priority and no nice: its weight is WEIGHT_IDLEPRIO.
                if let Some(p) = self.priority {
                    return Err(("priority", format!("{p} for SCHED_IDLE: expected none (a SCHED_IDLE task has no priority or nice; sched_setattr() refuses a sched_priority with EINVAL)")));
                }
            }
            _ => {}
        }
        if self.reclaim && out.dl.is_none() {
            return Err(("reclaim", "SCHED_FLAG_RECLAIM is for SCHED_DEADLINE only".into()));
        }
        Ok(out)
    }
}

/// The bounds `__setparam_fair()` clamps sched_runtime to (NSEC_PER_MSEC / 10 and
/// NSEC_PER_MSEC * 100, declared in kernel/sched/fair.c, 6.12+), in us.
pub const SLICE_US_MIN: u64 = 100;
/// See [`SLICE_US_MIN`].
pub const SLICE_US_MAX: u64 = 100_000;

/// A task's `slice_us`: custom slices exist from 6.12 (857b158dc5e8, read at 6.18.35's
/// `__setparam_fair()`), within the clamp the kernel applies; a scenario asking outside it
/// is refused rather than silently clamped.
pub fn check_slice_us(us: u64, profile: &str) -> Result<(), String> {
    if let Ok(v) = crate::kernel::KernelVersion::parse(profile) {
        if v < crate::kernel::KernelVersion::new(6, 12) {
            return Err(format!("a custom slice needs kernel 6.12 or later (sched_attr.sched_runtime on a fair task); the profile is {profile}"));
        }
    }
    if !(SLICE_US_MIN..=SLICE_US_MAX).contains(&us) {
        return Err(format!("{us} us: expected {SLICE_US_MIN}..{SLICE_US_MAX} (0.1 to 100 ms, the range __setparam_fair() clamps to)"));
    }
    Ok(())
}

/// `{ mem = { bytes = 4096 } }` (rt-app `mem`: memset() of the thread's buffer) or
/// `{ iorun = { bytes = 8192, buffer = 4194304 } }` (rt-app `iorun`: write()s of up to
/// `buffer` bytes to the io_device, /dev/null by default).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemSpec {
    /// Bytes written.
    pub bytes: u64,
    /// rt-app's global mem_buffer_size: the largest single memset() or write().
    #[serde(default = "default_buffer")]
    pub buffer: u64,
}

/// rt-app's default mem_buffer_size (doc/tutorial.txt, "default global object").
pub const DEFAULT_MEM_BUFFER: u64 = 4 * 1024 * 1024;

fn default_buffer() -> u64 {
    DEFAULT_MEM_BUFFER
}

/// memset() speed of `mem` events: 10 bytes/ns (10 GB/s) of one core writing a buffer
/// that fits in its caches. An estimate, not a measurement of any machine.
pub const MEM_BYTES_PER_NS: u64 = 10;
/// One write() of `iorun` to rt-app's default io_device, /dev/null: a system call that
/// copies nothing. An estimate (about one syscall round trip), not a measurement.
pub const IO_WRITE_NS: u64 = 500;

impl MemSpec {
    /// CPU work of a `mem` event (ns at capacity 1024).
    pub fn mem_work_ns(&self) -> u64 {
        self.bytes.div_ceil(MEM_BYTES_PER_NS)
    }

    /// CPU work of an `iorun` event: one write() per `buffer` bytes.
    pub fn iorun_work_ns(&self) -> u64 {
        self.bytes.div_ceil(self.buffer.max(1)).saturating_mul(IO_WRITE_NS)
    }
}
