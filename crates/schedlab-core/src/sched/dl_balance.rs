//! Global EDF for SCHED_DEADLINE: each CPU's earliest deadline in the root domain's
//! cpudl, and the push and pull that keep the m earliest-deadline tasks running on the
//! m CPUs.
//!
//! Mirrors: kernel/sched/deadline.c (read at 6.18.35): inc_dl_deadline() /
//! dec_dl_deadline() (cpudl_set() / cpudl_clear() as a CPU's earliest deadline
//! changes), select_task_rq_dl() (a waking task whose CPU runs a deadline task it
//! would not preempt, or one that cannot move, goes to find_later_rq()'s CPU if it
//! would be the earliest there), find_later_rq() (cpudl_find(); the task's own CPU if
//! in the mask, else the waking CPU if it is as near as any, else the nearest),
//! push_dl_task() / push_dl_tasks() (after a deadline pick, set_next_task_dl()'s
//! deadline_queue_push_tasks(); and task_woken_dl()), pull_dl_task() (balance_dl():
//! the previous task was a deadline task and left the dl_rq), task_woken_dl().
//! Model: pushable tasks are the queued deadline tasks that are not running and may
//! move; the overloaded CPUs (dlo_mask) are found by walking the CPUs, with the same
//! result. The fair server's deadline is not in cpudl (the kernel's is). Moving a task
//! takes the other runqueue's lock as the RT class's push does; no IPI of its own.

use crate::state::task::TaskId;
use crate::state::Simulator;

impl Simulator {
    #[inline]
    fn dl_deadline(&self, p: TaskId) -> u64 {
        self.tasks[p].sched.dl.map_or(u64::MAX, |d| d.deadline)
    }

    /// dl_rq->earliest_dl.curr: the earliest deadline queued on `cpu` (running or not).
    fn dl_earliest(&self, cpu: usize) -> Option<u64> {
        self.rqs[cpu].dl.queued.iter().map(|&t| self.dl_deadline(t)).min()
    }

    /// After `cpu`'s queued deadline tasks changed: rq->nr_running and cpudl follow.
    pub(crate) fn dl_rq_changed(&mut self, cpu: usize) {
        self.class_nr_sync(cpu);
        match self.dl_earliest(cpu) {
            Some(d) => self.rd.cpudl.set(cpu, d),
            None => self.rd.cpudl.clear(cpu),
        }
    }

    /// The earliest-deadline pushable task of `cpu` (not running, may move) allowed on
    /// `on` if given (pick_next_pushable_dl_task(), pick_earliest_pushable_dl_task()).
    fn dl_pushable(&self, cpu: usize, on: Option<usize>) -> Option<TaskId> {
        let curr = self.rqs[cpu].curr;
        self.rqs[cpu]
            .dl
            .queued
            .iter()
            .copied()
            .filter(|&t| Some(t) != curr && self.tasks[t].nr_cpus_allowed > 1 && on.is_none_or(|c| self.tasks[t].cpus_allowed.test(c)))
            .min_by_key(|&t| (self.dl_deadline(t), t))
    }

    /// dl_task_is_earliest_deadline(): `p` would be the earliest on `cpu`.
    fn dl_task_is_earliest_deadline(&self, p: TaskId, cpu: usize) -> bool {
        self.dl_earliest(cpu).is_none_or(|e| self.dl_deadline(p) < e)
    }

    /// find_later_rq(): where `p` should run, seen from `this_cpu`.
    pub(crate) fn find_later_rq(&self, p: TaskId, this_cpu: usize) -> Option<usize> {
        let t = &self.tasks[p];
        if t.nr_cpus_allowed == 1 {
            return None;
        }
        let mask = self.rd.cpudl.find(self.dl_deadline(p), &t.cpus_allowed)?;
        if mask.test(t.cpu) {
            return Some(t.cpu);
        }
        // The domain walk from the task's CPU out: the waking CPU at the first level
        // that holds it, else a CPU of the mask at the nearest level.
        let nearest = mask.iter().min_by_key(|&c| (self.m.distance(t.cpu, c), c))?;
        if mask.test(this_cpu) && self.m.distance(t.cpu, this_cpu) <= self.m.distance(t.cpu, nearest) {
            return Some(this_cpu);
        }
        Some(nearest)
    }

    /// select_task_rq_dl() of a waking task (a new one stays where it is created).
    pub(crate) fn select_task_rq_dl(&self, p: TaskId, cpu: usize, this_cpu: usize, fork: bool) -> usize {
        if fork {
            return cpu;
        }
        let Some(curr) = self.rqs[cpu].curr else { return cpu };
        let select = self.is_dl(curr)
            && (self.tasks[curr].nr_cpus_allowed < 2 || self.dl_deadline(p) >= self.dl_deadline(curr))
            && self.tasks[p].nr_cpus_allowed > 1;
        if !select {
            return cpu;
        }
        match self.find_later_rq(p, this_cpu) {
            Some(target) if self.dl_task_is_earliest_deadline(p, target) => target,
            _ => cpu,
        }
    }

    /// Moves waiting deadline task `p` from `src` to `dst` (deactivate, set_task_cpu,
    /// activate: its running bandwidth moves with it) and lets `dst` reschedule.
    fn move_queued_dl(&mut self, p: TaskId, src: usize, dst: usize, actor: usize) {
        let other = if actor == src { dst } else { src };
        let spin = self.rq_lock(other, actor, 0);
        self.charge_kernel(actor, spin);
        let bw = self.tasks[p].sched.dl.expect("deadline entity").params.bw();
        let s = &mut self.rqs[src].dl;
        s.running_bw = s.running_bw.saturating_sub(bw);
        s.queued.retain(|&t| t != p);
        self.dl_rq_changed(src);
        self.set_task_cpu(p, dst);
        let d = &mut self.rqs[dst].dl;
        d.running_bw += bw;
        d.queued.push(p);
        self.dl_rq_changed(dst);
        self.resched_curr(dst, actor);
    }

    /// push_dl_task(): moves `cpu`'s earliest waiting deadline task to the CPU
    /// find_later_rq() gives, if it would be the earliest there; true if it moved one.
    fn push_dl_task(&mut self, cpu: usize) -> bool {
        let Some(next) = self.dl_pushable(cpu, None) else { return false };
        if let Some(c) = self.rqs[cpu].curr {
            // It preempts the current task, which can move: reschedule instead.
            if self.is_dl(c) && self.dl_deadline(next) < self.dl_deadline(c) && self.tasks[c].nr_cpus_allowed > 1 {
                self.resched_curr(cpu, cpu);
                return false;
            }
        }
        let Some(later) = self.find_later_rq(next, cpu) else { return false };
        if later == cpu || !self.dl_task_is_earliest_deadline(next, later) {
            return false;
        }
        self.move_queued_dl(next, cpu, later, cpu);
        self.rtc.dl_pushes += 1;
        true
    }

    /// push_dl_tasks().
    pub(crate) fn push_dl_tasks(&mut self, cpu: usize) {
        while self.push_dl_task(cpu) {}
    }

    /// pull_dl_task(): `this` may run an earlier deadline waiting on an overloaded CPU
    /// than its own, unless that task is about to preempt where it is.
    pub(crate) fn pull_dl_task(&mut self, this: usize) {
        let mut dmin = u64::MAX;
        let mut resched = false;
        for src in 0..self.m.nr_cpus() {
            if src == this || self.rqs[src].dl.queued.len() < 2 {
                continue;
            }
            let Some(next) = self.dl_pushable(src, None) else { continue };
            if self.dl_earliest(this).is_some_and(|e| e < self.dl_deadline(next)) {
                continue;
            }
            let Some(p) = self.dl_pushable(src, Some(this)) else { continue };
            let d = self.dl_deadline(p);
            if d >= dmin || !self.dl_task_is_earliest_deadline(p, this) {
                continue;
            }
            // Earlier than what runs there: it preempts there instead.
            if self.rqs[src].curr.is_some_and(|c| self.is_dl(c) && d < self.dl_deadline(c)) {
                continue;
            }
            self.move_queued_dl(p, src, this, this);
            self.rtc.dl_pulls += 1;
            dmin = d;
            resched = true;
        }
        if resched {
            self.resched_curr(this, this);
        }
    }

    /// task_woken_dl(): a woken deadline task that will not run here soon is pushed.
    pub(crate) fn task_woken_dl(&mut self, cpu: usize, p: TaskId) {
        let Some(c) = self.rqs[cpu].curr else { return };
        if c == p || self.rqs[cpu].resched_pending || self.tasks[p].nr_cpus_allowed < 2 || !self.is_dl(c) {
            return;
        }
        if self.tasks[c].nr_cpus_allowed < 2 || self.dl_deadline(p) >= self.dl_deadline(c) {
            self.push_dl_tasks(cpu);
        }
    }
}
