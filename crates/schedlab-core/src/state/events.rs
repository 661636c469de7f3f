//! The event queue: events ordered by (time, event class, sequence).
//!
//! Model: every CPU keeps its own short sorted list of the events that belong to it (its
//! segment end, tick, hrtimer expiries, interrupts, reschedules), and a heap holds the
//! machine's (task starts, bandwidth timers, the end). A tournament tree over these
//! sources' earliest keys finds the next event in log2(CPUs) steps over a few
//! kilobytes, where one heap of every event would be large and scattered. Keys are
//! unique (the sequence), so the order is exactly that of a single heap.
//! Events carry the generation of the thing they belong to (a CPU's segment, a task's
//! sleep); a popped event whose generation is stale is dropped. A CPU's re-armed
//! segment end is also withdrawn from its short list at once (a search of a handful),
//! since those were a fifth of all pops on crowded machines. Events due at the
//! current instant (a local resched) skip all this: they wait in a FIFO that is
//! drained first, in the order they were posted.
//! Exact elision (issue 36): an event pushed earlier than every pending one is the next
//! to pop unless an earlier one comes after it, so it waits in a slot of its own, outside
//! the lists and the tree, and is popped from there: same order, no list insert and no
//! two walks of the tree. The slot always holds a key below the tree's head (an earlier
//! push moves it into the tree), which is the guard.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// RT_PUSH_IPI: the rd->rto_push_work irq_work reaches RT-overloaded `cpu`
    /// (rto_push_irq_work_func()).
    RtPushIpi {
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

/// What a run's events are counted under (`events_by_kind`): each kind, with the stale
/// events a handler drops (their generation moved on) counted apart, and `Inline`, the
/// events popped from the queue's head slot (exact elision: no list or tree operation),
/// already counted under their kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventCount {
    /// [`EventKind::SegmentEnd`].
    SegmentEnd,
    /// [`EventKind::Hrtimer`].
    Hrtimer,
    /// [`EventKind::TimerIrq`].
    TimerIrq,
    /// [`EventKind::TaskStart`].
    TaskStart,
    /// [`EventKind::Tick`].
    Tick,
    /// [`EventKind::Bandwidth`].
    BandwidthTimer,
    /// [`EventKind::BwCsd`].
    BandwidthCsd,
    /// [`EventKind::RtPushIpi`].
    RtPushIpi,
    /// [`EventKind::Resched`].
    Resched,
    /// [`EventKind::End`].
    End,
    /// A segment end of an older segment.
    SegmentEndStale,
    /// A tick of a stopped tick.
    TickStale,
    /// An hrtimer expiry of a timer since cancelled or re-armed.
    HrtimerStale,
    /// Popped from the head slot.
    Inline,
}

impl EventCount {
    /// Every counter, in index order.
    pub const ALL: [EventCount; 14] = [
        EventCount::SegmentEnd,
        EventCount::Hrtimer,
        EventCount::TimerIrq,
        EventCount::TaskStart,
        EventCount::Tick,
        EventCount::BandwidthTimer,
        EventCount::BandwidthCsd,
        EventCount::RtPushIpi,
        EventCount::Resched,
        EventCount::End,
        EventCount::SegmentEndStale,
        EventCount::TickStale,
        EventCount::HrtimerStale,
        EventCount::Inline,
    ];

    /// The counter's name in a result's `engine.events_by_kind`.
    pub const fn name(self) -> &'static str {
        match self {
            EventCount::SegmentEnd => "segment_end",
            EventCount::Hrtimer => "hrtimer",
            EventCount::TimerIrq => "timer_irq",
            EventCount::TaskStart => "task_start",
            EventCount::Tick => "tick",
            EventCount::BandwidthTimer => "bandwidth_timer",
            EventCount::BandwidthCsd => "bandwidth_csd",
            EventCount::RtPushIpi => "rt_push_ipi",
            EventCount::Resched => "resched",
            EventCount::End => "end",
            EventCount::SegmentEndStale => "segment_end_stale",
            EventCount::TickStale => "tick_stale",
            EventCount::HrtimerStale => "hrtimer_stale",
            EventCount::Inline => "inline",
        }
    }
}

/// A count per [`EventCount`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventCounts([u64; EventCount::ALL.len()]);

impl std::ops::Index<EventCount> for EventCounts {
    type Output = u64;
    #[inline]
    fn index(&self, c: EventCount) -> &u64 {
        &self.0[c as usize]
    }
}

impl std::ops::IndexMut<EventCount> for EventCounts {
    #[inline]
    fn index_mut(&mut self, c: EventCount) -> &mut u64 {
        &mut self.0[c as usize]
    }
}

impl EventCounts {
    /// The counters that counted something, by name.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        EventCount::ALL.iter().map(|&c| (c.name(), self[c])).filter(|&(_, n)| n > 0)
    }
}

impl EventKind {
    /// The counter a popped event of this kind counts under.
    #[inline]
    pub fn counter(self) -> EventCount {
        match self {
            EventKind::SegmentEnd { .. } => EventCount::SegmentEnd,
            EventKind::Hrtimer { .. } => EventCount::Hrtimer,
            EventKind::TimerIrq { .. } => EventCount::TimerIrq,
            EventKind::TaskStart { .. } => EventCount::TaskStart,
            EventKind::Tick { .. } => EventCount::Tick,
            EventKind::Bandwidth { .. } => EventCount::BandwidthTimer,
            EventKind::BwCsd { .. } => EventCount::BandwidthCsd,
            EventKind::Resched { .. } => EventCount::Resched,
            EventKind::End => EventCount::End,
            EventKind::RtPushIpi { .. } => EventCount::RtPushIpi,
        }
    }
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

/// A match of the tournament: a source and its earliest key, the key's halves kept
/// apart so that a node is 24 bytes (the tree of a 384-CPU machine fits in 24 KiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Contender {
    time: u64,
    order: u64,
    source: u32,
}

impl Contender {
    #[inline]
    fn new(key: u128, source: usize) -> Self {
        Contender { time: (key >> 64) as u64, order: key as u64, source: source as u32 }
    }

    #[inline]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.order as u128
    }

    /// The winner of a match: `sib` if strictly earlier, else `cur`. Which wins is a coin
    /// toss for a branch predictor, so the pick is a conditional move, not a branch.
    #[inline(always)]
    fn earlier(cur: Contender, sib: Contender) -> Contender {
        let sib_first = ((sib.time as u128) << 64 | sib.order as u128) < ((cur.time as u128) << 64 | cur.order as u128);
        std::hint::select_unpredictable(sib_first, sib, cur)
    }
}

/// The pending events of a run.
pub struct EventQueue {
    /// Per CPU: its events sorted latest first (a CPU holds a handful, so the earliest
    /// is popped from the end and an insert shifts little).
    cpus: Vec<Vec<Entry>>,
    /// The machine's events (task starts can be many: a heap).
    machine: BinaryHeap<Reverse<Entry>>,
    /// Tournament tree over the sources (a power of two of leaves): node `n` (1 = root)
    /// holds the source with the least key below it, and that key; nodes
    /// `size..2*size` are the sources themselves (key EMPTY when a source has none).
    tree: Vec<Contender>,
    size: usize,
    now: std::collections::VecDeque<EventKind>,
    now_time: Ns,
    seq: u64,
    /// The pending event earliest of all when pushed (see the header), if any.
    head: Option<Entry>,
    /// Whether pushes may use `head` (off: every event goes through the tree).
    inline: bool,
    /// Events popped from `head`.
    inline_pops: u64,
}

const SEQ_BITS: u32 = 62;
const EMPTY: u128 = u128::MAX;

impl Default for EventQueue {
    fn default() -> Self {
        Self::new(0)
    }
}

impl EventQueue {
    /// An empty queue for a machine of `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize) -> Self {
        let sources = nr_cpus + 1;
        let size = sources.next_power_of_two();
        let mut tree = vec![Contender::new(EMPTY, 0); 2 * size];
        for (i, c) in tree[size..].iter_mut().enumerate() {
            c.source = i as u32;
        }
        // Every node starts with a source of its own subtree (all empty: the leftmost).
        for n in (1..size).rev() {
            tree[n] = tree[2 * n];
        }
        EventQueue {
            cpus: vec![Vec::new(); nr_cpus],
            machine: BinaryHeap::new(),
            tree,
            size,
            now: Default::default(),
            now_time: 0,
            seq: 0,
            head: None,
            inline: true,
            inline_pops: 0,
        }
    }

    /// Source `s`'s earliest key became `key`: replays its matches up to the root. Each
    /// level reads only the sibling's stored winner, so the walk does not wait on itself.
    /// With `STOP_EARLY` it stops where a match's winner is what that node already holds:
    /// every match above depends only on it (a new head that loses early costs a few
    /// levels). A pop replays without the test: every match on the popped source's path
    /// had it as winner, so the test could never stop the walk there.
    #[inline]
    fn fix<const STOP_EARLY: bool>(&mut self, s: usize, key: u128) {
        let mut n = self.size + s;
        let mut cur = Contender::new(key, s);
        self.tree[n] = cur;
        while n > 1 {
            cur = Contender::earlier(cur, self.tree[n ^ 1]);
            n >>= 1;
            if STOP_EARLY && self.tree[n] == cur {
                break;
            }
            self.tree[n] = cur;
        }
    }

    /// The source an event belongs to: its CPU (index), or the machine's (nr_cpus).
    #[inline]
    fn source(&self, kind: &EventKind) -> usize {
        let machine = self.cpus.len();
        match *kind {
            EventKind::SegmentEnd { cpu, .. }
            | EventKind::Hrtimer { cpu, .. }
            | EventKind::TimerIrq { cpu, .. }
            | EventKind::Tick { cpu, .. }
            | EventKind::Resched { cpu }
            | EventKind::BwCsd { cpu }
            | EventKind::RtPushIpi { cpu } => (cpu as usize).min(machine),
            EventKind::TaskStart { .. } | EventKind::Bandwidth { .. } | EventKind::End => machine,
        }
    }

    /// Schedules `kind` at `time`.
    #[inline]
    pub fn push(&mut self, time: Ns, class: EventClass, kind: EventKind) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let key = (time as u128) << 64 | (class as u128) << SEQ_BITS | self.seq as u128;
        let e = Entry { key, kind };
        if self.inline {
            match self.head {
                None if key < self.tree[1].key() => {
                    self.head = Some(e);
                    return;
                }
                Some(h) if key < h.key => {
                    self.head = Some(e);
                    return self.insert(h);
                }
                _ => {}
            }
        }
        self.insert(e);
    }

    /// Puts an entry in its source's list (or the machine's heap) and the tree.
    #[inline]
    fn insert(&mut self, e: Entry) {
        let Entry { key, kind } = e;
        let s = self.source(&kind);
        match self.cpus.get_mut(s) {
            Some(q) => {
                let at = q.partition_point(|e| e.key > key);
                q.insert(at, Entry { key, kind });
            }
            None => self.machine.push(Reverse(Entry { key, kind })),
        }
        if key < self.tree[self.size + s].key() {
            self.fix::<true>(s, key);
        }
    }

    /// Withdraws a pending event of a CPU that can no longer do anything (the end of a
    /// segment that was re-armed): popping it later would only drop it. Nothing if it
    /// is not pending (it may be the event being handled). Returns whether it was.
    pub fn cancel_cpu_event(&mut self, cpu: usize, kind: EventKind) -> bool {
        // Due at this instant: it waits in the FIFO, not in the CPU's list.
        if let Some(i) = self.now.iter().position(|k| *k == kind) {
            self.now.remove(i);
            return true;
        }
        // The slot's entry is earlier than any in the lists: the one withdrawn first.
        if self.head.is_some_and(|h| h.kind == kind && self.source(&kind) == cpu) {
            self.head = None;
            return true;
        }
        let Some(q) = self.cpus.get_mut(cpu) else { return false };
        let Some(i) = q.iter().rposition(|e| e.kind == kind) else { return false };
        q.remove(i);
        if i == q.len() {
            // It was the CPU's earliest.
            let next = q.last().map_or(EMPTY, |e| e.key);
            self.fix::<true>(cpu, next);
        }
        true
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
        if let Some(e) = self.head.take() {
            self.inline_pops += 1;
            self.now_time = (e.key >> 64) as Ns;
            return Some((self.now_time, e.kind));
        }
        let top = self.tree[1];
        if top.key() == EMPTY {
            return None;
        }
        let s = top.source as usize;
        let (e, next) = match self.cpus.get_mut(s) {
            Some(q) => {
                let e = q.pop().expect("a source with a key has an event");
                (e, q.last().map_or(EMPTY, |next| next.key))
            }
            None => {
                let Reverse(e) = self.machine.pop().expect("a source with a key has an event");
                (e, self.machine.peek().map_or(EMPTY, |Reverse(next)| next.key))
            }
        };
        self.fix::<false>(s, next);
        let t = (e.key >> 64) as Ns;
        self.now_time = t;
        Some((t, e.kind))
    }

    /// The time of the earliest pending event, without removing it; None if none.
    #[inline]
    pub fn peek_time(&self) -> Option<Ns> {
        if !self.now.is_empty() {
            return Some(self.now_time);
        }
        if let Some(e) = self.head {
            return Some((e.key >> 64) as Ns);
        }
        let top = self.tree[1].key();
        (top != EMPTY).then_some((top >> 64) as Ns)
    }

    /// Returns the number of pending entries (stale ones included).
    pub fn len(&self) -> usize {
        self.cpus.iter().map(Vec::len).sum::<usize>() + self.machine.len() + self.now.len() + self.head.is_some() as usize
    }

    /// Tells whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.now.is_empty() && self.head.is_none() && self.tree[1].key() == EMPTY
    }

    /// Turns the exact elision of the head slot on or off (on by default); off moves an
    /// event already in the slot to its list (the earliest there: the order is kept).
    pub fn set_inline(&mut self, on: bool) {
        self.inline = on;
        if !on {
            if let Some(e) = self.head.take() {
                self.insert(e);
            }
        }
    }

    /// How many events were popped from the head slot, without a list or tree operation.
    pub fn inline_pops(&self) -> u64 {
        self.inline_pops
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

    /// A reschedule posted for the current instant (a local resched_curr() with no
    /// kernel time left) can be withdrawn like one posted for later: __schedule() clears
    /// TIF_NEED_RESCHED after its pick, whenever it was set.
    #[test]
    fn an_event_due_now_can_be_withdrawn() {
        let mut q = EventQueue::new(4);
        q.push(10, EventClass::Tick, EventKind::End);
        assert_eq!(q.pop(), Some((10, EventKind::End)));
        q.push_now(EventKind::Resched { cpu: 1 });
        q.push_now(EventKind::Resched { cpu: 2 });
        assert!(q.cancel_cpu_event(1, EventKind::Resched { cpu: 1 }));
        assert!(!q.cancel_cpu_event(1, EventKind::Resched { cpu: 1 }), "withdrawn once");
        assert_eq!(q.pop(), Some((10, EventKind::Resched { cpu: 2 })));
        assert!(q.is_empty());
    }

    /// The queue pops exactly what a plain binary heap would, FIFO aside, less what was
    /// withdrawn.
    #[test]
    fn matches_a_binary_heap_on_random_pushes() {
        // A shallow tree and a deep, ragged one (the early stop of `fix` at every level),
        // with the head slot and without.
        for inline in [true, false] {
            matches_a_binary_heap(5, inline);
            matches_a_binary_heap(37, inline);
        }
    }

    fn matches_a_binary_heap(nr_cpus: u32, inline: bool) {
        let mut rng = crate::rng::Stream::new(3, "queue-test");
        let mut q = EventQueue::new(nr_cpus as usize);
        q.set_inline(inline);
        let mut reference = std::collections::BinaryHeap::new();
        let (mut now, mut seq) = (0u64, 0u64);
        let (mut cancellable, mut cancelled) = (Vec::new(), std::collections::HashSet::new());
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
                let id = (round * 8 + seq % 8) as u32;
                // Spread over every CPU's list (the last 4 ids are beyond the machine: its own).
                let kind = match rng.below(3) {
                    0 => EventKind::TaskStart { task: id },
                    1 => EventKind::SegmentEnd { cpu: (id % (nr_cpus + 4)), gen: id },
                    _ => EventKind::Tick { cpu: (id % (nr_cpus + 4)), gen: id },
                };
                q.push(now + dt, class, kind);
                reference.push(std::cmp::Reverse((now + dt, class, seq, kind.clone_key())));
                if let EventKind::SegmentEnd { cpu, .. } = kind {
                    if cpu < nr_cpus {
                        cancellable.push(kind);
                    }
                }
            }
            // Withdraw a CPU's segment end now and then (pending or already popped).
            if rng.below(4) == 0 && !cancellable.is_empty() {
                let kind = cancellable.swap_remove(rng.below(cancellable.len() as u64) as usize);
                let EventKind::SegmentEnd { cpu, .. } = kind else { unreachable!() };
                q.cancel_cpu_event(cpu as usize, kind);
                cancelled.insert(kind.clone_key());
            }
            if rng.below(2) == 0 {
                let got = q.pop();
                let mut want = reference.pop().map(|std::cmp::Reverse((t, _, _, k))| (t, k));
                while want.is_some_and(|(_, k)| cancelled.contains(&k)) {
                    want = reference.pop().map(|std::cmp::Reverse((t, _, _, k))| (t, k));
                }
                assert_eq!(got.map(|(t, k)| (t, k.clone_key())), want);
                if let Some((t, _)) = got {
                    now = t;
                }
            }
        }
        while let Some(std::cmp::Reverse((t, _, _, k))) = reference.pop() {
            if cancelled.contains(&k) {
                continue;
            }
            assert_eq!(q.pop().map(|(t2, k2)| (t2, k2.clone_key())), Some((t, k)));
        }
        assert!(q.pop().is_none() && q.is_empty());
        // The slot served pops when on (events pushed as the head), none when off.
        assert_eq!(q.inline_pops() > 0, inline);
    }

    impl EventKind {
        fn clone_key(&self) -> u32 {
            match *self {
                EventKind::TaskStart { task } => task,
                EventKind::SegmentEnd { gen, .. } => gen,
                EventKind::Tick { gen, .. } => 1 << 31 | gen,
                _ => u32::MAX,
            }
        }
    }
}
