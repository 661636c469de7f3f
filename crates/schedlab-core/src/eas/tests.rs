//! Tests of the pure EAS mechanisms on the Pixel 6's Energy Model (gs101 device tree).

use super::energy::*;
use super::schedutil::*;
use super::util_est::*;
use super::*;
use proptest::prelude::*;

/// The Pixel 6 as EAS sees it: capacities 160/498/1024 and the gs101 EM, all CPUs idle
/// with no utilization.
fn pixel6() -> EasSnapshot {
    let m = crate::topology::presets::preset("pixel6").unwrap();
    let mut types: Vec<String> = Vec::new();
    let mut pds = Vec::new();
    let cpus = m
        .cpus
        .iter()
        .map(|c| {
            let pd = types.iter().position(|t| *t == c.core_type).unwrap_or_else(|| {
                types.push(c.core_type.clone());
                pds.push(PerfDomainCosts::from_em(m.perf_domain(c.id).unwrap(), c.capacity as u64));
                types.len() - 1
            });
            CpuSnap { capacity: c.capacity as u64, util_avg: 0, util_est: 0, uclamp: None, pd }
        })
        .collect();
    EasSnapshot { cpus, pds, util_est_on: true, uclamp_used: false }
}

fn task(util: u64, prev_cpu: usize, nr: usize) -> TaskSnap {
    TaskSnap { util_avg: util, util_est: util, uclamp: Uclamp::NONE, prev_cpu, allowed: vec![true; nr] }
}

/// The snapshot with a sleeping task's util left on its previous CPU (blocked util).
fn with_blocked(mut s: EasSnapshot, p: &TaskSnap) -> EasSnapshot {
    s.cpus[p.prev_cpu].util_avg += p.util_avg;
    s
}

const BOTH: [FeecRules; 2] = [FeecRules::Margin, FeecRules::V6];

#[test]
fn pixel6_snapshot_is_the_device_tree() {
    let s = pixel6();
    let caps: Vec<u64> = s.cpus.iter().map(|c| c.capacity).collect();
    assert_eq!(caps, [160, 160, 160, 160, 498, 498, 1024, 1024]);
    assert_eq!(s.pds.len(), 3);
    // Cost at the top OPP is the power there; lower OPPs cost less per unit of work
    // (voltage never falls along the gs101 tables), so no OPP is inefficient.
    for pd in &s.pds {
        let top = pd.states.last().unwrap();
        assert_eq!(top.cost, top.power_uw);
        assert!(pd.states.windows(2).all(|w| w[0].cost <= w[1].cost));
    }
}

#[test]
fn a_small_task_on_an_idle_pixel6_wakes_on_a_little_cpu() {
    // 10 % of the A55's capacity (16): 16 x 1.25 = 20 asks 1803000 x 20 / 160 = 225_375
    // kHz, the A55's lowest OPP (300 MHz, cost 70 x 537^2 x 300 / 10^6 x 1803 / 300 =
    // 36_393 uW): energy 36_393 x 16 / 160 = 3_639; the A76 at 400 MHz 5_263, the X1 at
    // 500 MHz 7_114. From every prev_cpu EAS puts it on a little CPU.
    for rules in BOTH {
        for prev in 0..8 {
            let p = task(16, prev, 8);
            let s = with_blocked(pixel6(), &p);
            let cpu = s.find_energy_efficient_cpu(&p, false, rules).unwrap();
            assert!(cpu < 4, "{rules:?} prev {prev}: chose {cpu}");
        }
    }
}

#[test]
fn a_task_at_10_percent_of_1024_is_cheapest_on_the_a76_with_the_gs101_em() {
    // util 102 (10 % of the biggest CPU) fits the A55 (130_560 < 163_840) but needs 127
    // of its 160, i.e. 1598 MHz at 831 mV: energy 55_561. The A76 needs 696 MHz: 41_391;
    // the X1 its lowest OPP, 500 MHz: 45_354. With the mainline gs101 coefficients EAS
    // puts a 10 %-of-1024 task on a mid core, not a little one; below about 55 the A55
    // wins (util 50: A55 15_063 vs A76 16_447; util 60: 21_118 vs 19_737).
    let p = task(102, 6, 8);
    let s = with_blocked(pixel6(), &p);
    let e: Vec<u64> = [0, 4, 6].iter().map(|&c| s.total_energy(&p, c)).collect();
    assert_eq!(e, [55_561, 41_391, 45_354]);
    for rules in BOTH {
        assert_eq!(s.pds[s.cpus[s.find_energy_efficient_cpu(&p, false, rules).unwrap()].pd].scale_cpu, 498, "{rules:?}");
    }
    for (u, little) in [(50, true), (60, false)] {
        let p = task(u, 6, 8);
        let s = with_blocked(pixel6(), &p);
        assert_eq!(s.find_energy_efficient_cpu(&p, false, FeecRules::V6).unwrap() < 4, little, "util {u}");
    }
}

#[test]
fn a_task_too_big_for_the_mid_cores_goes_big_and_90_percent_turns_eas_off() {
    // 600 x 1280 = 768_000 >= 498 x 1024: only the X1s (1_048_576) fit it.
    assert!(!fits_capacity(600, 160) && !fits_capacity(600, 498) && fits_capacity(600, 1024));
    for rules in BOTH {
        for prev in [0, 3, 5] {
            let p = task(600, prev, 8);
            let s = with_blocked(pixel6(), &p);
            let cpu = s.find_energy_efficient_cpu(&p, false, rules).unwrap();
            assert!(cpu >= 6, "{rules:?} prev {prev}: chose {cpu}");
        }
    }
    // 90 % (922) fits no CPU with the 20 % headroom (922 x 1280 = 1_180_160 >
    // 1_048_576): a little CPU running it is overutilized, EAS stands down and the
    // misfit path (MISFIT, fair/asym.rs) moves it to an X1. Were EAS asked anyway, no
    // candidate fits and prev_cpu is kept.
    assert!(!fits_capacity(922, 1024));
    let p = task(922, 0, 8);
    let mut s = with_blocked(pixel6(), &p);
    s.cpus[0].util_est = 922;
    let mut rd = RootDomainOverutilized::default();
    rd.on_enqueue(s.cpu_overutilized(0));
    assert!(rd.overutilized);
    assert_eq!(s.find_energy_efficient_cpu(&p, rd.overutilized, FeecRules::V6), None);
    assert_eq!(s.find_energy_efficient_cpu(&p, false, FeecRules::V6), Some(0));
}

#[test]
fn overutilized_turns_eas_off_and_back_on() {
    // The A55's threshold: util x 1280 < 160 x 1024 fits, so 127 fits and 128 does not.
    let mut s = pixel6();
    s.cpus[0].util_avg = 127;
    assert!(!s.cpu_overutilized(0));
    s.cpus[0].util_avg = 128;
    assert!(s.cpu_overutilized(0));
    // The X1 at 80 %: 819 fits, 820 does not (820 x 1280 = 1_049_600 >= 1_048_576).
    s.cpus[6].util_avg = 819;
    assert!(!s.cpu_overutilized(6));
    s.cpus[6].util_avg = 820;
    assert!(s.cpu_overutilized(6));

    let mut rd = RootDomainOverutilized::default();
    rd.on_enqueue(s.cpu_overutilized(0));
    assert!(rd.overutilized);
    let p = task(102, 4, 8);
    assert_eq!(s.find_energy_efficient_cpu(&p, rd.overutilized, FeecRules::V6), None);
    // An enqueue elsewhere does not clear it; the root-level balance does once no CPU is
    // over its threshold.
    rd.on_enqueue(false);
    assert!(rd.overutilized);
    s.cpus[0].util_avg = 100;
    s.cpus[6].util_avg = 100;
    rd.on_root_balance((0..8).map(|c| s.cpu_overutilized(c)));
    assert!(!rd.overutilized);
    assert!(s.find_energy_efficient_cpu(&p, rd.overutilized, FeecRules::V6).is_some());
}

#[test]
fn uclamp_changes_overutilized_and_fitting() {
    // 6.2's util_fits_cpu(): a uclamp_max under the capacity makes a big util fit.
    assert_eq!(util_fits_cpu(300, 0, 150, 160, true), 1);
    assert_eq!(util_fits_cpu(300, 0, 1024, 160, true), 0);
    // uclamp_min above the CPU's capacity: fits, but not the hint.
    assert_eq!(util_fits_cpu(50, 1024, 1024, 160, true), -1);
    assert_eq!(util_fits_cpu(50, 1024, 1024, 1024, true), 1);
    assert!(!cpu_overutilized(300, 160, Uclamp { min: 0, max: 150 }, true));
    assert!(cpu_overutilized(300, 160, Uclamp { min: 0, max: 150 }, false));
}

#[test]
fn uclamp_min_1024_runs_at_a_big_cpus_top_opp() {
    // Placement: the -1 "fits but not the hint" of every smaller CPU loses to the X1.
    let mut s = pixel6();
    s.uclamp_used = true;
    let mut p = task(50, 0, 8);
    p.uclamp = Uclamp { min: 1024, max: 1024 };
    let s = with_blocked(s, &p);
    let cpu = s.find_energy_efficient_cpu(&p, false, FeecRules::V6).unwrap();
    assert!(cpu >= 6, "chose {cpu}");
    // Its energy estimate on the X1 is at the top OPP's cost: the busy time (50) at
    // cost 650 x 1056^2 x 2802 / 10^6 = 2_030_997 uW (per unit of the top capacity).
    let top = s.pds[2].states.last().unwrap().cost;
    assert_eq!(top, 2_030_997);
    assert_eq!(s.compute_energy(2, &p, Some(6)), top * 50 / 1024);
    // Without the clamp the same placement asks the X1's lowest OPP.
    let mut unclamped = s.clone();
    unclamped.uclamp_used = false;
    assert_eq!(unclamped.compute_energy(2, &p, Some(6)), s.pds[2].states[0].cost * 50 / 1024);
    // Frequency: the rq's clamp min 1024 lifts util 50 to 1024, x 1.25 is past the top.
    let x1 = &s.pds[2];
    let mut pol = SugovPolicy::new(x1.table_khz(), 2, 0, Governor::Schedutil);
    pol.cur_khz = 500_000;
    let rq = Some(Uclamp { min: 1024, max: 1024 });
    let inputs = [CpuUtilInput { util: 50, capacity: 1024, uclamp: rq }, CpuUtilInput { util: 0, capacity: 1024, uclamp: None }];
    assert_eq!(pol.update_shared(0, 1_000_000, 4_000_000, false, &inputs), Some(2_802_000));
    // Without the clamp the same util asks for the lowest OPP: 2802000 x 62 / 1024 = 169_652.
    let mut pol = SugovPolicy::new(x1.table_khz(), 2, 0, Governor::Schedutil);
    let inputs = [CpuUtilInput { util: 50, capacity: 1024, uclamp: None }, inputs[1]];
    assert_eq!(pol.update_shared(0, 1_000_000, 4_000_000, false, &inputs), Some(500_000));
}

#[test]
fn schedutil_picks_the_lowest_opp_at_or_above_1_25_util_on_every_pixel6_opp() {
    let s = pixel6();
    for pd in &s.pds {
        let table = pd.table_khz();
        let fmax = *table.last().unwrap();
        let cap = pd.scale_cpu;
        let mut hit = vec![false; table.len()];
        for util in 0..=cap {
            let raw = fmax * (util + util / 4) / cap;
            let f = resolve_freq_relation_l(&table, next_freq_raw(util, cap, fmax));
            let i = table.iter().position(|&t| t == f).expect("an OPP");
            hit[i] = true;
            // At or above the request, unless the request is past the top.
            assert!(f >= raw || f == fmax, "util {util}: {f} < {raw}");
            // The lowest such: the OPP below it is under the request.
            assert!(i == 0 || table[i - 1] < raw, "util {util}: {f} but {} >= {raw}", table[i - 1]);
        }
        // Every OPP is the answer for some utilization (the table is covered).
        assert!(hit.iter().all(|&h| h), "{table:?} {hit:?}");
    }
    // Worked case on the X1: util 400 asks 2802000 x 500 / 1024 = 1_368_164 kHz: 1426 MHz.
    assert_eq!(resolve_freq_relation_l(&s.pds[2].table_khz(), next_freq_raw(400, 1024, 2_802_000)), 1_426_000);
}

#[test]
fn performance_governor_holds_the_top_opp() {
    let mut pol = SugovPolicy::new(vec![300_000, 1_803_000], 1, 0, Governor::Performance);
    pol.cur_khz = 300_000;
    let idle = [CpuUtilInput { util: 0, capacity: 160, uclamp: None }];
    assert_eq!(pol.update_shared(0, 10, 1, false, &idle), Some(1_803_000));
    assert_eq!(pol.update_shared(0, 20, 1, false, &idle), None);
}

#[test]
fn rate_limit_skips_updates_inside_the_limit() {
    let mut pol = SugovPolicy::new(vec![500_000, 1_000_000, 2_000_000], 1, 1_000_000, Governor::Schedutil);
    let at = |u| [CpuUtilInput { util: u, capacity: 1024, uclamp: None }];
    let tick = 4_000_000;
    // First update: 2000000 x 125 / 1024 = 244_140: the lowest OPP.
    assert_eq!(pol.update_shared(0, 0, tick, false, &at(100)), Some(500_000));
    // 0.5 ms later, inside the 1 ms limit: a big util is not looked at.
    assert_eq!(pol.update_shared(0, 500_000, tick, false, &at(800)), None);
    assert_eq!(pol.cur_khz, 500_000);
    // At the limit it is.
    assert_eq!(pol.update_shared(0, 1_000_000, tick, false, &at(800)), Some(2_000_000));
    // An unchanged frequency does not restart the limit (sugov_update_next_freq()).
    assert_eq!(pol.update_shared(0, 2_000_000, tick, false, &at(800)), None);
    assert_eq!(pol.last_freq_update, Some(1_000_000));
}

/// The Android split (sched_pixel on gs101: up 500 us, down 20 ms on the big cluster): a
/// raise waits out the up limit only, a lowering the down limit, where mainline's single
/// 1 ms limit lets the lowering through.
#[test]
fn up_and_down_rate_limits_hold_raises_and_lowerings_apart() {
    let table = vec![500_000, 1_000_000, 2_000_000];
    let mut pol = SugovPolicy::new(table.clone(), 1, 1_000_000, Governor::Schedutil).with_up_down(500_000, 20_000_000);
    let mut mainline = SugovPolicy::new(table, 1, 1_000_000, Governor::Schedutil);
    let at = |u| [CpuUtilInput { util: u, capacity: 1024, uclamp: None }];
    let tick = 4_000_000;
    for p in [&mut pol, &mut mainline] {
        assert_eq!(p.update_shared(0, 0, tick, false, &at(100)), Some(500_000));
    }
    // 0.6 ms on: a raise passes the 500 us up limit, not mainline's 1 ms.
    assert_eq!(pol.update_shared(0, 600_000, tick, false, &at(800)), Some(2_000_000));
    assert_eq!(mainline.update_shared(0, 600_000, tick, false, &at(800)), None);
    assert_eq!(mainline.update_shared(0, 1_000_000, tick, false, &at(800)), Some(2_000_000));
    // 5 ms after the raise the util has fallen: mainline lowers, the split holds the top
    // OPP until 20 ms after its last change.
    assert_eq!(mainline.update_shared(0, 6_000_000, tick, false, &at(100)), Some(500_000));
    assert_eq!(pol.update_shared(0, 5_600_000, tick, false, &at(100)), None);
    assert_eq!(pol.update_shared(0, 20_500_000, tick, false, &at(100)), None);
    assert_eq!(pol.cur_khz, 2_000_000);
    assert_eq!(pol.update_shared(0, 20_600_000, tick, false, &at(100)), Some(500_000));
    // freq_update_delay_ns is the smaller of the two.
    assert_eq!(pol.rate_limit_ns, 500_000);
}

#[test]
fn iowait_boost_doubles_per_io_wakeup_and_halves_without() {
    let tick = 4_000_000;
    let mut b = IowaitBoost::default();
    let mut t = 0;
    let mut seen = Vec::new();
    for _ in 0..5 {
        t += 1_000_000;
        b.on_update(t, tick, true);
        seen.push(b.apply(t, tick, 0, 1024));
    }
    // 128, 256, 512, 1024, then capped at SCHED_CAPACITY_SCALE.
    assert_eq!(seen, [128, 256, 512, 1024, 1024]);
    // Updates without I/O: halve each time, dropped below IOWAIT_BOOST_MIN.
    let mut seen = Vec::new();
    for _ in 0..5 {
        t += 1_000_000;
        b.on_update(t, tick, false);
        seen.push(b.apply(t, tick, 0, 1024));
    }
    assert_eq!(seen, [512, 256, 128, 0, 0]);
    // More than a tick without an update: an I/O wakeup restarts at the minimum.
    b.on_update(t, tick, true);
    b.apply(t, tick, 0, 1024);
    b.on_update(t + 1_000_000, tick, true);
    assert_eq!(b.apply(t + 1_000_000, tick, 0, 1024), 256);
    t += 1_000_000 + tick + 1;
    b.on_update(t, tick, true);
    assert_eq!(b.apply(t, tick, 0, 1024), IOWAIT_BOOST_MIN);
    // The boost is in the CPU's capacity scale.
    assert_eq!(b.apply(t + 1, tick, 10, 160), 10);
}

#[test]
fn util_est_ewma_follows_the_kernel_arithmetic() {
    // Split form, no FASTUP (a 5.4 kernel), samples of 400 from ewma 0:
    // ewma += (400 - ewma) / 4 as ((ewma << 2) + diff) >> 2:
    // 100, 175, 231, 273, 304, 328, 346, 359, 369, 376, 382, 386, 389, 391; then the
    // difference 9 is under UTIL_EST_MARGIN (10) and the ewma stays at 391.
    let mut ue = UtilEst::default();
    let mut seq = Vec::new();
    for _ in 0..16 {
        if ue.update(UtilEstForm::Split, true, 400, true, 1024, false) == UtilEstUpdate::Ewma {
            seq.push(ue.ewma);
        }
    }
    assert_eq!(seq, [100, 175, 231, 273, 304, 328, 346, 359, 369, 376, 382, 386, 389, 391]);
    assert_eq!(ue.enqueued, 400);
    assert_eq!(ue.task_util_est(UtilEstForm::Split), 400);
    // One short activation (sample 100): enqueued follows it, the ewma moves a quarter:
    // (391 x 4 - 291) >> 2 = 1273 >> 2 = 318.
    assert_eq!(ue.update(UtilEstForm::Split, true, 100, true, 1024, false), UtilEstUpdate::Ewma);
    assert_eq!((ue.enqueued, ue.ewma), (100, 318));
    assert_eq!(ue.task_util_est(UtilEstForm::Split), 318);
    // Not a sleep, or util_avg unchanged since the enqueue: nothing moves.
    let before = ue;
    assert_eq!(ue.update(UtilEstForm::Split, false, 900, true, 1024, false), UtilEstUpdate::NotSleeping);
    assert_eq!(ue.update(UtilEstForm::Split, true, 900, false, 1024, false), UtilEstUpdate::Unchanged);
    // A sample above the CPU's capacity (no idle time) is not a demand.
    assert_eq!(ue.update(UtilEstForm::Split, true, 200, true, 160, false), UtilEstUpdate::AboveCapacity);
    assert_eq!(ue, before);
}

#[test]
fn util_est_fastup_and_the_6_8_form() {
    // FASTUP (5.5+): a larger sample replaces the ewma at once.
    let mut ue = UtilEst { enqueued: 100, ewma: 100 };
    assert_eq!(ue.update(UtilEstForm::Split, true, 600, true, 1024, true), UtilEstUpdate::FastUp);
    assert_eq!(ue.ewma, 600);
    let mut slow = UtilEst { enqueued: 100, ewma: 100 };
    slow.update(UtilEstForm::Split, true, 600, true, 1024, false);
    assert_eq!(slow.ewma, 225); // (400 + 500) >> 2
                                // 5.13's rule: ewma within the margin but the sample moved: only enqueued is written.
    let mut ue = UtilEst { enqueued: 300, ewma: 405 };
    assert_eq!(ue.update(UtilEstForm::Split, true, 400, true, 1024, false), UtilEstUpdate::EnqueuedOnly);
    assert_eq!((ue.enqueued, ue.ewma), (400, 405));
    assert!(UtilEstUpdate::EnqueuedOnly.wrote_back(UtilEstForm::Split));
    assert!(!UtilEstUpdate::WithinMargin.wrote_back(UtilEstForm::Split));
    // 6.8: one value; increases reset it whatever the feature says, decreases average.
    let mut ue = UtilEst { enqueued: 0, ewma: 100 };
    assert_eq!(ue.update(UtilEstForm::Simplified, true, 600, true, 1024, false), UtilEstUpdate::FastUp);
    assert_eq!(ue.update(UtilEstForm::Simplified, true, 200, true, 1024, false), UtilEstUpdate::Ewma);
    assert_eq!(ue.ewma, 500); // (2400 - 400) >> 2
    assert_eq!(ue.update(UtilEstForm::Simplified, true, 495, true, 1024, false), UtilEstUpdate::WithinMargin);
    assert!(UtilEstUpdate::WithinMargin.wrote_back(UtilEstForm::Simplified));
    assert_eq!(UtilEstForm::of(crate::kernel::KernelVersion::new(6, 7)), UtilEstForm::Split);
    assert_eq!(UtilEstForm::of(crate::kernel::KernelVersion::new(6, 8)), UtilEstForm::Simplified);
}

#[test]
fn after_a_sleep_the_frequency_follows_the_estimate_not_the_decayed_average() {
    // A task that ran at util 400 on an X1 (estimate 400, as the ewma test builds it)
    // sleeps 64 ms: two PELT half-lives take its util_avg to 400 / 4 = 100.
    let est = 400;
    let decayed = 100;
    let mut rq = RqUtilEst::default();
    rq.enqueue(est); // util_est_enqueue() before the enqueue's frequency update
    let with = cpu_util(6, decayed, rq.enqueued, 1024, None, None, true);
    let without = cpu_util(6, decayed, rq.enqueued, 1024, None, None, false);
    assert_eq!((with, without), (400, 100));
    let s = pixel6();
    let table = s.pds[2].table_khz();
    // 2802000 x 500 / 1024 = 1_368_164 -> 1426 MHz; 2802000 x 125 / 1024 = 342_041 -> 500 MHz.
    assert_eq!(resolve_freq_relation_l(&table, next_freq_raw(with, 1024, 2_802_000)), 1_426_000);
    assert_eq!(resolve_freq_relation_l(&table, next_freq_raw(without, 1024, 2_802_000)), 500_000);
    // The dequeue takes the estimate back out.
    rq.dequeue(est);
    assert_eq!(rq.enqueued, 0);
    rq.dequeue(5);
    assert_eq!(rq.enqueued, 0);
}

#[test]
fn cpu_util_moves_the_task_between_cpus() {
    let p = TaskAt { cpu: 0, util_avg: 100, util_est: 150, queued: false };
    // Its CPU without it; a destination with it (util and estimate both).
    assert_eq!(cpu_util(0, 130, 0, 160, Some(p), Some(1), true), 30);
    assert_eq!(cpu_util(1, 20, 10, 160, Some(p), Some(1), true), 160); // max(120, 160) capped
    assert_eq!(cpu_util(1, 20, 10, 1024, Some(p), Some(1), true), 160);
    assert_eq!(cpu_util(1, 20, 10, 1024, Some(p), Some(1), false), 120);
}

#[test]
fn frequency_invariance_scales_deltas() {
    // 1 ms on an A55 (capacity 160) at 900 of 1803 MHz counts 1_000_000 x 160/1024 x
    // 511/1024 (arch_scale_freq_capacity = 900000 x 1024 / 1803000 = 511).
    assert_eq!(arch_scale_freq_capacity(900_000, 1_803_000), 511);
    assert_eq!(scale_pelt_delta(1_000_000, 160, 900_000, 1_803_000), 156_250 * 511 / 1024);
    assert_eq!(scale_pelt_delta(1_000_000, 1024, 2_802_000, 2_802_000), 1_000_000);
}

#[test]
fn uclamp_rq_util_with_max_aggregates() {
    let rq = uclamp_rq_aggregate([Uclamp { min: 100, max: 300 }, Uclamp { min: 50, max: 800 }]);
    assert_eq!(rq, Some(Uclamp { min: 100, max: 800 }));
    assert_eq!(uclamp_rq_util_with(20, rq, None), 100);
    assert_eq!(uclamp_rq_util_with(900, rq, None), 800);
    assert_eq!(uclamp_rq_util_with(900, rq, Some(Uclamp { min: 0, max: 1024 })), 900);
    // An idle rq: only the task's clamps.
    assert_eq!(uclamp_rq_util_with(900, None, Some(Uclamp { min: 0, max: 200 })), 200);
    assert_eq!(uclamp_rq_util_with(900, None, None), 900);
    // min above max: min wins.
    assert_eq!(uclamp_rq_util_with(10, Some(Uclamp { min: 500, max: 300 }), None), 500);
}

/// A random Pixel 6 wakeup: per-CPU util and estimates, a task, its prev_cpu and mask.
fn snapshot_strategy() -> impl Strategy<Value = (EasSnapshot, TaskSnap)> {
    (prop::collection::vec((0u64..700, 0u64..700), 8), 1u64..700, 0u64..300, 0usize..8, prop::collection::vec(any::<bool>(), 8)).prop_map(
        |(utils, tu, extra_est, prev, mut allowed)| {
            let mut s = pixel6();
            for (c, (u, e)) in s.cpus.iter_mut().zip(utils) {
                c.util_avg = u.min(c.capacity);
                c.util_est = e.min(c.capacity);
            }
            allowed[prev] = true;
            let p = TaskSnap { util_avg: tu, util_est: tu + extra_est, uclamp: Uclamp::NONE, prev_cpu: prev, allowed };
            let s = with_blocked(s, &p);
            (s, p)
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// feec against the exhaustive search over the allowed CPUs the task fits.
    ///
    /// 6.0+ rules: the energy of feec's choice equals the exhaustive minimum. Within a
    /// performance domain every CPU has the same capacity and the busy time does not
    /// depend on which CPU takes the task, so the domain's energy depends only on the
    /// OPP, i.e. on max(util with p on the destination, the others' util without p);
    /// the CPU with the most spare capacity minimizes the first term and so the max,
    /// and the gs101 costs never fall with frequency (checked in
    /// `pixel6_snapshot_is_the_device_tree`), so no other CPU of the domain is cheaper.
    /// Across domains feec compares the exact deltas. Ties may pick another CPU of
    /// equal energy. When no allowed CPU fits, feec keeps prev_cpu.
    ///
    /// 5.0-5.19 rules: prev_cpu is kept unless the best saves more than
    /// (prev_delta + base_energy) / 16, so the choice's energy exceeds the minimum by at
    /// most that, and only when the choice is prev_cpu.
    #[test]
    fn feec_is_within_the_kernels_rules_of_the_exhaustive_minimum((s, p) in snapshot_strategy()) {
        let fitting: Vec<usize> = (0..8)
            .filter(|&c| p.allowed[c] && fits_capacity(s.cpu_util(c, &p, Some(c)), s.cpus[c].capacity))
            .collect();
        let energy = |c: usize| s.total_energy(&p, c);
        for rules in BOTH {
            let cpu = s.find_energy_efficient_cpu(&p, false, rules).unwrap();
            prop_assert!(p.allowed[cpu]);
            if fitting.is_empty() {
                prop_assert_eq!(cpu, p.prev_cpu);
                continue;
            }
            let min = fitting.iter().map(|&c| energy(c)).min().unwrap();
            match rules {
                FeecRules::V6 => {
                    prop_assert!(fitting.contains(&cpu), "chose {} not fitting", cpu);
                    prop_assert_eq!(energy(cpu), min, "chose {}", cpu);
                }
                FeecRules::Margin => {
                    if cpu == p.prev_cpu && fitting.contains(&cpu) {
                        let base: u64 = (0..s.pds.len()).map(|pd| s.compute_energy(pd, &p, None)).sum();
                        let prev_delta = energy(cpu) - base;
                        prop_assert!(energy(cpu) - min <= (prev_delta + base) >> 4);
                    } else {
                        prop_assert_eq!(energy(cpu), min, "chose {}", cpu);
                    }
                }
            }
        }
    }
}

#[test]
fn feec_rules_follow_the_kernel_version() {
    use crate::kernel::KernelVersion;
    assert_eq!(FeecRules::of(KernelVersion::new(5, 19)), FeecRules::Margin);
    assert_eq!(FeecRules::of(KernelVersion::new(6, 0)), FeecRules::V6);
}
