//! Priority inheritance for the modeled mutexes (rt-app's `pi_enabled`:
//! PTHREAD_PRIO_INHERIT, futex PI): an RT task blocking on a mutex lends its priority to
//! the holder, which runs in the RT class at that priority until it releases the lock.
//!
//! Mirrors: kernel/locking/rtmutex.c `rt_mutex_adjust_prio_chain()` (one level: the
//! holder of the lock the waiter blocks on) and kernel/sched/core.c `rt_mutex_setprio()`
//! (dequeue from the old class, the new prio, enqueue in the new one, resched): a
//! running holder keeps running; its priority returns at the unlock
//! (`rt_mutex_adjust_prio()`) or when it blocks.
//! Model: no chain walk (a boosted holder blocked on a second PI mutex does not pass the
//! boost on); only RT waiters boost (a deadline waiter's dl_boosted is not modeled).

use crate::state::task::{SchedClass, TaskId, TaskState};
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

    /// A waiter blocked on mutex `l`: its holder inherits its priority if higher.
    pub(crate) fn pi_boost(&mut self, l: usize, from_cpu: usize) {
        if !self.rtc.pi_enabled {
            return;
        }
        let Some(o) = self.ipc.locks[l].owner else { return };
        let Some(prio) = self.pi_prio(o) else { return };
        let s = &self.tasks[o].sched;
        if s.class() == SchedClass::Dl || (s.class() == SchedClass::Rt && s.rt_prio() <= prio) {
            return;
        }
        self.rt_mutex_setprio(o, Some(prio), from_cpu);
    }

    /// The holder released a mutex: its priority is what its other mutexes' waiters
    /// lend it, or its own. True if the running holder left the RT class (the caller
    /// schedules, as sched_setscheduler's path does).
    pub(crate) fn pi_unboost(&mut self, o: TaskId, cpu: usize) -> bool {
        if !self.rtc.pi_enabled || self.tasks[o].sched.boost_prio.is_none() {
            return false;
        }
        let prio = self.pi_prio(o);
        if prio == self.tasks[o].sched.boost_prio {
            return false;
        }
        let was = self.tasks[o].sched.class();
        self.rt_mutex_setprio(o, prio, cpu);
        was != self.tasks[o].sched.class()
    }

    /// A boosted task blocks: off every queue, it takes its own priority back unless its
    /// mutexes' waiters still lend one.
    pub(crate) fn pi_blocked(&mut self, p: TaskId) {
        if self.tasks[p].sched.boost_prio.is_some() {
            self.tasks[p].sched.boost_prio = self.pi_prio(p);
        }
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
                self.activate_task(cpu, p, false);
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
