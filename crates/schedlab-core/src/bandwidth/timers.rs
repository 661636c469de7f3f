//! The period and slack hrtimers of a group.
//!
//! Mirrors: kernel/sched/fair.c: start_cfs_bandwidth(), sched_cfs_period_timer(),
//! do_sched_cfs_period_timer(), __refill_cfs_bandwidth_runtime(),
//! runtime_refresh_within(), start_cfs_slack_bandwidth(), do_sched_cfs_slack_timer();
//! kernel/time/hrtimer.c: hrtimer_forward().
//! Model: the period timer keeps its expiry while inactive, as an hrtimer does, so the
//! period boundaries of a group stay on one grid (multiples of the period from time 0).

use super::{BwTimerKind, BwTimerRequest, CfsBandwidthControl, GroupId, CFS_BANDWIDTH_SLACK_PERIOD, MIN_BANDWIDTH_EXPIRATION};
use crate::cpumask::CpuId;
use crate::time::Ns;

/// hrtimer_forward: moves `expires` past `now` by whole intervals; returns the new
/// expiry and the number of intervals (the overrun, 0 if `expires` is still ahead).
fn hrtimer_forward(expires: Ns, now: Ns, interval: Ns) -> (Ns, u64) {
    if now < expires {
        return (expires, 0);
    }
    let overrun = (now - expires) / interval + 1;
    (expires + overrun * interval, overrun)
}

impl CfsBandwidthControl {
    /// start_cfs_bandwidth: arm the period timer if it is not active (4.1+: no refill).
    /// It is started pinned (HRTIMER_MODE_ABS_PINNED) on `cpu`, the caller's CPU.
    pub(super) fn start_cfs_bandwidth(&mut self, g: GroupId, cpu: CpuId, now: Ns, timers: &mut Vec<BwTimerRequest>) {
        let tracks_expiry = self.mode.tracks_expiry();
        let b = &mut self.groups[g];
        if b.period_active {
            return;
        }
        b.period_active = true;
        b.period_cpu = cpu;
        let (expires, _) = hrtimer_forward(b.period_expires, now, b.spec.period_ns);
        b.period_expires = expires;
        if tracks_expiry {
            // 4.1-5.3: the pool's runtime now belongs to the period ending at `expires`.
            b.runtime_expires = expires;
            b.expires_seq += 1;
        }
        timers.push(BwTimerRequest { group: g, kind: BwTimerKind::Period, at: expires });
    }

    /// __refill_cfs_bandwidth_runtime, with the 5.14 burst form and 5.16 statistics.
    fn refill(&mut self, g: GroupId) {
        let (burst_mode, tracks_expiry) = (self.mode.burst, self.mode.tracks_expiry());
        let b = &mut self.groups[g];
        let Some(quota) = b.spec.quota_ns else { return };
        let before = b.runtime;
        if burst_mode {
            b.runtime += quota;
            if b.runtime_snap > b.runtime {
                // More than a quota was used since the last refill: it came from the burst.
                b.burst_time += b.runtime_snap - b.runtime;
                b.nr_bursts += 1;
            }
            b.runtime = b.runtime.min(quota + b.spec.burst_ns);
            b.runtime_snap = b.runtime;
        } else {
            b.runtime = quota;
        }
        if b.runtime >= before {
            b.counters.refilled += b.runtime - before;
        } else {
            b.counters.dropped += before - b.runtime;
        }
        if tracks_expiry {
            b.runtime_expires = b.period_expires;
            b.expires_seq += 1;
        }
    }

    /// do_sched_cfs_period_timer. Returns true when the timer goes inactive (idle group).
    fn do_period_timer(&mut self, g: GroupId, overrun: u64, now: Ns, out: &mut Vec<(GroupId, CpuId)>) -> bool {
        let throttled = !self.groups[g].throttled_list.is_empty();
        self.groups[g].nr_periods += overrun;
        if self.mode.burst {
            // 5.14+: refill the burst even when about to go idle.
            self.refill(g);
        }
        if self.groups[g].idle && !throttled {
            return true;
        }
        if !self.mode.burst {
            self.refill(g);
        }
        if !throttled {
            // Tentatively idle for the next period; any assignment clears it.
            self.groups[g].idle = true;
            return false;
        }
        // nr_throttled counts periods in which the group was throttled.
        self.groups[g].nr_throttled += overrun;
        if self.groups[g].runtime > 0 {
            let this_cpu = self.groups[g].period_cpu;
            self.distribute(g, this_cpu, now, out);
        }
        self.groups[g].idle = false;
        false
    }

    /// runtime_refresh_within: is the period timer due in less than `min_expire`?
    fn runtime_refresh_within(&self, g: GroupId, now: Ns, min_expire: Ns) -> bool {
        // The kernel reads the remaining time as unsigned: an expiry in the past is "far".
        let expires = self.groups[g].period_expires;
        expires >= now && expires - now < min_expire
    }

    /// start_cfs_slack_bandwidth: arm the slack timer unless a refresh is near or it is
    /// already armed (5.2+: never pushed forward).
    pub(super) fn start_cfs_slack_bandwidth(&mut self, g: GroupId, cpu: CpuId, now: Ns, timers: &mut Vec<BwTimerRequest>) {
        if self.runtime_refresh_within(g, now, CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        let b = &mut self.groups[g];
        if b.slack_started {
            return;
        }
        b.slack_started = true;
        b.slack_cpu = cpu;
        let at = now + CFS_BANDWIDTH_SLACK_PERIOD;
        b.slack_at = Some(at);
        timers.push(BwTimerRequest { group: g, kind: BwTimerKind::Slack, at });
    }

    /// do_sched_cfs_slack_timer: distribute the pool if it holds more than a slice.
    fn do_slack_timer(&mut self, g: GroupId, now: Ns, out: &mut Vec<(GroupId, CpuId)>) {
        self.groups[g].slack_started = false;
        if self.runtime_refresh_within(g, now, MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        if self.groups[g].spec.quota_ns.is_some() && self.groups[g].runtime > self.slice {
            let this_cpu = self.groups[g].slack_cpu;
            self.distribute(g, this_cpu, now, out);
        }
    }

    /// Runs a timer the engine scheduled from a [`BwTimerRequest`] (at or after `req.at`).
    /// Stale requests (the timer was re-armed or went idle since) are ignored. Returns the
    /// cfs_rqs that were unthrottled, in distribution order; pushes re-armed timers.
    pub fn timer_fired(&mut self, req: BwTimerRequest, now: Ns, timers: &mut Vec<BwTimerRequest>) -> Vec<(GroupId, CpuId)> {
        let g = req.group;
        let mut out = Vec::new();
        if g >= self.groups.len() || self.groups[g].spec.quota_ns.is_none() {
            return out;
        }
        match req.kind {
            BwTimerKind::Period => {
                let b = &mut self.groups[g];
                if !b.period_active || b.period_expires != req.at {
                    return out;
                }
                // sched_cfs_period_timer: forward past now, then account the overrun.
                let (expires, overrun) = hrtimer_forward(b.period_expires, now.max(req.at), b.spec.period_ns);
                b.period_expires = expires;
                if self.do_period_timer(g, overrun, now, &mut out) {
                    self.groups[g].period_active = false;
                } else {
                    timers.push(BwTimerRequest { group: g, kind: BwTimerKind::Period, at: expires });
                }
            }
            BwTimerKind::Slack => {
                if self.groups[g].slack_at != Some(req.at) {
                    return out;
                }
                self.groups[g].slack_at = None;
                self.do_slack_timer(g, now, &mut out);
            }
        }
        out
    }
}
