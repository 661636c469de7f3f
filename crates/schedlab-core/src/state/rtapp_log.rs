//! rt-app's per-activation log: one line per pass of a phase, as rt-app writes
//! `<logdir>/<log_basename>-<thread>.log`.
//!
//! Mirrors: rt-app's src/rt-app.c thread_body() and run_event(): a pass runs from the
//! phase's start to the return of its last event; `run`/`runtime` events add their
//! configured duration to `c_duration` and their wall time to `run`; a `timer` adds its
//! period to `c_period`, sets `slack` to the time left to its deadline before sleeping
//! and adds the lateness of the wakeup to `wu_lat` (0 when the deadline had passed).
//! src/rt-app_utils.c log_timing() gives the columns.
//! Model: the importer marks each phase's start (`rt_app_phase`); a pass ends where the
//! next begins, or at the task's exit. A pass still open when the run ends is dropped,
//! as rt-app drops the one it is in when stopped. Recorded only when a run asks
//! (`RunOptions::rtapp_logs`).

use crate::state::task::TaskId;
use crate::time::Ns;

/// One pass of a phase (times in ns; the log writes µs).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PhasePass {
    /// The task (index into the run's tasks).
    pub task: TaskId,
    /// When the pass began.
    pub start_ns: Ns,
    /// When it ended (its last event returned).
    pub end_ns: Ns,
    /// Work its run events did, ns at capacity 1024 (rt-app's `perf` counts loops of its
    /// calibrated busy-wait, the same work in its own unit).
    pub work_ns: Ns,
    /// Wall time of its run events (`run`).
    pub run_ns: Ns,
    /// Their configured durations (`c_duration`).
    pub c_duration_ns: Ns,
    /// Its timers' periods (`c_period`).
    pub c_period_ns: Ns,
    /// Time left to the last timer's deadline when it was reached (negative: late).
    pub slack_ns: i64,
    /// How late its timers woke it, summed (`wu_lat`).
    pub wu_lat_ns: Ns,
}

/// A pass being recorded, and what it waits to close.
#[derive(Clone, Debug)]
struct Open {
    pass: PhasePass,
    /// A run event under way since then.
    run_began: Option<Ns>,
    /// A timer sleep to this deadline.
    timer_deadline: Option<Ns>,
}

/// Every task's passes.
#[derive(Clone, Debug, Default)]
pub struct RtAppLog {
    open: Vec<Option<Open>>,
    /// Closed passes, in the order they closed.
    pub passes: Vec<PhasePass>,
}

impl RtAppLog {
    fn slot(&mut self, c: TaskId) -> &mut Option<Open> {
        if self.open.len() <= c {
            self.open.resize(c + 1, None);
        }
        &mut self.open[c]
    }

    /// Task `c` resumes its program at `now`: a run event it began has ended, or a timer
    /// it slept on has woken it.
    pub fn resume(&mut self, c: TaskId, now: Ns) {
        if let Some(Some(o)) = self.open.get_mut(c) {
            if let Some(t) = o.run_began.take() {
                o.pass.run_ns += now.saturating_sub(t);
            }
            if let Some(d) = o.timer_deadline.take() {
                o.pass.wu_lat_ns += now.saturating_sub(d);
            }
        }
    }

    /// A phase begins a pass at `now`; the previous pass of `c` ends there.
    pub fn phase(&mut self, c: TaskId, now: Ns) {
        self.close(c, now);
        *self.slot(c) = Some(Open { pass: PhasePass { task: c, start_ns: now, ..Default::default() }, run_began: None, timer_deadline: None });
    }

    /// Task `c` exits at `now`: its pass ends.
    pub fn close(&mut self, c: TaskId, now: Ns) {
        if let Some(o) = self.slot(c).take() {
            self.passes.push(PhasePass { end_ns: now, ..o.pass });
        }
    }

    /// A run event of `configured` ns (work `work`) begins at `now`.
    pub fn run(&mut self, c: TaskId, now: Ns, configured: Ns, work: Ns) {
        if let Some(o) = self.slot(c) {
            o.pass.c_duration_ns += configured;
            o.pass.work_ns += work;
            o.run_began = Some(now);
        }
    }

    /// A timer of `period` with its deadline at `deadline` is reached at `now`; the task
    /// sleeps to it if it is still ahead.
    pub fn timer(&mut self, c: TaskId, now: Ns, period: Ns, deadline: Ns) {
        if let Some(o) = self.slot(c) {
            o.pass.c_period_ns += period;
            o.pass.slack_ns = deadline as i64 - now as i64;
            if now < deadline {
                o.timer_deadline = Some(deadline);
            } else {
                o.pass.wu_lat_ns = 0; // rt-app: a missed deadline resets the lateness
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass with one run and one timer: run's wall time, the slack before the sleep and
    /// the wakeup's lateness, closed by the next pass.
    #[test]
    fn a_pass_counts_its_run_slack_and_wakeup() {
        let mut log = RtAppLog::default();
        log.phase(0, 1_000);
        log.run(0, 1_000, 3_000, 3_000);
        log.resume(0, 5_000); // preempted for 1 us: 4 us of wall time
        log.timer(0, 5_000, 10_000, 11_000);
        log.resume(0, 11_500);
        log.phase(0, 11_500);
        let p = &log.passes[0];
        assert_eq!((p.start_ns, p.end_ns, p.run_ns, p.c_duration_ns, p.c_period_ns), (1_000, 11_500, 4_000, 3_000, 10_000));
        assert_eq!((p.slack_ns, p.wu_lat_ns), (6_000, 500));
        // A late timer: negative slack, no sleep, no lateness.
        log.run(0, 11_500, 3_000, 3_000);
        log.resume(0, 22_000);
        log.timer(0, 22_000, 10_000, 21_000);
        log.close(0, 22_000);
        assert_eq!((log.passes[1].slack_ns, log.passes[1].wu_lat_ns), (-1_000, 0));
        // Nothing is recorded outside a pass.
        log.run(1, 0, 5, 5);
        assert_eq!(log.passes.len(), 2);
    }
}
