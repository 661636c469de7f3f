//! Unit tests of the bandwidth state machine, rule by rule.

use super::*;

const MS: Ns = NSEC_PER_MSEC;

fn spec(quota_ms: Option<Ns>, period_ms: Ns, burst_ms: Ns) -> BandwidthSpec {
    BandwidthSpec { quota_ns: quota_ms.map(|q| q * MS), period_ns: period_ms * MS, burst_ns: burst_ms * MS }
}

/// Root + one group (id 1) with quota/period in ms.
fn one_group(mode: BandwidthMode, quota_ms: Ns, period_ms: Ns, cpus: usize) -> CfsBandwidthControl {
    let root = (None, spec(None, 100, 0));
    CfsBandwidthControl::new(&[root, (None, spec(Some(quota_ms), period_ms, 0))], cpus, mode, 5 * MS, MS)
}

fn fire(bw: &mut CfsBandwidthControl, req: BwTimerRequest, t: &mut Vec<BwTimerRequest>) -> Vec<(GroupId, CpuId)> {
    bw.timer_fired(req, req.at, t)
}

fn conserved(bw: &CfsBandwidthControl, g: GroupId) -> bool {
    let c = bw.counters(g);
    c.refilled + c.returned == bw.pool_runtime(g) + c.dropped + c.handed_out
}

#[test]
fn first_use_takes_a_slice_and_arms_the_period_timer_on_the_grid() {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 20, 100, 2);
    let mut t = Vec::new();
    assert_eq!(bw.enqueue_check(1, 0, 250 * MS, &mut t), None);
    assert_eq!(bw.runtime_remaining(1, 0), (5 * MS) as i64);
    assert_eq!(bw.pool_runtime(1), 15 * MS);
    // hrtimer_forward from expiry 0: the next multiple of the period after now.
    assert_eq!(t, vec![BwTimerRequest { group: 1, kind: BwTimerKind::Period, at: 300 * MS }]);
    assert_eq!(bw.period_timer(1), Some(300 * MS));
    // A second CPU's top-up does not re-arm it.
    assert!(!bw.account(1, 1, 0, 251 * MS, &mut t));
    assert_eq!(t.len(), 1);
    // The root and unlimited groups are never charged.
    assert!(!bw.has_limits(0));
    assert!(conserved(&bw, 1));
}

#[test]
fn stale_and_foreign_timer_firings_are_ignored() {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 0, &mut t);
    let req = t[0];
    let stale = BwTimerRequest { at: req.at + 1, ..req };
    assert!(fire(&mut bw, stale, &mut t).is_empty());
    assert_eq!(bw.stats(1, req.at).nr_periods, 0);
    fire(&mut bw, req, &mut t);
    assert_eq!(bw.stats(1, req.at).nr_periods, 1);
    // The same request again is stale now: the timer moved on.
    fire(&mut bw, req, &mut t);
    assert_eq!(bw.stats(1, req.at).nr_periods, 1);
    let slack = BwTimerRequest { group: 1, kind: BwTimerKind::Slack, at: 5 * MS };
    assert!(fire(&mut bw, slack, &mut t).is_empty());
}

#[test]
fn throttle_when_the_pool_is_empty_then_distribute_in_list_order() {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 10, 100, 3);
    let mut t = Vec::new();
    // CPU 0 takes 5 ms, CPU 1 takes 5 ms: the pool is empty.
    bw.enqueue_check(1, 0, 0, &mut t);
    bw.enqueue_check(1, 1, 0, &mut t);
    assert_eq!(bw.pool_runtime(1), 0);
    // CPU 2 finds nothing and is throttled at enqueue.
    assert_eq!(bw.enqueue_check(1, 2, MS, &mut t), Some(1));
    // CPU 1 overruns by 0.5 ms at a tick: resched, then throttled at put_prev.
    assert!(bw.account(1, 1, 5 * MS + MS / 2, 6 * MS, &mut t));
    assert_eq!(bw.check_throttle(1, 1, 6 * MS, &mut t, |_| true), Some(1));
    assert_eq!(bw.throttled_cpus(1), &[2, 1]);
    assert!(bw.is_throttled(1, 1) && bw.is_throttled(1, 2) && !bw.is_throttled(1, 0));
    // Open throttles count in throttled_time: 9 ms + 4 ms at 10 ms.
    assert_eq!(bw.stats(1, 10 * MS).throttled_time, 13 * MS);
    let req = *t.iter().find(|r| r.kind == BwTimerKind::Period).unwrap();
    let un = fire(&mut bw, req, &mut t);
    assert_eq!(un, vec![(1, 2), (1, 1)]);
    // Just enough to become positive: 1 ns each, the 0.5 ms debt repaid.
    assert_eq!(bw.runtime_remaining(1, 2), 1);
    assert_eq!(bw.runtime_remaining(1, 1), 1);
    assert_eq!(bw.pool_runtime(1), 10 * MS - 2 - MS / 2);
    let s = bw.stats(1, 100 * MS);
    assert_eq!((s.nr_periods, s.nr_throttled, s.throttled_time), (1, 1, 99 * MS + 94 * MS));
    assert!(conserved(&bw, 1));
}

#[test]
fn return_keeps_min_runtime_and_the_slack_timer_obeys_its_windows() {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 12, 100, 3);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 0, &mut t); // 5 ms
    bw.enqueue_check(1, 1, 0, &mut t); // 5 ms, pool 2 ms
    bw.enqueue_check(1, 2, 0, &mut t); // 2 ms, pool 0
    bw.account(1, 2, 3 * MS, 3 * MS, &mut t);
    assert_eq!(bw.check_throttle(1, 2, 3 * MS, &mut t, |_| true), Some(1));
    t.clear();
    // CPU 0 sleeps after 0.5 ms: returns 3.5 ms, keeps 1 ms. Pool 3.5 ms <= slice: no timer.
    bw.account(1, 0, MS / 2, 10 * MS, &mut t);
    bw.dequeue_last(1, 0, 10 * MS, &mut t);
    assert_eq!(bw.runtime_remaining(1, 0), MS as i64);
    assert_eq!(bw.pool_runtime(1), 3 * MS + MS / 2);
    assert!(t.is_empty());
    // CPU 1 returns 4 ms: pool 7.5 ms > slice and someone is throttled: armed at +5 ms.
    bw.dequeue_last(1, 1, 20 * MS, &mut t);
    assert_eq!(t, vec![BwTimerRequest { group: 1, kind: BwTimerKind::Slack, at: 25 * MS }]);
    // Never pushed forward while armed: another credited return leaves it alone.
    bw.account(1, 1, MS, 21 * MS, &mut t);
    bw.dequeue_last(1, 1, 22 * MS, &mut t);
    assert_eq!(t.len(), 1);
    assert_eq!(bw.slack_timer(1), Some(25 * MS));
    let un = fire(&mut bw, t[0], &mut t);
    assert_eq!(un, vec![(1, 2)]);
    assert_eq!(bw.runtime_remaining(1, 2), 1);
    assert!(conserved(&bw, 1));
}

/// Three CPUs take 5 ms each of 20 ms; CPU 1 overruns and is throttled; CPUs 0 and 2
/// return 4 ms each at `at_tenth_ms` × 0.1 ms (the pool then holds 8 ms > slice).
fn two_returns_at(at_tenth_ms: Ns) -> (CfsBandwidthControl, Vec<BwTimerRequest>) {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 20, 100, 3);
    let mut t = Vec::new();
    for cpu in [0, 2, 1] {
        bw.enqueue_check(1, cpu, 90 * MS, &mut t);
    }
    bw.account(1, 1, 12 * MS, 90 * MS, &mut t);
    assert!(bw.check_throttle(1, 1, 90 * MS, &mut t, |_| true).is_some());
    t.clear();
    bw.dequeue_last(1, 0, at_tenth_ms * MS / 10, &mut t);
    bw.dequeue_last(1, 2, at_tenth_ms * MS / 10, &mut t);
    assert_eq!(bw.pool_runtime(1), 8 * MS);
    (bw, t)
}

#[test]
fn slack_timer_needs_seven_ms_before_the_refresh() {
    // 6.5 ms before the refresh: not armed.
    let (bw, t) = two_returns_at(935);
    assert!(t.is_empty() && bw.slack_timer(1).is_none());
    // 8 ms before: armed for 97 ms, and distributes then (3 ms before the refresh).
    let (mut bw, mut t) = two_returns_at(920);
    assert_eq!(t.len(), 1);
    assert_eq!(fire(&mut bw, t[0], &mut t), vec![(1, 1)]);
    assert_eq!(bw.runtime_remaining(1, 1), 1);
    assert_eq!(bw.pool_runtime(1), 6 * MS - 1);
}

#[test]
fn expiring_mode_zeroes_old_runtime_and_discards_its_slack() {
    let mut bw = one_group(BandwidthMode::EXPIRING, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 10 * MS, &mut t);
    bw.account(1, 0, MS, 11 * MS, &mut t);
    assert_eq!(bw.runtime_remaining(1, 0), (4 * MS) as i64);
    let req = t[0];
    fire(&mut bw, req, &mut t);
    // The first accounting after the boundary: 4 ms - 0.5 ms expire, a new slice comes.
    assert!(!bw.account(1, 0, MS / 2, 100 * MS + MS / 2, &mut t));
    assert_eq!(bw.counters(1).expired, 3 * MS + MS / 2);
    assert_eq!(bw.runtime_remaining(1, 0), (5 * MS) as i64);
    // Slack of the current period is credited.
    bw.dequeue_last(1, 0, 101 * MS, &mut t);
    assert_eq!(bw.counters(1).returned, 4 * MS);
    // A silo from an old period: its slack leaves it but is not credited.
    let mut bw = one_group(BandwidthMode::EXPIRING, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 10 * MS, &mut t);
    fire(&mut bw, t[0], &mut t);
    bw.dequeue_last(1, 0, 100 * MS, &mut t);
    assert_eq!((bw.counters(1).returned, bw.counters(1).discarded), (0, 4 * MS));
    assert_eq!(bw.runtime_remaining(1, 0), MS as i64);
    assert!(conserved(&bw, 1));
}

#[test]
fn expiring_mode_extends_one_tick_when_accounting_precedes_the_timer() {
    let mut bw = one_group(BandwidthMode::EXPIRING, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 10 * MS, &mut t);
    // A tick at the boundary instant, before the period timer: "clock drift", extend.
    bw.account(1, 0, MS, 100 * MS, &mut t);
    assert_eq!(bw.runtime_remaining(1, 0), (4 * MS) as i64);
    fire(&mut bw, t[0], &mut t);
    bw.account(1, 0, MS, 101 * MS, &mut t);
    // One tick later the sequence has moved: expired, refilled from the new period.
    assert_eq!(bw.counters(1).expired, 3 * MS);
    assert_eq!(bw.runtime_remaining(1, 0), (5 * MS) as i64);
}

#[test]
fn inverted_mode_keeps_leftovers_and_discards_their_slack() {
    let mut bw = one_group(BandwidthMode::INVERTED, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 10 * MS, &mut t);
    for k in 0..150 {
        let now = 100 * MS + k * MS;
        // Fire what is due first (the period timer goes idle at 200 ms: no assignment).
        while let Some(i) = t.iter().position(|r| r.at <= now) {
            let r = t.remove(i);
            bw.timer_fired(r, r.at, &mut t);
        }
        bw.account(1, 0, 10_000, now, &mut t);
    }
    assert!(bw.period_timer(1).is_none());
    // 1.5 ms used over 150 ms: the slice never expired.
    assert_eq!(bw.counters(1).expired, 0);
    assert_eq!(bw.runtime_remaining(1, 0), (5 * MS - 1_500_000) as i64);
    bw.dequeue_last(1, 0, 250 * MS, &mut t);
    assert_eq!(bw.counters(1).returned, 0);
    assert_eq!(bw.counters(1).discarded, 2 * MS + MS / 2);
    // The feature table's 4.x defaults (expiry off, inverted on) select the same rules.
    let f = Features::defaults(crate::kernel::KernelVersion::new(4, 14), crate::topology::Arch::X86_64);
    let m = BandwidthMode::from_features(&f);
    assert!(m.expiry_inverted && m.tracks_expiry() && !m.burst);
}

#[test]
fn no_expiry_mode_keeps_leftovers_and_credits_slack() {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 10 * MS, &mut t);
    fire(&mut bw, t[0], &mut t);
    bw.account(1, 0, MS, 150 * MS, &mut t);
    assert_eq!(bw.runtime_remaining(1, 0), (4 * MS) as i64);
    bw.dequeue_last(1, 0, 150 * MS, &mut t);
    assert_eq!(bw.counters(1).returned, 3 * MS);
    // Credited into a pool that was just refilled: it may exceed the quota.
    assert_eq!(bw.pool_runtime(1), 23 * MS);
    assert!(conserved(&bw, 1));
}

#[test]
fn idle_group_stops_its_timer_and_restarts_on_the_grid() {
    let mut bw = one_group(BandwidthMode::NO_EXPIRY, 20, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 10 * MS, &mut t);
    let r1 = t[0];
    t.clear();
    fire(&mut bw, r1, &mut t); // active period: refill, idle = 1
    let r2 = t[0];
    t.clear();
    fire(&mut bw, r2, &mut t); // nothing assigned since: deactivate
    assert!(t.is_empty() && bw.period_timer(1).is_none());
    assert_eq!(bw.stats(1, 200 * MS).nr_periods, 2);
    bw.account(1, 0, 5 * MS, 750 * MS, &mut t);
    assert_eq!(t, vec![BwTimerRequest { group: 1, kind: BwTimerKind::Period, at: 800 * MS }]);
    fire(&mut bw, t[0], &mut t);
    assert_eq!(bw.stats(1, 800 * MS).nr_periods, 3);
}

#[test]
fn burst_accumulates_up_to_quota_plus_burst_and_counts_bursts() {
    let root = (None, spec(None, 100, 0));
    let g = (None, spec(Some(20), 50, 10));
    let mut bw = CfsBandwidthControl::new(&[root, g], 1, BandwidthMode::BURST, 5 * MS, MS);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 0, &mut t); // pool 15 ms
    let mut req = t[0];
    for _ in 0..3 {
        t.clear();
        fire(&mut bw, req, &mut t);
        if let Some(&r) = t.first() {
            req = r;
        }
    }
    // 15 + 20 capped at 30; the timer went idle after refilling.
    assert_eq!(bw.pool_runtime(1), 30 * MS);
    assert!(bw.period_timer(1).is_none());
    // Use 30 ms of pool plus the 5 ms silo in one period: 10 ms above quota came from burst.
    t.clear();
    bw.account(1, 0, 35 * MS, 210 * MS, &mut t);
    assert_eq!(bw.pool_runtime(1), 0);
    fire(&mut bw, t[0], &mut t);
    let s = bw.stats(1, 250 * MS);
    assert_eq!((s.nr_bursts, s.burst_time), (1, 10 * MS));
    assert!(conserved(&bw, 1));
}

#[test]
fn a_parent_out_of_runtime_throttles_its_children() {
    let root = (None, spec(None, 100, 0));
    let parent = (None, spec(Some(10), 100, 0));
    let child = (Some(1), spec(None, 100, 0));
    let limited_child = (Some(1), spec(Some(50), 100, 0));
    let mut bw = CfsBandwidthControl::new(&[root, parent, child, limited_child], 2, BandwidthMode::NO_EXPIRY, 5 * MS, MS);
    let mut t = Vec::new();
    assert!(bw.has_limits(2) && bw.has_limits(3));
    assert_eq!(bw.levels(3), vec![3, 1]);
    bw.enqueue_check(3, 1, 0, &mut t);
    bw.enqueue_check(1, 1, 0, &mut t);
    bw.enqueue_check(1, 0, 0, &mut t);
    // Both levels are charged for the child's run.
    assert!(!bw.account(3, 1, 4 * MS, 4 * MS, &mut t));
    assert_eq!((bw.counters(3).consumed, bw.counters(1).consumed), (4 * MS, 4 * MS));
    // The parent runs out on CPU 0: its whole subtree there is throttled.
    assert!(bw.account(2, 0, 6 * MS, 6 * MS, &mut t));
    assert_eq!(bw.check_throttle(2, 0, 6 * MS, &mut t, |_| true), Some(1));
    assert!(bw.is_throttled(2, 0) && bw.is_throttled(3, 0) && !bw.is_throttled(3, 1));
    assert_eq!(bw.stats(3, 6 * MS).nr_throttled, 0);
}

/// 6.6 (79462e8c879a): a cfs_rq throttled as its last task went to sleep counts no
/// throttled_time until a task is queued on it; before 6.6 it counts from the throttle.
#[test]
fn throttled_while_empty_counts_from_the_first_enqueue_from_6_6() {
    let run = |nonempty: bool| {
        let mode = BandwidthMode { nonempty_throttle_time: nonempty, ..BandwidthMode::BURST };
        let mut bw = one_group(mode, 10, 100, 1);
        let mut t = Vec::new();
        bw.enqueue_check(1, 0, 0, &mut t);
        // The task used its slice and more, then slept: throttled at put_prev, empty.
        assert!(bw.account(1, 0, 11 * MS, 11 * MS, &mut t));
        assert_eq!(bw.check_throttle(1, 0, 11 * MS, &mut t, |_| false), Some(1));
        let at_40 = bw.stats(1, 40 * MS).throttled_time;
        // A wakeup at 60 ms finds the group throttled.
        bw.queued_while_throttled(1, 0, 60 * MS);
        let req = *t.iter().find(|r| r.kind == BwTimerKind::Period).unwrap();
        assert_eq!(fire(&mut bw, req, &mut t), vec![(1, 0)]);
        (at_40, bw.stats(1, req.at).throttled_time)
    };
    assert_eq!(run(false), (29 * MS, 89 * MS), "before 6.6: from the throttle at 11 ms to the refill at 100 ms");
    assert_eq!(run(true), (0, 40 * MS), "6.6+: from the enqueue at 60 ms");
}

/// Writing cpu.max then cpu.max.burst refills twice, each refill capped at quota + burst.
#[test]
fn the_pool_starts_as_two_refills_leave_it() {
    let g = |burst_ms: Ns, mode: BandwidthMode| {
        let root = (None, spec(None, 100, 0));
        CfsBandwidthControl::new(&[root, (None, spec(Some(20), 100, burst_ms))], 1, mode, 5 * MS, MS).pool_runtime(1)
    };
    assert_eq!(g(0, BandwidthMode::BURST), 20 * MS);
    assert_eq!(g(5, BandwidthMode::BURST), 25 * MS);
    assert_eq!(g(50, BandwidthMode::BURST), 40 * MS);
    assert_eq!(g(50, BandwidthMode::NO_EXPIRY), 20 * MS, "no burst before 5.14");
}

/// 6.2 (8ad075c2eb1f): the period timer (on the CPU that started it) unthrottles its own
/// CPU's cfs_rq at once; another CPU's gets its runtime now, is skipped by further
/// distributions while its CSD is on the way, and is unthrottled when the CSD arrives.
#[test]
fn async_distribution_unthrottles_remote_cfs_rqs_when_their_csd_arrives() {
    let run = |is_async: bool| {
        let mode = BandwidthMode { async_unthrottle: is_async, ..BandwidthMode::BURST };
        let mut bw = one_group(mode, 10, 100, 2);
        let mut t = Vec::new();
        bw.enqueue_check(1, 1, 0, &mut t); // CPU 1 starts the period timer: it fires there
        bw.enqueue_check(1, 0, 0, &mut t);
        assert_eq!(bw.timer_cpu(1, BwTimerKind::Period), 1);
        for cpu in [0, 1] {
            assert!(bw.account(1, cpu, 6 * MS, 6 * MS, &mut t));
            assert_eq!(bw.check_throttle(1, cpu, 6 * MS, &mut t, |_| true), Some(1));
        }
        let req = *t.iter().find(|r| r.kind == BwTimerKind::Period).unwrap();
        let sync = fire(&mut bw, req, &mut t);
        let remote = bw.take_async_unthrottles();
        (bw, sync, remote, t)
    };
    let (_, sync, remote, _) = run(false);
    assert_eq!((sync, remote), (vec![(1, 0), (1, 1)], vec![]), "before 6.2 every cfs_rq at once");
    let (mut bw, sync, remote, mut t) = run(true);
    assert_eq!((sync, remote), (vec![(1, 1)], vec![(1, 0)]));
    assert!(bw.is_throttled(1, 0) && bw.csd_pending(1, 0) && bw.runtime_remaining(1, 0) > 0);
    // The CSD lands 30 us later: throttled_time runs to then.
    let before = bw.stats(1, 100 * MS).throttled_time;
    assert_eq!(bw.csd_unthrottle(0, 100 * MS + 30_000), vec![(1, 0)]);
    assert_eq!(bw.stats(1, 200 * MS).throttled_time, before + 30_000);
    assert!(!bw.is_throttled(1, 0) && !bw.csd_pending(1, 0));
    assert!(bw.csd_unthrottle(0, 100 * MS + 40_000).is_empty(), "nothing left for a second CSD");
    assert!(bw.take_async_unthrottles().is_empty());
    t.clear();
    assert!(conserved(&bw, 1));
}

/// 6.18 (eb962f251fbb): a throttled cfs_rq's throttled_time starts when the first task
/// of its hierarchy is held at its return to user space, not at the throttle or enqueue.
#[test]
fn task_based_throttle_counts_from_the_first_task_held() {
    let mode = BandwidthMode { nonempty_throttle_time: true, async_unthrottle: true, task_throttle: true, ..BandwidthMode::BURST };
    let mut bw = one_group(mode, 10, 100, 1);
    let mut t = Vec::new();
    bw.enqueue_check(1, 0, 0, &mut t);
    assert!(bw.account(1, 0, 11 * MS, 11 * MS, &mut t));
    assert_eq!(bw.check_throttle(1, 0, 11 * MS, &mut t, |_| true), Some(1));
    bw.queued_while_throttled(1, 0, 12 * MS); // an enqueue does not start it either
    assert_eq!(bw.stats(1, 20 * MS).throttled_time, 0);
    bw.task_throttled(1, 0, 30 * MS);
    bw.task_throttled(1, 0, 31 * MS); // a second task held: the clock is already running
    let req = *t.iter().find(|r| r.kind == BwTimerKind::Period).unwrap();
    assert_eq!(fire(&mut bw, req, &mut t), vec![(1, 0)], "the timer's own CPU: unthrottled at once");
    assert_eq!(bw.stats(1, req.at).throttled_time, 70 * MS);
}
