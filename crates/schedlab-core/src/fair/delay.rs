//! EEVDF's delayed dequeue (6.12+): a task that goes to sleep while not eligible stays
//! on its runqueue, competing, until it is eligible again.
//!
//! Mirrors: kernel/sched/fair.c (6.12, 152e11f6df29 "sched/fair: Implement delayed
//! dequeue", features DELAY_DEQUEUE and DELAY_ZERO): dequeue_entity() keeping a sleeping
//! entity that is not entity_eligible() (set_delayed), pick_next_entity() dequeuing a
//! delayed entity when it is picked (DEQUEUE_DELAYED, finish_delayed_dequeue_entity:
//! DELAY_ZERO clips positive lag to 0), and the wakeup of a delayed task
//! (ttwu_runnable -> requeue_delayed_entity(): no CPU selection; DELAY_ZERO re-places an
//! entity whose lag became positive at zero lag).
//! Model: only tasks are delayed (group entities are dequeued when empty, as before
//! 6.12); a delayed task is not counted as runnable in its cfs_rqs (h_nr_running and
//! PELT runnable: 6.13's h_nr_runnable) and is not on the cfs_tasks list, so load
//! balance does not move it, but its weight stays in its cfs_rq's load, its entity in
//! the tree, and it stays in rq->nr_running: dequeue_entities() returns before
//! sub_nr_running() when the task's own entity is delayed (6.12 to 6.18 alike), so
//! the CPU still counts it for idle_cpu(), rd->overload, sum_nr_running and the nohz
//! kick until the pick dequeues it (read at 6.18.35, dequeue_entities()).

use crate::features::Feature;
use crate::kernel::FairPolicy;
use crate::state::task::{TaskId, TaskState};
use crate::state::timeline::EntityId;
use crate::state::Simulator;

impl Simulator {
    /// dequeue_entity(DEQUEUE_SLEEP) with DELAY_DEQUEUE: whether the running task `p`,
    /// going to sleep, stays queued instead because it is not eligible. If so it is
    /// marked delayed and no longer counts as runnable in its cfs_rqs (it does in
    /// rq->nr_running until it is dequeued).
    pub(crate) fn try_delay_dequeue(&mut self, cpu: usize, p: TaskId) -> bool {
        if self.policy() != FairPolicy::Eevdf || !self.feat.has(Feature::DELAY_DEQUEUE) {
            return false;
        }
        let c = self.cfs_of(p, cpu);
        if self.entity_eligible(c, p) {
            return false;
        }
        self.clear_buddies(c, p, cpu);
        self.update_load_avg(c, p, cpu);
        self.tasks[p].sched_delayed = true;
        self.add_h_nr_running(cpu, p, -1);
        true
    }

    /// pick_next_entity() found delayed task `p`: it leaves the runqueue now
    /// (DEQUEUE_SLEEP | DEQUEUE_DELAYED), its lag clipped to 0 under DELAY_ZERO.
    pub(crate) fn finish_delayed_dequeue(&mut self, cpu: usize, p: TaskId) {
        self.dequeue_levels_sleep(cpu, p, true);
        self.add_nr_running(cpu, -1);
        self.tasks[p].sched_delayed = false;
        if self.feat.has(Feature::DELAY_ZERO) && self.tasks[p].se.vlag > 0 {
            self.tasks[p].se.vlag = 0;
        }
        self.bw_dequeue(cpu, p);
    }

    /// requeue_delayed_entity() for a delayed task being woken on its own CPU: it counts
    /// as runnable again; under DELAY_ZERO one whose lag became positive while it
    /// waited is placed again with zero lag.
    pub(crate) fn requeue_delayed_task(&mut self, cpu: usize, p: TaskId) {
        self.update_curr(cpu);
        let c = self.cfs_of(p, cpu);
        if self.feat.has(Feature::DELAY_ZERO) {
            self.update_entity_lag(c, p);
            if self.tasks[p].se.vlag > 0 {
                self.replace_entity(c, p);
            }
        }
        self.update_load_avg(c, p, cpu);
        self.tasks[p].sched_delayed = false;
        self.tasks[p].state = TaskState::Runnable;
        self.add_h_nr_running(cpu, p, 1);
        self.list_add(cpu, p);
        self.wc_waiting(cpu, p, 1);
        if self.bw_requeue_throttled(cpu, p) {
            self.throttle_task(cpu, p);
        }
    }

    /// Places an entity of `c` again at zero lag (it is on the runqueue, not running).
    fn replace_entity(&mut self, c: usize, e: EntityId) {
        let is_curr = self.fg.cfs[c].curr == Some(e);
        if !is_curr {
            self.tree_remove(c, e);
        }
        self.account_entity_dequeue(c, e);
        self.se_mut(e).vlag = 0;
        self.place_entity_eevdf(c, e, false);
        self.account_entity_enqueue(c, e);
        if !is_curr {
            self.tree_insert(c, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::state::task::TaskState;
    use crate::state::Simulator;

    fn one_cpu(features: &str) -> Simulator {
        let text = format!(
            "[machine]\ntopo = {{ cores = 1 }}\n[kernel]\nprofile = \"6.12\"\nfeatures = {{ {features} }}\n\
             [[tasks]]\nname = \"hog\"\nprogram = [{{ run = \"100s\" }}]\n\
             [[tasks]]\nname = \"b\"\nprogram = [{{ loop = {{ body = [{{ run = \"300us\" }}, {{ sleep = \"20ms\" }}] }} }}]\n\
             [run]\nduration_s = 1.0\n"
        );
        Simulator::new(&Scenario::from_toml_str(&text, "<test>").unwrap(), 1, false).unwrap()
    }

    /// A task that goes to sleep with negative lag stays on the runqueue (its weight in
    /// the load, its entity in the tree) and leaves it only when woken or when it is
    /// picked, which needs it eligible: then DELAY_ZERO leaves it no positive lag.
    #[test]
    fn a_delayed_task_keeps_competing_until_its_lag_is_spent() {
        let mut s = one_cpu("");
        let (hog, b) = (0, 1);
        let (mut delayed, mut left_by_pick, mut was) = (0, 0, false);
        while s.now < 1_000_000_000 && s.step() {
            let t = &s.tasks[b];
            if t.sched_delayed {
                assert!(t.se.on_rq && matches!(t.state, TaskState::Sleeping | TaskState::Blocked));
                assert_eq!(s.rqs[0].load, s.tasks[hog].se.weight + t.se.weight, "its weight stays in the load");
                // dequeue_entities() returned before sub_nr_running(): the CPU counts it,
                // so the root domain sees this CPU overloaded.
                assert_eq!(s.rqs[0].nr_running, 2, "a delayed task stays in rq->nr_running");
                assert!(s.rqs[0].overloaded);
                delayed += !was as u32;
            } else if was && t.state != TaskState::Runnable && t.state != TaskState::Running {
                // Dequeued at a pick: it was eligible (lag >= 0), clipped to 0.
                assert!(!t.se.on_rq);
                assert_eq!(t.se.vlag, 0);
                left_by_pick += 1;
            }
            was = s.tasks[b].sched_delayed;
            s.check_invariants().unwrap();
        }
        assert!(delayed >= 5 && left_by_pick >= 1, "{delayed} delays, {left_by_pick} ended by a pick");
        let mut off = one_cpu("DELAY_DEQUEUE = false");
        while off.now < 200_000_000 && off.step() {
            assert!(!off.tasks[b].sched_delayed);
        }
    }
}
