//! Per-task stall tracking for the liveness property (runs with `check_invariants`).
//!
//! A task stalls while it is runnable but runs none of its own code: queued, held by
//! bandwidth throttling, or running only its kernel exit on the way to being held
//! (the 6.18 task-based throttle's task_work). The longest stall of each task, and the
//! most tasks runnable at once, let a test compare each stall against the bound its
//! scenario implies (`tests/common::liveness_bound`).

use super::Simulator;
use crate::state::liveness::Liveness;
use crate::state::task::TaskState;
impl Simulator {
    /// After every event of a checked run: opens and closes each task's stall.
    pub(super) fn track_liveness(&mut self) {
        let n = self.tasks.len();
        let now = self.now;
        let lv = self.liveness.get_or_insert_with(Liveness::default);
        if lv.since.len() < n {
            lv.since.resize(n, None);
            lv.max_stall_ns.resize(n, 0);
            lv.max_stall_from.resize(n, 0);
        }
        let mut runnable = 0;
        for (p, t) in self.tasks.iter().enumerate() {
            let live = matches!(t.state, TaskState::Runnable | TaskState::Throttled | TaskState::Running);
            runnable += live as usize;
            let stalled = matches!(t.state, TaskState::Runnable | TaskState::Throttled) || (t.state == TaskState::Running && t.throttle_work);
            if stalled {
                lv.since[p].get_or_insert(now);
            } else {
                lv.close(p, now);
            }
        }
        lv.peak_runnable = lv.peak_runnable.max(runnable);
    }

    /// At the end of the run: stalls still open count up to now.
    pub(super) fn take_liveness(&mut self) -> Option<Liveness> {
        let now = self.now;
        let mut lv = self.liveness.take()?;
        for p in 0..lv.since.len() {
            lv.close(p, now);
        }
        Some(lv)
    }
}
