//! Timers: the per-CPU timer wheel, hrtimers and the timer migration hierarchy.
//!
//! Mirrors: kernel/time/timer.c (timer_list, timer bases, __mod_timer(), timer_delete(),
//! add_timer_on(), run_timer_softirq()), kernel/time/hrtimer.c (sleeps with slack),
//! kernel/time/timer_migration.c (the pull model), and the `TIMER_PULL` switch between
//! the two eras: before 6.9 a non-pinned timer is *pushed* at enqueue to a CPU that
//! get_nohz_timer_target() thinks busy; from 6.9 every timer stays on the CPU that arms
//! it and an idle CPU's global timers are *pulled* at expiry by a migrator.
//! Model: this module is state only, like `struct rq` holding its class runqueues: the
//! wheel bases, the hrtimer queues and the hierarchy, with the kernel's rules for where
//! a timer goes and when it fires. The engine (`sched/timer.rs`) decides the target CPU
//! where that needs scheduler state (idle_cpu()), prices each operation from the cost
//! table, and runs the callbacks.

pub mod hrtimer;
pub mod tmigr;
pub mod wheel;

use crate::time::Ns;
pub use hrtimer::{HrtimerFn, HrtimerKey, Hrtimers};
pub use tmigr::{Tmigr, TmigrCost, KTIME_MAX};
pub use wheel::{TimerBase, TimerId, WheelSlot};

/// Which base of a CPU a timer is queued in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BaseKind {
    /// BASE_LOCAL (6.9+, pinned timers) — BASE_STD before 6.9 (every non-deferrable timer).
    Local = 0,
    /// BASE_GLOBAL (6.9+): non-pinned timers, expirable by a migrator.
    Global = 1,
    /// BASE_DEF: deferrable timers, never a reason to wake an idle CPU.
    Def = 2,
}

/// Timer flags (TIMER_PINNED, TIMER_DEFERRABLE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerFlags {
    /// Must run on the CPU it was queued on.
    pub pinned: bool,
    /// Does not wake an idle CPU.
    pub deferrable: bool,
}

/// What a wheel timer does when it expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerFn {
    /// process_timeout(): wake the task sleeping in schedule_timeout().
    ProcessTimeout(usize),
    /// delayed_work_timer_fn(): queue a work item, waking the kworker that waits on
    /// this channel.
    Signal(usize),
    /// A timer armed and cancelled by the enqueue micro-benchmark; never expires.
    Bench,
    /// A callback that wakes nobody (its cost is the expiry's own).
    Callback,
    /// A background kernel timer: runs `work_ns` of callback and re-arms itself
    /// `period` jiffies ahead from the CPU that expired it.
    Rearm {
        /// Re-arm period, jiffies.
        period: u64,
        /// Callback CPU time, ns.
        work_ns: u64,
    },
}

/// One timer_list.
#[derive(Clone, Copy, Debug)]
pub struct TimerList {
    /// Flags.
    pub flags: TimerFlags,
    /// Callback.
    pub func: TimerFn,
    /// CPU of the base it is (or was last) queued on.
    pub cpu: usize,
    /// Base it is queued in.
    pub base: BaseKind,
    /// Requested expiry, jiffies.
    pub expires: u64,
    /// Wheel slot while pending.
    pub slot: Option<WheelSlot>,
}

/// Result of queueing a timer, for the caller to price and act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enqueued {
    /// CPU whose base now holds the timer.
    pub cpu: usize,
    /// The timer became that base's first one (trigger_dyntick_cpu() runs).
    pub new_first: bool,
    /// That base is marked idle (a non-deferrable new first timer needs an IPI).
    pub base_idle: bool,
    /// The same-bucket shortcut applied: only `expires` changed.
    pub same_bucket: bool,
    /// The timer moved from another CPU's base to this one.
    pub switched_base: bool,
}

/// The timer state of a run: every CPU's wheel bases, hrtimer queues, the hierarchy.
#[derive(Clone, Debug)]
pub struct Timers {
    /// Pull model (TIMER_PULL): local bases split in LOCAL/GLOBAL, tmigr hierarchy.
    pub pull: bool,
    /// kernel.timer_migration: the push heuristic (before) or the hierarchy (after).
    pub migration: bool,
    /// Wheel levels at this HZ.
    pub depth: u32,
    /// Per CPU: LOCAL (STD), GLOBAL, DEF.
    pub bases: Vec<[TimerBase; 3]>,
    /// Every timer_list of the run.
    pub list: Vec<TimerList>,
    /// hrtimer queues.
    pub hr: Hrtimers,
    /// The pull model's hierarchy (None in the push model or with migration off).
    pub tmigr: Option<Tmigr>,
    /// Wheel timers queued, detached while pending (re-armed elsewhere or deleted) and
    /// expired: `check` holds them to queued = detached + expired + pending, so a timer
    /// that fires twice or is lost breaks the sum.
    pub accounting: WheelAccounting,
}

/// Counts of wheel timer transitions (see [`Timers::accounting`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelAccounting {
    /// Enqueues (mod_timer or add_timer_on that queued).
    pub queued: u64,
    /// Pending timers taken off their bucket without expiring.
    pub detached: u64,
    /// Timers expired.
    pub expired: u64,
}

impl Timers {
    /// Creates the timer state of a machine.
    pub fn new(cpu_nodes: &[usize], nnodes: usize, hz: u32, pull: bool, migration: bool) -> Timers {
        let n = cpu_nodes.len();
        Timers {
            pull,
            migration,
            depth: wheel::lvl_depth(hz),
            bases: vec![Default::default(); n],
            list: Vec::new(),
            hr: Hrtimers::new(n),
            tmigr: (pull && migration && n > 1).then(|| Tmigr::new(cpu_nodes, nnodes)),
            accounting: WheelAccounting::default(),
        }
    }

    /// Creates a timer (timer_setup) homed on `cpu`; returns its id.
    pub fn setup(&mut self, func: TimerFn, flags: TimerFlags, cpu: usize) -> TimerId {
        self.list.push(TimerList { flags, func, cpu, base: self.base_kind(flags), expires: 0, slot: None });
        self.list.len() - 1
    }

    /// The base a timer with `flags` is queued in under this run's model.
    pub fn base_kind(&self, flags: TimerFlags) -> BaseKind {
        if flags.deferrable {
            BaseKind::Def
        } else if self.pull && !flags.pinned {
            BaseKind::Global
        } else {
            BaseKind::Local
        }
    }

    /// Tells whether a timer is queued.
    pub fn pending(&self, t: TimerId) -> bool {
        self.list[t].slot.is_some()
    }

    /// The first half of __mod_timer(): if timer `t` is pending and `expires` lands in
    /// the bucket it already sits in (or is unchanged), only `expires` is updated and the
    /// timer stays where it is, whatever a push heuristic would say. Returns None when
    /// the timer must be (re)queued with [`Timers::enqueue_on`].
    pub fn try_same_bucket(&mut self, t: TimerId, expires: u64, jiffies: u64) -> Option<Enqueued> {
        let tl = self.list[t];
        let slot = tl.slot?;
        let kept = Enqueued { cpu: tl.cpu, new_first: false, base_idle: false, same_bucket: true, switched_base: false };
        if tl.expires == expires {
            return Some(kept);
        }
        let base = &mut self.bases[tl.cpu][tl.base as usize];
        base.forward(jiffies);
        if wheel::calc_wheel_index(expires, base.clk, self.depth).idx == slot.idx {
            self.list[t].expires = expires;
            return Some(kept);
        }
        None
    }

    /// The second half of __mod_timer(): detaches timer `t` if pending and queues it to
    /// expire at `expires` (jiffies) on `target`'s base (the caller's get_target_base()
    /// choice: this CPU, a pushed-to CPU, or an add_timer_on() CPU).
    pub fn enqueue_on(&mut self, t: TimerId, expires: u64, jiffies: u64, target: usize) -> Enqueued {
        let tl = self.list[t];
        let b = tl.base as usize;
        let old = &mut self.bases[tl.cpu][b];
        old.forward(jiffies);
        if let Some(slot) = tl.slot {
            old.detach(t, slot.bucket_expiry);
            self.accounting.detached += 1;
        }
        self.accounting.queued += 1;
        let base = &mut self.bases[target][b];
        if target != tl.cpu {
            base.forward(jiffies);
        }
        let slot = wheel::calc_wheel_index(expires, base.clk, self.depth);
        let new_first = base.enqueue(t, slot);
        let base_idle = base.is_idle;
        let tl = &mut self.list[t];
        let switched_base = tl.cpu != target;
        tl.cpu = target;
        tl.expires = expires;
        tl.slot = Some(slot);
        Enqueued { cpu: target, new_first, base_idle, same_bucket: false, switched_base }
    }

    /// __mod_timer() in one call, for callers whose target does not depend on the
    /// shortcut (tests, add_timer_on()).
    pub fn mod_timer(&mut self, t: TimerId, expires: u64, jiffies: u64, target: usize) -> Enqueued {
        self.try_same_bucket(t, expires, jiffies).unwrap_or_else(|| self.enqueue_on(t, expires, jiffies, target))
    }

    /// timer_delete(): dequeues a pending timer; returns whether it was pending and
    /// the CPU whose base held it.
    pub fn del_timer(&mut self, t: TimerId) -> (bool, usize) {
        let tl = &mut self.list[t];
        let cpu = tl.cpu;
        match tl.slot.take() {
            Some(slot) => {
                self.bases[cpu][tl.base as usize].detach(t, slot.bucket_expiry);
                self.accounting.detached += 1;
                (true, cpu)
            }
            None => (false, cpu),
        }
    }

    /// Expires the due timers of one base of `cpu` at `jiffies` (__run_timers); the
    /// timers are no longer pending when returned.
    pub fn run_base(&mut self, cpu: usize, base: BaseKind, jiffies: u64, out: &mut Vec<TimerId>) {
        let start = out.len();
        self.bases[cpu][base as usize].collect_expired(jiffies, out);
        for &t in &out[start..] {
            self.list[t].slot = None;
        }
        self.accounting.expired += (out.len() - start) as u64;
    }

    /// The next expiry (jiffies) of a base of `cpu`, u64::MAX if empty.
    #[inline]
    pub fn next_expiry(&self, cpu: usize, base: BaseKind) -> u64 {
        self.bases[cpu][base as usize].next_expiry
    }

    /// Sets or clears the is_idle mark of `cpu`'s bases (LOCAL and GLOBAL share it, as
    /// the kernel keeps them in step; BASE_DEF follows).
    pub fn set_idle(&mut self, cpu: usize, idle: bool) {
        for b in &mut self.bases[cpu] {
            b.is_idle = idle;
        }
    }

    /// Tells whether `cpu`'s bases are marked idle.
    #[inline]
    pub fn is_idle(&self, cpu: usize) -> bool {
        self.bases[cpu][0].is_idle
    }

    /// Checks that every pending timer sits in exactly the base its record names, at
    /// the bucket expiry it was given.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = 0;
        for (cpu, bases) in self.bases.iter().enumerate() {
            for (b, base) in bases.iter().enumerate() {
                for (e, t) in base.iter() {
                    seen += 1;
                    let tl = &self.list[t];
                    if tl.cpu != cpu || tl.base as usize != b || tl.slot.map(|s| s.bucket_expiry) != Some(e) {
                        return Err(format!("timer {t} queued on cpu {cpu} base {b} at {e} but records {tl:?}"));
                    }
                }
            }
        }
        let pending = self.list.iter().filter(|t| t.slot.is_some()).count();
        if pending != seen {
            return Err(format!("{pending} timers say they are pending but {seen} are queued"));
        }
        let a = self.accounting;
        if a.queued != a.detached + a.expired + pending as u64 {
            return Err(format!("wheel timers: {} queued but {} detached + {} expired + {pending} pending", a.queued, a.detached, a.expired));
        }
        self.hr.check()?;
        if let Some(tm) = &self.tmigr {
            tm.check()?;
        }
        Ok(())
    }

    /// The first hrtimer hard expiry of `cpu`, KTIME_MAX if none.
    #[inline]
    pub fn next_hrtimer(&self, cpu: usize) -> Ns {
        self.hr.first_hard(cpu).unwrap_or(KTIME_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_model_splits_bases_and_push_does_not() {
        let pull = Timers::new(&[0; 4], 1, 1000, true, true);
        let push = Timers::new(&[0; 4], 1, 1000, false, true);
        let global = TimerFlags::default();
        let pinned = TimerFlags { pinned: true, ..Default::default() };
        let def = TimerFlags { deferrable: true, ..Default::default() };
        assert_eq!(pull.base_kind(global), BaseKind::Global);
        assert_eq!(pull.base_kind(pinned), BaseKind::Local);
        assert_eq!(push.base_kind(global), BaseKind::Local);
        assert_eq!(push.base_kind(def), BaseKind::Def);
        assert!(pull.tmigr.is_some() && push.tmigr.is_none());
    }

    #[test]
    fn same_bucket_rearm_only_updates_expires() {
        let mut t = Timers::new(&[0; 2], 1, 1000, true, true);
        let id = t.setup(TimerFn::Bench, TimerFlags::default(), 0);
        let a = t.mod_timer(id, 1000, 0, 0);
        assert!(a.new_first && !a.same_bucket);
        // 1000 and 1001 jiffies ahead share a level-2 bucket (granularity 64).
        let b = t.mod_timer(id, 1001, 0, 0);
        assert!(b.same_bucket);
        assert_eq!(t.list[id].expires, 1001);
        assert_eq!(t.del_timer(id), (true, 0));
        assert_eq!(t.del_timer(id), (false, 0));
        t.check().unwrap();
    }

    #[test]
    fn a_timer_moved_to_another_base_leaves_the_old_one() {
        let mut t = Timers::new(&[0; 2], 1, 1000, false, true);
        let id = t.setup(TimerFn::Bench, TimerFlags::default(), 0);
        t.mod_timer(id, 10, 0, 0);
        let e = t.mod_timer(id, 20, 0, 1);
        assert!(e.switched_base && e.new_first && e.cpu == 1);
        assert!(t.bases[0][0].is_empty() && t.bases[1][0].len() == 1);
        let mut out = Vec::new();
        t.run_base(1, BaseKind::Local, 21, &mut out);
        assert_eq!(out, vec![id]);
        assert!(!t.pending(id));
        t.check().unwrap();
    }
}

#[cfg(test)]
mod wheel_properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        /// Arm timer `t` (of 8) `delay` jiffies ahead, on CPU `cpu` (of 2).
        Arm { t: usize, delay: u64, cpu: usize },
        /// Cancel timer `t`.
        Del { t: usize },
        /// Let `n` jiffies pass, running every base at each.
        Advance { n: u64 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0usize..8, prop_oneof![1u64..70, 1u64..700, 1u64..6000], 0usize..2).prop_map(|(t, delay, cpu)| Op::Arm { t, delay, cpu }),
            (0usize..8).prop_map(|t| Op::Del { t }),
            prop_oneof![1u64..5, 1u64..400].prop_map(|n| Op::Advance { n }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every armed timer fires exactly once unless cancelled or re-armed first, never
        /// before its requested expiry and never later than its level's granularity.
        #[test]
        fn armed_timers_fire_once_never_early_within_their_granularity(ops in prop::collection::vec(op(), 1..120), pull in any::<bool>()) {
            let mut tm = Timers::new(&[0, 0], 1, 1000, pull, true);
            let ids: Vec<TimerId> = (0..8).map(|i| tm.setup(TimerFn::Bench, TimerFlags { pinned: i % 2 == 0, ..Default::default() }, 0)).collect();
            // What each timer is owed: (requested expiry, latest allowed expiry).
            let mut owed: Vec<Option<(u64, u64)>> = vec![None; 8];
            let mut jiffies = 0u64;
            let mut fired = Vec::new();
            for op in ops {
                match op {
                    Op::Arm { t, delay, cpu } => {
                        let expires = jiffies + delay;
                        tm.mod_timer(ids[t], expires, jiffies, cpu);
                        // The slot it sits in (a same-bucket re-arm keeps the old bucket).
                        let slot = tm.list[ids[t]].slot.expect("pending");
                        let gran = wheel::lvl_gran(slot.lvl);
                        owed[t] = Some((expires, expires + gran));
                    }
                    Op::Del { t } => {
                        tm.del_timer(ids[t]);
                        owed[t] = None;
                    }
                    Op::Advance { n } => {
                        for _ in 0..n {
                            jiffies += 1;
                            for cpu in 0..2 {
                                for b in [BaseKind::Local, BaseKind::Global, BaseKind::Def] {
                                    fired.clear();
                                    tm.run_base(cpu, b, jiffies, &mut fired);
                                    for &f in &fired {
                                        let t = ids.iter().position(|&i| i == f).unwrap();
                                        let (expires, latest) = owed[t].take().expect("fired once, while armed");
                                        prop_assert!(jiffies >= expires, "timer {t} fired at {jiffies} before {expires}");
                                        prop_assert!(jiffies <= latest, "timer {t} fired at {jiffies}, later than {latest}");
                                    }
                                }
                            }
                        }
                    }
                }
                tm.check().map_err(TestCaseError::fail)?;
            }
            // Whatever is still owed is still pending, and is due in the future.
            for (t, o) in owed.iter().enumerate() {
                prop_assert_eq!(o.is_some(), tm.pending(ids[t]));
            }
        }
    }
}
