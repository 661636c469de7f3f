//! The synchronization objects of task programs: channels (pipes, futex words, work
//! queues), sleeping mutexes and barriers, with their semantics and nothing else.
//!
//! Mirrors: a pipe's buffer and wait queues (fs/pipe.c), a futex word and its hash
//! bucket's waiters (kernel/futex), pthread mutexes with hand-off and barriers built on
//! them.
//! Model: SimPy's resources are the shape: each object holds its state and decides who
//! gets what (a token, the lock, a release); the engine's glue (`sched/ipc.rs`) charges
//! the system calls, blocks the caller and wakes whoever the object names. Nothing here
//! knows about time, CPUs' costs or the scheduler.

use std::collections::VecDeque;

use crate::state::task::TaskId;
use crate::time::Ns;

/// A pipe/futex-like channel: banked signals and blocked waiters.
#[derive(Clone, Debug, Default)]
pub struct Channel {
    /// Signals not yet consumed.
    pub tokens: u64,
    /// Tasks blocked in `wait`, FIFO.
    pub waiters: VecDeque<TaskId>,
    /// Send times of the banked signals, oldest first.
    pub stamps: VecDeque<Ns>,
    /// Unread messages a bounded channel holds before `send` blocks (0 = unbounded).
    pub capacity: u64,
    /// A read leaving at most this many unread messages wakes the blocked writers.
    pub wake_at: u64,
    /// Tasks blocked in `send` on a full channel.
    pub writers: VecDeque<TaskId>,
}

impl Channel {
    /// A signal sent at `stamp`: the first waiter to wake, if any; otherwise the signal
    /// is banked for the next `wait`.
    pub fn signal(&mut self, stamp: Ns) -> Option<TaskId> {
        let woken = self.waiters.pop_front();
        if woken.is_none() {
            self.tokens += 1;
            self.stamps.push_back(stamp);
        }
        woken
    }

    /// A `wait` that finds a banked signal takes it: returns its send time (or `now`
    /// if it carried none) and, on a bounded channel whose read leaves it at most
    /// `wake_at` full, every blocked writer (they retry their write).
    pub fn take(&mut self, now: Ns) -> (Ns, Vec<TaskId>) {
        self.tokens -= 1;
        let stamp = self.stamps.pop_front().unwrap_or(now);
        let writers = if !self.writers.is_empty() && self.tokens <= self.wake_at { std::mem::take(&mut self.writers).into() } else { Vec::new() };
        (stamp, writers)
    }

    /// Whether a `send` now would find the channel full (nobody waiting to read and
    /// `capacity` messages unread) and block.
    pub fn send_blocks(&self) -> bool {
        self.waiters.is_empty() && self.tokens >= self.capacity
    }

    /// A `post` with nobody waiting sets the flag word: one banked signal, stamped now,
    /// however many posts came before.
    pub fn set_flag(&mut self, stamp: Ns) {
        self.tokens = 1;
        self.stamps.clear();
        self.stamps.push_back(stamp);
    }
}

/// A sleeping mutex, handed to its waiters in order.
#[derive(Clone, Debug, Default)]
pub struct Mutex {
    /// Holder.
    pub owner: Option<TaskId>,
    /// Tasks blocked in `lock`, FIFO (handed the lock in order).
    pub waiters: VecDeque<TaskId>,
    /// CPU that last wrote the lock word.
    pub last_cpu: Option<usize>,
}

impl Mutex {
    /// `lock` by task `c`: true if it took a free lock; otherwise it is queued.
    pub fn lock(&mut self, c: TaskId) -> bool {
        if self.owner.is_none() {
            self.owner = Some(c);
            true
        } else {
            self.waiters.push_back(c);
            false
        }
    }

    /// `unlock`: the lock passes to the first waiter, who is returned to be woken.
    pub fn unlock(&mut self) -> Option<TaskId> {
        let next = self.waiters.pop_front();
        self.owner = next;
        next
    }

    /// The lock word is written from `cpu`: returns the CPU it comes from, if another.
    pub fn write_word(&mut self, cpu: usize) -> Option<usize> {
        self.last_cpu.replace(cpu).filter(|&from| from != cpu)
    }
}

/// A barrier: tasks wait until `parties` of them have arrived.
#[derive(Clone, Debug, Default)]
pub struct Barrier {
    /// Tasks whose programs use it.
    pub parties: usize,
    /// Tasks blocked at it.
    pub waiters: Vec<TaskId>,
}

impl Barrier {
    /// Task `c` arrives: the last of `parties` releases the others (returned, in
    /// arrival order); any other waits.
    pub fn arrive(&mut self, c: TaskId) -> Option<Vec<TaskId>> {
        if self.waiters.len() + 1 >= self.parties {
            Some(std::mem::take(&mut self.waiters))
        } else {
            self.waiters.push(c);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_wakes_the_first_waiter_or_is_banked_with_its_stamp() {
        let mut ch = Channel::default();
        assert_eq!(ch.signal(5), None);
        assert_eq!((ch.tokens, ch.stamps.front()), (1, Some(&5)));
        ch.waiters.extend([3, 4]);
        assert_eq!(ch.signal(9), Some(3));
        assert_eq!(ch.tokens, 1, "a woken waiter takes the signal, nothing is banked");
    }

    #[test]
    fn a_read_that_drains_a_bounded_channel_releases_its_writers() {
        let mut ch = Channel { capacity: 2, wake_at: 1, ..Default::default() };
        ch.signal(1);
        ch.signal(2);
        assert!(ch.send_blocks());
        ch.writers.extend([7, 8]);
        assert_eq!(ch.take(10), (1, vec![7, 8]));
        assert!(ch.writers.is_empty() && !ch.send_blocks());
        assert_eq!(ch.take(10), (2, vec![]));
    }

    #[test]
    fn a_mutex_is_handed_over_in_order() {
        let mut m = Mutex::default();
        assert!(m.lock(1));
        assert!(!m.lock(2) && !m.lock(3));
        assert_eq!(m.unlock(), Some(2));
        assert_eq!(m.owner, Some(2));
        assert_eq!(m.unlock(), Some(3));
        assert_eq!(m.unlock(), None);
        assert_eq!(m.owner, None);
        assert_eq!(m.write_word(0), None);
        assert_eq!(m.write_word(0), None, "the same CPU again moves no line");
        assert_eq!(m.write_word(4), Some(0));
    }

    #[test]
    fn the_last_party_releases_the_barrier() {
        let mut b = Barrier { parties: 3, waiters: Vec::new() };
        assert_eq!(b.arrive(1), None);
        assert_eq!(b.arrive(2), None);
        assert_eq!(b.arrive(3), Some(vec![1, 2]));
        assert!(b.waiters.is_empty());
    }
}
