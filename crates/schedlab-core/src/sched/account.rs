//! Time accounting: update_curr(), idle/busy transitions, utilization, work conservation.
//!
//! Mirrors: kernel/sched/fair.c update_curr(); core.c update_rq_clock(), the avg_idle
//! update in ttwu_do_activate(); pelt.c (util_avg of the CPU, with its 32 ms half-life).
//! Model: util_avg follows PELT's geometric decay per 1024 µs period using the
//! kernel's y^n table; partial periods are rounded down.

pub(crate) use crate::state::pelt::decay_load;
use crate::state::task::TaskId;
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    /// Advances the running task through its overhead and work up to now, without the
    /// scheduler's accounting: the end of a step inside user space is no point at which
    /// the kernel calls update_curr().
    pub(crate) fn advance_progress(&mut self, cpu: usize) {
        let Some(c) = self.rqs[cpu].curr else { return };
        let cap = self.capacity(cpu);
        let slowdown = self.smt_slowdown_milli(cpu);
        let freq = self.freq_slowed(cpu);
        let t = &mut self.tasks[c];
        let delta = self.now.saturating_sub(t.progress_stamp);
        if delta == 0 {
            return;
        }
        t.progress_stamp = self.now;
        let overhead = delta.min(t.overhead_ns);
        t.overhead_ns -= overhead;
        let work_ns = delta - overhead;
        let progress = match (slowdown, freq) {
            (None, None) => work_ns * cap / 1024,
            (Some(milli), None) => crate::time::mul_div(work_ns, cap * 1000, 1024 * milli),
            (milli, Some((cur, max))) => crate::time::mul_div(work_ns, cap * 1000 * cur, 1024 * milli.unwrap_or(1000) * max),
        };
        let progress = progress.min(t.work_left);
        t.work_left -= progress;
        t.stats.work_done_ns += progress;
    }

    /// Charges the running task for the time since its last accounting (update_curr).
    pub(crate) fn update_curr(&mut self, cpu: usize) {
        self.advance_progress(cpu);
        let Some(c) = self.rqs[cpu].curr else { return };
        let now = self.now;
        let t = &mut self.tasks[c];
        let delta = now.saturating_sub(t.se.exec_start);
        if delta == 0 {
            return;
        }
        t.se.exec_start = now;
        t.se.sum_exec_runtime += delta;
        t.stats.run_ns += delta;
        let group = t.group;
        self.account_group_usage(group, delta);
        self.update_curr_class(cpu, c, delta);
    }

    fn account_group_usage(&mut self, mut g: usize, delta: Ns) {
        loop {
            self.groups[g].usage_ns += delta;
            match self.groups[g].parent {
                Some(p) => g = p,
                None => break,
            }
        }
    }

    /// Sets the CPU's running task, accounting idle/busy transitions.
    pub(crate) fn set_curr(&mut self, cpu: usize, next: Option<TaskId>) {
        let was_idle = self.rqs[cpu].curr.is_none();
        let now_idle = next.is_none();
        // With SMT contention, the tasks on the core's other threads change speed now:
        // their work so far at the old speed, their step ends re-timed after the change.
        // (without SMT there is no sibling to re-time, and the figure is not read)
        let smt_change = was_idle != now_idle && self.has_smt && cost!(self, smt_slowdown) != 1.0;
        if smt_change {
            for i in 0..self.m.smt_siblings(cpu).len() {
                let s = self.m.smt_siblings(cpu)[i];
                if s != cpu {
                    self.advance_progress(s);
                }
            }
        }
        self.set_curr_inner(cpu, next, was_idle, now_idle);
        if smt_change {
            for i in 0..self.m.smt_siblings(cpu).len() {
                let s = self.m.smt_siblings(cpu)[i];
                if s != cpu && self.rqs[s].curr.is_some() {
                    self.arm_segment(s);
                }
            }
        }
    }

    fn set_curr_inner(&mut self, cpu: usize, next: Option<TaskId>, was_idle: bool, now_idle: bool) {
        if was_idle != now_idle {
            let llc = self.m.cpus[cpu].llc;
            let now = self.now;
            self.update_util(cpu, !was_idle);
            let rq = &mut self.rqs[cpu];
            let span = now - rq.state_since;
            rq.state_since = now;
            if was_idle {
                rq.stats.idle_ns += span;
                self.stats.wc.idle_changed(now, llc, -1);
                // ttwu_do_activate: fold the idle period into avg_idle.
                if rq.idle_stamp != 0 {
                    let delta = now - rq.idle_stamp;
                    let max = 2 * rq.max_idle_balance_cost;
                    rq.avg_idle = update_avg(rq.avg_idle, delta).min(max.max(1));
                    rq.idle_stamp = 0;
                }
                self.tick_nohz_idle_exit(cpu);
            } else {
                rq.stats.busy_ns += span;
                self.stats.wc.idle_changed(now, llc, 1);
            }
        }
        self.rqs[cpu].curr = next;
        if now_idle {
            self.running.clear(cpu);
        } else {
            self.running.set(cpu);
        }
    }

    /// Marks the CPU entering newidle balance (rq->idle_stamp).
    pub(crate) fn mark_idle_stamp(&mut self, cpu: usize) {
        // idle_stamp 0 means "not idle", so time 0 is stored as 1 ns.
        self.rqs[cpu].idle_stamp = self.now.max(1);
    }

    fn update_util(&mut self, cpu: usize, was_busy: bool) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        let periods = (now - rq.util_stamp) / 1024 / 1000;
        if periods == 0 {
            return;
        }
        rq.util_stamp += periods * 1024 * 1000;
        rq.util_avg = decay_load(rq.util_avg, periods);
        if was_busy {
            rq.util_avg += 1024 - decay_load(1024, periods);
        }
    }

    /// Returns the CPU's utilization now (0..1024).
    pub(crate) fn cpu_util(&mut self, cpu: usize) -> u64 {
        if self.pelt_on() {
            return self.cpu_util_cfs(cpu);
        }
        let busy = self.rqs[cpu].curr.is_some();
        self.update_util(cpu, busy);
        self.rqs[cpu].util_avg.min(1024)
    }

    /// Counts a task joining (+1) or leaving (-1) a runqueue's waiting list.
    pub(crate) fn wc_waiting(&mut self, cpu: usize, p: TaskId, delta: i32) {
        if self.tasks[p].nr_cpus_allowed <= 1 {
            return; // a pinned task cannot use another CPU
        }
        let llc = self.m.cpus[cpu].llc;
        self.stats.wc.waiting_changed(self.now, llc, delta);
    }
}

/// Moves an average 1/8 of the way towards a sample (update_avg).
pub(crate) fn update_avg(avg: Ns, sample: Ns) -> Ns {
    (avg as i64 + (sample as i64 - avg as i64) / 8) as Ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pelt_half_life_is_32_periods() {
        // y^32 = 1/2; the kernel's fixed-point table rounds 512 down to 511.
        assert_eq!(decay_load(1024, 32), 511);
        assert!(decay_load(1024, 1) < 1024 && decay_load(1024, 1) > 1000);
        assert_eq!(decay_load(1024, 5000), 0);
        assert_eq!(update_avg(800, 0), 700);
    }
}
