//! High-resolution timers of one CPU: the sleeps tasks take.
//!
//! Mirrors: kernel/time/hrtimer.c: hrtimer_start_range_ns() (soft expiry = the
//! requested time, hard expiry = soft + slack), __hrtimer_run_queues() (on any timer
//! interrupt, expire in hard-expiry order every timer whose soft expiry has passed,
//! stopping at the first that has not), and the clock event programmed for the first
//! hard expiry.
//! Model: one queue per CPU ordered by (hard expiry, arming order), the kernel's
//! timerqueue kept as a vector sorted latest-first (a CPU holds a few timers, so the
//! first one is popped from the end and an insert shifts little); a timer is named by
//! its key, which its owner keeps to cancel it. The tick is not in this queue (the
//! engine's Tick event stands for tick_sched_timer), but every tick runs this queue as
//! the kernel's hrtimer_interrupt does, which is how timer slack lets a sleep end at an
//! earlier interrupt.

use crate::time::Ns;

/// What an hrtimer does when it expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HrtimerFn {
    /// hrtimer_wakeup(): wake the task sleeping in nanosleep / clock_nanosleep.
    WakeTask(usize),
    /// watchdog_timer_fn(): the soft-lockup detector's per-CPU sample, re-armed a
    /// sample period on (HRTIMER_MODE_REL_PINNED_HARD).
    Watchdog,
    /// sched_rt_period_timer(): RT throttling's period (rt.c, before 6.12).
    RtPeriod,
    /// dl_task_timer(): a SCHED_DEADLINE task's replenishment.
    DlTask(usize),
    /// inactive_task_timer(): a sleeping SCHED_DEADLINE task's bandwidth leaves
    /// running_bw at its 0-lag time (GRUB).
    DlInactive(usize),
    /// dl_server_timer(): the fair server's replenishment or deferred start (6.12).
    DlServer,
    /// A sched_ext scheduler's bpf_timer (its `ops.timer()` callback).
    ScxTimer,
    /// The ext class's watchdog (scx_watchdog_workfn(), every timeout / 2) and the
    /// disable work an error queues.
    ScxWatchdog,
}

/// Identifies a queued hrtimer: (CPU, hard expiry, arming sequence).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HrtimerKey {
    /// CPU whose queue holds it.
    pub cpu: usize,
    /// Hard expiry (latest time it may fire).
    pub hard: Ns,
    /// Arming sequence (orders equal expiries).
    pub seq: u64,
}

/// A queued hrtimer.
#[derive(Clone, Copy, Debug)]
struct Queued {
    hard: Ns,
    seq: u64,
    soft: Ns,
    func: HrtimerFn,
}

impl Queued {
    fn key(&self) -> (Ns, u64) {
        (self.hard, self.seq)
    }
}

/// Every CPU's hrtimer queue.
#[derive(Clone, Debug, Default)]
pub struct Hrtimers {
    /// Per CPU, sorted by (hard, seq) descending: the first timer is the last element.
    queues: Vec<Vec<Queued>>,
    seq: u64,
    /// Timers cancelled while queued and timers expired: with those still queued they
    /// account for every start (`check`: each armed timer fires at most once).
    cancelled: u64,
    expired: u64,
}

impl Hrtimers {
    /// Creates empty queues for `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize) -> Self {
        Hrtimers { queues: vec![Vec::new(); nr_cpus], seq: 0, cancelled: 0, expired: 0 }
    }

    /// Queues a timer on `cpu` that may fire from `soft` on and must fire by `soft + slack`.
    pub fn start(&mut self, cpu: usize, soft: Ns, slack: Ns, func: HrtimerFn) -> HrtimerKey {
        self.seq += 1;
        let hard = soft.saturating_add(slack);
        let q = &mut self.queues[cpu];
        let key = (hard, self.seq);
        let at = q.partition_point(|t| t.key() > key);
        q.insert(at, Queued { hard, seq: self.seq, soft, func });
        HrtimerKey { cpu, hard, seq: self.seq }
    }

    /// Cancels a timer; returns false if it is no longer queued (already expired).
    pub fn cancel(&mut self, key: HrtimerKey) -> bool {
        let q = &mut self.queues[key.cpu];
        match Self::find(q, key) {
            Some(i) => {
                q.remove(i);
                self.cancelled += 1;
                true
            }
            None => false,
        }
    }

    /// Tells whether the timer is still queued.
    pub fn is_queued(&self, key: HrtimerKey) -> bool {
        Self::find(&self.queues[key.cpu], key).is_some()
    }

    fn find(q: &[Queued], key: HrtimerKey) -> Option<usize> {
        let k = (key.hard, key.seq);
        let i = q.partition_point(|t| t.key() > k);
        (i < q.len() && q[i].key() == k).then_some(i)
    }

    /// Returns the first hard expiry on `cpu` (what its clock event is programmed for).
    pub fn first_hard(&self, cpu: usize) -> Option<Ns> {
        self.queues[cpu].last().map(|t| t.hard)
    }

    /// Runs the queue of `cpu` at `now` (__hrtimer_run_queues): removes and returns, in
    /// hard-expiry order, every timer whose soft expiry has passed, up to the first
    /// that has not.
    pub fn run(&mut self, cpu: usize, now: Ns, out: &mut Vec<HrtimerFn>) {
        let q = &mut self.queues[cpu];
        while let Some(t) = q.last() {
            if t.soft > now {
                break;
            }
            out.push(t.func);
            q.pop();
            self.expired += 1;
        }
    }

    /// Every timer started is queued, was cancelled while queued, or expired, exactly
    /// one of them (a timer that fired twice or vanished breaks the sum).
    pub fn check(&self) -> Result<(), String> {
        let queued: u64 = self.queues.iter().map(|q| q.len() as u64).sum();
        if self.seq != queued + self.cancelled + self.expired {
            return Err(format!("hrtimers: {} started but {queued} queued + {} cancelled + {} expired", self.seq, self.cancelled, self.expired));
        }
        Ok(())
    }

    /// Whether an interrupt at `at` would expire something on `cpu` (the first timer in
    /// hard-expiry order has reached its soft expiry).
    pub fn first_soft_due(&self, cpu: usize, at: Ns) -> bool {
        self.queues[cpu].last().is_some_and(|t| t.soft <= at)
    }

    /// Timers queued on `cpu`.
    pub fn len(&self, cpu: usize) -> usize {
        self.queues[cpu].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_lets_an_earlier_interrupt_expire_a_timer() {
        let mut h = Hrtimers::new(1);
        let a = h.start(0, 1000, 50, HrtimerFn::WakeTask(1));
        let _b = h.start(0, 1020, 0, HrtimerFn::WakeTask(2));
        assert_eq!(h.first_hard(0), Some(1020), "b's hard expiry comes first");
        let mut out = Vec::new();
        h.run(0, 999, &mut out);
        assert!(out.is_empty());
        // An interrupt at 1020 (b's) also expires a, whose soft expiry has passed.
        h.run(0, 1020, &mut out);
        assert_eq!(out, vec![HrtimerFn::WakeTask(2), HrtimerFn::WakeTask(1)]);
        assert!(!h.cancel(a));
    }

    #[test]
    fn run_stops_at_the_first_timer_not_yet_soft_expired() {
        let mut h = Hrtimers::new(1);
        h.start(0, 900, 200, HrtimerFn::WakeTask(1)); // hard 1100
        h.start(0, 1000, 150, HrtimerFn::WakeTask(2)); // hard 1150
        h.start(0, 100, 1100, HrtimerFn::WakeTask(3)); // hard 1200, soft long past
        let mut out = Vec::new();
        h.run(0, 950, &mut out);
        // In hard order: 1 (soft 900, due), then 2 (soft 1000, not due): stop there,
        // although 3's soft expiry has passed.
        assert_eq!(out, vec![HrtimerFn::WakeTask(1)]);
    }
}
