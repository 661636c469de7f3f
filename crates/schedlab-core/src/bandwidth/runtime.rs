//! Per-cfs_rq runtime: assignment from the pool, expiry, throttling, slack return and
//! distribution.
//!
//! Mirrors: kernel/sched/fair.c: __assign_cfs_rq_runtime(), expire_cfs_rq_runtime()
//! (<= 5.3), __account_cfs_rq_runtime(), throttle_cfs_rq(), unthrottle_cfs_rq(),
//! __return_cfs_rq_runtime(), distribute_cfs_runtime().

use super::{CfsBandwidthControl, GroupId, MIN_CFS_RQ_RUNTIME};
use crate::bandwidth::BwTimerRequest;
use crate::cpumask::CpuId;
use crate::time::Ns;

impl CfsBandwidthControl {
    /// __assign_cfs_rq_runtime: tops the cfs_rq up to `target` from the pool, as far as
    /// the pool allows, starting the period timer if needed. Returns whether the cfs_rq
    /// now has runtime.
    pub(super) fn assign(&mut self, g: GroupId, cpu: CpuId, target: Ns, now: Ns, timers: &mut Vec<BwTimerRequest>) -> bool {
        // runtime_remaining <= 0 here, so this is positive.
        let min_amount = (target as i64 - self.rq(g, cpu).runtime_remaining).max(0) as Ns;
        self.lock_log.push((g, cpu)); // raw_spin_lock(&cfs_b->lock)
        self.start_cfs_bandwidth(g, cpu, now, timers);
        let b = &mut self.groups[g];
        let mut amount = 0;
        if b.runtime > 0 {
            amount = b.runtime.min(min_amount);
            b.runtime -= amount;
            b.idle = false;
        }
        b.counters.handed_out += amount;
        let (global_expires, global_seq) = (b.runtime_expires, b.expires_seq);
        let mode = self.mode;
        let rq = self.rq_mut(g, cpu);
        rq.runtime_remaining += amount as i64;
        if mode.expiry_inverted {
            // 3.16-4.17: adopt the global expiry if it is later than ours.
            if global_expires > rq.runtime_expires {
                rq.runtime_expires = global_expires;
                rq.extended = false;
            }
        } else if mode.slice_expiry && rq.expires_seq != global_seq {
            // 4.18-5.3: adopt the current period's expiry.
            rq.expires_seq = global_seq;
            rq.runtime_expires = global_expires;
            rq.extended = false;
        }
        rq.runtime_remaining > 0
    }

    /// expire_cfs_rq_runtime (modes with expiry state): runs on every accounting.
    fn expire(&mut self, g: GroupId, cpu: CpuId, now: Ns) {
        let (global_expires, global_seq) = (self.groups[g].runtime_expires, self.groups[g].expires_seq);
        let (mode, tick) = (self.mode, self.tick);
        let rq = self.rq_mut(g, cpu);
        // The local deadline is ahead, or there is only debt: nothing to expire.
        if now < rq.runtime_expires || rq.runtime_remaining < 0 {
            return;
        }
        let extend = if mode.expiry_inverted {
            // The 3.16 test, inverted: extend when the expiries differ (after a refill).
            rq.extended || rq.runtime_expires != global_expires
        } else {
            // Same period as when the runtime was issued: our clock ran ahead (drift).
            rq.expires_seq == global_seq
        };
        if extend {
            rq.runtime_expires += tick;
            rq.extended = true;
        } else {
            let lost = rq.runtime_remaining as Ns;
            rq.runtime_remaining = 0;
            self.groups[g].counters.expired += lost;
        }
    }

    /// __account_cfs_rq_runtime on one limited level. Returns true when the level is out
    /// of runtime, not throttled, and the pool could not refill it (resched_curr).
    pub(super) fn account_level(&mut self, g: GroupId, cpu: CpuId, delta: Ns, now: Ns, timers: &mut Vec<BwTimerRequest>) -> bool {
        self.rq_mut(g, cpu).runtime_remaining -= delta as i64;
        self.groups[g].counters.consumed += delta;
        if self.mode.tracks_expiry() {
            self.expire(g, cpu, now);
        }
        let rq = self.rq(g, cpu);
        if rq.runtime_remaining > 0 || rq.throttled {
            return false;
        }
        !self.assign(g, cpu, self.slice, now, timers)
    }

    /// throttle_cfs_rq. As in 5.8+, first try to take just enough from the pool (runtime
    /// may have arrived since the accounting); returns false if that made it unnecessary.
    /// Before 6.6 throttled_time runs from here whatever the cfs_rq holds; from 6.6 only
    /// if it `has_tasks` (else from the first enqueue, see `queued_while_throttled`);
    /// from 6.18 (eb962f251fbb) only once a task is held (`task_throttled`).
    pub(super) fn throttle(&mut self, g: GroupId, cpu: CpuId, now: Ns, timers: &mut Vec<BwTimerRequest>, has_tasks: bool) -> bool {
        if self.assign(g, cpu, 1, now, timers) {
            return false;
        }
        let count = !self.mode.task_throttle && (has_tasks || !self.mode.nonempty_throttle_time);
        let rq = self.rq_mut(g, cpu);
        rq.throttled = true;
        rq.throttled_clock = count.then_some(now);
        let was_empty = self.groups[g].throttled_list.is_empty();
        self.groups[g].throttled_list.push(cpu);
        if was_empty {
            // The first throttled cfs_rq makes sure the period timer runs.
            self.start_cfs_bandwidth(g, cpu, now, timers);
        }
        true
    }

    /// unthrottle_cfs_rq, bandwidth part: statistics and the throttled list.
    pub(super) fn unthrottle(&mut self, g: GroupId, cpu: CpuId, now: Ns) {
        let rq = self.rq_mut(g, cpu);
        rq.throttled = false;
        let clock = rq.throttled_clock.take();
        self.lock_log.push((g, cpu)); // unthrottle_cfs_rq(): the throttled list, under cfs_b->lock
        let b = &mut self.groups[g];
        b.throttled_time += clock.map_or(0, |c| now.saturating_sub(c));
        if let Some(pos) = b.throttled_list.iter().position(|&c| c == cpu) {
            b.throttled_list.remove(pos);
        }
    }

    /// __return_cfs_rq_runtime: give back everything above min_cfs_rq_runtime. Before
    /// 5.4 the pool is credited only if the cfs_rq's expiry is the current one; the slack
    /// leaves the cfs_rq either way.
    pub(super) fn return_runtime(&mut self, g: GroupId, cpu: CpuId, now: Ns, timers: &mut Vec<BwTimerRequest>) {
        let rq = *self.rq(g, cpu);
        let slack = rq.runtime_remaining - MIN_CFS_RQ_RUNTIME as i64;
        if slack <= 0 {
            return;
        }
        let slack = slack as Ns;
        self.lock_log.push((g, cpu)); // raw_spin_lock(&cfs_b->lock)
        let credit = !self.mode.tracks_expiry() || (!rq.extended && rq.runtime_expires == self.groups[g].runtime_expires);
        let b = &mut self.groups[g];
        if credit {
            b.runtime += slack;
            b.counters.returned += slack;
            // Under the rq lock in the kernel: unthrottling is deferred to the slack timer.
            if b.runtime > self.slice && !b.throttled_list.is_empty() {
                self.start_cfs_slack_bandwidth(g, cpu, now, timers);
            }
        } else {
            b.counters.discarded += slack;
        }
        self.rq_mut(g, cpu).runtime_remaining -= slack as i64;
    }

    /// distribute_cfs_runtime: in throttled-list order, give each throttled cfs_rq just
    /// enough to become positive and unthrottle it, until the pool is empty. Appends the
    /// unthrottled cfs_rqs to `out`. From 6.2 (8ad075c2eb1f "sched: Async unthrottling
    /// for cfs bandwidth") only a cfs_rq of the timer's own CPU, `this_cpu`, is
    /// unthrottled here; the others get their runtime now and are queued for a CSD to
    /// their CPU (`take_async_unthrottles`), and are skipped until it has run.
    pub(super) fn distribute(&mut self, g: GroupId, this_cpu: CpuId, now: Ns, out: &mut Vec<(GroupId, CpuId)>) {
        let mut remaining = self.groups[g].runtime;
        let start = remaining;
        let global_expires = self.groups[g].runtime_expires;
        let tracks_expiry = self.mode.tracks_expiry();
        let is_async = self.mode.async_unthrottle;
        let mut local = None;
        for cpu in self.groups[g].throttled_list.clone() {
            if remaining == 0 {
                break;
            }
            if self.rq(g, cpu).csd_pending {
                continue; // already queued for async unthrottle
            }
            let rq = self.rq_mut(g, cpu);
            let give = ((1 - rq.runtime_remaining).max(0) as Ns).min(remaining);
            remaining -= give;
            rq.runtime_remaining += give as i64;
            if tracks_expiry {
                rq.runtime_expires = global_expires;
                rq.extended = false;
            }
            if rq.runtime_remaining > 0 {
                if !is_async {
                    self.unthrottle(g, cpu, now);
                    out.push((g, cpu));
                } else if cpu != this_cpu {
                    self.rq_mut(g, cpu).csd_pending = true;
                    self.csd_sent.push((g, cpu));
                } else {
                    // The local cfs_rq is unthrottled after the walk (local_unthrottle).
                    local = Some(cpu);
                }
            }
        }
        let b = &mut self.groups[g];
        b.runtime -= start - remaining;
        b.counters.handed_out += start - remaining;
        if let Some(cpu) = local {
            self.unthrottle(g, cpu, now);
            out.push((g, cpu));
        }
    }
}
