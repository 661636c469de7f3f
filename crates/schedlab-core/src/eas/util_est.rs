//! util_est: a task's utilization estimate that survives its sleeps, and the per-rq sum of
//! the estimates of the tasks enqueued there.
//!
//! Mirrors: kernel/sched/fair.c util_est_enqueue(), util_est_dequeue(), util_est_update(),
//! _task_util_est(), task_util_est(), cpu_util(); kernel/sched/pelt.h
//! cfs_se_util_change() (clears UTIL_AVG_UNCHANGED when util_avg moves).
//! Two forms, selected by `UtilEstForm`:
//! - `Split` (4.17 to 6.7, 7f65ea42eb00 "sched/fair: Add util_est on top of PELT"):
//!   `struct util_est { enqueued, ewma }`; the task's estimate is max(ewma, enqueued);
//!   UTIL_EST_FASTUP (5.5, b8c96361402a "Implement faster ramp-up EWMA on utilization
//!   increases") lets the ewma jump up to a larger sample instead of averaging towards
//!   it; later 5.x skip samples above the CPU's capacity (the task had no idle time, so
//!   its util is not its demand) and (5.13, "sched/pelt: Fix task util_est update
//!   filtering") write the sample back when it moved by the margin even if the ewma did
//!   not.
//! - `Simplified` (6.8+, 11137d384996 "sched/fair: Simplify util_est" and 7736ae55ba6d
//!   "Remove SCHED_FEAT(UTIL_EST_FASTUP, true)"): one value, the ewma; an increase resets
//!   it to the sample (fast-up made permanent), only decreases are averaged.
//!
//! Model: the sample is the task's util_avg at the dequeue that puts it to sleep, passed
//! in by the caller; `util_avg_changed` stands for the UTIL_AVG_UNCHANGED flag being
//! clear (PELT updated util_avg since the task was enqueued).

use super::SCHED_CAPACITY_SCALE;

/// UTIL_EST_WEIGHT_SHIFT (fair.c): the new sample weighs 1/4 in the ewma.
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;
/// UTIL_EST_MARGIN (fair.c, 5.13+; the same 1 % literal before): SCHED_CAPACITY_SCALE / 100.
pub const UTIL_EST_MARGIN: u64 = SCHED_CAPACITY_SCALE / 100;

/// Which kernel's util_est (see the module header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilEstForm {
    /// 4.17 to 6.7: `enqueued` and `ewma`.
    Split,
    /// 6.8+: the ewma alone, reset upwards.
    Simplified,
}

impl UtilEstForm {
    /// The form a kernel version has.
    pub fn of(v: crate::kernel::KernelVersion) -> UtilEstForm {
        if v >= crate::kernel::KernelVersion::new(6, 8) {
            UtilEstForm::Simplified
        } else {
            UtilEstForm::Split
        }
    }
}

/// A task's `struct util_est` (the flag kept apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UtilEst {
    /// The util_avg sampled at the last dequeue-to-sleep (`Split` only; 0 in `Simplified`).
    pub enqueued: u64,
    /// The exponentially weighted moving average of the samples.
    pub ewma: u64,
}

/// What util_est_update() did, for traces and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilEstUpdate {
    /// UTIL_EST off, or the dequeue was not to sleep.
    NotSleeping,
    /// util_avg has not changed since the enqueue (UTIL_AVG_UNCHANGED set).
    Unchanged,
    /// The ewma is within UTIL_EST_MARGIN of the sample (and, 5.13+, so is `enqueued`).
    WithinMargin,
    /// The sample exceeds the CPU's capacity: no idle time, not a demand.
    AboveCapacity,
    /// The ewma jumped to the sample (fast-up).
    FastUp,
    /// Only `enqueued` moved (5.13+: the sample moved by the margin, the ewma did not).
    EnqueuedOnly,
    /// The ewma moved 1/4 of the way to the sample.
    Ewma,
}

impl UtilEstUpdate {
    /// Whether the kernel wrote the estimate back with UTIL_AVG_UNCHANGED set (the
    /// `done:` label): the caller then treats util_avg as unchanged until PELT moves it.
    pub fn wrote_back(self, form: UtilEstForm) -> bool {
        match self {
            UtilEstUpdate::FastUp | UtilEstUpdate::EnqueuedOnly | UtilEstUpdate::Ewma => true,
            // 6.8 jumps to `done` inside the margin; 5.13-6.7 return without writing.
            UtilEstUpdate::WithinMargin => form == UtilEstForm::Simplified,
            _ => false,
        }
    }
}

impl UtilEst {
    /// _task_util_est(): what the task is expected to need when it next runs.
    pub fn task_util_est(&self, form: UtilEstForm) -> u64 {
        match form {
            UtilEstForm::Split => self.ewma.max(self.enqueued),
            UtilEstForm::Simplified => self.ewma,
        }
    }

    /// util_est_update(), at a dequeue: `task_sleep` (DEQUEUE_SLEEP), the task's util_avg
    /// now, whether PELT changed it since the enqueue, the CPU's original capacity
    /// (arch_scale_cpu_capacity()), UTIL_EST_FASTUP (ignored by `Simplified`, where it is
    /// permanent).
    pub fn update(
        &mut self,
        form: UtilEstForm,
        task_sleep: bool,
        util_avg: u64,
        util_avg_changed: bool,
        cpu_capacity: u64,
        fastup: bool,
    ) -> UtilEstUpdate {
        if !task_sleep {
            return UtilEstUpdate::NotSleeping;
        }
        if !util_avg_changed {
            return UtilEstUpdate::Unchanged;
        }
        match form {
            UtilEstForm::Split => self.update_split(util_avg, cpu_capacity, fastup),
            UtilEstForm::Simplified => self.update_simplified(util_avg, cpu_capacity),
        }
    }

    fn update_split(&mut self, sample: u64, cpu_capacity: u64, fastup: bool) -> UtilEstUpdate {
        let last_enqueued = self.enqueued;
        self.enqueued = sample;
        if fastup && self.ewma < sample {
            self.ewma = sample;
            return UtilEstUpdate::FastUp;
        }
        let ewma_diff = sample as i64 - self.ewma as i64;
        if within_margin(ewma_diff, UTIL_EST_MARGIN) {
            // The 5.13 rule: a sample that moved away from the last one is still
            // recorded in `enqueued` (written back with the flag), the ewma stays.
            return if within_margin(last_enqueued as i64 - sample as i64, UTIL_EST_MARGIN) {
                self.enqueued = last_enqueued;
                UtilEstUpdate::WithinMargin
            } else {
                UtilEstUpdate::EnqueuedOnly
            };
        }
        if sample > cpu_capacity {
            self.enqueued = last_enqueued;
            return UtilEstUpdate::AboveCapacity;
        }
        // ewma = (ewma x (w - 1) + sample) / w with w = 4, as ((ewma << 2) + diff) >> 2.
        let scaled = ((self.ewma << UTIL_EST_WEIGHT_SHIFT) as i64 + ewma_diff) as u64;
        self.ewma = scaled >> UTIL_EST_WEIGHT_SHIFT;
        UtilEstUpdate::Ewma
    }

    fn update_simplified(&mut self, sample: u64, cpu_capacity: u64) -> UtilEstUpdate {
        if self.ewma <= sample {
            self.ewma = sample;
            return UtilEstUpdate::FastUp;
        }
        let diff = self.ewma - sample;
        if diff < UTIL_EST_MARGIN {
            return UtilEstUpdate::WithinMargin;
        }
        if sample > cpu_capacity {
            return UtilEstUpdate::AboveCapacity;
        }
        self.ewma = ((self.ewma << UTIL_EST_WEIGHT_SHIFT) - diff) >> UTIL_EST_WEIGHT_SHIFT;
        UtilEstUpdate::Ewma
    }
}

/// within_margin() (fair.c): |value| < margin.
#[inline]
fn within_margin(value: i64, margin: u64) -> bool {
    value.unsigned_abs() < margin
}

/// task_util_est(): max(util_avg, the estimate).
#[inline]
pub fn task_util_est(util_avg: u64, ue: &UtilEst, form: UtilEstForm) -> u64 {
    util_avg.max(ue.task_util_est(form))
}

/// The per-rq sum of the estimates of the enqueued tasks (`cfs_rq->avg.util_est`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqUtilEst {
    /// Σ _task_util_est() over the tasks enqueued.
    pub enqueued: u64,
}

impl RqUtilEst {
    /// util_est_enqueue(): before the enqueue updates schedutil, the task's estimate joins.
    pub fn enqueue(&mut self, task_est: u64) {
        self.enqueued += task_est;
    }

    /// util_est_dequeue(): the task's estimate leaves (clamped at 0: lsub_positive()). Call
    /// before `UtilEst::update`, with the estimate the enqueue added.
    pub fn dequeue(&mut self, task_est: u64) {
        self.enqueued -= self.enqueued.min(task_est);
    }
}

/// Where task p is, for cpu_util(cpu, p, dst_cpu).
#[derive(Clone, Copy, Debug)]
pub struct TaskAt {
    /// task_cpu(p): the CPU whose sums hold p's util_avg.
    pub cpu: usize,
    /// util_avg of p.
    pub util_avg: u64,
    /// _task_util_est(p).
    pub util_est: u64,
    /// p is queued or running (its estimate is in its rq's sum).
    pub queued: bool,
}

/// cpu_util() as 6.0+ has it (fair.c, the 6.x signature cpu_util(cpu, p, dst_cpu, boost)
/// without `boost`): the CPU's cfs util_avg, with p's util moved to `dst_cpu` when given
/// (removed from its CPU, added to `dst_cpu`), raised to the rq's util_est sum (with p's
/// estimate likewise moved) when UTIL_EST is on, capped at the CPU's capacity.
pub fn cpu_util(cpu: usize, rq_util_avg: u64, rq_util_est: u64, capacity: u64, p: Option<TaskAt>, dst_cpu: Option<usize>, util_est_on: bool) -> u64 {
    let mut util = rq_util_avg;
    let mut est = rq_util_est;
    if let Some(t) = p {
        if t.cpu == cpu && dst_cpu != Some(cpu) {
            util -= util.min(t.util_avg);
        } else if t.cpu != cpu && dst_cpu == Some(cpu) {
            util += t.util_avg;
        }
        if dst_cpu == Some(cpu) {
            est += t.util_est;
        } else if t.queued && t.cpu == cpu {
            est -= est.min(t.util_est);
        }
    }
    if util_est_on {
        util = util.max(est);
    }
    util.min(capacity)
}
