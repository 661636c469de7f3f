//! scx_simple: the kernel's example of a weighted vtime scheduler on one shared DSQ.
//!
//! Mirrors: tools/sched_ext/scx_simple.bpf.c (re-expressed): select_cpu by the built-in
//! idle selection, dispatching directly to an idle CPU's local DSQ; enqueue into one
//! shared user DSQ ordered by each task's vtime (or FIFO with `fifo_sched`), a task's
//! vtime never more than one slice behind the global `vtime_now`; dispatch moves the
//! shared DSQ's first task to the local DSQ; running advances `vtime_now`; stopping
//! charges the slice used, scaled by 100 / weight; enable starts a task at `vtime_now`.

use super::{DsqId, EnqFlags, ExtOps, Kfuncs, SCX_SLICE_DFL, SCX_WEIGHT_DFL};
use crate::state::task::TaskId;

/// The shared DSQ's id (scx_simple's SHARED_DSQ).
const SHARED_DSQ: u64 = 0;

/// scx_simple's state.
pub struct Simple {
    fifo: bool,
    vtime_now: u64,
}

impl Simple {
    /// The scheduler, in FIFO mode if `fifo` (scx_simple -f).
    pub fn new(fifo: bool) -> Simple {
        Simple { fifo, vtime_now: 0 }
    }
}

/// time_before(a, b) on u64 clocks that may wrap.
fn time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

impl ExtOps for Simple {
    fn name(&self) -> &'static str {
        if self.fifo {
            "simple_fifo"
        } else {
            "simple"
        }
    }

    fn init(&mut self, k: &mut dyn Kfuncs) -> Result<(), String> {
        k.create_dsq(SHARED_DSQ)
    }

    fn enqueue(&mut self, k: &mut dyn Kfuncs, p: TaskId, flags: EnqFlags) {
        if self.fifo {
            k.dsq_insert(p, DsqId::User(SHARED_DSQ), SCX_SLICE_DFL, flags);
            return;
        }
        // An idle task's budget is at most one slice.
        let floor = self.vtime_now.wrapping_sub(SCX_SLICE_DFL);
        let vtime = if time_before(k.task_vtime(p), floor) { floor } else { k.task_vtime(p) };
        k.dsq_insert_vtime(p, DsqId::User(SHARED_DSQ), SCX_SLICE_DFL, vtime, flags);
    }

    fn dispatch(&mut self, k: &mut dyn Kfuncs, _cpu: usize, _prev: Option<TaskId>) {
        k.dsq_move_to_local(SHARED_DSQ);
    }

    fn running(&mut self, k: &mut dyn Kfuncs, p: TaskId) {
        if self.fifo {
            return;
        }
        // The global vtime only moves forward, as tasks start running.
        let v = k.task_vtime(p);
        if time_before(self.vtime_now, v) {
            self.vtime_now = v;
        }
    }

    fn stopping(&mut self, k: &mut dyn Kfuncs, p: TaskId, _runnable: bool) {
        if self.fifo {
            return;
        }
        // The slice used, scaled by the inverse of the weight.
        let used = SCX_SLICE_DFL.saturating_sub(k.task_slice(p));
        let w = k.task_weight(p).max(1);
        let v = k.task_vtime(p).wrapping_add(used * SCX_WEIGHT_DFL / w);
        k.set_task_vtime(p, v);
    }

    fn enable(&mut self, k: &mut dyn Kfuncs, p: TaskId) {
        k.set_task_vtime(p, self.vtime_now);
    }
}
