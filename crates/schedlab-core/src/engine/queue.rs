//! The event queue: a binary heap ordered by (time, event class, sequence).
//!
//! Model: cancellation is lazy. Events carry the generation of the thing they belong
//! to (a CPU's segment, a task's sleep); a popped event whose generation is stale is
//! dropped, which keeps every operation O(log n) with no search. Events due at the
//! current instant (a local resched) skip the heap: they wait in a FIFO that is
//! drained before the heap, in the order they were posted.

use std::cmp::Reverse;
use dary_heap::QuaternaryHeap as BinaryHeap;

use crate::time::Ns;

/// Ordering among events due at the same instant (lower runs first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventClass {
    /// A running task's current step completes.
    Segment = 0,
    /// A timer (sleep expiry, bandwidth period/slack timer) fires.
    Timer = 1,
    /// The scheduler tick of a busy CPU.
    Tick = 2,
}

/// What happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The current step of the task running on `cpu` ends (if `gen` is current).
    SegmentEnd {
        /// CPU.
        cpu: u32,
        /// The CPU's segment generation when armed.
        gen: u32,
    },
    /// The hard expiry of an hrtimer: its CPU takes the interrupt (if the timer is
    /// still queued: an earlier interrupt may have expired it within its slack).
    Hrtimer {
        /// CPU whose queue holds it.
        cpu: u32,
        /// Its arming sequence.
        seq: u64,
    },
    /// The handler of a timer interrupt that woke an idle CPU runs, after the idle
    /// state's exit latency.
    TimerIrq {
        /// CPU.
        cpu: u32,
        /// The interrupt was the tick.
        tick: bool,
    },
    /// A task created with a start time becomes runnable.
    TaskStart {
        /// Task index.
        task: u32,
    },
    /// Scheduler tick on a CPU (if `gen` is current: idle CPUs stop their tick).
    Tick {
        /// CPU.
        cpu: u32,
        /// The CPU's tick generation when armed.
        gen: u32,
    },
    /// A CFS bandwidth hrtimer (period or slack) of a group.
    Bandwidth {
        /// Group.
        group: u32,
        /// Slack timer (else the period timer).
        slack: bool,
    },
    /// 6.2+: the CSD of an asynchronous bandwidth unthrottle reaches `cpu`
    /// (__cfsb_csd_unthrottle).
    BwCsd {
        /// CPU.
        cpu: u32,
    },
    /// The CPU must reschedule (resched_curr, after any IPI and idle-exit delay).
    Resched {
        /// CPU.
        cpu: u32,
    },
    /// The run's end.
    End,
}

/// A heap entry: time, class and sequence packed into one u128 so that ordering is a
/// single comparison, with the event beside it (24 bytes per entry in all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    key: u128,
    kind: EventKind,
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// The pending events of a run.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    now: std::collections::VecDeque<EventKind>,
    now_time: Ns,
    seq: u64,
}

const SEQ_BITS: u32 = 62;

impl EventQueue {
    /// Schedules `kind` at `time`.
    #[inline]
    pub fn push(&mut self, time: Ns, class: EventClass, kind: EventKind) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let key = (time as u128) << 64 | (class as u128) << SEQ_BITS | self.seq as u128;
        self.heap.push(Reverse(Entry { key, kind }));
    }

    /// Schedules `kind` at the instant of the last popped event, after what is already
    /// due then.
    #[inline]
    pub fn push_now(&mut self, kind: EventKind) {
        self.now.push_back(kind);
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ns, EventKind)> {
        if let Some(kind) = self.now.pop_front() {
            return Some((self.now_time, kind));
        }
        let e = self.heap.pop().map(|Reverse(e)| ((e.key >> 64) as Ns, e.kind));
        if let Some((t, _)) = e {
            self.now_time = t;
        }
        e
    }

    /// Returns the number of pending entries (stale ones included).
    pub fn len(&self) -> usize {
        self.heap.len() + self.now.len()
    }

    /// Tells whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.now.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_class_then_sequence() {
        let mut q = EventQueue::default();
        q.push(10, EventClass::Tick, EventKind::End);
        q.push(10, EventClass::Segment, EventKind::SegmentEnd { cpu: 1, gen: 0 });
        q.push(5, EventClass::Tick, EventKind::Tick { cpu: 0, gen: 0 });
        q.push(10, EventClass::Segment, EventKind::SegmentEnd { cpu: 2, gen: 0 });
        assert_eq!(q.pop(), Some((5, EventKind::Tick { cpu: 0, gen: 0 })));
        assert_eq!(q.pop(), Some((10, EventKind::SegmentEnd { cpu: 1, gen: 0 })));
        assert_eq!(q.pop(), Some((10, EventKind::SegmentEnd { cpu: 2, gen: 0 })));
        q.push_now(EventKind::Resched { cpu: 3 });
        assert_eq!(q.pop(), Some((10, EventKind::Resched { cpu: 3 })));
        assert_eq!(q.pop(), Some((10, EventKind::End)));
        assert!(q.is_empty());
    }

    /// The queue pops exactly what a plain binary heap would, FIFO aside.
    #[test]
    fn matches_a_binary_heap_on_random_pushes() {
        let mut rng = crate::engine::rng::Stream::new(3, "queue-test");
        let mut q = EventQueue::default();
        let mut reference = std::collections::BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        for round in 0..20_000u64 {
            for _ in 0..rng.below(3) {
                let dt = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(10_000),
                    2 => rng.below(5_000_000),
                    _ => rng.below(500_000_000),
                };
                let class = if rng.below(2) == 0 { EventClass::Segment } else { EventClass::Tick };
                seq += 1;
                let kind = EventKind::TaskStart { task: (round * 8 + seq % 8) as u32 };
                q.push(now + dt, class, kind);
                reference.push(std::cmp::Reverse((now + dt, class, seq, kind.clone_key())));
            }
            if rng.below(2) == 0 {
                let got = q.pop();
                let want = reference.pop().map(|std::cmp::Reverse((t, _, _, k))| (t, k));
                assert_eq!(got.map(|(t, k)| (t, k.clone_key())), want);
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        while let Some(std::cmp::Reverse((t, _, _, k))) = reference.pop() {
            assert_eq!(q.pop().map(|(t2, k2)| (t2, k2.clone_key())), Some((t, k)));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }

    impl EventKind {
        fn clone_key(&self) -> u32 {
            match *self {
                EventKind::TaskStart { task } => task,
                _ => u32::MAX,
            }
        }
    }
}
