//! CFS bandwidth control: per-group quota pools, per-CPU runtime, throttling.
//!
//! Mirrors: kernel/sched/fair.c: account_cfs_rq_runtime(), assign_cfs_rq_runtime(),
//! expire_cfs_rq_runtime() (<= 5.3), throttle_cfs_rq(), unthrottle_cfs_rq(),
//! distribute_cfs_runtime(), sched_cfs_period_timer(), sched_cfs_slack_timer(),
//! return_cfs_rq_runtime(), check_enqueue_throttle(), check_cfs_rq_runtime(),
//! start_cfs_bandwidth(); kernel/sched/sched.h: struct cfs_bandwidth, struct cfs_rq.
//!
//! [`CfsBandwidthControl`] is a pure, deterministic state machine: it holds every group's
//! `cfs_bandwidth` (global pool, timers, statistics) and every (group, CPU) `cfs_rq`'s
//! runtime state. It has no clock and no event queue: every method takes `now` (ns) and
//! asks for timers by pushing [`BwTimerRequest`]s that the engine schedules.
//!
//! # API
//!
//! ```text
//! new(groups: &[(Option<GroupId>, BandwidthSpec)], nr_cpus, mode: BandwidthMode, slice_ns, tick_ns)
//! has_limits(g) -> bool                              this group or an ancestor has a quota
//! levels(g) -> Vec<GroupId>                          g and its ancestors, bottom-up, root excluded
//! account(g, cpu, delta_exec, now, timers) -> bool   update_curr: charge every limited level; true = resched
//! check_throttle(g, cpu, now, timers, has_tasks) -> Option<GroupId>   put_prev: highest level newly throttled
//! enqueue_check(g, cpu, now, timers) -> Option<GroupId>    check_enqueue_throttle of ONE level
//! queued_while_throttled(g, cpu, now)               a task queued on a throttled hierarchy (6.6 clock)
//! task_throttled(g, cpu, now)                        a task held at return to user space (6.18 clock)
//! dequeue_last(g, cpu, now, timers)                  return_cfs_rq_runtime of ONE level
//! timer_fired(req, now, timers) -> Vec<(GroupId, CpuId)>   period/slack timer; cfs_rqs unthrottled
//! is_throttled(g, cpu) -> bool                       g or an ancestor throttled on cpu (throttle_count)
//! stats(g, now) -> GroupStats                        cpu.stat figures (name/usage_ns left to the engine)
//! timer_cpu(g, kind) -> CpuId                        where the group's timer fires (its IPIs leave from there)
//! take_async_unthrottles() -> Vec<(GroupId, CpuId)>  6.2+: CSDs to send after a timer fired
//! csd_unthrottle(cpu, now) -> Vec<(GroupId, CpuId)>  6.2+: the CSD arrived on cpu; cfs_rqs unthrottled
//! runtime_remaining / pool_runtime / counters / period_timer / slack_timer / throttled_cpus  (inspection)
//! ```
//!
//! # Engine contract
//!
//! * Groups: index 0 is the root (never limited; its spec is ignored); index i >= 1 is the
//!   scenario's group i-1, parents before children; a parent of `None` means the root.
//! * Tick and every update_curr of a running task of group `g`: `account(g, cpu, delta)`.
//!   If it returns true, reschedule: at put_prev call `check_throttle(g, cpu)`; if it
//!   returns `Some(top)`, take every task of `top`'s subtree off this CPU's runqueue.
//!   Call `check_throttle` at every put_prev of a task in a limited hierarchy (the kernel
//!   also throttles a cfs_rq that ran out while its last task went to sleep; say with
//!   `has_tasks` which levels still hold tasks: from 6.6 an empty one's throttled_time
//!   waits for `queued_while_throttled`).
//! * Wakeup/enqueue of a task of `g` on `cpu`: walk `levels(g)` bottom-up; for each level
//!   whose cfs_rq on `cpu` goes from empty to non-empty call `enqueue_check(level)`; stop
//!   at the first level that is (or becomes) throttled: the task stays queued but does not
//!   run while `is_throttled(g, cpu)`.
//! * Sleep/dequeue: `account` first, then `dequeue_last(level)` for each level whose cfs_rq
//!   on `cpu` becomes empty (bottom-up), then `check_throttle` (put_prev).
//! * Timers: schedule each pushed request at `req.at` and hand it back to `timer_fired`
//!   at that time; stale requests are recognised and ignored, so there is no cancel.
//!   At one instant, fire bandwidth timers before the ticks due at that instant (the
//!   period timer's refill then precedes the first accounting of the new period).
//!   For each `(level, cpu)` that `timer_fired` returns, re-enqueue the tasks of `level`'s
//!   subtree on `cpu` for which `is_throttled` is now false, calling `enqueue_check` for
//!   the levels above `level` whose cfs_rqs become non-empty (unthrottle_cfs_rq does so).
//!   With `async_unthrottle` (6.2+), after each `timer_fired` send a CSD from
//!   `timer_cpu` to the CPU of each pair `take_async_unthrottles` returns and, when it
//!   arrives, call `csd_unthrottle(cpu)` and re-enqueue as above.
//! * `task_throttle` (6.18+): a throttled cfs_rq's tasks stay queued; each one picked
//!   runs until it next returns to user space and is held there: call `task_throttled`.
//!
//! # Kernel behaviours ([`BandwidthMode`])
//!
//! * (a) <= 3.15 and (c) 4.18-5.3, `slice_expiry`: every refill/restart advances
//!   `runtime_expires` and `expires_seq`; a cfs_rq copies them when it is given runtime;
//!   on each accounting past its local expiry with runtime left, the runtime is zeroed if
//!   the sequence moved (new period), else the local expiry is extended one tick (clock
//!   drift); slack is credited back only when the local expiry equals the current one.
//! * (b) 3.16-4.17, `expiry_inverted` (with or without `slice_expiry`, so both the
//!   brief's `slice_expiry && expiry_inverted` and the feature table's 4.x defaults select
//!   it): the test compares expiry times and is inverted: a leftover whose expiry differs
//!   from the global one is extended a tick at a time (never expires) and is zeroed only if
//!   the global expiry did not move; slack returned by an extended cfs_rq is discarded.
//! * (d) 5.4+, neither flag: no expiry state; slack always credited.
//! * (e) 5.14+, `burst`: refill = min(runtime + quota, quota + burst), made before the idle
//!   check; `nr_bursts`/`burst_time` from the runtime snapshot (5.16 statistics).
//!
//! Model: one clock, so the "drift" extension only happens when an accounting at the
//! boundary instant precedes the period timer, and a (b) expiry that was extended by ticks
//! counts as different from every global one (the kernel's practically never matches).
//! (a) is modelled by (c)'s sequence number (the 3.x time comparison is equivalent on one
//! clock); as in 4.1+, a restarted period timer does not refill the pool (3.x refilled on
//! restart). Period boundaries lie on multiples of the period from time 0 (the hrtimer is
//! forwarded from expiry 0). The 5.2 slack-timer rule (never pushed forward), the 5.8
//! re-check in throttle_cfs_rq (take 1 ns from the pool instead of throttling if it has
//! runtime) and throttled cfs_rqs joining the tail of the list apply to every mode.
//! Distribution itself takes no time (no distribute_running window, no remote rq lock
//! waits); from 6.2 the remote unthrottles wait for their CSD, whose delivery the engine
//! models. A cfs_rq unthrottled with 1 ns runs until its next accounting, so where the
//! engine puts ticks relative to the period grid matters for heavily throttled groups.
//! Not modelled: the period-timer overrun guard that doubles period and quota (the
//! callback takes no time here) and the hierarchical_quota constraint (scenario
//! validation's job).

mod runtime;
#[cfg(test)]
mod tests;
mod timers;

use crate::cpumask::CpuId;
use crate::features::{Feature, Features};
use crate::metrics::GroupStats;
use crate::time::{Ns, NSEC_PER_MSEC};

/// A task group: 0 is the root; then the scenario's groups in order, parents first.
pub type GroupId = usize;
/// The root task group (never limited).
pub const ROOT_GROUP: GroupId = 0;
/// A cfs_rq keeps this much runtime when it returns slack (fair.c `min_cfs_rq_runtime`).
pub const MIN_CFS_RQ_RUNTIME: Ns = NSEC_PER_MSEC;
/// No slack redistribution this close to a refresh (fair.c `min_bandwidth_expiration`).
pub const MIN_BANDWIDTH_EXPIRATION: Ns = 2 * NSEC_PER_MSEC;
/// Delay of the slack timer (fair.c `cfs_bandwidth_slack_period`).
pub const CFS_BANDWIDTH_SLACK_PERIOD: Ns = 5 * NSEC_PER_MSEC;
/// Default `sched_cfs_bandwidth_slice_us` (5000 µs).
pub const DEFAULT_BANDWIDTH_SLICE: Ns = 5 * NSEC_PER_MSEC;

/// Which historical form of bandwidth control runs (see the module header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BandwidthMode {
    /// Per-CPU runtime expires at the period boundary (feature BW_SLICE_EXPIRY).
    pub slice_expiry: bool,
    /// 3.16-4.17 inverted expiry test (feature BW_EXPIRY_INVERTED).
    pub expiry_inverted: bool,
    /// cpu.cfs_burst_us accumulation (feature BW_BURST).
    pub burst: bool,
    /// 6.6+: a cfs_rq throttled while empty starts its throttled_time clock only when a
    /// task is queued on it (feature BW_THROTTLE_TIME_NONEMPTY).
    pub nonempty_throttle_time: bool,
    /// 6.2+: distribution hands runtime to a throttled cfs_rq of another CPU and leaves
    /// its unthrottling to that CPU, through a CSD (feature BW_ASYNC_UNTHROTTLE).
    pub async_unthrottle: bool,
    /// 6.18+: the task-based throttle (feature BW_TASK_THROTTLE): throttled_time starts
    /// when the first task of the hierarchy is actually held (`task_throttled`).
    pub task_throttle: bool,
}

impl BandwidthMode {
    /// (a)/(c): <= 3.15 and 4.18-5.3, slices expire at the period boundary.
    pub const EXPIRING: BandwidthMode = BandwidthMode {
        slice_expiry: true,
        expiry_inverted: false,
        burst: false,
        nonempty_throttle_time: false,
        async_unthrottle: false,
        task_throttle: false,
    };
    /// (b): 3.16-4.17, the inverted test extends leftovers instead of expiring them.
    pub const INVERTED: BandwidthMode = BandwidthMode {
        slice_expiry: true,
        expiry_inverted: true,
        burst: false,
        nonempty_throttle_time: false,
        async_unthrottle: false,
        task_throttle: false,
    };
    /// (d): 5.4-5.13, no expiry.
    pub const NO_EXPIRY: BandwidthMode = BandwidthMode {
        slice_expiry: false,
        expiry_inverted: false,
        burst: false,
        nonempty_throttle_time: false,
        async_unthrottle: false,
        task_throttle: false,
    };
    /// (e): 5.14+, no expiry and cpu.cfs_burst_us.
    pub const BURST: BandwidthMode = BandwidthMode {
        slice_expiry: false,
        expiry_inverted: false,
        burst: true,
        nonempty_throttle_time: false,
        async_unthrottle: false,
        task_throttle: false,
    };

    /// Reads the bandwidth features of a run.
    pub fn from_features(f: &Features) -> BandwidthMode {
        BandwidthMode {
            slice_expiry: f.has(Feature::BW_SLICE_EXPIRY),
            expiry_inverted: f.has(Feature::BW_EXPIRY_INVERTED),
            burst: f.has(Feature::BW_BURST),
            nonempty_throttle_time: f.has(Feature::BW_THROTTLE_TIME_NONEMPTY),
            async_unthrottle: f.has(Feature::BW_ASYNC_UNTHROTTLE),
            task_throttle: f.has(Feature::BW_TASK_THROTTLE),
        }
    }

    /// Whether runtime_expires/expires_seq exist (kernels before 5.4).
    pub fn tracks_expiry(self) -> bool {
        self.slice_expiry || self.expiry_inverted
    }
}

/// Which of a group's two hrtimers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BwTimerKind {
    /// `period_timer`: refill and distribution, every period while active.
    Period,
    /// `slack_timer`: distributes returned slack 5 ms after it is armed.
    Slack,
}

/// A timer the engine must fire at `at` by calling [`CfsBandwidthControl::timer_fired`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BwTimerRequest {
    /// Owning group.
    pub group: GroupId,
    /// Which timer.
    pub kind: BwTimerKind,
    /// Absolute expiry.
    pub at: Ns,
}

/// Runtime flows of one group's pool, for invariants and tests (not in cpu.stat).
///
/// Conservation: `refilled - dropped - handed_out + returned == pool_runtime`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BwCounters {
    /// Added to the pool by the initial fill and the refills.
    pub refilled: Ns,
    /// Removed from the pool by a refill (burst cap; without burst the pool is set to quota).
    pub dropped: Ns,
    /// Moved from the pool to cfs_rqs (assign and distribute).
    pub handed_out: Ns,
    /// Slack credited back to the pool by cfs_rqs.
    pub returned: Ns,
    /// Slack a cfs_rq gave up without it being credited (expiry mismatch, <= 5.3).
    pub discarded: Ns,
    /// Local runtime zeroed by expire_cfs_rq_runtime.
    pub expired: Ns,
    /// Execution time charged to this group's cfs_rqs (only for a group with a quota).
    pub consumed: Ns,
}

/// struct cfs_bandwidth, one per group.
#[derive(Clone, Debug)]
struct CfsBandwidth {
    parent: Option<GroupId>,
    spec: BandwidthSpec,
    runtime: Ns,
    runtime_snap: Ns,
    idle: bool,
    period_active: bool,
    /// The period hrtimer's expiry; kept when inactive, as the hrtimer keeps it.
    period_expires: Ns,
    slack_started: bool,
    slack_at: Option<Ns>,
    runtime_expires: Ns,
    expires_seq: u64,
    /// throttled_cfs_rq, in list order (CPU numbers).
    throttled_list: Vec<CpuId>,
    /// CPU whose hrtimer base holds the period timer: the one that last started it
    /// (HRTIMER_MODE_ABS_PINNED; the callback re-arms it in place).
    period_cpu: CpuId,
    /// CPU the slack timer was armed on.
    slack_cpu: CpuId,
    nr_periods: u64,
    nr_throttled: u64,
    throttled_time: Ns,
    nr_bursts: u64,
    burst_time: Ns,
    counters: BwCounters,
}

/// The bandwidth part of struct cfs_rq, one per (group, CPU).
#[derive(Clone, Copy, Debug, Default)]
struct CfsRq {
    runtime_remaining: i64,
    throttled: bool,
    /// When throttled_time started running for this throttle (None: throttled while
    /// empty, from 6.6 not counted until a task is queued).
    throttled_clock: Option<Ns>,
    runtime_expires: Ns,
    expires_seq: u64,
    /// The local expiry was pushed by a tick since it was last copied from the global one.
    /// The kernel's extended expiry (issue time + period + k ticks) practically never
    /// equals a later global one; on one exact clock it could, so in the (b) expiry test
    /// and the slack-credit test "extended" counts as "different".
    extended: bool,
    /// 6.2+: runtime was distributed to it from another CPU and its unthrottle waits in
    /// that CPU's cfsb_csd_list (cfs_rq->throttled_csd_list non-empty).
    csd_pending: bool,
}

/// Every group's bandwidth pool and every (group, CPU) cfs_rq's runtime.
#[derive(Clone, Debug)]
pub struct CfsBandwidthControl {
    groups: Vec<CfsBandwidth>,
    rqs: Vec<CfsRq>,
    nr_cpus: usize,
    mode: BandwidthMode,
    slice: Ns,
    tick: Ns,
    /// cfs_rqs handed runtime for an asynchronous unthrottle, not yet collected by the
    /// engine (`take_async_unthrottles`).
    csd_sent: Vec<(GroupId, CpuId)>,
    /// Every cfs_b->lock acquisition of a CPU's accounting (assign, return, unthrottle)
    /// since the engine last collected them (`take_lock_log`): the engine prices them.
    lock_log: Vec<(GroupId, CpuId)>,
}

impl CfsBandwidthControl {
    /// Builds the state at time 0: pools as the writes of quota and burst leave them
    /// (tg_set_cfs_bandwidth refills), timers idle.
    ///
    /// `groups[0]` is the root; `slice_ns` is sched_cfs_bandwidth_slice; `tick_ns` is
    /// TICK_NSEC (the drift extension step of the expiring modes).
    pub fn new(groups: &[(Option<GroupId>, BandwidthSpec)], nr_cpus: usize, mode: BandwidthMode, slice_ns: Ns, tick_ns: Ns) -> Self {
        assert!(slice_ns > 0 && tick_ns > 0, "bandwidth slice and tick must be positive");
        let groups: Vec<CfsBandwidth> = groups
            .iter()
            .enumerate()
            .map(|(i, &(parent, spec))| {
                let parent = if i == ROOT_GROUP { None } else { Some(parent.unwrap_or(ROOT_GROUP)) };
                assert!(parent.is_none_or(|p| p < i), "group {i}: parents must come before children");
                let spec = if i == ROOT_GROUP { BandwidthSpec { quota_ns: None, ..spec } } else { spec };
                // Each write of the limits runs tg_set_cfs_bandwidth(), whose
                // __refill_cfs_bandwidth_runtime() adds a quota capped at quota + burst.
                // A burst needs a second write (cpu.max, then cpu.max.burst), so the pool
                // starts at min(2 x quota, quota + burst), not at quota.
                let quota = spec.quota_ns.unwrap_or(0);
                let full = if mode.burst && spec.burst_ns > 0 { (2 * quota).min(quota + spec.burst_ns) } else { quota };
                CfsBandwidth {
                    parent,
                    spec,
                    runtime: full,
                    runtime_snap: full,
                    idle: false,
                    period_active: false,
                    period_expires: 0,
                    slack_started: false,
                    slack_at: None,
                    runtime_expires: 0,
                    expires_seq: 0,
                    throttled_list: Vec::new(),
                    period_cpu: 0,
                    slack_cpu: 0,
                    nr_periods: 0,
                    nr_throttled: 0,
                    throttled_time: 0,
                    nr_bursts: 0,
                    burst_time: 0,
                    counters: BwCounters { refilled: full, ..BwCounters::default() },
                }
            })
            .collect();
        let rqs = vec![CfsRq::default(); groups.len() * nr_cpus];
        CfsBandwidthControl { groups, rqs, nr_cpus, mode, slice: slice_ns, tick: tick_ns, csd_sent: Vec::new(), lock_log: Vec::new() }
    }

    fn rq(&self, g: GroupId, cpu: CpuId) -> &CfsRq {
        &self.rqs[g * self.nr_cpus + cpu]
    }

    fn rq_mut(&mut self, g: GroupId, cpu: CpuId) -> &mut CfsRq {
        &mut self.rqs[g * self.nr_cpus + cpu]
    }

    fn limited(&self, g: GroupId) -> bool {
        self.groups[g].spec.quota_ns.is_some()
    }

    /// Number of groups, root included.
    pub fn nr_groups(&self) -> usize {
        self.groups.len()
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.nr_cpus
    }

    /// The behaviour in force.
    pub fn mode(&self) -> BandwidthMode {
        self.mode
    }

    /// sched_cfs_bandwidth_slice in ns.
    pub fn slice_ns(&self) -> Ns {
        self.slice
    }

    /// A group's limits (the root's quota is always None).
    pub fn spec(&self, g: GroupId) -> BandwidthSpec {
        self.groups[g].spec
    }

    /// A group's parent (None for the root).
    pub fn parent(&self, g: GroupId) -> Option<GroupId> {
        self.groups[g].parent
    }

    /// `g` and its ancestors, bottom-up, without the root.
    pub fn levels(&self, g: GroupId) -> Vec<GroupId> {
        let mut out = Vec::new();
        let mut at = Some(g);
        while let Some(x) = at.filter(|&x| x != ROOT_GROUP) {
            out.push(x);
            at = self.groups[x].parent;
        }
        out
    }

    /// Whether this group or an ancestor has a quota.
    pub fn has_limits(&self, g: GroupId) -> bool {
        self.levels(g).into_iter().any(|x| self.limited(x))
    }

    /// account_cfs_rq_runtime for `g` and every ancestor with a quota, for `delta_exec`
    /// ns run by the current task on `cpu`. Returns true when the task must be
    /// rescheduled: some level ran out and its pool could not refill it.
    pub fn account(&mut self, g: GroupId, cpu: CpuId, delta_exec: Ns, now: Ns, timers: &mut Vec<BwTimerRequest>) -> bool {
        let mut resched = false;
        for x in self.levels(g) {
            if self.limited(x) && self.account_level(x, cpu, delta_exec, now, timers) {
                resched = true;
            }
        }
        resched
    }

    /// check_cfs_rq_runtime at put_prev, on every level: throttles each limited level
    /// whose runtime is exhausted and returns the highest one newly throttled.
    /// `has_tasks(level)`: whether that level's cfs_rq on `cpu` holds tasks (a task that
    /// just went to sleep has left it).
    pub fn check_throttle(
        &mut self,
        g: GroupId,
        cpu: CpuId,
        now: Ns,
        timers: &mut Vec<BwTimerRequest>,
        has_tasks: impl Fn(GroupId) -> bool,
    ) -> Option<GroupId> {
        let mut top = None;
        for x in self.levels(g) {
            let rq = *self.rq(x, cpu);
            if self.limited(x) && rq.runtime_remaining <= 0 && !rq.throttled && self.throttle(x, cpu, now, timers, has_tasks(x)) {
                top = Some(x);
            }
        }
        top
    }

    /// check_enqueue_throttle for the one level `g` whose cfs_rq on `cpu` just received
    /// its first entity: fetch runtime (account of 0 ns) and throttle if there is none.
    /// Returns `Some(g)` if this call throttled it.
    pub fn enqueue_check(&mut self, g: GroupId, cpu: CpuId, now: Ns, timers: &mut Vec<BwTimerRequest>) -> Option<GroupId> {
        if g == ROOT_GROUP || !self.limited(g) || self.rq(g, cpu).throttled {
            return None;
        }
        self.account_level(g, cpu, 0, now, timers);
        (self.rq(g, cpu).runtime_remaining <= 0 && self.throttle(g, cpu, now, timers, true)).then_some(g)
    }

    /// enqueue_entity() on a throttled cfs_rq (6.6-6.17): a task queued where none was
    /// starts the throttled_time clock of the throttled levels of its hierarchy on `cpu`.
    /// With the task-based throttle (6.18) the clock waits for `task_throttled` instead.
    pub fn queued_while_throttled(&mut self, g: GroupId, cpu: CpuId, now: Ns) {
        if !self.mode.task_throttle {
            self.start_throttled_clock(g, cpu, now);
        }
    }

    /// throttle_cfs_rq_work() (6.18, eb962f251fbb "sched/fair: Task based throttle time
    /// accounting"): a task of `g` was held on `cpu` at its return to user space; the
    /// throttled cfs_rqs of its hierarchy whose clock is not running start it now.
    pub fn task_throttled(&mut self, g: GroupId, cpu: CpuId, now: Ns) {
        self.start_throttled_clock(g, cpu, now);
    }

    fn start_throttled_clock(&mut self, g: GroupId, cpu: CpuId, now: Ns) {
        for x in self.levels(g) {
            let rq = self.rq_mut(x, cpu);
            if rq.throttled && rq.throttled_clock.is_none() {
                rq.throttled_clock = Some(now);
            }
        }
    }

    /// return_cfs_rq_runtime for the one level `g` whose cfs_rq on `cpu` became empty:
    /// everything above min_cfs_rq_runtime goes back to the pool (see the module header).
    pub fn dequeue_last(&mut self, g: GroupId, cpu: CpuId, now: Ns, timers: &mut Vec<BwTimerRequest>) {
        if g != ROOT_GROUP && self.limited(g) {
            self.return_runtime(g, cpu, now, timers);
        }
    }

    /// Whether `g` or an ancestor is throttled on `cpu` (cfs_rq->throttle_count > 0).
    pub fn is_throttled(&self, g: GroupId, cpu: CpuId) -> bool {
        self.levels(g).into_iter().any(|x| self.rq(x, cpu).throttled)
    }

    /// cpu.stat of a group at `now` (throttled_time includes throttles still open);
    /// `name` and `usage_ns` are left for the engine.
    pub fn stats(&self, g: GroupId, now: Ns) -> GroupStats {
        let b = &self.groups[g];
        let open: Ns = (0..self.nr_cpus)
            .map(|c| self.rq(g, c))
            .filter(|rq| rq.throttled)
            .filter_map(|rq| rq.throttled_clock.map(|c| now.saturating_sub(c)))
            .sum();
        GroupStats {
            quota_ns: b.spec.quota_ns,
            period_ns: b.spec.period_ns,
            nr_periods: b.nr_periods,
            nr_throttled: b.nr_throttled,
            throttled_time: b.throttled_time + open,
            nr_bursts: b.nr_bursts,
            burst_time: b.burst_time,
            ..GroupStats::default()
        }
    }

    /// cfs_rq->runtime_remaining of `g` on `cpu` (negative = overrun to repay).
    pub fn runtime_remaining(&self, g: GroupId, cpu: CpuId) -> i64 {
        self.rq(g, cpu).runtime_remaining
    }

    /// cfs_b->runtime: what is left in the group's global pool.
    pub fn pool_runtime(&self, g: GroupId) -> Ns {
        self.groups[g].runtime
    }

    /// The group's runtime flows (handed out, returned, consumed, ...).
    pub fn counters(&self, g: GroupId) -> BwCounters {
        self.groups[g].counters
    }

    /// Expiry of the period timer while it is active.
    pub fn period_timer(&self, g: GroupId) -> Option<Ns> {
        let b = &self.groups[g];
        b.period_active.then_some(b.period_expires)
    }

    /// Expiry of the slack timer while it is armed.
    pub fn slack_timer(&self, g: GroupId) -> Option<Ns> {
        self.groups[g].slack_at
    }

    /// CPUs whose cfs_rq of `g` is throttled, in throttled-list (distribution) order.
    pub fn throttled_cpus(&self, g: GroupId) -> &[CpuId] {
        &self.groups[g].throttled_list
    }

    /// The CPU a group's timer of this kind fires on (where it was last started).
    pub fn timer_cpu(&self, g: GroupId, kind: BwTimerKind) -> CpuId {
        match kind {
            BwTimerKind::Period => self.groups[g].period_cpu,
            BwTimerKind::Slack => self.groups[g].slack_cpu,
        }
    }

    /// The cfs_b->lock acquisitions since the last call, as (group, CPU), into `out`
    /// (cleared first).
    pub fn take_lock_log(&mut self, out: &mut Vec<(GroupId, CpuId)>) {
        out.clear();
        std::mem::swap(out, &mut self.lock_log);
    }

    /// Whether any cfs_b->lock acquisition waits to be collected.
    #[inline]
    pub fn has_lock_log(&self) -> bool {
        !self.lock_log.is_empty()
    }

    /// 6.2+: the cfs_rqs that distribution gave runtime on CPUs other than the timer's
    /// since the last call; each must be unthrottled by `csd_unthrottle` on its CPU when
    /// the CSD arrives there (unthrottle_cfs_rq_async()).
    pub fn take_async_unthrottles(&mut self) -> Vec<(GroupId, CpuId)> {
        std::mem::take(&mut self.csd_sent)
    }

    /// __cfsb_csd_unthrottle() on `cpu`: every cfs_rq of `cpu` waiting for this CSD
    /// leaves the list and is unthrottled if it is still throttled. Returns those
    /// unthrottled, in group order.
    pub fn csd_unthrottle(&mut self, cpu: CpuId, now: Ns) -> Vec<(GroupId, CpuId)> {
        let mut out = Vec::new();
        let task_mode = self.mode.task_throttle;
        for g in 0..self.groups.len() {
            let rq = self.rq_mut(g, cpu);
            if !rq.csd_pending {
                continue;
            }
            rq.csd_pending = false;
            // 6.18: tasks still on their way to user space may have used the runtime up
            // meanwhile; unthrottle_cfs_rq() then leaves the cfs_rq throttled.
            if rq.throttled && !(task_mode && rq.runtime_remaining <= 0) {
                self.unthrottle(g, cpu, now);
                out.push((g, cpu));
            }
        }
        out
    }

    /// Whether `g`'s cfs_rq on `cpu` waits for an asynchronous unthrottle.
    pub fn csd_pending(&self, g: GroupId, cpu: CpuId) -> bool {
        self.rq(g, cpu).csd_pending
    }
}

pub use crate::scenario::BandwidthSpec;
