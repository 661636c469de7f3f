//! One CPU's runnable RT tasks: a FIFO queue per priority and a bitmap of the non-empty
//! ones, so the highest is found in one bit search.
//!
//! Mirrors: kernel/sched/sched.h `struct rt_prio_array`, rt.c `__enqueue_rt_entity()`
//! (tail, or head for ENQUEUE_HEAD: a preempted task goes back to the front),
//! `__dequeue_rt_entity()`, `pick_next_rt_entity()` (sched_find_first_bit),
//! `requeue_rt_entity()` (SCHED_RR's rotation at the end of a slice, sched_yield()).

use std::collections::VecDeque;

use super::MAX_RT_PRIO;

/// The queues of one CPU's RT runqueue (`rt_rq->active`).
#[derive(Clone, Debug)]
pub struct RtPrioArray {
    /// Bit p set: queue p holds a task (the kernel's bitmap of MAX_RT_PRIO bits).
    bitmap: u128,
    queues: Vec<VecDeque<usize>>,
}

impl Default for RtPrioArray {
    fn default() -> Self {
        RtPrioArray { bitmap: 0, queues: vec![VecDeque::new(); MAX_RT_PRIO] }
    }
}

impl RtPrioArray {
    /// Queues `task` at `prio` (0 the highest): at the tail, or at the head for a task
    /// that was preempted and keeps its place (ENQUEUE_HEAD).
    pub fn enqueue(&mut self, task: usize, prio: usize, head: bool) {
        let q = &mut self.queues[prio];
        if head {
            q.push_front(task);
        } else {
            q.push_back(task);
        }
        self.bitmap |= 1 << prio;
    }

    /// Removes `task` from queue `prio`; false if it was not there.
    pub fn dequeue(&mut self, task: usize, prio: usize) -> bool {
        let q = &mut self.queues[prio];
        let Some(i) = q.iter().position(|&t| t == task) else { return false };
        q.remove(i);
        if q.is_empty() {
            self.bitmap &= !(1 << prio);
        }
        true
    }

    /// Moves `task` to the tail of its queue (SCHED_RR's slice end, sched_yield()).
    pub fn requeue(&mut self, task: usize, prio: usize) {
        if self.dequeue(task, prio) {
            self.enqueue(task, prio, false);
        }
    }

    /// The highest priority queued (the lowest number), if any: rt_rq->highest_prio.curr.
    pub fn highest_prio(&self) -> Option<usize> {
        (self.bitmap != 0).then(|| self.bitmap.trailing_zeros() as usize)
    }

    /// The task `pick_next_rt_entity()` takes: the first of the highest queue.
    pub fn pick(&self) -> Option<usize> {
        self.highest_prio().and_then(|p| self.queues[p].front().copied())
    }

    /// Tasks queued at `prio`.
    pub fn queue_len(&self, prio: usize) -> usize {
        self.queues[prio].len()
    }

    /// Every queued task, highest priority first, each level in queue order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let mut bits = self.bitmap;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let p = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                p
            })
        })
        .flat_map(move |p| self.queues[p].iter().copied())
    }

    /// Tasks queued.
    pub fn len(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }

    /// No task queued.
    pub fn is_empty(&self) -> bool {
        self.bitmap == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_priority_first_then_fifo_within_a_priority() {
        let mut a = RtPrioArray::default();
        a.enqueue(1, 50, false);
        a.enqueue(2, 10, false);
        a.enqueue(3, 10, false);
        assert_eq!((a.highest_prio(), a.pick()), (Some(10), Some(2)));
        // A preempted task goes back to the head of its queue.
        a.enqueue(4, 10, true);
        assert_eq!(a.pick(), Some(4));
        assert!(a.dequeue(4, 10) && a.dequeue(2, 10));
        assert_eq!(a.pick(), Some(3));
        assert!(a.dequeue(3, 10));
        assert_eq!((a.highest_prio(), a.pick()), (Some(50), Some(1)));
        assert!(!a.dequeue(3, 10), "not queued");
        assert!(a.dequeue(1, 50) && a.is_empty() && a.pick().is_none());
    }

    #[test]
    fn round_robin_rotates_within_its_priority() {
        let mut a = RtPrioArray::default();
        for t in [7, 8, 9] {
            a.enqueue(t, 0, false);
        }
        let mut order = Vec::new();
        for _ in 0..4 {
            let t = a.pick().unwrap();
            order.push(t);
            a.requeue(t, 0);
        }
        assert_eq!(order, [7, 8, 9, 7]);
        assert_eq!(a.len(), 3);
    }
}
