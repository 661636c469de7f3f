//! The fair class's runqueues against the tasks (part of the engine's invariants,
//! `engine/invariants.rs`): every fair task runnable, running or throttled is on exactly
//! one runqueue list, its CPU's; rq->nr_running and the load match the tasks; the masks
//! and sums kept beside the runqueues are current.

use crate::state::task::{SchedClass, TaskState};
use crate::state::Simulator;

impl Simulator {
    /// The first broken invariant of the fair runqueues, if any.
    pub(crate) fn check_fair_runqueues(&self) -> Result<(), String> {
        let mut seen = vec![0u32; self.tasks.len()];
        // Delayed-dequeue tasks stay in rq->nr_running until the pick dequeues them.
        let mut delayed = vec![0usize; self.rqs.len()];
        for t in self.tasks.iter().filter(|t| t.sched_delayed) {
            delayed[t.cpu] += 1;
        }
        for (cpu, rq) in self.rqs.iter().enumerate() {
            let mut nr = 0;
            for &p in &rq.queue {
                seen[p] += 1;
                let t = &self.tasks[p];
                if t.state != TaskState::Runnable {
                    return Err(format!("task {p} queued on CPU {cpu} in state {:?}", t.state));
                }
                if t.cpu != cpu {
                    return Err(format!("task {p} queued on CPU {cpu} but task_cpu is {}", t.cpu));
                }
                if self.queue_index.timeline.keys(p) != (t.se.vruntime, t.se.deadline) {
                    return Err(format!("task {p} queued on CPU {cpu}: vruntime/deadline changed since it was queued"));
                }
                nr += 1;
            }
            if self.queue_index.nonempty.test(cpu) == rq.queue.is_empty() {
                return Err(format!("CPU {cpu}: the mask of CPUs with queued tasks is stale"));
            }
            if self.running.test(cpu) != rq.curr.is_some()
                || self.balance.has_tasks.test(cpu) != (rq.nr_running > 0)
                || self.rd.overloaded_cpus.test(cpu) != (rq.nr_running > 1)
            {
                return Err(format!("CPU {cpu}: the running, has-tasks or overloaded mask is stale"));
            }
            let root = self.root_cfs(cpu);
            if self.load_sums.cpu_figures(cpu) != (rq.nr_running, rq.load, self.fg.cfs[root].avg.load_avg) {
                return Err(format!(
                    "CPU {cpu}: the balance sums hold (nr_running, load, load_avg) {:?}, the runqueue {:?}",
                    self.load_sums.cpu_figures(cpu),
                    (rq.nr_running, rq.load, self.fg.cfs[root].avg.load_avg)
                ));
            }
            if rq.queue.len() != nr {
                return Err(format!("CPU {cpu}: the list does not hold the queued tasks"));
            }
            if !self.fg.enabled && self.cfs_leftmost(root) != rq.queue.iter().copied().min_by_key(|&t| (self.tasks[t].se.vruntime, t)) {
                return Err(format!("CPU {cpu}: the timeline does not hold the queued tasks"));
            }
            for &p in &rq.throttled {
                seen[p] += 1;
                if self.tasks[p].state != TaskState::Throttled || self.tasks[p].cpu != cpu {
                    return Err(format!("task {p} on CPU {cpu}'s throttled list in state {:?}", self.tasks[p].state));
                }
            }
            if let Some(c) = rq.curr {
                let t = &self.tasks[c];
                if t.cpu != cpu {
                    return Err(format!("task {c} running on CPU {cpu} but task_cpu is {}", t.cpu));
                }
                if t.state == TaskState::Running && t.sched.class() == SchedClass::Fair {
                    seen[c] += 1;
                    nr += 1;
                }
            }
            let load = self.fg.cfs[root].load;
            // The other classes' tasks counted there (sched/class.rs class_nr_sync()).
            let nr = nr + rq.nr_running_other;
            if nr + delayed[cpu] != rq.nr_running || load != rq.load {
                let states: Vec<_> = rq.queue.iter().map(|&p| (p, self.tasks[p].state)).collect();
                return Err(format!(
                    "CPU {cpu}: nr_running {} load {} but tasks say {nr} / {load} (queue {states:?}, curr {:?})",
                    rq.nr_running,
                    rq.load,
                    rq.curr.map(|c| (c, self.tasks[c].state))
                ));
            }
        }
        for (p, t) in self.tasks.iter().enumerate() {
            if t.sched.class() != SchedClass::Fair {
                continue; // on the rt_rq or dl_rq (check_class_invariants())
            }
            let expected = matches!(t.state, TaskState::Runnable | TaskState::Running | TaskState::Throttled) as u32;
            if seen[p] != expected {
                return Err(format!("task {p} ({:?}) found on {} runqueues", t.state, seen[p]));
            }
            if !t.cpus_allowed.test(t.cpu) && t.state != TaskState::Exited {
                return Err(format!("task {p} is on CPU {} outside its affinity", t.cpu));
            }
        }
        Ok(())
    }
}
