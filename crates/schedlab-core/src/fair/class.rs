//! The fair class's op table: what core.c reaches of fair.c, through `struct
//! sched_class fair_sched_class`.
//!
//! Mirrors: kernel/sched/fair.c `DEFINE_SCHED_CLASS(fair)`: enqueue_task_fair(),
//! dequeue_task_fair(), yield_task_fair(), check_preempt_wakeup_fair(),
//! pick_next_task_fair() (with its newidle balance), put_prev_task_fair(),
//! select_task_rq_fair(), migrate_task_rq_fair(), task_tick_fair(), task_fork_fair(),
//! update_curr_fair().
//! Model: each op calls the fair class's functions in `fair/`; the kernel's
//! enqueue_task_fair() also starts the fair server, throttles an enqueue that finds its
//! group out of runtime (check_enqueue_throttle()) and updates schedutil, as here.

use crate::features::Feature;
use crate::kernel::FairPolicy;
use crate::sched::class::{DequeueFlags, EnqueueFlags, SchedClassOps};
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::Ns;

/// `fair_sched_class`: CFS (<= 6.5) and EEVDF (6.6+).
pub(crate) struct FairSchedClass;

impl SchedClassOps for FairSchedClass {
    fn enqueue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: EnqueueFlags) {
        if flags.delayed {
            // requeue_delayed_entity(): still queued, runnable again.
            sim.requeue_delayed_task(cpu, p);
            return;
        }
        if let Some(from) = flags.moved_from {
            // ENQUEUE_RESTORE | ENQUEUE_MOVE: a running task put back, on another CPU's
            // clock if it moved, placed again by its lag (EEVDF).
            if from != cpu {
                sim.update_curr(cpu);
            }
            if sim.policy() == FairPolicy::Eevdf {
                sim.place_entity_eevdf(cpu, p, false);
            }
        }
        // The shared runqueue's shard lock is taken by the CPU doing the enqueue.
        sim.swq.actor = flags.waker_cpu;
        if flags.wakeup {
            sim.update_curr(cpu);
        }
        sim.enqueue_task_fair(cpu, p, flags.wakeup);
        sim.dl_server_start(cpu);
        if sim.bw_enqueue(cpu, p) {
            sim.throttle_task(cpu, p);
        }
        if sim.eas.schedutil {
            // Not on a new task's first enqueue (its util is a guess).
            if flags.wakeup || sim.tasks[p].se.sum_exec_runtime > 0 {
                sim.check_update_overutilized_status(cpu);
            }
            sim.cpufreq_update_util(cpu, false);
        }
        sim.swq.actor = None;
    }

    fn dequeue_task(sim: &mut Simulator, cpu: usize, p: TaskId, flags: DequeueFlags) {
        sim.dequeue_task_fair(cpu, p, flags.sleep);
        if flags.moving {
            // put_prev_task() of the moved task: the old hierarchy's levels stop holding
            // it as curr.
            sim.put_prev_entities(cpu, p);
        }
    }

    fn yield_task(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.yield_task_fair(cpu, p);
    }

    fn wakeup_preempt(sim: &mut Simulator, cpu: usize, p: TaskId, curr: TaskId, from_cpu: usize) {
        let c = curr;
        // check_preempt_wakeup_fair(): a task whose hierarchy is throttled preempts
        // nothing (throttled_hierarchy(), from 6.18 task_is_throttled()).
        if c == p || sim.tasks[p].state == TaskState::Throttled {
            return;
        }
        // NEXT_BUDDY before the 6.18.35 / 6.19 rework: any wakeup but a fork's (6.12+: not
        // of a delayed task), ahead of every other test.
        if sim.policy() == FairPolicy::Eevdf
            && sim.feat.has(Feature::NEXT_BUDDY)
            && !sim.fg.wf_fork
            && !sim.tasks[p].sched_delayed
            && !sim.next_buddy_rework()
        {
            sim.set_next_buddy(p, cpu);
        }
        // SCHED_IDLE and SCHED_BATCH (sched/fair_policy.rs).
        if sim.idle_curr_preempted_early(c, p) {
            sim.resched_curr(cpu, from_cpu);
            return;
        }
        if !sim.feat.has(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        sim.update_curr(cpu);
        let (se, pse) = sim.find_matching_se(c, p, cpu);
        if let Some(decided) = sim.wakeup_preempt_policy(se, pse, p) {
            if decided {
                sim.resched_curr(cpu, from_cpu);
            }
            return;
        }
        let preempt = match sim.policy() {
            FairPolicy::Cfs => sim.wakeup_preempt_entity(se, pse),
            FairPolicy::Eevdf => sim.wakeup_preempt_eevdf(se, pse, cpu),
        };
        if preempt {
            sim.resched_curr(cpu, from_cpu);
        }
    }

    fn pick_task(sim: &mut Simulator, cpu: usize) -> Option<TaskId> {
        let next = sim.pick_next_task_fair(cpu);
        if next.is_some() {
            return next;
        }
        // pick_next_task_fair()'s idle path: the shared runqueue (v1) or newidle
        // balance, which pulls from the shared runqueue first (v2-v4), then again.
        if sim.swq_pull(cpu) || sim.sched_balance_newidle(cpu) {
            return sim.pick_next_task_fair(cpu);
        }
        None
    }

    fn put_prev_task(sim: &mut Simulator, cpu: usize, p: TaskId) {
        match sim.tasks[p].state {
            TaskState::Running => sim.put_prev_task_fair(cpu, p),
            state => {
                if state != TaskState::Exited {
                    // put_prev_entity() checks the runtime of a sleeping task's cfs_rq too.
                    sim.bw_put_prev(cpu, p);
                }
                sim.put_prev_entities(cpu, p);
            }
        }
    }

    fn select_task_rq(sim: &mut Simulator, p: TaskId, prev: usize, this_cpu: usize, waker: Option<TaskId>, sync: bool, fork: bool) -> usize {
        sim.select_task_rq_fair(p, prev, this_cpu, waker, sync, fork)
    }

    fn migrate_task_rq(sim: &mut Simulator, p: TaskId, src: usize, dst: usize) {
        sim.migrate_entity(p, src, dst);
    }

    fn task_tick(sim: &mut Simulator, cpu: usize, _p: TaskId) {
        sim.task_tick_fair(cpu);
    }

    fn task_fork(sim: &mut Simulator, cpu: usize, p: TaskId) {
        sim.place_new_entity(cpu, p);
    }

    fn check_invariants(sim: &Simulator) -> Result<(), String> {
        sim.check_fair_runqueues()?;
        sim.check_fair()
    }

    fn update_curr(sim: &mut Simulator, cpu: usize, p: TaskId, delta: Ns) {
        sim.update_curr_fair(cpu, p, delta);
        sim.bw_account(cpu, p, delta);
        // The fair server's runtime (a no-op without one: runs with no RT or deadline task).
        sim.dl_server_update(cpu, delta);
    }
}

impl Simulator {
    /// yield_task_fair(): EEVDF (6.6+) pushes the deadline one slice further; CFS
    /// would mark the task the skip buddy, which schedlab does not model (the task is
    /// put back and the pick runs as usual).
    pub(crate) fn yield_task_fair(&mut self, cpu: usize, c: TaskId) {
        if self.rqs[cpu].nr_running <= 1 {
            return;
        }
        self.update_curr(cpu);
        if self.policy() == FairPolicy::Eevdf {
            let se = &mut self.tasks[c].se;
            se.deadline += crate::fair::calc_delta_fair(se.slice, se.weight);
        }
    }

    /// h_nr_running of `cpu`'s root cfs_rq: the fair tasks the CPU holds (the fast
    /// path's test in __pick_next_task()).
    #[inline]
    pub(crate) fn root_h_nr_running(&self, cpu: usize) -> u32 {
        self.fg.cfs[self.root_cfs(cpu)].h_nr_running
    }
}
