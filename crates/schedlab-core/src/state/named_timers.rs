//! Tasks' named timers and the timer slack a sleep gets.
//!
//! Mirrors: fs/select.c `select_estimate_accuracy()`; the timers a program names
//! (`sched::program` runs the programs).

use crate::state::task::TaskId;
use crate::time::Ns;
use crate::timers::TimerId;

/// The named `timer_list`s of tasks (a task's `mod_timer`/`del_timer` steps by name),
/// set up at first use: per task, its few (name index, timer) pairs. A task has one or
/// two, so a short list per task is found faster than a key in one map of them all.
#[derive(Clone, Debug, Default)]
pub(crate) struct NamedTimers(Vec<Vec<(usize, TimerId)>>);

impl NamedTimers {
    /// The timer task `c` set up under `slot`, if any.
    pub(crate) fn get(&self, c: TaskId, slot: usize) -> Option<TimerId> {
        self.0.get(c)?.iter().find(|&&(s, _)| s == slot).map(|&(_, t)| t)
    }

    /// The timer of task `c` under `slot`, set up by `setup` the first time.
    pub(crate) fn get_or_insert_with(&mut self, c: TaskId, slot: usize, setup: impl FnOnce() -> TimerId) -> TimerId {
        if let Some(t) = self.get(c, slot) {
            return t;
        }
        if self.0.len() <= c {
            self.0.resize_with(c + 1, Vec::new);
        }
        let t = setup();
        self.0[c].push((slot, t));
        t
    }
}

/// select_estimate_accuracy() (fs/select.c): the slack of a poll()/select() timeout of
/// `timeout` ns: 0.1 % of it (0.5 % for nice > 0), at most MAX_SLACK = 100 ms, at least
/// the task's timer slack (real-time tasks get 0: not modeled here).
pub(crate) fn select_estimate_accuracy(timeout: Ns, nice: i32, task_slack: Ns) -> Ns {
    const MAX_SLACK: Ns = 100 * crate::time::NSEC_PER_MSEC;
    let divfactor = if nice > 0 { 200 } else { 1000 };
    (timeout / divfactor).min(MAX_SLACK).max(task_slack)
}
