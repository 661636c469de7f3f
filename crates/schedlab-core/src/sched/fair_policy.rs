//! SCHED_BATCH and SCHED_IDLE inside the fair class, and the class a forked child takes.
//!
//! Mirrors (read at 6.18.35, leftymods/linux-6.18.y): core.c set_load_weight() (a
//! SCHED_IDLE task weighs WEIGHT_IDLEPRIO = 3 whatever its nice), sched_fork() (the
//! child keeps its parent's policy and RT priority, never a PI boost; with
//! SCHED_FLAG_RESET_ON_FORK an RT or deadline parent's child is SCHED_NORMAL and a
//! negative nice goes back to 0; a deadline parent's fork fails with EAGAIN);
//! fair.c sched_idle_rq() / sched_idle_cpu() (every task in rq->nr_running is SCHED_IDLE:
//! nr_running == cfs.h_nr_idle), read by select_idle_sibling(), select_idle_smt(),
//! select_idle_cpu() and select_idle_core()'s fallback as if the CPU were idle;
//! task_hot() (a SCHED_IDLE task is never cache hot); check_preempt_wakeup_fair().
//! Wakeup preemption, as the versions have it: before 6.12 a SCHED_IDLE current task is
//! preempted by any non-idle wakee ahead of every other test (even WAKEUP_PREEMPTION),
//! then a BATCH or IDLE wakee preempts nothing; from 6.12 (faa42d29419d "sched/fair: Make
//! SCHED_IDLE entity be preempted in strict hierarchy") the idle test is made between the
//! entities find_matching_se() pairs, after the WAKEUP_PREEMPTION test, so an idle task
//! in another cgroup is compared by its group's entity; a BATCH or IDLE wakee still
//! preempts nothing. A BATCH current task is preempted as a normal one.
//! Model: no cgroup cpu.idle (a group entity is never idle); find_idlest_cpu()'s
//! sched_idle_cpu() (fork placement), sched_balance_domains()' busy interval and the
//! asymmetric-capacity scan still treat a SCHED_IDLE-only CPU as busy.

use crate::state::task::{SchedPolicy, TaskId, TaskState};
use crate::state::Simulator;

/// WEIGHT_IDLEPRIO: the load weight of a SCHED_IDLE task (kernel/sched/sched.h), declared.
pub(crate) const WEIGHT_IDLEPRIO: u64 = 3;

impl Simulator {
    /// task_has_idle_policy().
    #[inline]
    pub(crate) fn has_idle_policy(&self, p: TaskId) -> bool {
        self.tasks[p].sched.policy == SchedPolicy::Idle
    }

    /// A fair task enters (+1) or leaves (-1) rq->nr_running: cfs.h_nr_idle follows it
    /// (before add_nr_running(), which then updates the sched-idle mask).
    #[inline]
    pub(crate) fn idle_policy_nr(&mut self, cpu: usize, p: TaskId, delta: isize) {
        if self.rtc.idle_policy && self.has_idle_policy(p) {
            let n = &mut self.rtc.h_nr_idle[cpu];
            *n = (*n as isize + delta) as usize;
        }
    }

    /// sched_idle_rq() of `cpu` kept in a mask, after its nr_running changed.
    #[inline]
    pub(crate) fn update_sched_idle(&mut self, cpu: usize) {
        if !self.rtc.idle_policy {
            return;
        }
        let nr = self.rqs[cpu].nr_running;
        if nr > 0 && nr == self.rtc.h_nr_idle[cpu] {
            self.rtc.sched_idle_cpus.set(cpu);
        } else {
            self.rtc.sched_idle_cpus.clear(cpu);
        }
    }

    /// sched_idle_cpu(): only SCHED_IDLE tasks are runnable on `c`.
    #[inline]
    pub(crate) fn sched_idle_cpu(&self, c: usize) -> bool {
        self.rtc.idle_policy && self.rtc.sched_idle_cpus.test(c)
    }

    /// finish_delayed_dequeue() of a task the pick found delayed, with its h_nr_idle.
    pub(crate) fn finish_delayed_dequeue_task(&mut self, cpu: usize, p: TaskId) {
        self.idle_policy_nr(cpu, p, -1);
        self.finish_delayed_dequeue(cpu, p);
    }

    /// check_preempt_wakeup_fair() before 6.12: a SCHED_IDLE current task is preempted
    /// by a non-idle wakee at once (true), ahead of the WAKEUP_PREEMPTION test.
    #[inline]
    pub(crate) fn idle_curr_preempted_early(&self, c: TaskId, p: TaskId) -> bool {
        self.rtc.idle_policy && self.k.version < crate::kernel::KernelVersion::new(6, 12) && self.has_idle_policy(c) && !self.has_idle_policy(p)
    }

    /// check_preempt_wakeup_fair()'s policy rules between the matched entities `se`
    /// (current side) and `pse` (wakee side) of wakee `p`: Some(true) preempts, Some(false)
    /// does not, None leaves it to the class's comparison.
    #[inline]
    pub(crate) fn wakeup_preempt_policy(&self, se: usize, pse: usize, p: TaskId) -> Option<bool> {
        let policy = self.tasks[p].sched.policy;
        if policy == SchedPolicy::Normal && !self.rtc.idle_policy {
            return None;
        }
        // se_is_idle(): a task entity of a SCHED_IDLE task (no cgroup cpu.idle).
        let is_idle = |e: usize| e < self.tasks.len() && self.has_idle_policy(e);
        let (cse_idle, pse_idle) = (is_idle(se), is_idle(pse));
        if cse_idle && !pse_idle {
            return Some(true);
        }
        if cse_idle != pse_idle || policy != SchedPolicy::Normal {
            return Some(false);
        }
        None
    }

    /// sched_fork(): the child takes its parent's policy and RT priority (not a PI
    /// boost), or SCHED_NORMAL under reset-on-fork; false when the fork fails with
    /// EAGAIN (a deadline parent without reset-on-fork).
    pub(crate) fn sched_fork_allowed(&self, parent: TaskId) -> bool {
        let s = &self.tasks[parent].sched;
        s.reset_on_fork || s.policy != SchedPolicy::Deadline
    }

    /// sched_fork()'s class for `child` of `parent` (after sched_fork_allowed()).
    pub(crate) fn sched_fork(&mut self, parent: TaskId, child: TaskId) {
        let ps = self.tasks[parent].sched;
        // dup_task_struct() copies the parent's slice request; reset-on-fork drops it.
        let (slice, custom) = (self.tasks[parent].se.slice, self.tasks[parent].se.custom_slice);
        if custom && !ps.reset_on_fork {
            let se = &mut self.tasks[child].se;
            se.slice = slice;
            se.custom_slice = true;
        }
        if ps.reset_on_fork {
            // The child's flag is cleared; an RT parent's child is SCHED_NORMAL, a
            // negative nice is reset to 0 (a BATCH or IDLE policy is kept).
            if !ps.is_rt_or_dl_policy() {
                self.tasks[child].sched.policy = ps.policy;
            }
            if self.tasks[child].nice < 0 {
                self.tasks[child].nice = 0;
                self.tasks[child].se.weight = crate::state::task::nice_to_weight(0);
            }
        } else {
            let c = &mut self.tasks[child].sched;
            c.policy = ps.policy;
            c.rt_priority = ps.rt_priority;
        }
        if self.tasks[child].sched.policy == SchedPolicy::Idle {
            self.tasks[child].se.weight = WEIGHT_IDLEPRIO;
        }
        if !self.task_has_timer_slack(child) {
            // As set_sched_attr() at creation: an RT task sleeps with no timer slack.
            self.tasks[child].timer_slack_ns = 0;
        }
        debug_assert_eq!(self.tasks[child].state, TaskState::New);
    }
}
