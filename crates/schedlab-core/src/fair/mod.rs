//! The fair class: runqueue operations shared by CFS and EEVDF, over the hierarchy of
//! group scheduling entities.
//!
//! Mirrors: kernel/sched/fair.c: enqueue_task_fair()/enqueue_entity(),
//! dequeue_task_fair()/dequeue_entity(), pick_next_task_fair()/set_next_entity(),
//! put_prev_task_fair()/put_prev_entity(), update_curr(), task_tick_fair()/entity_tick(),
//! wakeup_preempt_fair() (check_preempt_wakeup), migrate_task_rq_fair().
//! Model: the policy-specific rules (vruntime/slices for CFS; lag, eligibility and
//! deadlines for EEVDF) live in `cfs` and `eevdf`; the cfs_rqs and group entities in
//! `group`. Every level keeps the sums both policies need (load, avg_vruntime); the
//! running task and its group entities are each their cfs_rq's `curr`, off the tree.

pub mod asym;
pub mod balance;
mod cfs;
pub(crate) mod class;
mod delay;
mod eevdf;
mod energy;
pub mod group;
mod invariants;
pub mod pelt;
pub mod placement;
pub mod shared_runq;

use crate::kernel::FairPolicy;
use crate::state::cfs_rq::is_group;
pub(crate) use crate::state::cfs_rq::{calc_delta_fair, VRUNTIME_BASE};
use crate::state::task::{TaskId, TaskState};
use crate::state::timeline::{EntityId, GROUP_SE};
use crate::state::Simulator;
use crate::time::Ns;

impl Simulator {
    #[inline]
    pub(crate) fn policy(&self) -> FairPolicy {
        self.k.policy
    }

    /// Puts `p` on `cpu`'s cfs_tasks list (the order load balance walks).
    fn list_add(&mut self, cpu: usize, p: TaskId) {
        let q = &mut self.rqs[cpu].queue;
        let ix = &mut self.queue_index;
        if ix.pos.len() <= p {
            ix.pos.resize(p + 1, u32::MAX);
        }
        ix.pos[p] = q.tasks.len() as u32;
        q.tasks.push(p);
        ix.nonempty.set(cpu);
        self.srq_enqueue_entity(cpu, p);
    }

    /// Takes `p` off `cpu`'s list; the list's last task fills its place.
    fn list_del(&mut self, cpu: usize, p: TaskId) {
        let q = &mut self.rqs[cpu].queue;
        let ix = &mut self.queue_index;
        let i = ix.pos[p] as usize;
        debug_assert_eq!(q.tasks.get(i), Some(&p), "task {p} is not queued on CPU {cpu}");
        q.tasks.swap_remove(i);
        if let Some(&moved) = q.tasks.get(i) {
            ix.pos[moved] = i as u32;
        }
        if q.tasks.is_empty() {
            ix.nonempty.clear(cpu);
        }
        self.swq_remove(p);
    }

    /// __enqueue_entity(): `e` joins its cfs_rq's tree.
    fn tree_insert(&mut self, c: usize, e: EntityId) {
        let se = self.se(e);
        let (v, d) = (se.vruntime, se.deadline);
        self.queue_index.timeline.insert(&mut self.fg.cfs[c].timeline, e, v, d);
    }

    /// __dequeue_entity().
    fn tree_remove(&mut self, c: usize, e: EntityId) {
        self.queue_index.timeline.remove(&mut self.fg.cfs[c].timeline, e);
    }

    /// The queued entity of cfs_rq `c` with the smallest vruntime (the tree's leftmost).
    #[inline]
    pub(crate) fn cfs_leftmost(&self, c: usize) -> Option<EntityId> {
        self.queue_index.timeline.leftmost(self.fg.cfs[c].timeline)
    }

    /// Adds an entity's weight and key to its cfs_rq's sums (account_entity_enqueue).
    fn account_entity_enqueue(&mut self, c: usize, e: EntityId) {
        let se = *self.se(e);
        let q = &mut self.fg.cfs[c];
        q.load += se.weight;
        q.nr_queued += 1;
        q.avg_vruntime_sum += (se.vruntime as i128 - q.min_vruntime as i128) * se.weight as i128;
        self.cfs_load_changed(c, se.weight as i64);
    }

    /// Removes an entity's weight and key from its cfs_rq's sums.
    fn account_entity_dequeue(&mut self, c: usize, e: EntityId) {
        let se = *self.se(e);
        let q = &mut self.fg.cfs[c];
        q.load -= se.weight;
        q.nr_queued -= 1;
        q.avg_vruntime_sum -= (se.vruntime as i128 - q.min_vruntime as i128) * se.weight as i128;
        self.cfs_load_changed(c, -(se.weight as i64));
    }

    /// A cfs_rq's weight changed: a root's is the CPU's load; a group's feeds tg->load.
    fn cfs_load_changed(&mut self, c: usize, delta: i64) {
        let nr = self.m.nr_cpus();
        if c < nr {
            let rq = &mut self.rqs[c];
            rq.load = (rq.load as i64 + delta) as u64;
            self.load_sums.load_changed(c, delta);
        } else if !self.pelt_on() {
            self.update_tg_load_avg(c);
        }
    }

    /// Returns the load-weighted average vruntime V of cfs_rq `c` (avg_vruntime).
    pub(crate) fn avg_vruntime(&self, c: usize) -> u64 {
        let q = &self.fg.cfs[c];
        if q.load == 0 {
            return q.min_vruntime;
        }
        (q.min_vruntime as i128 + q.avg_vruntime_sum.div_euclid(q.load as i128)) as u64
    }

    /// Advances min_vruntime to min(curr, leftmost), never backwards.
    pub(crate) fn update_min_vruntime(&mut self, c: usize) {
        let q = &self.fg.cfs[c];
        let curr = q.curr.filter(|&e| self.on_rq(e)).map(|e| self.se(e).vruntime);
        let left = self.queue_index.timeline.leftmost_vruntime(q.timeline);
        let candidate = match (curr, left) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return,
        };
        let q = &mut self.fg.cfs[c];
        if candidate > q.min_vruntime {
            let d = candidate - q.min_vruntime;
            q.avg_vruntime_sum -= d as i128 * q.load as i128;
            q.min_vruntime = candidate;
        }
    }

    /// Fair-class part of update_curr, at every level of the running task `c`:
    /// vruntime, min_vruntime, deadline, then bandwidth (by the caller).
    pub(crate) fn update_curr_fair(&mut self, cpu: usize, c: TaskId, delta: Ns) {
        let running = self.tasks[c].state == TaskState::Running;
        let mut e = c;
        loop {
            let q = self.cfs_of(e, cpu);
            let w = self.se(e).weight;
            let dv = calc_delta_fair(delta, w);
            let on_rq = self.on_rq(e) && (running || is_group(e));
            let se = self.se_mut(e);
            se.vruntime += dv;
            if is_group(e) {
                se.sum_exec_runtime += delta;
            }
            if on_rq {
                self.fg.cfs[q].avg_vruntime_sum += dv as i128 * w as i128;
            }
            self.update_min_vruntime(q);
            if self.policy() == FairPolicy::Eevdf && on_rq {
                self.update_deadline(q, e, cpu);
                if self.resched_next_slice(q, e) {
                    self.resched_curr(cpu, cpu);
                    self.clear_buddies(q, e, cpu);
                }
            }
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
    }

    /// reweight_entity(): gives `e` a new weight, keeping its lag (EEVDF) and its place
    /// in its cfs_rq's sums.
    pub(crate) fn reweight_entity(&mut self, cpu: usize, e: EntityId, weight: u64) {
        let old = self.se(e).weight;
        if weight == old {
            return;
        }
        let c = self.cfs_of(e, cpu);
        let eevdf = self.policy() == FairPolicy::Eevdf;
        if !self.on_rq(e) {
            if eevdf {
                let se = self.se_mut(e);
                se.vlag = (se.vlag as i128 * old as i128 / weight as i128) as i64;
            }
            self.se_mut(e).weight = weight;
            return;
        }
        let is_curr = self.fg.cfs[c].curr == Some(e);
        let v = self.avg_vruntime(c) as i128;
        if !is_curr {
            self.tree_remove(c, e);
        }
        self.account_entity_dequeue(c, e);
        let se = self.se_mut(e);
        if eevdf {
            // reweight_eevdf(): lag and the deadline's distance scale by old/new weight.
            let scale = |x: i128| x * old as i128 / weight as i128;
            let (v0, d0) = (se.vruntime, se.deadline);
            se.vruntime = (v - scale(v - se.vruntime as i128)).max(0) as u64;
            se.deadline = (v + scale(se.deadline as i128 - v)).max(0) as u64;
            // 6.17+: a protection short of the deadline keeps its distance, rescaled.
            if se.vprot != u64::MAX {
                se.vprot = if se.vprot == d0 { se.deadline } else { (se.vruntime as i128 + scale(se.vprot as i128 - v0 as i128)).max(0) as u64 };
            }
        }
        se.weight = weight;
        self.account_entity_enqueue(c, e);
        if !is_curr {
            self.tree_insert(c, e);
        }
        self.update_min_vruntime(c);
    }

    /// enqueue_entity(): places `e` (unless `place` is false for a task already placed),
    /// adds it to its cfs_rq and, unless it runs there, to the tree.
    fn enqueue_entity(&mut self, cpu: usize, e: EntityId, place: bool) {
        let c = self.cfs_of(e, cpu);
        self.update_load_avg(c, e, cpu);
        self.update_cfs_group(e, cpu);
        if place {
            match self.policy() {
                FairPolicy::Cfs => self.place_entity_cfs(c, e, false, cpu),
                FairPolicy::Eevdf => self.place_entity_eevdf(c, e, false),
            }
        }
        self.account_entity_enqueue(c, e);
        if self.fg.cfs[c].curr != Some(e) {
            self.tree_insert(c, e);
        }
        if is_group(e) {
            self.fg.gse_on_rq[e & !GROUP_SE] = true;
        } else {
            self.tasks[e].se.on_rq = true;
        }
    }

    /// dequeue_entity(): takes `e` off its cfs_rq (its lag kept, EEVDF).
    fn dequeue_entity(&mut self, cpu: usize, e: EntityId) {
        let c = self.cfs_of(e, cpu);
        self.clear_buddies(c, e, cpu);
        self.update_load_avg(c, e, cpu);
        if self.policy() == FairPolicy::Eevdf {
            self.update_entity_lag(c, e);
        }
        if self.fg.cfs[c].curr != Some(e) {
            self.tree_remove(c, e);
        }
        self.account_entity_dequeue(c, e);
        if is_group(e) {
            self.fg.gse_on_rq[e & !GROUP_SE] = false;
        } else {
            self.tasks[e].se.on_rq = false;
        }
    }

    /// enqueue_task_fair(): the task, then every group entity that was not queued
    /// (placed as wakeups); the rest re-weighted. `place_task`: place the task itself.
    /// The caller has run update_curr and set the task's state.
    pub(crate) fn enqueue_task_fair(&mut self, cpu: usize, p: TaskId, place_task: bool) {
        let mut e = p;
        let mut place = place_task;
        let mut climbing = true;
        loop {
            self.group_slice_update(e);
            if climbing && (e == p || !self.on_rq(e)) {
                self.enqueue_entity(cpu, e, place);
                place = true;
            } else {
                climbing = false;
                self.update_load_avg(self.cfs_of(e, cpu), e, cpu);
                self.update_cfs_group(e, cpu);
            }
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
        self.add_h_nr_running(cpu, p, 1);
        self.readd_queued(cpu, p);
        self.eas_enqueue(cpu, p);
    }

    /// dequeue_task_fair()'s walk: the task, then each group entity whose cfs_rq it
    /// leaves empty; the rest re-weighted. A queued (not running) task leaves the list.
    fn dequeue_entities(&mut self, cpu: usize, p: TaskId) {
        self.dequeue_entities_sleep(cpu, p, false);
    }

    /// dequeue_entities(); `sleep`: DEQUEUE_SLEEP (the task blocks or exits).
    fn dequeue_entities_sleep(&mut self, cpu: usize, p: TaskId, sleep: bool) {
        self.eas_dequeue(p);
        if self.rqs[cpu].curr != Some(p) {
            self.list_del(cpu, p);
            self.wc_waiting(cpu, p, -1);
        }
        self.dequeue_levels_sleep(cpu, p, sleep);
        self.add_h_nr_running(cpu, p, -1);
        self.idle_policy_nr(cpu, p, -1);
        self.add_nr_running(cpu, -1);
    }

    /// The entity walk of a dequeue: the task, then each group entity left empty.
    /// dequeue_levels(); `sleep`: the task goes to sleep (DEQUEUE_SLEEP), and under EEVDF
    /// the group it leaves non-empty becomes the next buddy of its own cfs_rq
    /// (dequeue_entities(): "bias pick_next to pick a task from this cfs_rq").
    pub(crate) fn dequeue_levels_sleep(&mut self, cpu: usize, p: TaskId, sleep: bool) {
        let mut e = p;
        let mut climbing = true;
        loop {
            if climbing {
                self.dequeue_entity(cpu, e);
                // Don't dequeue the parent if it has other entities besides us.
                climbing = self.fg.cfs[self.cfs_of(e, cpu)].nr_queued == 0;
                if !climbing && sleep && self.policy() == FairPolicy::Eevdf {
                    if let Some(pe) = self.parent_entity(e, cpu) {
                        self.set_next_buddy(pe, cpu);
                    }
                }
            } else {
                self.update_load_avg(self.cfs_of(e, cpu), e, cpu);
                self.update_cfs_group(e, cpu);
                self.group_slice_update(e);
            }
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
    }

    /// enqueue_task_fair() / dequeue_entities() (6.12+): a group entity's slice is its
    /// own queue's shortest (cfs_rq_min_slice()), so the group serves its entities in the
    /// time they asked for. Only custom slices make it differ from the base slice.
    fn group_slice_update(&mut self, e: EntityId) {
        if !self.fg.custom_slices || !is_group(e) {
            return;
        }
        if let Some((min, _)) = self.cfs_rq_slice_bounds(e & !GROUP_SE) {
            let se = self.se_mut(e);
            se.slice = min;
            se.custom_slice = true;
        }
    }

    /// A queued task joins the cfs_tasks list and the runnable counts.
    fn readd_queued(&mut self, cpu: usize, p: TaskId) {
        self.list_add(cpu, p);
        self.wc_waiting(cpu, p, 1);
        self.idle_policy_nr(cpu, p, 1);
        self.add_nr_running(cpu, 1);
    }

    /// h_nr_running of every cfs_rq from task `p`'s up to the root.
    fn add_h_nr_running(&mut self, cpu: usize, p: TaskId, delta: i32) {
        let mut e = p;
        loop {
            let c = self.cfs_of(e, cpu);
            let q = &mut self.fg.cfs[c];
            q.h_nr_running = (q.h_nr_running as i32 + delta) as u32;
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
    }

    /// Removes the running task `p` from the sums because it blocks (`sleep`) or exits;
    /// a sleeper that is not eligible may stay queued, delayed (DELAY_DEQUEUE, 6.12+).
    pub(crate) fn dequeue_task_fair(&mut self, cpu: usize, p: TaskId, sleep: bool) {
        debug_assert_eq!(self.rqs[cpu].curr, Some(p));
        self.update_curr(cpu);
        // util_est_dequeue() first, util_est_update() once the walk updated util_avg
        // (4.17-6.11's order; a delayed task is sampled as it stands).
        self.eas_dequeue(p);
        if sleep && self.try_delay_dequeue(cpu, p) {
            self.eas_util_est_update(cpu, p);
            self.tasks[p].state = TaskState::Blocked;
            self.swq_remove(p);
            self.cpufreq_update_util(cpu, false);
            return;
        }
        self.dequeue_entities_sleep(cpu, p, sleep);
        if sleep {
            self.eas_util_est_update(cpu, p);
        }
        self.tasks[p].state = TaskState::Blocked;
        self.bw_dequeue(cpu, p);
        self.swq_remove(p);
        self.cpufreq_update_util(cpu, false);
    }

    /// Takes a queued (not running) task off `cpu` for migration (detach_task).
    pub(crate) fn detach_task(&mut self, cpu: usize, p: TaskId) {
        self.swq_remove(p);
        self.dequeue_entities(cpu, p);
        if self.policy() == FairPolicy::Eevdf && self.feat.has(crate::features::Feature::PLACE_REL_DEADLINE) {
            // dequeue_entity() without DEQUEUE_SLEEP: the deadline goes relative.
            let se = &mut self.tasks[p].se;
            se.deadline = se.deadline.wrapping_sub(se.vruntime);
            se.rel_deadline = true;
        }
        self.bw_dequeue(cpu, p);
        self.cpufreq_update_util(cpu, false);
    }

    /// Takes a runnable task off the runqueue because its group is throttled here
    /// (throttle_cfs_rq before 6.18, throttle_cfs_rq_work from 6.18): it waits on the
    /// CPU's throttled list.
    pub(crate) fn throttle_task(&mut self, cpu: usize, p: TaskId) {
        self.dequeue_entities(cpu, p);
        self.tasks[p].state = TaskState::Throttled;
        self.rqs[cpu].throttled.push(p);
    }

    /// Puts a task back from the throttled list (unthrottle_cfs_rq / tg_unthrottle_up).
    /// Before 6.18 a throttled task never left its group cfs_rq's tree (throttle_cfs_rq
    /// takes the group's entity off its parent), so it comes back with the vruntime and
    /// deadline it had: its cfs_rq's clock stood still meanwhile. Re-placing it by its
    /// lag, into a cfs_rq the model had emptied, dropped that lag (place_entity ignores
    /// it on an empty cfs_rq) and let a task woken later tie with or beat one that had
    /// waited periods (a starvation the liveness property found). From 6.18 the held task
    /// was dequeued (DEQUEUE_THROTTLE) and tg_unthrottle_up() enqueues it as a wakeup,
    /// placed by its lag.
    pub(crate) fn unthrottle_task(&mut self, cpu: usize, p: TaskId) {
        self.rqs[cpu].throttled.retain(|&t| t != p);
        self.update_curr(cpu);
        self.tasks[p].state = TaskState::Runnable;
        let task_throttle = self.bw.control.as_ref().is_some_and(|b| b.mode().task_throttle);
        let place = self.policy() == FairPolicy::Eevdf && task_throttle;
        self.enqueue_task_fair(cpu, p, place);
    }

    /// Puts a detached task on `dst` (attach_task), keeping its lag or relative vruntime.
    pub(crate) fn attach_task(&mut self, dst: usize, p: TaskId) {
        self.set_task_cpu(p, dst);
        self.update_curr(dst);
        let place = self.policy() == FairPolicy::Eevdf;
        self.enqueue_task_fair(dst, p, place);
        if self.bw_enqueue(dst, p) {
            self.throttle_task(dst, p);
        }
        self.cpufreq_update_util(dst, false);
        if self.tasks[p].state == TaskState::Runnable {
            self.wakeup_preempt(dst, p, dst);
        }
    }

    /// Renormalizes a sleeping task's vruntime when its CPU changes and takes its load
    /// averages off the old CPU (migrate_task_rq_fair).
    pub(crate) fn migrate_entity(&mut self, p: TaskId, src: usize, dst: usize) {
        self.detach_entity_load_avg(p, src);
        if self.policy() == FairPolicy::Cfs {
            let g = self.task_group(p);
            let (s, d) = (self.fg.cfs[self.fg.cfs_index(g, src)].min_vruntime, self.fg.cfs[self.fg.cfs_index(g, dst)].min_vruntime);
            let se = &mut self.tasks[p].se;
            se.vruntime = (se.vruntime as i128 - s as i128 + d as i128).max(0) as u64;
        }
    }

    /// Places a new task (fork): START_DEBIT or PLACE_DEADLINE_INITIAL.
    pub(crate) fn place_new_entity(&mut self, cpu: usize, p: TaskId) {
        self.update_curr(cpu);
        self.tasks[p].se.vruntime = 0;
        self.init_entity_avg(p, cpu);
        let c = self.cfs_of(p, cpu);
        match self.policy() {
            FairPolicy::Cfs => self.place_entity_cfs(c, p, true, cpu),
            FairPolicy::Eevdf => {
                self.tasks[p].se.vlag = 0;
                self.place_entity_eevdf(c, p, true)
            }
        }
    }

    /// put_prev_entity() at every level of `p`'s hierarchy: each level's curr goes back
    /// into its tree if it is still queued, and stops being curr.
    pub(crate) fn put_prev_entities(&mut self, cpu: usize, p: TaskId) {
        let mut e = p;
        loop {
            let c = self.cfs_of(e, cpu);
            if self.fg.cfs[c].curr == Some(e) {
                if self.on_rq(e) {
                    self.update_load_avg(c, e, cpu);
                }
                self.fg.cfs[c].curr = None;
                if self.on_rq(e) {
                    self.tree_insert(c, e);
                }
            }
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
    }

    /// Puts the preempted current task back on the queue (put_prev_task_fair), or on
    /// the throttled list if its group ran out of runtime.
    pub(crate) fn put_prev_task_fair(&mut self, cpu: usize, p: TaskId) {
        let t = &mut self.tasks[p];
        t.state = TaskState::Runnable;
        t.runnable_since = self.now;
        if self.bw_put_prev(cpu, p) {
            self.throttle_task(cpu, p);
        } else {
            self.list_add(cpu, p);
            self.wc_waiting(cpu, p, 1);
        }
        self.put_prev_entities(cpu, p);
    }

    /// set_next_entity(): `e` leaves the tree and runs at its level. `first`: `e` was
    /// not running there before this pick, so its slice protection starts now
    /// (set_protect_slice()).
    fn set_next_entity(&mut self, c: usize, e: EntityId, cpu: usize, first: bool) {
        self.clear_buddies(c, e, cpu);
        self.update_load_avg(c, e, cpu);
        self.tree_remove(c, e);
        if first {
            self.set_protect_slice(c, e);
        }
        self.fg.cfs[c].curr = Some(e);
        let se = self.se_mut(e);
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
    }

    /// Picks and removes the next task to run from `cpu`'s queue (pick_next_task_fair):
    /// from the root down, the policy's pick at each level.
    pub(crate) fn pick_next_task_fair(&mut self, cpu: usize) -> Option<TaskId> {
        let next = self.pick_next_entity_fair(cpu);
        self.update_misfit_status(cpu, next);
        next
    }

    fn pick_next_entity_fair(&mut self, cpu: usize) -> Option<TaskId> {
        let root = self.root_cfs(cpu);
        // Descend to a task (pick_next_entity at each level); a delayed one is dequeued
        // and the pick starts over. Only then does each level's entity become its curr.
        let next = 'again: loop {
            if self.fg.cfs[root].nr_queued == 0 {
                return None;
            }
            let mut c = root;
            loop {
                let e = match self.policy() {
                    FairPolicy::Cfs => self.cfs_leftmost(c),
                    FairPolicy::Eevdf => self.pick_buddy(c).or_else(|| self.pick_eevdf(c, false, true)),
                }?;
                if !is_group(e) {
                    if self.tasks[e].sched_delayed {
                        self.finish_delayed_dequeue_task(cpu, e);
                        continue 'again;
                    }
                    break 'again e;
                }
                c = e & !GROUP_SE;
            }
        };
        // pick_next_task_fair() puts and sets only the part of the hierarchy that
        // changes (prev != p, is_same_group()): an entity that stays current, the
        // task itself picked again or a shared group, keeps its protection as it was.
        let prev = self.rqs[cpu].curr;
        let mut e = next;
        loop {
            let c = self.cfs_of(e, cpu);
            let stays = prev.is_some_and(|p| {
                let mut x = Some(p);
                while let Some(y) = x {
                    if y == e {
                        return true;
                    }
                    x = self.parent_entity(y, cpu);
                }
                false
            });
            self.set_next_entity(c, e, cpu, !stays);
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
        self.list_del(cpu, next);
        self.wc_waiting(cpu, next, -1);
        self.swq_remove(next);
        self.bw_pick(cpu, next);
        Some(next)
    }

    /// task_tick_fair() / entity_tick() at every level: PELT and group weights, and under
    /// CFS the tick's preemption check. EEVDF (6.6+) has none: check_preempt_tick() went
    /// with CFS, and a task is preempted at the tick only by update_curr()'s
    /// update_deadline() once its slice is used (the scheduler_tick's update_curr()).
    pub(crate) fn task_tick_fair(&mut self, cpu: usize) {
        let Some(p) = self.rqs[cpu].curr else { return };
        let idle_queue = self.rqs[cpu].queue.is_empty();
        let mut e = p;
        let mut preempt = false;
        loop {
            let c = self.cfs_of(e, cpu);
            if self.on_rq(e) {
                self.update_load_avg(c, e, cpu);
            }
            self.update_cfs_group(e, cpu);
            if self.policy() == FairPolicy::Cfs && !idle_queue && self.fg.cfs[c].nr_queued > 1 && self.on_rq(e) {
                preempt |= self.check_preempt_tick(c, e, cpu);
            }
            match self.parent_entity(e, cpu) {
                Some(pe) => e = pe,
                None => break,
            }
        }
        self.update_misfit_status(cpu, Some(p));
        if self.eas.schedutil {
            self.check_update_overutilized_status(cpu);
            self.cpufreq_update_util(cpu, false);
        }
        if preempt {
            self.resched_curr(cpu, cpu);
        }
    }
}
