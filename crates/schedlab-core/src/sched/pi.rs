//! Priority inheritance for the modeled mutexes (rt-app's `pi_enabled`:
//! PTHREAD_PRIO_INHERIT, futex PI): an RT task blocking on a mutex lends its priority to
//! the holder, which runs in the RT class at that priority until it releases the lock.
//!
//! Mirrors: kernel/locking/rtmutex.c (read at 6.18.35) `rt_mutex_adjust_prio_chain()`:
//! the walk from the lock a waiter blocks on to its owner, whose priority becomes that
//! of its top waiters (`rt_mutex_adjust_prio()`), and on to the lock that owner is
//! itself blocked on, and so on, up to `max_lock_depth` (1024, rtmutex_api.c) locks;
//! it stops where an owner's priority does not change. A boosted owner that blocks keeps
//! its boost (its pi_waiters stay), so a boost passes through it. kernel/sched/core.c
//! `rt_mutex_setprio()` (dequeue from the old class, the new prio, enqueue in the new
//! one, resched): a running holder keeps running; at an unlock the releasing owner's
//! priority is recomputed from the waiters of the locks it still holds, and the new
//! owner takes the lock's remaining waiters' (try_to_take_rt_mutex() queues the top
//! waiter on it, rt_mutex_adjust_prio()).
//! Model: only RT waiters boost (a deadline waiter's dl_boosted is not modeled); a
//! mutex is handed to its waiters in arrival order, not by priority as an rt_mutex's
//! waiter tree does; a waiter does not leave a lock before getting it (no timed lock),
//! so a chain never needs to lower a blocked owner.

use crate::state::task::{SchedClass, SchedParams, TaskId, TaskState};

/// max_lock_depth: the most locks one chain walk follows (kernel/locking/rtmutex_api.c,
/// `int max_lock_depth = 1024`, the sysctl kernel.max_lock_depth; declared).
pub(crate) const MAX_LOCK_DEPTH: usize = 1024;
use crate::state::Simulator;

impl Simulator {
    /// The priority `o` inherits: the highest RT priority among the waiters of the
    /// mutexes it holds, if any.
    fn pi_prio(&self, o: TaskId) -> Option<usize> {
        self.ipc
            .locks
            .iter()
            .filter(|m| m.owner == Some(o))
            .flat_map(|m| m.waiters.iter())
            .filter(|&&w| self.tasks[w].sched.class() == SchedClass::Rt)
            .map(|&w| self.tasks[w].sched.rt_prio())
            .min()
    }

    /// The mutex `p` waits on (task_blocked_on_lock()), if any.
    fn blocked_on_lock(&self, p: TaskId) -> Option<usize> {
        self.ipc.locks.iter().position(|m| m.waiters.contains(&p))
    }

    /// A waiter blocked on mutex `l` (or `l` changed hands): rt_mutex_adjust_prio_chain()
    /// from `l`'s owner along the locks the owners wait on.
    pub(crate) fn pi_boost(&mut self, l: usize, from_cpu: usize) {
        if !self.rtc.pi_enabled {
            return;
        }
        let mut lock = l;
        for _ in 0..MAX_LOCK_DEPTH {
            let Some(o) = self.ipc.locks[lock].owner else { return };
            // The owner's priority did not change: nothing further along changes.
            if !self.rt_mutex_adjust_prio(o, from_cpu) {
                return;
            }
            match self.blocked_on_lock(o) {
                Some(next) => lock = next,
                None => return,
            }
        }
    }

    /// rt_mutex_adjust_prio(): `o` runs at the highest of its own priority and its top
    /// waiters'; true if its class or priority changed.
    fn rt_mutex_adjust_prio(&mut self, o: TaskId, from_cpu: usize) -> bool {
        let s = &self.tasks[o].sched;
        if s.class() == SchedClass::Dl {
            return false;
        }
        let own = SchedParams { boost_prio: None, ..*s }.rt_prio();
        let boost = self.pi_prio(o).filter(|&b| b < own);
        if boost == s.boost_prio {
            return false;
        }
        let before = (s.class(), s.rt_prio());
        self.rt_mutex_setprio(o, boost, from_cpu);
        let s = &self.tasks[o].sched;
        before != (s.class(), s.rt_prio())
    }

    /// The holder released a mutex: its priority is what its other mutexes' waiters
    /// lend it, or its own. True if the running holder left the RT class (the caller
    /// schedules, as sched_setscheduler's path does).
    pub(crate) fn pi_unboost(&mut self, o: TaskId, cpu: usize) -> bool {
        if !self.rtc.pi_enabled || self.tasks[o].sched.boost_prio.is_none() {
            return false;
        }
        let was = self.tasks[o].sched.class();
        self.rt_mutex_adjust_prio(o, cpu);
        was != self.tasks[o].sched.class()
    }

    /// rt_mutex_setprio(): `p` moves to its new priority (and class), queued as it was.
    fn rt_mutex_setprio(&mut self, p: TaskId, boost: Option<usize>, from_cpu: usize) {
        let cpu = self.tasks[p].cpu;
        let state = self.tasks[p].state;
        let running = self.rqs[cpu].curr == Some(p) && state == TaskState::Running;
        let queued = state == TaskState::Runnable;
        let old = self.tasks[p].sched.class();
        if !running && !queued {
            if self.tasks[p].sched_delayed {
                // Still on its cfs_rq (delayed dequeue): dequeued for good first.
                self.finish_delayed_dequeue_task(cpu, p);
            }
            if matches!(state, TaskState::Sleeping | TaskState::Blocked | TaskState::New) {
                self.tasks[p].sched.boost_prio = boost;
            }
            return;
        }
        // Off the old class's queue.
        if running {
            self.update_curr(cpu);
        }
        match (old, running) {
            (SchedClass::Fair, true) => {
                self.dequeue_task_fair(cpu, p, false);
                self.tasks[p].state = TaskState::Running;
                self.put_prev_entities(cpu, p);
            }
            (SchedClass::Fair, false) => self.detach_task(cpu, p),
            _ => self.dequeue_task_rt(cpu, p),
        }
        self.tasks[p].sched.boost_prio = boost;
        match self.tasks[p].sched.class() {
            SchedClass::Fair => {
                // Back in the fair class, placed as a task that was away; a running one
                // is queued and its CPU schedules (the caller's Flow::Stops).
                let c = self.cfs_of(p, cpu);
                match self.policy() {
                    crate::kernel::FairPolicy::Eevdf => self.place_entity_eevdf(c, p, false),
                    crate::kernel::FairPolicy::Cfs => self.place_entity_cfs(c, p, false, cpu),
                }
                let t = &mut self.tasks[p];
                t.state = TaskState::Runnable;
                t.runnable_since = self.now;
                self.activate_task(cpu, p, super::class::EnqueueFlags::NONE);
            }
            _ => {
                self.enqueue_task_rt(cpu, p, running);
                if !running {
                    self.wakeup_preempt(cpu, p, from_cpu);
                }
            }
        }
    }
}
