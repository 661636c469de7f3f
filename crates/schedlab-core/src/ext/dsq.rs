//! Dispatch queues: where a sched_ext scheduler puts its runnable tasks between its
//! callbacks and the CPUs.
//!
//! Mirrors: kernel/sched/ext.c `struct scx_dispatch_q` and dispatch_enqueue() /
//! task_unlink_from_dsq(): a DSQ is a FIFO list, or a priority queue ordered by each
//! task's `dsq_vtime` (PRIQ, `scx_bpf_dsq_insert_vtime()`); one DSQ never mixes the two,
//! and the built-in DSQs (each CPU's local DSQ, the global one) are FIFO only.
//! `SCX_ENQ_HEAD` puts a task at a FIFO's head.
//! Model: a FIFO is a deque; a PRIQ a sorted map keyed by (vtime, insertion sequence),
//! so equal vtimes keep their insertion order as the kernel's rbtree insert does
//! (a new node goes right of equal keys).

use std::collections::{BTreeMap, VecDeque};

use crate::state::task::TaskId;

/// A DSQ's id as a scheduler names it (`SCX_DSQ_*` and the ids of
/// `scx_bpf_create_dsq()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DsqId {
    /// SCX_DSQ_LOCAL: the local DSQ of the CPU the callback runs for (from
    /// `ops.select_cpu()`: the CPU it returns; from `ops.enqueue()`: the task's CPU).
    Local,
    /// SCX_DSQ_LOCAL_ON | cpu: that CPU's local DSQ.
    LocalOn(usize),
    /// SCX_DSQ_GLOBAL: the one global FIFO every CPU consumes before `ops.dispatch()`.
    Global,
    /// A DSQ the scheduler created (`scx_bpf_create_dsq(id, node)`).
    User(u64),
}

/// How a DSQ orders its tasks, fixed by its first insert while it holds any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsqOrder {
    /// Insertion order (`scx_bpf_dsq_insert()`).
    Fifo,
    /// By `dsq_vtime` (`scx_bpf_dsq_insert_vtime()`).
    Vtime,
}

/// One dispatch queue.
#[derive(Clone, Debug, Default)]
pub struct Dsq {
    fifo: VecDeque<TaskId>,
    priq: BTreeMap<(u64, u64), TaskId>,
    /// Each queued task's key in `priq`, to unlink it without a search.
    keys: BTreeMap<TaskId, (u64, u64)>,
    seq: u64,
    /// Tasks ever inserted (what `SCX_EV_*`-style figures and the result's per-DSQ
    /// counts read).
    pub inserted: u64,
    /// The largest number of tasks queued at once.
    pub max_queued: usize,
}

impl Dsq {
    /// Tasks queued (`dsq->nr`, `scx_bpf_dsq_nr_queued()`).
    pub fn len(&self) -> usize {
        self.fifo.len() + self.priq.len()
    }

    /// Whether no task is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The order its queued tasks are in (None: empty, either may come next).
    pub fn order(&self) -> Option<DsqOrder> {
        if !self.fifo.is_empty() {
            Some(DsqOrder::Fifo)
        } else if !self.priq.is_empty() {
            Some(DsqOrder::Vtime)
        } else {
            None
        }
    }

    /// dispatch_enqueue() in FIFO order (`head`: SCX_ENQ_HEAD). Refused when the DSQ
    /// holds vtime-ordered tasks ("cannot mix vtime and FIFO dispatches").
    pub fn push_fifo(&mut self, p: TaskId, head: bool) -> Result<(), String> {
        if !self.priq.is_empty() {
            return Err("DSQ is already vtime-ordered: FIFO and vtime inserts cannot be mixed on one DSQ".into());
        }
        if head {
            self.fifo.push_front(p);
        } else {
            self.fifo.push_back(p);
        }
        self.noted();
        Ok(())
    }

    /// dispatch_enqueue() with SCX_ENQ_DSQ_PRIQ: ordered by `vtime`, after equal ones.
    /// Refused when the DSQ holds FIFO-ordered tasks.
    pub fn push_vtime(&mut self, p: TaskId, vtime: u64) -> Result<(), String> {
        if !self.fifo.is_empty() {
            return Err("DSQ is already FIFO-ordered: FIFO and vtime inserts cannot be mixed on one DSQ".into());
        }
        let key = (vtime, self.seq);
        self.seq += 1;
        self.priq.insert(key, p);
        self.keys.insert(p, key);
        self.noted();
        Ok(())
    }

    fn noted(&mut self) {
        self.inserted += 1;
        self.max_queued = self.max_queued.max(self.len());
    }

    /// The first task (the head of the FIFO, or the smallest vtime).
    pub fn first(&self) -> Option<TaskId> {
        self.fifo.front().copied().or_else(|| self.priq.values().next().copied())
    }

    /// Takes the first task.
    pub fn pop_first(&mut self) -> Option<TaskId> {
        if let Some(p) = self.fifo.pop_front() {
            return Some(p);
        }
        let (_, p) = self.priq.pop_first()?;
        self.keys.remove(&p);
        Some(p)
    }

    /// Takes the first task `ok` accepts (a consumer skips tasks that may not run on its
    /// CPU, as consume_dispatch_q() does with task_can_run_on_remote_rq()).
    pub fn pop_first_where(&mut self, mut ok: impl FnMut(TaskId) -> bool) -> Option<TaskId> {
        if let Some(i) = self.fifo.iter().position(|&p| ok(p)) {
            return self.fifo.remove(i);
        }
        let key = self.priq.iter().find(|(_, &p)| ok(p)).map(|(k, _)| *k)?;
        let p = self.priq.remove(&key)?;
        self.keys.remove(&p);
        Some(p)
    }

    /// task_unlink_from_dsq(): takes `p` out wherever it is; false if not queued here.
    pub fn remove(&mut self, p: TaskId) -> bool {
        if let Some(key) = self.keys.remove(&p) {
            self.priq.remove(&key);
            return true;
        }
        if let Some(i) = self.fifo.iter().position(|&q| q == p) {
            self.fifo.remove(i);
            return true;
        }
        false
    }

    /// The queued tasks in order (the DSQ iterator, `bpf_for_each(scx_dsq, ...)`).
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.fifo.iter().copied().chain(self.priq.values().copied())
    }

    /// Whether `p` is queued here.
    pub fn contains(&self, p: TaskId) -> bool {
        self.keys.contains_key(&p) || self.fifo.contains(&p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_keeps_insertion_order_and_head_inserts_first() {
        let mut q = Dsq::default();
        q.push_fifo(1, false).unwrap();
        q.push_fifo(2, false).unwrap();
        q.push_fifo(3, true).unwrap();
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![3, 1, 2]);
        assert_eq!(q.pop_first(), Some(3));
        assert!(q.remove(2));
        assert_eq!(q.pop_first(), Some(1));
        assert!(q.is_empty());
        assert_eq!((q.inserted, q.max_queued), (3, 3));
    }

    #[test]
    fn vtime_orders_by_vtime_then_insertion_and_refuses_mixing() {
        let mut q = Dsq::default();
        q.push_vtime(1, 50).unwrap();
        q.push_vtime(2, 10).unwrap();
        q.push_vtime(3, 50).unwrap();
        assert_eq!(q.iter().collect::<Vec<_>>(), vec![2, 1, 3]);
        assert!(q.push_fifo(4, false).is_err());
        assert_eq!(q.pop_first_where(|p| p != 2), Some(1));
        assert!(q.remove(2));
        assert_eq!(q.pop_first(), Some(3));
        // Empty again: either order may start.
        q.push_fifo(4, false).unwrap();
        assert!(q.push_vtime(5, 1).is_err());
    }
}
